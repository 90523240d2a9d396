#!/usr/bin/env python3
"""Does bench/gen_corpus write documents that behave like real text?

Generates a corpus of the size of 20 Newsgroups bydate (11,314 training and
7,532 test documents) and compares it with the real split, side by side:
document frequencies, distinct words per document, kNN and svm accuracy on
the held-out split (autocat train / eval), and what safe kNN pruning could
skip (bench/knn_bounds: the share of postings max-score must visit with the
k-th similarity known in advance, and the gap from the k-th to the
(k+10)-th neighbour).

usage: bench/validate_generator.py [--build build] [--data FILE] [--work DIR]
           [--model mixture|dcm|multinomial] [--seed S] [--concentration-scale X]
           [--bounds-documents N] [--skip-real]

Standard library only. Runs four trainings of about a minute each.
"""

import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import time

TRAIN_SIZE = 11314
TEST_SIZE = 7532
WORD = re.compile(r"[A-Za-z0-9\u0080-\U0010ffff]+")  # gen_corpus's tokenizer


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit("validate_generator: %s failed (%d): %s" %
                 (" ".join(command), result.returncode, result.stderr.strip()[-2000:]))
    return result


def write_real(data, work):
    """The real train and test splits as two JSON Lines files."""
    paths = {split: os.path.join(work, "real_%s.jsonl" % split) for split in ("train", "test")}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    lines = {split: [] for split in paths}
    with gzip.open(data, "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record.get("split") in lines:
                lines[record["split"]].append(line)
    # The file is sorted by newsgroup; knn_bounds reads the first test
    # documents, so shuffle them (fixed seed) as the generated ones are.
    random.Random(0).shuffle(lines["test"])
    for split, records in lines.items():
        with open(paths[split] + ".tmp", "w", encoding="utf-8") as out:
            out.writelines(records)
        os.replace(paths[split] + ".tmp", paths[split])
    return paths


def write_generated(args, work):
    paths = {split: os.path.join(work, "gen_%s.jsonl" % split) for split in ("train", "test")}
    common = [os.path.join(args.build, "bench", "gen_corpus"), "--input", args.data,
              "--model", args.model, "--concentration-scale", str(args.concentration_scale)]
    started = time.time()
    run(common + ["--documents", str(TRAIN_SIZE), "--seed", str(args.seed), "--quiet",
                  "--output", paths["train"]])
    run(common + ["--documents", str(TEST_SIZE), "--seed", str(args.seed + 1), "--quiet",
                  "--test-fraction", "1", "--id-prefix", "gentest/", "--output", paths["test"]])
    seconds = time.time() - started
    return paths, seconds


def text_statistics(path):
    """Distinct words per document and the document-frequency distribution."""
    df = {}
    documents = 0
    distinct = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = set(w.lower() for w in WORD.findall(json.loads(line)["text"]))
            documents += 1
            distinct += len(words)
            for w in words:
                df[w] = df.get(w, 0) + 1
    values = sorted(df.values(), reverse=True)
    postings = sum(values)
    buckets = [(1, 1), (2, 2), (3, 9), (10, 99), (100, 999), (1000, documents)]
    share = {"df %d-%d" % b if b[0] != b[1] else "df %d" % b[0]:
             sum(1 for v in values if b[0] <= v <= b[1]) / len(values) for b in buckets}
    deciles = {}
    for tenth in (1, 2, 5):  # share of all postings held by the top tenth of terms by df
        top = values[:max(1, len(values) * tenth // 100)]
        deciles["postings in top %d%% of terms" % tenth] = sum(top) / postings
    return {"documents": documents, "vocabulary": len(values),
            "mean distinct words / doc": distinct / documents, "share of terms": share,
            "top": deciles}


def accuracy(args, work, name, paths, method):
    model = os.path.join(work, "%s_%s.model" % (name, method))
    autocat = os.path.join(args.build, "indexer", "autocat")
    extra = ["--knn-k", "50"] if method == "knn" else []
    started = time.time()
    run([autocat, "train", "--model", model, "--method", method, "--threshold-folds", "0",
         "--quiet"] + extra + [paths["train"]])
    trained = time.time() - started
    result = run([autocat, "eval", "--model", model, "--method", method, "--json",
                  paths["test"]])
    report = json.loads(result.stdout)
    return model, report["accuracy"], trained


def bounds(args, model, test):
    result = run([os.path.join(args.build, "bench", "knn_bounds"), "--model", model, "--data",
                  test, "--k", "50", "--documents", str(args.bounds_documents),
                  "--blocks", "64"])
    out = result.stdout
    found = {}
    m = re.search(r"k-th similarity \(theta\): ([0-9.]+)", out)
    found["theta"] = float(m.group(1))
    m = re.search(r"within 10% / 20% / 50% of theta: (\d+) / (\d+) / (\d+)", out)
    found["within 10/20/50%"] = "%s / %s / %s" % m.groups()
    m = re.search(r"\(k\+10\)-th similarity: ([0-9.]+) \(([0-9.]+)% of theta\)", out)
    found["gap k..k+10"] = "%s (%s%%)" % m.groups()
    m = re.search(r"\| max-score \(per-term bounds\) \| (\d+) \| ([0-9.]+)% \|", out)
    found["max-score oracle share"] = float(m.group(2)) / 100
    m = re.search(r"\| exhaustive \| (\d+) \|", out)
    found["postings per query"] = int(m.group(1))
    return found


def measure(args, work, name, paths):
    row = {"text": text_statistics(paths["train"])}
    model, row["knn accuracy"], row["knn train s"] = accuracy(args, work, name, paths, "knn")
    _, row["svm accuracy"], row["svm train s"] = accuracy(args, work, name, paths, "svm")
    row["bounds"] = bounds(args, model, paths["test"])
    return row


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(here, "..", "build"))
    parser.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data",
                                                       "20news-bydate.jsonl.gz"))
    parser.add_argument("--work", default="validate_generator.work")
    parser.add_argument("--model", default="mixture", choices=["mixture", "dcm", "multinomial"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concentration-scale", type=float, default=1.0)
    parser.add_argument("--bounds-documents", type=int, default=300)
    parser.add_argument("--skip-real", action="store_true",
                        help="reuse the real side's numbers from WORK/real.json")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    real_cache = os.path.join(args.work, "real.json")
    if args.skip_real and os.path.exists(real_cache):
        with open(real_cache) as f:
            real = json.load(f)
    else:
        real = measure(args, args.work, "real", write_real(args.data, args.work))
        with open(real_cache, "w") as f:
            json.dump(real, f)
    paths, seconds = write_generated(args, args.work)
    generated = measure(args, args.work, "gen", paths)

    label = "generated (%s, seed %d, s x %g)" % (args.model, args.seed, args.concentration_scale)
    print("generation: %d documents in %.1f s (%.0f docs/s, fit included)\n" %
          (TRAIN_SIZE + TEST_SIZE, seconds, (TRAIN_SIZE + TEST_SIZE) / seconds))
    print("| | 20 Newsgroups bydate | %s |" % label)
    print("|---|---:|---:|")

    def line(name, a, b, fmt="%s"):
        print("| %s | %s | %s |" % (name, fmt % a, fmt % b))

    line("training docs (tokenized as gen_corpus)", real["text"]["documents"],
         generated["text"]["documents"], "%d")
    line("vocabulary (training)", real["text"]["vocabulary"], generated["text"]["vocabulary"],
         "%d")
    line("mean distinct words / doc", real["text"]["mean distinct words / doc"],
         generated["text"]["mean distinct words / doc"], "%.1f")
    for key in real["text"]["share of terms"]:
        line("share of terms with " + key, 100 * real["text"]["share of terms"][key],
             100 * generated["text"]["share of terms"][key], "%.1f%%")
    for key in real["text"]["top"]:
        line("share of " + key, 100 * real["text"]["top"][key],
             100 * generated["text"]["top"][key], "%.1f%%")
    line("knn accuracy (k = 50, held-out split)", real["knn accuracy"],
         generated["knn accuracy"], "%.4f")
    line("svm accuracy (held-out split)", real["svm accuracy"], generated["svm accuracy"],
         "%.4f")
    rb, gb = real["bounds"], generated["bounds"]
    line("kNN query postings (exhaustive)", rb["postings per query"], gb["postings per query"],
         "%d")
    line("max-score, oracle theta: share of postings to visit",
         100 * rb["max-score oracle share"], 100 * gb["max-score oracle share"], "%.1f%%")
    line("theta (50th similarity)", rb["theta"], gb["theta"], "%.4f")
    line("gap 50th to 60th similarity", rb["gap k..k+10"], gb["gap k..k+10"])
    line("training docs within 10% / 20% / 50% of theta", rb["within 10/20/50%"],
         gb["within 10/20/50%"])

    ok_knn = abs(real["knn accuracy"] - generated["knn accuracy"]) <= 0.05
    ok_svm = abs(real["svm accuracy"] - generated["svm accuracy"]) <= 0.05
    ratio = gb["max-score oracle share"] / max(rb["max-score oracle share"], 1e-9)
    ok_bounds = 0.5 <= ratio <= 2
    print("\ntargets: knn within 5 points %s, svm within 5 points %s, "
          "max-score share within 2x %s (ratio %.2f)" %
          ("yes" if ok_knn else "NO", "yes" if ok_svm else "NO",
           "yes" if ok_bounds else "NO", ratio))


if __name__ == "__main__":
    main()
