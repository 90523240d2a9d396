#!/usr/bin/env python3
"""Bounded load on `autocat serve` over loopback, in three phases:
searches with facets from 4 threads; corrections from 2 threads; then
editors and readers at once (4 threads correcting, 8 threads searching and
opening documents). Prints one JSON line per phase and kind of request with
requests/s, p50 and p99 latency.

usage: serve_load.py AUTOCAT DB MODEL [SEARCHES] [CORRECTIONS]
Corrections change DB and MODEL: run it on copies.
"""
import json
import random
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

binary, db, model = sys.argv[1:4]
searches = int(sys.argv[4]) if len(sys.argv) > 4 else 400
corrections = int(sys.argv[5]) if len(sys.argv) > 5 else 100
server = subprocess.Popen([binary, 'serve', '--db', db, '--model', model, '--listen', '127.0.0.1:0'],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
url = server.stdout.readline().split()[-1].split('/?token=')[0]
token = server.stdout.readline().split()[-1]
auth = {'Authorization': 'Bearer ' + token}
words = ['space', 'orbit', 'god', 'car', 'windows', 'hockey', 'gun', 'doctor', 'encryption', 'israel']


def get(path):
    with urllib.request.urlopen(urllib.request.Request(url + path, headers=auth), timeout=60) as r:
        return r.read()


def search(rnd, ids):
    get(f'/api/search?q={rnd.choice(words)}&facets=1&limit=10')


def open_document(rnd, ids):
    get('/api/documents/' + urllib.parse.quote(rnd.choice(ids), safe=''))


def correct(rnd, ids):
    body = json.dumps({'categories': [rnd.choice(categories)]}).encode()
    request = urllib.request.Request(
        f'{url}/api/documents/{urllib.parse.quote(rnd.choice(ids), safe="")}/categories',
        data=body, method='PUT', headers={**auth, 'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=60) as r:
        r.read()


def run(phase, plan):
    """plan: [(name, action, requests, threads)], all run at once."""
    latencies = {name: [] for name, *_ in plan}
    lock = threading.Lock()

    def worker(name, action, count, seed):
        rnd = random.Random(seed)
        for _ in range(count):
            started = time.perf_counter()
            action(rnd, ids)
            with lock:
                latencies[name].append(time.perf_counter() - started)

    threads = [threading.Thread(target=worker, args=(name, action, requests // count, 100 * i + k))
               for i, (name, action, requests, count) in enumerate(plan) for k in range(count)]
    started = time.perf_counter()
    [t.start() for t in threads]
    [t.join() for t in threads]
    wall = time.perf_counter() - started
    for name, _, _, count in plan:
        lat = sorted(latencies[name])
        print(json.dumps({'phase': phase, 'kind': name, 'requests': len(lat), 'threads': count,
                          'requests_per_s': round(len(lat) / wall, 1),
                          'p50_ms': round(1000 * lat[len(lat) // 2], 1),
                          'p99_ms': round(1000 * lat[max(0, int(len(lat) * 0.99) - 1)], 1)}),
              flush=True)


try:
    ids = [d['id'] for d in json.loads(get('/api/search?q=the&limit=200'))['documents']]
    categories = json.loads(get('/api/categories'))['categories']
    run('searches', [('search', search, searches, 4)])
    run('corrections', [('correct', correct, corrections, 2)])
    run('editors and readers', [('correct', correct, corrections, 4),
                                ('search', search, searches, 4),
                                ('open', open_document, searches, 4)])
finally:
    server.kill()
    server.wait()
