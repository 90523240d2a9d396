#!/usr/bin/env python3
"""20 Newsgroups as an any-of collection with rare categories.

Reads the bydate JSON Lines (../shared/data/20news-bydate.jsonl.gz) and
writes the same documents, split and newsgroup labels, each document also
labelled with some of `--categories` rare categories of one of two kinds:

  words   "has-W": every document containing the word W (five letters or
          more, lower-cased), for words in 2 to 4 training documents and 2
          to 6 test documents. Learnable from a handful of examples.
  random  "noise-NN": 3 training and 3 test documents drawn at random.
          Nothing to learn: a rule that gives such categories cuts of their
          own should leave them (and micro-F1) alone.

Deterministic for a --seed.

usage: rare_categories.py [--data FILE] [--kind words|random] [--categories N]
                          [--seed S] OUT.jsonl
Then: autocat train --model M --split train OUT.jsonl;
      autocat eval --model M --split test --method svm OUT.jsonl
"""
import argparse
import collections
import gzip
import json
import os
import random
import re
import sys

WORD_RE = re.compile(r"[a-z]{5,}")


def words_of(text):
    return set(WORD_RE.findall(text.lower()))


def add_word_categories(docs, count, rng):
    words = [words_of(d["text"]) for d in docs]
    train_df, test_df = collections.Counter(), collections.Counter()
    for doc, present in zip(docs, words):
        (train_df if doc["split"] == "train" else test_df).update(present)
    candidates = sorted(w for w, df in train_df.items() if 2 <= df <= 4 and 2 <= test_df[w] <= 6)
    rng.shuffle(candidates)
    for word in candidates[:count]:
        for doc, present in zip(docs, words):
            if word in present:
                doc["labels"].append("has-" + word)


def add_random_categories(docs, count, rng):
    by_split = {"train": [], "test": []}
    for doc in docs:
        by_split.setdefault(doc["split"], []).append(doc)
    for k in range(count):
        for split in ("train", "test"):
            for doc in rng.sample(by_split[split], 3):  # 3 distinct documents
                doc["labels"].append("noise-%02d" % k)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data",
                                                       "20news-bydate.jsonl.gz"))
    parser.add_argument("--kind", choices=["words", "random"], default="words")
    parser.add_argument("--categories", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("out")
    args = parser.parse_args()
    opener = gzip.open if args.data.endswith(".gz") else open
    try:
        with opener(args.data, "rt", encoding="utf-8") as f:
            docs = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        sys.exit("rare_categories.py: %s: %s (see ../shared/data/README.md)" % (args.data, e.strerror))
    rng = random.Random(args.seed)
    if args.kind == "words":
        add_word_categories(docs, args.categories, rng)
    else:
        add_random_categories(docs, args.categories, rng)
    with open(args.out, "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps(doc) + "\n")


if __name__ == "__main__":
    main()
