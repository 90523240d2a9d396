#!/usr/bin/python3
# autocat serve drives the editor's loop over HTTP: a tiny model is trained,
# an index written, the server started on 127.0.0.1:0 and its JSON API
# driven through urllib. Search and facets equal `autocat search --facets
# --json`, also with min_score and sort=score:C (`--min-score`,
# `--sort-by-score`); unknown /api/ routes are 404 with a JSON error; every
# request needs the token (401), writes are refused read-only (403), bad
# bodies are 400 and unknown ids 404; a correction is in the index and the
# model's journal after a restart and after kill -9 right after the reply;
# review lists the least sure documents first; markup in a title comes back
# escaped and the page inserts no data as markup; a document's explanation
# holds `autocat explain --json`'s for its text (kNN's neighbours, combo's
# members), also after a correction taught the model.
#
# usage: serve_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from serve_fixture import OPENER, SERVERS, check, failures, finish, run_directory

CLI, SOURCE, WORK = sys.argv[1:4]
TOKEN = "s3cret-token"
SCRIPT_TITLE = "<script>alert(1)</script> & more"


def run(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


class Server:
    def __init__(self, *extra, db=None, model=None):
        # stderr to a file, read when a check fails: a pipe nobody reads
        # would block the server once full, and the file keeps the evidence.
        self.stderr = tempfile.TemporaryFile(mode="w+", dir=WORK)
        self.process = subprocess.Popen(
            [CLI, "serve", "--db", db or DB, "--model", model or MODEL, "--listen", "127.0.0.1:0",
             "--token-file", TOKEN_FILE, *extra],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        SERVERS.append(self.process)
        first = self.process.stdout.readline().strip()
        second = self.process.stdout.readline().strip()
        if not first.startswith("listening on http://127.0.0.1:") or "/?token=" not in first:
            self.process.kill()
            self.process.wait()
            raise SystemExit("serve did not start: %r %r %s" % (first, second, self.errors()))
        check(second == "token: " + TOKEN, "serve prints the token from --token-file")
        self.url = first[len("listening on "):].split("/?token=")[0]

    def errors(self):
        self.stderr.seek(0)
        return self.stderr.read()

    def request(self, method, path, body=None, token=TOKEN, raw=False):
        headers = {}
        if token is not None:
            headers["Authorization"] = "Bearer " + token
        data = body.encode() if isinstance(body, str) else body
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers=headers)
        try:
            with OPENER.open(request, timeout=10) as response:
                text = response.read().decode()
                return response.status, text if raw else json.loads(text)
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            return e.code, text if raw else json.loads(text)
        except (OSError, ValueError) as e:
            # No reply, or not JSON: a failed check naming the request and
            # what the server said, not a traceback that ends the test.
            check(False, "%s %s: %r; server stderr: %r" % (method, path, e, self.errors()))
            return 0, "" if raw else {}

    def get(self, path, raw=False):
        return self.request("GET", path, raw=raw)

    def put_categories(self, doc_id, categories, token=TOKEN):
        return self.request("PUT", "/api/documents/%s/categories" % urllib.parse.quote(doc_id, ""),
                            json.dumps({"categories": categories}), token)

    def stop(self, sig=signal.SIGTERM):
        self.process.send_signal(sig)
        self.process.wait(timeout=10)
        self.process.stdout.close()
        errors = self.errors()
        self.stderr.close()
        check(errors == "" or sig == signal.SIGKILL, "serve wrote to stderr: %r" % errors)


WORK, MODEL, DB, TOKEN_FILE = run_directory(WORK, TOKEN)
docs = os.path.join(WORK, "docs.jsonl")
shutil.copy(os.path.join(SOURCE, "tests/data/fixture_test.jsonl"), docs)
with open(docs, "a") as f:
    f.write(json.dumps({"id": "x-script", "title": SCRIPT_TITLE,
                        "text": "The chef baked fresh bread with butter <script>"}) + "\n")
run("train", "--model", MODEL, os.path.join(SOURCE, "tests/data/fixture_train.jsonl"))
# Every category with its score stored, so documents differ in margin.
run("index", "--model", MODEL, "--db", DB, "--store-text", "--any-of", "--threshold", "0", docs)


def cli_search(query, categories):
    args = ["search", "--db", DB, "--facets", "--json", "--limit", "1000"]
    for c in categories:
        args += ["--category", c]
    return json.loads(run(*args, "--", query))


TEXTS = {}
with open(docs) as f:
    for line in f:
        record = json.loads(line)
        TEXTS[record["id"]] = record["text"]


def check_explained(server, doc_id, model=None):
    """The document's explanation holds what `autocat explain --json` says
    about its text (every key, the same values)."""
    status, doc = server.get("/api/documents/" + urllib.parse.quote(doc_id, ""))
    done = subprocess.run([CLI, "explain", "--model", model or MODEL, "--json", "-"],
                          input=json.dumps({"id": doc_id, "text": TEXTS[doc_id]}) + "\n",
                          check=True, capture_output=True, text=True)
    expected = json.loads(done.stdout)
    del expected["schema_version"]
    explanation = doc.get("explanation", {})
    got = {key: explanation.get(key) for key in expected}
    check(status == 200 and got == expected,
          "%s: the explanation is autocat explain --json's: %s != %s" % (doc_id, got, expected))
    return expected


def margin(categories):
    scores = sorted((c["score"] for c in categories), reverse=True)
    return scores[0] - scores[1] if len(scores) >= 2 else (scores[0] if scores else 0.0)


started = time.time()
server = Server()

# Search and facets as `autocat search --facets --json`.
for query, categories in [("", []), ("team", []), ("the", ["sports"]), ("the", ["food", "science"]),
                          ("category:science", []), ("bread OR team", [])]:
    expected = cli_search(query, categories)
    params = [("q", query), ("facets", "1"), ("limit", "1000")] + [("category", c) for c in categories]
    status, got = server.get("/api/search?" + urllib.parse.urlencode(params))
    what = "search %r %r" % (query, categories)
    check(status == 200, what + ": 200")
    check(got["matches"] == expected["matches_estimated"], what + ": matches")
    check(got["exact"] is True, what + ": exact")
    check([d["id"] for d in got["documents"]] == [r["id"] for r in expected["results"]],
          what + ": documents")
    check([d["categories"] for d in got["documents"]] ==
          [r["categories"] for r in expected["results"]], what + ": categories")
    check([(f["name"], f["count"]) for f in got["facets"]] ==
          [(f["category"], f["count"]) for f in expected["facets"]], what + ": facets")
# min_score and sort=score:C as `autocat search --min-score --sort-by-score`;
# the facets count only the documents min_score keeps.
for query, categories, min_score, sort in [("", ["food"], "0.5", "food"),
                                           ("the", ["sports", "science"], "0.4", "science"),
                                           ("", ["science"], "0.9", None),
                                           ("team OR bread", [], None, "food")]:
    args = ["search", "--db", DB, "--facets", "--json", "--limit", "1000"]
    params = [("q", query), ("facets", "1"), ("limit", "1000")]
    for c in categories:
        args += ["--category", c]
        params.append(("category", c))
    if min_score is not None:
        args += ["--min-score", min_score]
        params.append(("min_score", min_score))
    if sort is not None:
        args += ["--sort-by-score", sort]
        params.append(("sort", "score:" + sort))
    expected = json.loads(run(*args, "--", query))
    status, got = server.get("/api/search?" + urllib.parse.urlencode(params))
    what = "search %r %r min_score=%s sort=%s" % (query, categories, min_score, sort)
    check(status == 200, what + ": 200")
    ids = [d["id"] for d in got["documents"]]
    check(ids == [r["id"] for r in expected["results"]], what + ": documents as the CLI")
    check(got["matches"] == len(ids) == expected["facet_documents"], what + ": matches")
    check([(f["name"], f["count"]) for f in got["facets"]] ==
          [(f["category"], f["count"]) for f in expected["facets"]], what + ": facets as the CLI")
    scores = {d["id"]: {c["name"]: c["score"] for c in d["categories"]} for d in got["documents"]}
    if min_score is not None:
        check(all(any(scores[i].get(c, -1) >= float(min_score) for c in categories) for i in ids),
              what + ": every document scores at least min_score")
        counted = {}
        for i in ids:
            for name in scores[i]:
                counted[name] = counted.get(name, 0) + 1
        check(counted == {f["name"]: f["count"] for f in got["facets"]},
              what + ": facets count the documents kept")
        unfiltered = server.get("/api/search?" + urllib.parse.urlencode(
            [p for p in params if p[0] != "min_score"]))[1]
        check(len(unfiltered["documents"]) > len(ids), what + ": min_score drops documents")
    if sort is not None:
        keys = [scores[i].get(sort, float("-inf")) for i in ids]
        check(keys == sorted(keys, reverse=True), what + ": highest score first")
for bad in ["min_score=x&category=food", "min_score=&category=food", "min_score=nan&category=food",
            "min_score=1e999&category=food", "min_score=0.5", "sort=score:", "sort=weight"]:
    status, body = server.get("/api/search?" + bad)
    check(status == 400 and isinstance(body, dict) and body.get("error"),
          "search?%s: 400 with a JSON error (got %d %r)" % (bad, status, body))

# Unknown routes under /api/: 404 with a JSON error, like every other reply.
for method, path in [("GET", "/api/nope"), ("GET", "/api/"), ("GET", "/api"),
                     ("GET", "/api/search/extra"), ("POST", "/api/search"),
                     ("DELETE", "/api/documents/x-script"), ("PUT", "/api/categories")]:
    status, raw = server.request(method, path, body="" if method in ("POST", "PUT") else None,
                                 raw=True)
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    check(status == 404 and isinstance(body, dict) and path in body.get("error", ""),
          "%s %s: 404 with a JSON error naming it (got %d %r)" % (method, path, status, raw))
check(server.get("/api/documents/no-such-id")[1]["error"].startswith("no document"),
      "a route's own 404 keeps its message")

status, got = server.get("/api/search?q=&offset=2&limit=3")
everything = cli_search("", [])
check(status == 200 and [d["id"] for d in got["documents"]] ==
      [r["id"] for r in everything["results"][2:5]], "offset and limit page the results")
check(got["facets"] == [], "no facets unless asked")
check(server.get("/api/search?limit=x")[0] == 400, "a bad limit is 400")
status, got = server.get("/api/categories")
check(status == 200 and got["categories"] == ["food", "science", "sports"],
      "the model's categories: %s" % got)

# Markup in a title: escaped in the JSON text, the same string once parsed.
status, raw = server.get("/api/documents/x-script", raw=True)
check(status == 200, "GET a document: 200")
check("<script>" not in raw and "\\u003cscript\\u003e" in raw, "markup is escaped in JSON")
doc = json.loads(raw)
check(doc["title"] == SCRIPT_TITLE, "the title reads back as given")
check(doc["explanation"]["scores"] and doc["explanation"]["method"], "the document is explained")
check(doc["explanation"]["text"] == "stored" and doc["explanation"]["assigned"] is not None,
      "the explanation keeps its text and assigned")
explained = check_explained(server, "x-script")
check(explained["top"] and "terms" in explained, "autocat explain --json explains x-script")
status, page = server.get("/", raw=True)
check(status == 200 and "<!DOCTYPE html>" in page, "GET / serves the page")
check("innerHTML" not in page and "insertAdjacentHTML" not in page and
      "document.write" not in page, "the page inserts no text as markup")

# Review: the least sure first, the smallest margins of the index.
status, review = server.get("/api/review?limit=4")
check(status == 200 and len(review["documents"]) == 4, "review returns limit documents")
margins = [d["margin"] for d in review["documents"]]
check(margins == sorted(margins), "review: least sure first")
all_margins = sorted(margin(r["categories"]) for r in everything["results"])
check(len(set(all_margins)) > 2, "the fixture's documents differ in margin")
status, whole = server.get("/api/review?limit=1000")
got_margins = [d["margin"] for d in whole["documents"]]
check(len(got_margins) == len(all_margins) and
      all(abs(a - b) < 1e-9 for a, b in zip(got_margins, all_margins)),
      "review: every document, least sure first (%s)" % got_margins)
check(all(abs(a - b) < 1e-9 for a, b in zip(margins, all_margins[:4])),
      "review: the smallest margins of the index (%s vs %s)" % (margins, all_margins[:4]))
for d in review["documents"]:
    check(abs(d["margin"] - margin(d["categories"])) < 1e-9, "review: margin of its categories")
    check(d["candidates"] == sorted(d["categories"], key=lambda c: -c["score"])[:2],
          "review: the two best categories are the candidates")
# Pages, filters, and a misspelt parameter refused.
status, paged = server.get("/api/review?limit=3&offset=2")
check([d["id"] for d in paged["documents"]] == [d["id"] for d in whole["documents"][2:5]] and
      paged["total"] == len(whole["documents"]), "review: offset pages the queue")
status, food = server.get("/api/review?limit=1000&category=food")
check(food["documents"] and [d["id"] for d in food["documents"]] ==
      [d["id"] for d in whole["documents"] if "food" in [c["name"] for c in d["candidates"]]],
      "review: category= keeps the documents whose two best include it")
status, bread = server.get("/api/review?limit=1000&q=bread")
_, bread_search = server.get("/api/search?limit=1000&q=bread")
check(bread["documents"] and sorted(d["id"] for d in bread["documents"]) ==
      sorted(d["id"] for d in bread_search["documents"]), "review: q= keeps the search's matches")
status, error = server.get("/api/review?limt=3")
check(status == 400 and "limt" in error["error"], "review: an unknown parameter is 400: %s" % error)
# The document view carries the stored text; /api/info what the page needs.
check(doc["text"] == TEXTS["x-script"] and doc["text_truncated"] is False,
      "the document carries its stored text")
status, info = server.get("/api/info")
check(status == 200 and info["read_only"] is False and info["decision"] in ("one-of", "any-of"),
      "GET /api/info: %s" % info)

# Writes: token, body and id checks; nothing changes when refused.
target = review["documents"][0]["id"]
before = server.get("/api/documents/" + target)[1]["categories"]
check(server.put_categories(target, ["food"], token=None)[0] == 401, "no token: 401")
check(server.put_categories(target, ["food"], token="wrong")[0] == 401, "wrong token: 401")
for body in ["{", "[]", '{"categories": ["food"], "extra": 1}', '{"categories": "food"}',
             '{"categories": [1]}', '{"categories": ["no-such-category"]}', '{"categories": []}']:
    status, _ = server.request("PUT", "/api/documents/%s/categories" % target, body, TOKEN)
    check(status == 400, "bad body %s: 400 (got %d)" % (body, status))
check(server.put_categories("no-such-id", ["food"])[0] == 404, "unknown id: 404")
check(server.get("/api/documents/no-such-id")[0] == 404, "GET unknown id: 404")
check(server.get("/api/documents/" + target)[1]["categories"] == before,
      "refused writes change nothing")

# A correction: in the reply, the index and the model's journal.
new = "science" if before and before[0]["name"] != "science" else "food"
status, doc = server.put_categories(target, [new])
check(status == 200 and [c["name"] for c in doc["categories"]] == [new], "PUT: 200 and the document")
indexed = next(r for r in cli_search("", [])["results"] if r["id"] == target)
check([c["name"] for c in indexed["categories"]] == [new], "the correction is in the index")


def journal_has(doc_id):
    for path in glob.glob(os.path.join(MODEL, "*", "journal")):
        with open(path, "rb") as f:
            if doc_id.encode() in f.read():
                return True
    return False


check(journal_has(target), "the correction is taught to the model (journal)")
check_explained(server, target)  # the model as it is after the correction
status, review = server.get("/api/review?limit=100")
check(target not in [d["id"] for d in review["documents"]],
      "a corrected document (editor-set) leaves the queue")

# Readers while corrections are written: every reply whole and 200.
import threading

errors = []


def reader():
    for _ in range(40):
        for path in ["/api/search?q=the&facets=1&limit=100", "/api/review?limit=100"]:
            status, body = server.get(path)
            if status != 200 or "documents" not in body:
                errors.append((path, status, body))


readers = [threading.Thread(target=reader) for _ in range(4)]
for thread in readers:
    thread.start()
for i in range(10):
    status, _ = server.put_categories("t-sci-01", ["science"] if i % 2 else ["sports"])
    check(status == 200, "PUT while reading: 200")
for thread in readers:
    thread.join()
check(not errors, "reads during writes: %s" % errors[:3])

# Survives a restart, and kill -9 right after the reply.
server.stop()
server = Server()
check([c["name"] for c in server.get("/api/documents/" + target)[1]["categories"]] == [new],
      "the correction survives a restart")
second = "x-script"
status, refused = server.put_categories(second, ["science", "food"])
check(status == 400 and "one-of" in refused.get("error", ""),
      "a one-of model refuses two categories, naming its decision (%r)" % refused)
status, _ = server.put_categories(second, ["science"])
server.stop(signal.SIGKILL)
check(status == 200, "PUT: 200")
server = Server()
check([c["name"] for c in server.get("/api/documents/" + second)[1]["categories"]] ==
      ["science"], "the correction survives kill -9 after the reply")
check(journal_has(second), "the model learned it before the reply")
server.stop()

# kNN's neighbours and combo's members, as `autocat explain --json` gives them.
for method, key in [("knn", "neighbours"), ("combo", "combo_top")]:
    model = os.path.join(WORK, "model-" + method)
    db = os.path.join(WORK, "db-" + method)
    run("train", "--model", model, "--method", method,
        os.path.join(SOURCE, "tests/data/fixture_train.jsonl"))
    run("index", "--model", model, "--db", db, "--store-text", docs)
    server = Server(db=db, model=model)
    for doc_id in ["t-sp-01", "x-script"]:
        explained = check_explained(server, doc_id, model)
        check(explained["method"] == method and explained.get(key),
              "%s: autocat explain --json gives %s" % (method, key))
    server.stop()

# Read-only: corrections refused even with the token.
server = Server("--read-only")
check(server.put_categories(target, ["food"])[0] == 403, "--read-only: 403")
check(server.put_categories(target, ["food"], token="wrong")[0] == 401, "--read-only, no token: 401")
check(server.get("/api/search?q=team")[0] == 200, "--read-only still searches")
server.stop()

# Bad command lines: one line, exit 2 (usage) or 1 (no database).
for args, code in [(["--listen", "localhost"], 2), (["--listen", "127.0.0.1:99999"], 2)]:
    done = subprocess.run([CLI, "serve", "--db", DB, "--model", MODEL, *args], capture_output=True,
                          text=True, timeout=10)
    check(done.returncode == code and done.stderr.count("\n") == 1 and "--listen" in done.stderr,
          "serve %s: exit %d with one line (%r)" % (args, code, done.stderr))
done = subprocess.run([CLI, "serve", "--db", os.path.join(WORK, "none"), "--model", MODEL],
                      capture_output=True, text=True, timeout=10)
check(done.returncode == 1 and "no such database" in done.stderr, "a missing database: exit 1")

finish("serve_test", time.time() - started, WORK)
