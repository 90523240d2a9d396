#!/usr/bin/env python3
"""Bounded load on `autocat serve`: search+facets from 4 threads, then corrections
from 2; prints one JSON line each with requests/s, p50 and p99 latency.

usage: serve_load.py AUTOCAT DB MODEL [SEARCHES] [CORRECTIONS]
Corrections change DB and MODEL: run it on copies.
"""
import json, subprocess, sys, threading, time, urllib.request, random, statistics
binary, db, model = sys.argv[1:4]
p = subprocess.Popen([binary, 'serve', '--db', db, '--model', model, '--listen', '127.0.0.1:0'],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
url = p.stdout.readline().split()[-1].split('/?token=')[0]; token = p.stdout.readline().split()[-1]
auth = {'Authorization': 'Bearer ' + token}
def get(path): return urllib.request.urlopen(urllib.request.Request(url + path, headers=auth))
words = ['space', 'orbit', 'god', 'car', 'windows', 'hockey', 'gun', 'doctor', 'encryption', 'israel']
def run(kind, total, threads):
    lat = []; lock = threading.Lock(); ids = []
    if kind == 'correct':
        r = json.load(get('/api/search?q=the&limit=200'))
        ids = [d['id'] for d in r['documents']]
    def worker(n, seed):
        rnd = random.Random(seed)
        for i in range(n):
            t = time.perf_counter()
            if kind == 'search':
                q = rnd.choice(words)
                get(f'/api/search?q={q}&facets=1&limit=10').read()
            else:
                doc = rnd.choice(ids)
                req = urllib.request.Request(f'{url}/api/documents/{urllib.parse.quote(doc)}/categories',
                    data=json.dumps({'categories': [rnd.choice(['sci.space', 'rec.autos'])]}).encode(),
                    method='PUT', headers={'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json'})
                urllib.request.urlopen(req).read()
            with lock: lat.append(time.perf_counter() - t)
    start = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(total // threads, k)) for k in range(threads)]
    [t.start() for t in ts]; [t.join() for t in ts]
    wall = time.perf_counter() - start
    lat.sort()
    print(json.dumps({'kind': kind, 'requests': len(lat), 'threads': threads,
                      'requests_per_s': round(len(lat) / wall, 1),
                      'p50_ms': round(1000 * lat[len(lat) // 2], 1),
                      'p99_ms': round(1000 * lat[int(len(lat) * 0.99) - 1], 1)}))
import urllib.parse
try:
    run('search', int(sys.argv[4]) if len(sys.argv) > 4 else 400, 4)
    run('correct', int(sys.argv[5]) if len(sys.argv) > 5 else 100, 2)
finally:
    p.kill()
