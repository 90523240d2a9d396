#!/usr/bin/env python3
"""20 Newsgroups from the Subject line only: a short-text benchmark.

Reads the bydate JSON Lines (../shared/data/20news-bydate.jsonl.gz) and writes
one document per message whose text is its `Subject:` header, with leading
"Re:" (repeated, any case, with or without spaces between) removed. Same ids,
split and labels (11,314 train / 7,532 test). A message without a Subject
header keeps an empty text, so the split sizes stay those of the collection.

usage: newsgroups_subjects.py [--data FILE] OUT.jsonl
Then: build/bench/newsgroups_eval --data OUT.jsonl [--ngrams 2] ...
"""
import argparse
import gzip
import json
import os
import re
import sys

LEADING_RE = re.compile(r"^\s*(re\s*:\s*)+", re.IGNORECASE)


def subject_of(text):
    # Headers end at the first blank line; the Subject header is one line
    # in this collection (no folded continuation lines).
    header = text.split("\n\n", 1)[0]
    for line in header.split("\n"):
        if line.lower().startswith("subject:"):
            return LEADING_RE.sub("", line[len("subject:"):]).strip()
    return ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data",
                                                       "20news-bydate.jsonl.gz"))
    parser.add_argument("out")
    args = parser.parse_args()
    if not os.path.exists(args.data):
        sys.exit(f"newsgroups_subjects: {args.data}: not found (see ../shared/data/README.md)")
    counts = {}
    missing = 0
    with gzip.open(args.data, "rt", encoding="utf-8") as src, \
            open(args.out, "w", encoding="utf-8") as out:
        for line in src:
            doc = json.loads(line)
            subject = subject_of(doc["text"])
            missing += subject == ""
            counts[doc["split"]] = counts.get(doc["split"], 0) + 1
            out.write(json.dumps({"id": doc["id"], "split": doc["split"], "labels": doc["labels"],
                                  "text": subject}, ensure_ascii=False) + "\n")
    print(f"{args.out}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
          f"; {missing} without a subject", file=sys.stderr)


if __name__ == "__main__":
    main()
