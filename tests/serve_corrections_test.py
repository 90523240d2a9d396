#!/usr/bin/python3
# Editors' corrections through autocat serve and the command line: PUT
# returns the logged record and marks the document editor-set; GET
# /api/corrections lists them newest first; DELETE undoes one (index and
# model); POST /api/bulk needs the exact match count and is undone as one
# batch; /api/stats counts the queue and the agreement; --read-only refuses
# every write. Then the editors' labels survive `autocat recategorize`,
# `autocat index` of the same ids and `autocat relabel`, each reporting how
# many it kept, and `autocat corrections --json` trains a model.
#
# usage: serve_corrections_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from serve_fixture import OPENER, SERVERS, check, failures, finish

CLI, SOURCE, WORK = sys.argv[1:4]
# One token per editor (--tokens): the server names who corrects.
TOKENS = {"ana": "ana-token-0123456789", "ben": "ben-token-0123456789"}


def run(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True, timeout=60)


class Server:
    def __init__(self, *extra):
        self.stderr = tempfile.TemporaryFile(mode="w+", dir=WORK)
        self.process = subprocess.Popen(
            [CLI, "serve", "--db", DB, "--model", MODEL, "--listen", "127.0.0.1:0",
             "--tokens", TOKEN_FILE, *extra],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        SERVERS.append(self.process)
        first = self.process.stdout.readline().strip()
        self.process.stdout.readline()
        if not first.startswith("listening on http://127.0.0.1:"):
            self.process.kill()
            raise SystemExit("serve did not start: %r" % first)
        self.url = first[len("listening on "):].split("/?token=")[0].rstrip("/")

    def request(self, method, path, body=None, editor=None):
        # A client's own X-Autocat-Editor is dropped: the token names the editor.
        headers = {"Authorization": "Bearer " + TOKENS[editor or "ana"], "X-Autocat-Editor": "eve"}
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers=headers)
        try:
            with OPENER.open(request, timeout=20) as response:
                return response.status, json.loads(response.read().decode())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read().decode())

    def put(self, doc_id, categories, editor=None):
        return self.request("PUT", "/api/documents/%s/categories" % urllib.parse.quote(doc_id, ""),
                            {"categories": categories}, editor)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.process.stdout.close()


os.makedirs(WORK, exist_ok=True)
WORK = tempfile.mkdtemp(prefix="run-", dir=WORK)
MODEL = os.path.join(WORK, "model")
DB = os.path.join(WORK, "db")
TOKEN_FILE = os.path.join(WORK, "token")
with open(TOKEN_FILE, "w") as f:
    f.write("".join("%s %s\n" % item for item in TOKENS.items()))
DOCS = os.path.join(SOURCE, "tests/data/fixture_test.jsonl")
started = time.time()
run("train", "--model", MODEL, os.path.join(SOURCE, "tests/data/fixture_train.jsonl"))
run("index", "--model", MODEL, "--db", DB, "--store-text", DOCS)
IDS = [json.loads(line)["id"] for line in open(DOCS)]
server = Server()


def categories_of(doc_id):
    status, doc = server.request("GET", "/api/documents/" + urllib.parse.quote(doc_id, ""))
    return [c["name"] for c in doc["categories"]], doc


def other_than(names):
    return next(c for c in ["food", "science", "sports"] if c not in names)


# PUT: the record in the reply, the document editor-set by the header's editor.
first = IDS[0]
before, doc = categories_of(first)
check(doc["editor_set"] is False and doc["editor"] is None, "an indexed document is not editor-set")
wanted = other_than(before)
status, reply = server.put(first, [wanted], editor="ana")
record = reply.get("correction", {})
check(status == 200 and record.get("seq") == 1 and record.get("editor") == "ana" and
      record.get("categories") == [wanted] and
      [p["name"] for p in record.get("previous", [])] == before and
      record.get("previous_editor") is None and record.get("learned") is True,
      "PUT returns the logged record: %r" % record)
check(reply.get("editor_set") is True and reply["editor"]["name"] == "ana",
      "PUT: the document is editor-set by ana")
check(server.put(first, [wanted, other_than([wanted])])[0] == 400,
      "a one-of model refuses two categories")

# Six more corrections; the list is newest first.
corrected = {first: [wanted]}
for doc_id in IDS[1:7]:
    names, _ = categories_of(doc_id)
    label = names[:1] if len(corrected) % 2 else [other_than(names)]  # agree, disagree, ...
    check(server.put(doc_id, label, editor="ben")[0] == 200, "PUT %s" % doc_id)
    corrected[doc_id] = label
status, listing = server.request("GET", "/api/corrections?limit=3&offset=1")
check(status == 200 and listing["total"] == 7 and
      [c["seq"] for c in listing["corrections"]] == [6, 5, 4], "list: newest first, paged")
status, stats = server.request("GET", "/api/stats")
check(stats["documents"] == len(IDS) and stats["editor_set"] == 7 and
      stats["queue"] == len(IDS) - 7 and stats["agreement_window"] == 7 and
      0 <= stats["agreement"] <= 1, "stats: %r" % stats)

# Undo the last one: previous categories back, the model forgets it, 409 twice.
last = IDS[6]
status, undone = server.request("DELETE", "/api/corrections/7", editor="ben")
check(status == 200 and undone["undone"][0]["undone"] is True and
      undone["documents"][0]["editor_set"] is False, "DELETE undoes: %r" % undone)
check(server.request("DELETE", "/api/corrections/7")[0] == 409, "undo twice: 409")
check(server.request("DELETE", "/api/corrections/99")[0] == 404, "unknown seq: 404")
check(server.request("DELETE", "/api/corrections/x")[0] == 400, "a seq that is no number: 400")
forget = subprocess.run([CLI, "forget", "--model", MODEL, last], capture_output=True, text=True)
check(forget.returncode == 1 and "no training document" in forget.stderr,
      "after undo the model no longer holds %s (%r)" % (last, forget.stderr))
del corrected[last]

# Bulk: refused unless expect is the exact count; one batch, undone together.
query = {"q": "", "category": ["sports"], "add": ["food"]}
status, refused = server.request("POST", "/api/bulk", dict(query, expect=1000))
check(status == 409 and "matches" in refused.get("error", ""), "bulk: wrong expect is 409")
status, search = server.request("GET", "/api/search?category=sports&exact=1&limit=1000")
sports = [d["id"] for d in search["documents"]]
status, bulk = server.request("POST", "/api/bulk", dict(query, expect=len(sports)))
check(status == 200 and bulk["corrected"] == len(sports) and
      len({c["batch"] for c in bulk["corrections"]}) == 1, "bulk: one record each, one batch")
check(all(categories_of(d)[0] == ["food"] for d in sports), "bulk: every match relabelled")
two = {"q": "", "add": ["food", "science"], "expect": len(IDS)}
check(server.request("POST", "/api/bulk", two)[0] == 400, "bulk: a one-of model adds one category")
seq = bulk["corrections"][-1]["seq"]
status, undone = server.request("DELETE", "/api/corrections/%d" % seq)
check(status == 200 and len(undone["undone"]) == len(sports), "bulk: undone as a batch")
check(all(categories_of(d)[0] == (corrected.get(d) or ["sports"]) for d in sports),
      "bulk undo restores every document")
server.stop()

# Read-only: every write refused.
server = Server("--read-only")
check(server.request("DELETE", "/api/corrections/1")[0] == 403, "--read-only: DELETE 403")
check(server.request("POST", "/api/bulk", dict(query, expect=0))[0] == 403,
      "--read-only: POST 403")
server.stop()


def stored():
    done = run("search", "--db", DB, "--json", "--limit", "1000", "--", "")
    return {r["id"]: [c["name"] for c in r["categories"]] for r in json.loads(done.stdout)["results"]}


def kept_all(what):
    now = stored()
    lost = {d: (now[d], c) for d, c in corrected.items() if now[d] != c}
    check(not lost, "%s keeps every editor label (lost: %r)" % (what, lost))


# The command line keeps them: recategorize, index of the same ids, relabel.
done = run("recategorize", "--model", MODEL, "--db", DB, "--all", "--json")
report = json.loads(done.stdout)["databases"][0]
check(report["editor_set_kept"] == len(corrected), "recategorize reports %d kept: %r" %
      (len(corrected), report))
kept_all("recategorize")
relabelled = IDS[8]
label = [other_than(stored()[relabelled])]
run("relabel", "--db", DB, "--model", MODEL, "--category", label[0], "--editor", "cy", relabelled)
corrected[relabelled] = label
done = run("index", "--model", MODEL, "--db", DB, "--json", DOCS)
check(json.loads(done.stdout)["editor_set_kept"] == len(corrected),
      "index of the same ids reports %d kept" % len(corrected))
kept_all("index of the same ids")
done = run("recategorize", "--model", MODEL, "--db", DB, "--all")
check("%d editor-set kept" % len(corrected) in done.stdout, "recategorize says: " + done.stdout)
kept_all("recategorize after relabel")

# The export is training input.
done = run("corrections", "--db", DB, "--json")
records = [json.loads(line) for line in done.stdout.splitlines()]
check(sorted(r["id"] for r in records) == sorted(corrected) and
      all(r["labels"] == corrected[r["id"]] and r["text"] for r in records),
      "corrections --json: every label in force, with its text")
export = os.path.join(WORK, "corrections.jsonl")
with open(export, "w") as f:
    f.write(done.stdout)
run("train", "--model", os.path.join(WORK, "again"), export,
    os.path.join(SOURCE, "tests/data/fixture_train.jsonl"))

# A document whose id is not UTF-8 is listed with U+FFFD (JSON holds only
# UTF-8) and is opened and corrected by the id it is listed with.
import xapian  # noqa: E402  (python3-xapian, as the stock Xapian test uses)

extra = os.path.join(WORK, "extra.jsonl")
with open(extra, "w") as f:
    f.write(json.dumps({"id": "latin-1-id", "text": "Bread, butter and cheese for the soup."}) + "\n")
run("index", "--model", MODEL, "--db", DB, "--store-text", extra)
writable = xapian.WritableDatabase(DB, xapian.DB_OPEN)
docid = next(iter(writable.postlist("Qlatin-1-id"))).docid
renamed = writable.get_document(docid)
renamed.remove_term("Qlatin-1-id")
renamed.add_boolean_term(b"Qcaf\xe9")
writable.replace_document(docid, renamed)
writable.commit()
writable.close()
server = Server()
shown = "caf\ufffd"
status, doc = server.request("GET", "/api/documents/" + urllib.parse.quote(shown, ""))
check(status == 200 and doc.get("id") == shown,
      "an id that is not UTF-8 opens by the id it is shown with: %r %r" % (status, doc))
status, doc = server.put(shown, ["science"])
check(status == 200 and [c["name"] for c in doc.get("categories", [])] == ["science"]
      and doc.get("editor_set"), "an id that is not UTF-8 is corrected: %r %r" % (status, doc))
server.stop()

finish("serve_corrections_test", time.time() - started, WORK)
