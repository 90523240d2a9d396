#!/usr/bin/env python3
"""Makes a page stream from a labelled JSON Lines corpus, for `autocat split`.

usage: page_stream.py TRAIN.jsonl ROLES.jsonl PAGES.jsonl

Each document is cut into pages of one sentence. ROLES.jsonl gets the pages
of the even-numbered documents labelled with their role (first, middle,
last, single), to train the role model on; PAGES.jsonl gets the pages of the
odd-numbered documents, in order, one stream without document boundaries,
each page's id naming its document (DOC#PAGE) so the cut can be checked.
"""

import json
import re
import sys


def pages_of(text):
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。])\s+", text) if s.strip()]
    return sentences or [text]


def role(index, count):
    if count == 1:
        return "single"
    return "first" if index == 0 else "last" if index == count - 1 else "middle"


def main():
    if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as source, \
            open(sys.argv[2], "w", encoding="utf-8") as roles, \
            open(sys.argv[3], "w", encoding="utf-8") as stream:
        for number, line in enumerate(source):
            record = json.loads(line)
            pages = pages_of(record["text"])
            for index, page in enumerate(pages):
                page_id = f"{record['id']}#{index + 1}"
                if number % 2 == 0:
                    out = {"id": page_id, "text": page, "labels": [role(index, len(pages))]}
                    roles.write(json.dumps(out, ensure_ascii=False) + "\n")
                else:
                    stream.write(json.dumps({"id": page_id, "text": page},
                                            ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
