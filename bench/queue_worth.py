#!/usr/bin/env python3
"""What the review queue is worth: a simulated editor who always gives the
true label corrects documents through `autocat serve`, chosen by the review
queue (the document the live model is least sure of, GET /api/review) or at
random. After each checkpoint, the live model (the served model with every
correction taught, opened afresh by `autocat eval`) is evaluated on the
documents neither arm has reviewed yet, and so is the model as trained, so
the gain of each arm is measured on the same documents.

usage: queue_worth.py AUTOCAT MODEL DB LABELLED.jsonl [CHECKPOINTS] [SEED]
  MODEL, DB: a trained model and the index of LABELLED's documents written
  by `autocat index --store-text`; neither is changed (each arm works on
  copies). CHECKPOINTS: comma-separated counts (default 50,100,200).
Prints one JSON line per checkpoint and arm, then a summary line.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

TOKEN = "queue-worth-token"


def serve(binary, db, model, work):
    token_file = os.path.join(work, "token")
    with open(token_file, "w") as out:
        out.write(TOKEN + "\n")
    process = subprocess.Popen([binary, "serve", "--db", db, "--model", model, "--listen",
                                "127.0.0.1:0", "--token-file", token_file],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline().split()[-1]
    parts = urllib.parse.urlsplit(line)
    return process, f"{parts.scheme}://{parts.netloc}"


def call(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + TOKEN,
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        return json.load(reply)


def accuracy(binary, model, documents, work, name):
    path = os.path.join(work, name + ".jsonl")
    with open(path, "w", encoding="utf-8") as out:
        for doc in documents:
            out.write(json.dumps({"id": doc["id"], "text": doc["text"], "labels": doc["labels"]}) +
                      "\n")
    report = subprocess.run([binary, "eval", "--model", model, "--json", path], check=True,
                            capture_output=True, text=True).stdout
    return json.loads(report)["accuracy"]


def main():
    binary, model, db, labelled = sys.argv[1:5]
    checkpoints = [int(n) for n in (sys.argv[5] if len(sys.argv) > 5 else "50,100,200").split(",")]
    seed = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    documents = {}
    with open(labelled, encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            documents[doc["id"]] = doc
    work = tempfile.mkdtemp(prefix="queue-worth-")
    arms = {}
    try:
        for arm in ("queue", "random"):
            arm_dir = os.path.join(work, arm)
            os.makedirs(arm_dir)
            shutil.copytree(model, os.path.join(arm_dir, "model"), symlinks=True)
            shutil.copytree(db, os.path.join(arm_dir, "db"))
            process, base = serve(binary, os.path.join(arm_dir, "db"),
                                  os.path.join(arm_dir, "model"), arm_dir)
            arms[arm] = {"process": process, "base": base, "reviewed": [], "agreed": 0,
                         "seconds": 0.0, "model": os.path.join(arm_dir, "model")}
        rng = random.Random(seed)
        order = sorted(documents)
        rng.shuffle(order)
        results = []
        for checkpoint in checkpoints:
            for arm, state in arms.items():
                while len(state["reviewed"]) < checkpoint:
                    started = time.perf_counter()
                    if arm == "queue":
                        queue = call(state["base"], "GET", "/api/review?limit=1")["documents"]
                        doc_id = queue[0]["id"]
                    else:
                        doc_id = order[len(state["reviewed"])]
                    path = "/api/documents/" + urllib.parse.quote(doc_id, safe="") + "/categories"
                    reply = call(state["base"], "PUT", path,
                                 {"categories": documents[doc_id]["labels"]})
                    state["seconds"] += time.perf_counter() - started
                    correction = reply.get("correction", {})
                    if correction.get("model_top") in documents[doc_id]["labels"]:
                        state["agreed"] += 1
                    state["reviewed"].append(doc_id)
            reviewed = set(arms["queue"]["reviewed"]) | set(arms["random"]["reviewed"])
            remaining = [documents[i] for i in sorted(documents) if i not in reviewed]
            before = accuracy(binary, model, remaining, work, "remaining")
            for arm, state in arms.items():
                after = accuracy(binary, state["model"], remaining, work, "remaining")
                line = {"arm": arm, "corrections": checkpoint, "evaluated": len(remaining),
                        "accuracy_trained": round(before, 4), "accuracy_live": round(after, 4),
                        "gain": round(after - before, 4),
                        "model_agreed": state["agreed"],
                        "seconds_per_correction": round(state["seconds"] / checkpoint, 3)}
                results.append(line)
                print(json.dumps(line), flush=True)
        final = {arm: [r["gain"] for r in results if r["arm"] == arm] for arm in arms}
        print(json.dumps({"checkpoints": checkpoints, "gain_queue": final["queue"],
                          "gain_random": final["random"]}))
    finally:
        for state in arms.values():
            state["process"].kill()
            state["process"].wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
