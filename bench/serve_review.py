#!/usr/bin/python3
# The review loop of `autocat serve` timed over HTTP on loopback: N times,
# the first document of the review queue is corrected with its true label
# (PUT), then the queue is asked for again (it waits for the re-ranking the
# correction started) and its new first document opened twice (the first
# open right after a correction, the second once the model settled).
# Prints the medians, 90th percentiles and extremes, and the re-ranking's own
# figures from GET /api/review. Works on copies of DB and MODEL.
#
# usage: serve_review.py AUTOCAT_CLI DB MODEL LABELS.jsonl [N]
#   LABELS.jsonl: the indexed documents' {"id", "labels"} (e.g. the split
#   that was indexed), for the true labels.
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

CLI, DB, MODEL, LABELS = sys.argv[1:5]
N = int(sys.argv[5]) if len(sys.argv) > 5 else 30
TOKEN = "bench-token"

labels = {}
with open(LABELS, encoding="utf-8") as f:
    for line in f:
        record = json.loads(line)
        labels[record["id"]] = record["labels"]

work = tempfile.mkdtemp(prefix="serve-review-")
db, model, token_file = (os.path.join(work, n) for n in ("db", "model", "token"))
shutil.copytree(DB, db)
shutil.copytree(MODEL, model)
with open(token_file, "w") as f:
    f.write(TOKEN + "\n")
server = subprocess.Popen([CLI, "serve", "--db", db, "--model", model, "--listen", "127.0.0.1:0",
                           "--token-file", token_file], stdout=subprocess.PIPE, text=True)
url = server.stdout.readline().strip()[len("listening on "):].split("/?token=")[0]
server.stdout.readline()


def call(path, method="GET", body=None):
    headers = {"Authorization": "Bearer " + TOKEN}
    if body is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url + path, method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
    started = time.time()
    with urllib.request.urlopen(request, timeout=60) as response:
        reply = json.load(response)
    return reply, 1000 * (time.time() - started)


def quoted(doc_id):
    return urllib.parse.quote(doc_id, safe="")


rows = {name: [] for name in ["PUT", "queue after", "open after", "open again", "rerank ms",
                              "model refit ms", "search ms", "rescored"]}
try:
    queue, _ = call("/api/review?limit=1")
    for _ in range(N):
        doc_id = queue["documents"][0]["id"]
        _, put = call("/api/documents/%s/categories" % quoted(doc_id), "PUT",
                      {"categories": labels[doc_id][:1]})
        queue, after = call("/api/review?limit=1")
        _, opened = call("/api/documents/" + quoted(queue["documents"][0]["id"]))
        _, again = call("/api/documents/" + quoted(queue["documents"][0]["id"]))
        rerank = queue["rerank"]
        for name, value in [("PUT", put), ("queue after", after), ("open after", opened),
                            ("open again", again), ("rerank ms", rerank["last_ms"]),
                            ("model refit ms", rerank["last_model_ms"]),
                            ("search ms", rerank["last_search_ms"]),
                            ("rescored", rerank["last_rescored"])]:
            rows[name].append(value)
finally:
    server.terminate()
    server.wait(timeout=10)
    shutil.rmtree(work, ignore_errors=True)

print("%d corrections; times in ms" % N)
for name, values in rows.items():
    values.sort()
    print("%-15s median %7.1f  p90 %7.1f  min %7.1f  max %7.1f" %
          (name, statistics.median(values), values[int(0.9 * (len(values) - 1))], values[0],
           values[-1]))
