#!/usr/bin/python3
"""Indexing throughput through the Python module beside python3-xapian's plain
TermGenerator, on the same documents in one run (20 Newsgroups test split).

usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_index.py \
           [--data 20news-bydate.jsonl.gz] [--model DIR] [--cli build/indexer/autocat]
Without --model a model is trained on the train split with the CLI first."""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import time

import xapian

import autocat

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_split(path, split):
    with gzip.open(path, "rt", encoding="utf-8") as records:
        return [(record["id"], record["text"]) for record in map(json.loads, records)
                if record.get("split") == split]


def run(name, documents, work, add):
    """Indexes every document into a fresh on-disk database with `add(db, id, text)`."""
    db = xapian.WritableDatabase(os.path.join(work, name), xapian.DB_CREATE_OR_OVERWRITE)
    start, cpu_start = time.perf_counter(), time.process_time()
    for doc_id, text in documents:
        add(db, doc_id, text)
    db.commit()
    report(name, len(documents), time.perf_counter() - start, time.process_time() - cpu_start)
    db.close()


def report(name, count, seconds, cpu_seconds):
    # CPU time too: on a shared machine it varies far less than wall time.
    print(f"{name:44s} {seconds:7.2f} s {count / seconds:8.0f} docs/s   "
          f"cpu {cpu_seconds:7.2f} s {count / cpu_seconds:8.0f} docs/s", flush=True)


def termgenerator_add(stemmer):
    generator = xapian.TermGenerator()
    generator.set_stemmer(xapian.Stem(stemmer))
    if stemmer != "none":
        generator.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)

    def add(db, doc_id, text):
        doc = xapian.Document()
        generator.set_document(doc)
        generator.index_text(text)
        doc.set_data(text[:200])
        doc.add_boolean_term("Q" + doc_id)
        db.replace_document("Q" + doc_id, doc)
    return add


def categories_then_termgenerator(indexer):
    generator = xapian.TermGenerator()

    def add(db, doc_id, text):
        doc = xapian.Document()
        generator.set_document(doc)
        generator.index_text(text)
        indexer.index(text, doc)  # categories only: index_text=False
        doc.set_data(text[:200])
        doc.add_boolean_term("Q" + doc_id)
        db.replace_document("Q" + doc_id, doc)
    return add


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(SOURCE_DIR, "..", "shared", "data",
                                                       "20news-bydate.jsonl.gz"))
    parser.add_argument("--model")
    parser.add_argument("--cli", default=os.path.join(SOURCE_DIR, "build", "indexer", "autocat"))
    args = parser.parse_args()
    if not os.path.exists(args.data):
        raise SystemExit(f"python_index: {args.data} not found: pass --data with the 20 "
                         "Newsgroups JSON Lines file")
    work = tempfile.mkdtemp(prefix="autocat_python_bench_")
    try:
        model = args.model
        if model is None:
            model = os.path.join(work, "model")
            print(f"training {model} with {args.cli} on the train split ...", flush=True)
            subprocess.run([args.cli, "train", "--model", model, "--split", "train", args.data],
                           check=True, stdout=subprocess.DEVNULL)
        documents = read_split(args.data, "test")
        print(f"{len(documents)} test documents, {sum(len(t) for _, t in documents) / 1e6:.1f} MB,"
              f" xapian {xapian.version_string()}, autocat {autocat.__version__}")
        indexer = autocat.CategoryIndexer(model)
        print(f"model default method: {indexer.default_method}")
        run("python3-xapian TermGenerator, no stemming", documents, work,
            termgenerator_add("none"))
        run("python3-xapian TermGenerator, english", documents, work,
            termgenerator_add("english"))
        run("autocat.index_document (text + categories)", documents, work,
            lambda db, doc_id, text: indexer.index_document(db, doc_id, text))
        run("TermGenerator + autocat categories only", documents, work,
            categories_then_termgenerator(autocat.CategoryIndexer(model, index_text=False)))
        db = xapian.WritableDatabase(os.path.join(work, "batch"), xapian.DB_CREATE_OR_OVERWRITE)
        start, cpu_start = time.perf_counter(), time.process_time()
        for first in range(0, len(documents), 1000):
            indexer.index_documents(db, [(doc_id, text, "")
                                         for doc_id, text in documents[first:first + 1000]])
        db.commit()
        report("autocat.index_documents, batches of 1000", len(documents),
               time.perf_counter() - start, time.process_time() - cpu_start)
        db.close()
        start, cpu_start = time.perf_counter(), time.process_time()
        for _, text in documents:
            indexer.categorize(text)
        report("autocat categorize() alone (no database)", len(documents),
               time.perf_counter() - start, time.process_time() - cpu_start)
        texts = [text for _, text in documents]
        start, cpu_start = time.perf_counter(), time.process_time()
        indexer.categorize_many(texts)
        report("autocat categorize_many() (every core)", len(documents),
               time.perf_counter() - start, time.process_time() - cpu_start)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
