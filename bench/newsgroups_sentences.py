#!/usr/bin/env python3
"""20 Newsgroups as about 100,000 one-sentence texts: a short-text benchmark.

Reads the bydate JSON Lines (../shared/data/20news-bydate.jsonl.gz) and writes
one document per sentence of each message's body, labelled with the message's
newsgroup and kept in the message's split, so that no message has sentences on
both sides. The headers, quoted lines (">"), signatures (after "-- ") and
lines without letters are dropped; a sentence ends at ".", "!" or "?" followed
by a space, or at a blank line. Sentences of 6 to 40 words are kept, at most
--per-message of each message (the first ones), and the whole is cut to
--max-documents in input order, each split in proportion. The Subject line is
its own sentence, so every message with one contributes.

usage: newsgroups_sentences.py [--data FILE] [--max-documents N] [--per-message K] OUT.jsonl
Then: ../shared/peers/run.py OUT.jsonl --systems sk-linsvc,autocat-default ...
"""
import argparse
import gzip
import json
import os
import re
import sys

from newsgroups_subjects import subject_of

SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
WORD_RE = re.compile(r"[A-Za-z]+")


def body_lines(text):
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    for line in body.split("\n"):
        if line.startswith("-- "):
            return  # the signature
        stripped = line.strip()
        if stripped.startswith(">") or stripped.startswith("|") or not WORD_RE.search(stripped):
            yield ""
            continue
        yield stripped


def sentences_of(text, per_message):
    found = []
    subject = subject_of(text)
    if 6 <= len(subject.split()) <= 40:
        found.append(subject)
    paragraphs = "\n".join(body_lines(text))
    for sentence in SENTENCE_END_RE.split(paragraphs):
        sentence = " ".join(sentence.split())
        if 6 <= len(sentence.split()) <= 40 and len(WORD_RE.findall(sentence)) >= 4:
            found.append(sentence)
        if len(found) >= per_message:
            break
    return found


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data",
                                                       "20news-bydate.jsonl.gz"))
    parser.add_argument("--max-documents", type=int, default=100000)
    parser.add_argument("--per-message", type=int, default=8)
    parser.add_argument("out")
    args = parser.parse_args()
    if not os.path.exists(args.data):
        sys.exit(f"newsgroups_sentences: {args.data}: not found (see ../shared/data/README.md)")
    docs = []
    with gzip.open(args.data, "rt", encoding="utf-8") as src:
        for line in src:
            doc = json.loads(line)
            for i, sentence in enumerate(sentences_of(doc["text"], args.per_message)):
                docs.append({"id": f"{doc['id']}#{i}", "split": doc["split"],
                             "labels": doc["labels"], "text": sentence})
    keep = min(1.0, args.max_documents / max(1, len(docs)))
    counts = {}
    seen = {}
    with open(args.out, "w", encoding="utf-8") as out:
        for doc in docs:
            split = doc["split"]
            seen[split] = seen.get(split, 0) + 1
            # Every split cut in the same proportion, spread over the input.
            if int(seen[split] * keep) == int((seen[split] - 1) * keep):
                continue
            counts[split] = counts.get(split, 0) + 1
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"{args.out}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
          f" sentences (of {len(docs)} found)", file=sys.stderr)


if __name__ == "__main__":
    main()
