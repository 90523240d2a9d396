#!/usr/bin/env python3
"""Hostile clients against `autocat serve`, through raw sockets on 127.0.0.1:
a 1 MB gzip body that inflates to 1 GiB, a 300 MB chunked body, 100 MB of
headers (each against a fresh server: its peak RSS, VmHWM, is the attack's),
then search latency beside 64 clients trickling a header line every 2 s.
Prints one JSON line each. Bounded: at most the sizes above, 60 s each.

usage: serve_attacks.py AUTOCAT DB MODEL
"""
import gzip, json, re, socket, statistics, subprocess, sys, time

binary, db, model = sys.argv[1:4]


def start():
    p = subprocess.Popen([binary, 'serve', '--db', db, '--model', model, '--listen', '127.0.0.1:0'],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r':(\d+)', p.stdout.readline().split('//')[1]).group(1))
    token = p.stdout.readline().split()[-1]
    return p, port, token


def peak_mib(p):
    with open('/proc/%d/status' % p.pid) as f:
        return round(int(next(l for l in f if l.startswith('VmHWM:')).split()[1]) / 1024, 1)


def status_of(sock, wait=60):
    sock.settimeout(wait)
    data = b''
    try:
        while b'\r\n' not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    parts = data.split(b' ')
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def attack(name, head, pieces):
    """Sends `head`, then each piece of `pieces` until the server stops reading."""
    p, port, token = start()
    baseline = peak_mib(p)
    sock = socket.create_connection(('127.0.0.1', port))
    sent = 0
    began = time.time()
    try:
        sock.sendall(head.replace('TOKEN', token).replace('PORT', str(port)).encode())
        for piece in pieces:
            if time.time() - began > 60:
                break
            sock.sendall(piece)
            sent += len(piece)
    except OSError:
        pass
    status = status_of(sock)
    sock.close()
    time.sleep(0.2)
    print(json.dumps({'attack': name, 'status': status, 'sent_mb': round(sent / 1e6, 1),
                      'seconds': round(time.time() - began, 1), 'baseline_rss_mib': baseline,
                      'peak_rss_mib': peak_mib(p)}), flush=True)
    p.kill()
    p.wait()


bomb = gzip.compress(b'\0' * (1 << 30), 9)
attack('gzip %.2f MB -> 1 GiB' % (len(bomb) / 1e6),
       'PUT /api/documents/x/categories HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n'
       'Authorization: Bearer TOKEN\r\nContent-Type: application/json\r\n'
       'Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n' % len(bomb), [bomb])
chunk = b'100000\r\n' + b'x' * 0x100000 + b'\r\n'
attack('chunked 300 MB',
       'PUT /api/documents/x/categories HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n'
       'Transfer-Encoding: chunked\r\n\r\n', [chunk] * 300 + [b'0\r\n\r\n'])
line = b'X-Filler: ' + b'a' * 1014 + b'\r\n'
attack('headers 100 MB',
       'GET /api/categories HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nAuthorization: Bearer TOKEN\r\n',
       [line * 1000] * 100 + [b'\r\n'])

# 64 slow clients, then ten searches.
p, port, token = start()
slow = []
for _ in range(64):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'GET /api/categories HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n' % port)
    slow.append(s)
latencies = []
began = time.time()
next_line = began + 2
for _ in range(10):
    if time.time() - began > 60:
        break
    if time.time() >= next_line:
        for s in slow:
            try:
                s.sendall(b'X-Slow: 1\r\n')
            except OSError:
                pass
        next_line += 2
    t = time.time()
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'GET /api/search?q=the&facets=1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
              b'Authorization: Bearer %s\r\nConnection: close\r\n\r\n' % (port, token.encode()))
    status = status_of(s, wait=40)
    s.close()
    latencies.append(round(time.time() - t, 3))
    time.sleep(0.5)
print(json.dumps({'attack': '64 slow clients', 'last_status': status,
                  'search_p50_s': statistics.median(latencies), 'search_max_s': max(latencies)}))
for s in slow:
    s.close()
p.kill()
p.wait()
