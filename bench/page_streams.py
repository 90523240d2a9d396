#!/usr/bin/env python3
"""Page streams from 20 Newsgroups, for `autocat split`.

Cuts every message of 20news-bydate.jsonl.gz into pages of N lines (in
order) and writes, into OUT_DIR:
  types_train.jsonl  training pages labelled with their newsgroup
  roles_train.jsonl  the same pages labelled first, middle, last or single
  stream_test.jsonl  the test messages' pages as one ordered stream: messages
                     taken round-robin over the newsgroups (so the type changes
                     at most boundaries), each message's pages in order; page
                     ids are MESSAGE#PAGE
With --evaluate SPLIT_JSON (the output of `autocat split --json` on
stream_test.jsonl) it prints boundary precision/recall and the share of
messages reconstructed exactly.

usage: page_streams.py DATA.jsonl.gz OUT_DIR [--lines N] [--evaluate SPLIT_JSON]
"""
import gzip
import json
import os
import sys


def pages_of(text, lines_per_page):
    lines = text.split("\n")
    return ["\n".join(lines[i:i + lines_per_page]) for i in range(0, len(lines), lines_per_page)]


def role(index, count):
    if count == 1:
        return "single"
    return "first" if index == 0 else ("last" if index == count - 1 else "middle")


def make(data, out_dir, lines_per_page):
    os.makedirs(out_dir, exist_ok=True)
    by_group = {}
    with gzip.open(data, "rt", encoding="utf-8") as f, \
            open(os.path.join(out_dir, "types_train.jsonl"), "w") as types, \
            open(os.path.join(out_dir, "roles_train.jsonl"), "w") as roles:
        for line in f:
            doc = json.loads(line)
            pages = [p for p in pages_of(doc["text"], lines_per_page) if p.strip()]
            if doc["split"] == "test":
                by_group.setdefault(doc["labels"][0], []).append((doc, pages))
                continue
            for i, page in enumerate(pages):
                page_id = "%s#%d" % (doc["id"], i + 1)
                types.write(json.dumps({"id": page_id, "labels": doc["labels"], "text": page}) + "\n")
                roles.write(json.dumps({"id": page_id, "labels": [role(i, len(pages))],
                                        "text": page}) + "\n")
    groups = sorted(by_group)
    with open(os.path.join(out_dir, "stream_test.jsonl"), "w") as stream:
        for k in range(max(len(v) for v in by_group.values())):
            for group in groups:
                if k >= len(by_group[group]):
                    continue
                doc, pages = by_group[group][k]
                for i, page in enumerate(pages):
                    stream.write(json.dumps({"id": "%s#%d" % (doc["id"], i + 1),
                                             "labels": doc["labels"], "text": page}) + "\n")


def evaluate(split_json):
    found, truth, position = [], [], 0
    previous = None
    page_doc = []
    for line in open(split_json):
        seg = json.loads(line)
        found.append((position, position + len(seg["pages"])))
        for page_id in seg["pages"]:
            page_doc.append(page_id.rsplit("#", 1)[0])
        position += len(seg["pages"])
    start = 0
    for i in range(1, len(page_doc) + 1):
        if i == len(page_doc) or page_doc[i] != page_doc[i - 1]:
            truth.append((start, i))
            start = i
    found_starts = {b for b, _ in found if b}
    true_starts = {b for b, _ in truth if b}
    common = len(found_starts & true_starts)
    exact = len(set(found) & set(truth))
    print("pages %d, documents %d, found %d" % (len(page_doc), len(truth), len(found)))
    print("boundary precision %.4f recall %.4f, documents exact %.4f" % (
        common / max(len(found_starts), 1), common / max(len(true_starts), 1),
        exact / max(len(truth), 1)))


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--evaluate" in args:
        evaluate(args[args.index("--evaluate") + 1])
    else:
        lines = int(args[args.index("--lines") + 1]) if "--lines" in args else 15
        make(args[0], args[1], lines)
