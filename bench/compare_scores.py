#!/usr/bin/env python3
"""Compares two `autocat classify --json` outputs of the same documents.

Prints the documents compared, the largest absolute difference of any
category's score, and how many documents got different categories.

  compare_scores.py BEFORE.jsonl AFTER.jsonl
"""
import json
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return {r["id"]: r for r in map(json.loads, f)}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip())
    before, after = read(sys.argv[1]), read(sys.argv[2])
    if before.keys() != after.keys():
        sys.exit("compare_scores: the two outputs hold different documents")
    worst, changed = 0.0, 0
    for doc_id, a in before.items():
        b = after[doc_id]
        for name, score in a["scores"].items():
            worst = max(worst, abs(score - b["scores"][name]))
        if [c["name"] for c in a["categories"]] != [c["name"] for c in b["categories"]]:
            changed += 1
    print("documents %d  max_score_difference %.3g  categories_changed %d"
          % (len(before), worst, changed))


if __name__ == "__main__":
    main()
