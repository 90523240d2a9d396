#!/usr/bin/python3
# autocat serve follows its model directory while it runs: documents another
# process learns (`autocat learn`) change serve's scores at its next
# request; after `train --add` installs a new generation, and after the
# model directory is replaced by a new training, corrections work and each
# document view comes from one model (its scores, its decision and its
# explanation equal a fresh `autocat explain --json`'s).
#
# usage: serve_generation_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from serve_fixture import OPENER, check, failures, run_directory

CLI, SOURCE, WORK = sys.argv[1:4]
TOKEN = "generation-token"


def run(*args, stdin=None):
    return subprocess.run([CLI, *args], input=stdin, check=True, capture_output=True,
                          text=True).stdout


WORK, MODEL, DB, TOKEN_FILE = run_directory(WORK, TOKEN)
TRAIN = os.path.join(SOURCE, "tests/data/fixture_train.jsonl")
DOCS = os.path.join(SOURCE, "tests/data/fixture_test.jsonl")
TEXTS = {}
with open(DOCS) as f:
    for line in f:
        record = json.loads(line)
        TEXTS[record["id"]] = record["text"]
run("train", "--model", MODEL, TRAIN)
run("index", "--model", MODEL, "--db", DB, "--store-text", DOCS)

stderr = tempfile.TemporaryFile(mode="w+", dir=WORK)
process = subprocess.Popen([CLI, "serve", "--db", DB, "--model", MODEL, "--listen", "127.0.0.1:0",
                            "--token-file", TOKEN_FILE], stdout=subprocess.PIPE, stderr=stderr,
                           text=True)


@atexit.register
def kill_server():
    if process.poll() is None:
        process.kill()
        process.wait()


first = process.stdout.readline().strip()
process.stdout.readline()
if not first.startswith("listening on http://127.0.0.1:"):
    raise SystemExit("serve did not start: %r" % first)
URL = first[len("listening on "):].split("/?token=")[0].rstrip("/")


def request(method, path, body=None):
    headers = {"Authorization": "Bearer " + TOKEN}
    req = urllib.request.Request(URL + path, data=body.encode() if body else None, method=method,
                                 headers=headers)
    try:
        with OPENER.open(req, timeout=20) as response:
            return response.status, json.loads(response.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def document(doc_id):
    status, doc = request("GET", "/api/documents/" + urllib.parse.quote(doc_id, ""))
    check(status == 200, "GET %s: 200, got %d %s" % (doc_id, status, doc))
    return doc.get("explanation", {})


def fresh_explain(doc_id):
    out = run("explain", "--model", MODEL, "--json", "-",
              stdin=json.dumps({"id": doc_id, "text": TEXTS[doc_id]}) + "\n")
    expected = json.loads(out)
    del expected["schema_version"]
    return expected


def check_one_model(doc_id, when):
    """The reply's scores, decision and explanation are one model's: the one
    a fresh open of the directory sees."""
    explanation = document(doc_id)
    expected = fresh_explain(doc_id)
    got = {key: explanation.get(key) for key in expected}
    check(got == expected, "%s: %s: the explanation is a fresh explain's: %s != %s" %
          (when, doc_id, got, expected))
    top = [(c["name"], c["score"]) for c in explanation.get("scores", [])]
    fresh_top = [(c["name"], c["score"]) for c in expected["top"]][:len(top)]
    check(top == fresh_top, "%s: %s: the reply's scores are its explanation's model's: %s != %s" %
          (when, doc_id, top, fresh_top))
    return explanation


def correct(doc_id, categories, when):
    status, body = request("PUT", "/api/documents/%s/categories" % urllib.parse.quote(doc_id, ""),
                           json.dumps({"categories": categories}))
    check(status == 200, "%s: PUT %s: 200, got %d %s" % (when, doc_id, status, body))


TARGET = "t-sp-01"
before = check_one_model(TARGET, "at start")

# Another process learns: serve's next reply reflects it.
learned = os.path.join(WORK, "learned.jsonl")
with open(learned, "w") as f:
    for i in range(3):
        f.write(json.dumps({"id": "other-%d" % i, "labels": ["food"], "text": TEXTS[TARGET]}) + "\n")
run("learn", "--model", MODEL, learned)
after_learn = check_one_model(TARGET, "after a CLI learn")
check(after_learn.get("scores") != before.get("scores"),
      "serve's scores change after another process learned: %s" % after_learn.get("scores"))

# A new generation under the running server: corrections and views follow it.
extra = os.path.join(WORK, "extra.jsonl")
with open(extra, "w") as f:
    f.write(json.dumps({"id": "extra-1", "labels": ["science"],
                        "text": "The telescope measured the orbit of a distant comet."}) + "\n")
run("train", "--add", "--model", MODEL, extra)
for doc_id in ["t-sp-02", "t-sp-01"]:
    correct(doc_id, ["sports"], "after train --add")
check_one_model(TARGET, "after train --add and a correction")

# The directory replaced by a new training of the same name.
shutil.rmtree(MODEL)
run("train", "--model", MODEL, TRAIN)
correct(TARGET, ["science"], "after the model directory was replaced")
check_one_model(TARGET, "after the model directory was replaced")

process.terminate()
process.wait(timeout=10)
stderr.seek(0)
errors = stderr.read()
check(errors == "", "serve wrote to stderr: %r" % errors)
if failures:
    print("%d check(s) failed" % len(failures), file=sys.stderr)
    sys.exit(1)
print("serve follows new generations and others' learning")
