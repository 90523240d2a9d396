#!/usr/bin/env python3
"""Writes a synthetic labelled collection with many small categories.

Each document draws words from a shared Zipfian vocabulary and from a few
words of its own category, so every category's documents share some terms.
JSON Lines on stdout: {"id", "text", "labels"}.

  many_categories.py --categories 10000 --per-category 3 --vocabulary 10000
"""
import argparse
import json
import random
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--categories", type=int, default=10000)
    parser.add_argument("--per-category", type=int, default=3)
    parser.add_argument("--vocabulary", type=int, default=10000)
    parser.add_argument("--words", type=int, default=40, help="words per document")
    parser.add_argument("--own", type=int, default=8, help="words of its category per document")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--id-prefix", default="d")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    vocab = ["w%05d" % i for i in range(args.vocabulary)]
    weights = [1.0 / (i + 1) for i in range(args.vocabulary)]
    out = sys.stdout
    for c in range(args.categories):
        own = rng.sample(vocab, 5)
        for d in range(args.per_category):
            words = rng.choices(vocab, weights, k=args.words - args.own)
            words += rng.choices(own, k=args.own)
            rng.shuffle(words)
            record = {"id": "%s%d-%d" % (args.id_prefix, c, d), "text": " ".join(words),
                      "labels": ["c%05d" % c]}
            out.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
