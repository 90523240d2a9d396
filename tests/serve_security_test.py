#!/usr/bin/python3
# autocat serve against hostile clients, through raw sockets on 127.0.0.1
# (an HTTP library would fix up or hide the attacks): the header block is
# limited (431) before more is read; a compressed body is refused (415)
# rather than inflated, a chunked one (411), an oversized one (413), and the
# server's peak memory stays small; the token is checked before any body byte
# is read; PUT without Content-Length is 411 at once; the Host header must
# name the server (403: DNS rebinding); every route needs the token (the page
# too), which /?token= turns into an HttpOnly SameSite=Strict cookie;
# --public-read lets reads through; --tokens names each editor; 64 clients
# trickling headers neither stop a search nor outlive --request-timeout;
# every reply forbids framing (CSP frame-ancestors, X-Frame-Options).
# Every attack is bounded in bytes and seconds.
#
# usage: serve_security_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
import gzip
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

from serve_fixture import SERVERS, check, failures, finish, run_directory

CLI, SOURCE, WORK = sys.argv[1:4]
TOKEN = "gate-token-1"


def run(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


WORK, MODEL, DB, TOKEN_FILE = run_directory(WORK, TOKEN)
TOKENS_FILE = os.path.join(WORK, "tokens")
with open(TOKENS_FILE, "w") as f:
    f.write("# editors\nalice alice-token-77\n\nbob   bob-token-88\n")
run("train", "--model", MODEL, os.path.join(SOURCE, "tests/data/fixture_train.jsonl"))
run("index", "--model", MODEL, "--db", DB, "--store-text",
    os.path.join(SOURCE, "tests/data/fixture_test.jsonl"))


class Server:
    def __init__(self, *extra):
        self.stderr = tempfile.TemporaryFile(mode="w+", dir=WORK)
        self.process = subprocess.Popen(
            [CLI, "serve", "--db", DB, "--model", MODEL, "--listen", "127.0.0.1:0", *extra],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        SERVERS.append(self.process)
        self.first = self.process.stdout.readline().strip()
        self.second = self.process.stdout.readline().strip()
        if not self.first.startswith("listening on http://127.0.0.1:"):
            self.process.kill()
            self.process.wait()
            self.stderr.seek(0)
            failures.append("serve %s did not start: %r %s" % (extra, self.first, self.stderr.read()))
            finish_test()
        self.port = int(self.first.split(":")[2].split("/")[0])

    def peak_kib(self):
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.process.stdout.close()


def connect(port, timeout=5.0):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def read_reply(sock, wait):
    """(status, headers as {lower name: [values]}, body, seconds); status 0
    when nothing came within `wait` seconds."""
    started = time.time()
    data = b""
    while time.time() - started < wait:
        sock.settimeout(max(0.01, wait - (time.time() - started)))
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        except OSError:
            break
        if not chunk:
            break
        data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if _ and b"content-length:" in head.lower():
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            if len(body) >= length:
                break
    elapsed = time.time() - started
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return 0, {}, b"", elapsed
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return status, headers, body, elapsed


def raw(port, head, body=b"", wait=3.0):
    """Sends `head` (request line and headers, without the blank line) and
    `body`; the reply as read_reply() gives it."""
    sock = connect(port)
    try:
        try:
            sock.sendall(head.encode("latin-1") + b"\r\n\r\n" + body)
        except OSError:
            pass
        return read_reply(sock, wait)
    finally:
        sock.close()


def get(server, path, *headers, host=None, wait=3.0):
    lines = ["GET %s HTTP/1.1" % path, "Host: %s" % (host or "127.0.0.1:%d" % server.port),
             *headers]
    return raw(server.port, "\r\n".join(lines), wait=wait)


def bearer(token=TOKEN):
    return "Authorization: Bearer " + token


def put_head(server, path, *headers):
    return "\r\n".join(["PUT %s HTTP/1.1" % path, "Host: 127.0.0.1:%d" % server.port, *headers])


def framing_forbidden(headers):
    policies = headers.get("content-security-policy", [])
    return (len(policies) == 1 and "frame-ancestors 'none'" in policies[0] and
            "default-src 'self'" in policies[0] and headers.get("x-frame-options") == ["DENY"])


def finish_test():
    finish("serve_security_test", time.time() - started, WORK)


started = time.time()
server = Server("--token-file", TOKEN_FILE)
check(server.first == "listening on http://127.0.0.1:%d/?token=%s" % (server.port, TOKEN),
      "serve prints the address to sign in at: %r" % server.first)
check(server.second == "token: " + TOKEN, "serve prints the token: %r" % server.second)
DOC = "/api/documents/t-sp-01/categories"
BODY = json.dumps({"categories": ["sports"]}).encode()
for _ in range(3):
    get(server, "/api/search?q=the&facets=1", bearer())
baseline = server.peak_kib()

# A compressed body is refused, not inflated: 64 MiB of zeros in 64 KiB.
bomb = gzip.compress(b"\0" * (64 << 20), 9)
status, _, body, _ = raw(server.port, put_head(server, DOC, bearer(), "Content-Type: application/json",
                                               "Content-Encoding: gzip",
                                               "Content-Length: %d" % len(bomb)), bomb)
check(status == 415 and b"Content-Encoding" in body, "a gzip body: 415 (got %d %r)" % (status, body))
status, _, _, _ = raw(server.port, put_head(server, DOC, bearer(), "Content-Encoding: br",
                                            "Content-Length: 4"), b"abcd")
check(status == 415, "a brotli body: 415 (got %d)" % status)

# The header block: 431 once it passes 64 KiB, before the rest is read.
# What the client can send is what the server reads plus what the kernel
# buffers hold; a small send buffer (fixed, not grown by the kernel) keeps
# that well under 2 MiB however late the reply comes, while a server that
# read every header would take all 4 MiB.
sock = connect(server.port)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 10)
sent = 0
status = 0
try:
    sock.sendall(("GET /api/categories HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n" %
                  (server.port, bearer())).encode())
    line = b"X-Filler: " + b"a" * 1014 + b"\r\n"
    while sent < (4 << 20):
        sock.settimeout(0)
        try:
            if sock.recv(1, socket.MSG_PEEK):
                break
        except (BlockingIOError, socket.timeout):
            pass
        sock.settimeout(5)
        sock.sendall(line)
        sent += len(line)
    else:
        sock.sendall(b"\r\n")
except OSError:
    pass
status, _, body, _ = read_reply(sock, 3.0)
sock.close()
check(status == 431, "4 MiB of headers: 431 (got %d after %d bytes)" % (status, sent))
check(sent < (2 << 20), "the headers are refused early (%d bytes sent)" % sent)

# A chunked body: 411 at once, with a sentence.
status, _, body, elapsed = raw(server.port, put_head(server, DOC, bearer(),
                                                     "Transfer-Encoding: chunked"),
                               b"100000\r\n" + b"x" * 65536, wait=3.0)
check(status == 411 and b"Content-Length" in body and elapsed < 2,
      "a chunked body: 411 at once (got %d %r in %.1f s)" % (status, body, elapsed))
# More than 1 MiB announced: 413 without waiting for it.
status, _, _, elapsed = raw(server.port, put_head(server, DOC, bearer(),
                                                  "Content-Length: %d" % (2 << 20)), wait=3.0)
check(status == 413 and elapsed < 2, "a 2 MiB body: 413 at once (got %d)" % status)
# The token is checked before the body is read: no body sent, 401 at once.
status, _, _, elapsed = raw(server.port, put_head(server, DOC, bearer("wrong"),
                                                  "Content-Length: 100000"), wait=3.0)
check(status == 401 and elapsed < 2,
      "a wrong token with a body to come: 401 at once (got %d in %.1f s)" % (status, elapsed))
# PUT without Content-Length: 411 at once, with a sentence.
status, _, body, elapsed = raw(server.port, put_head(server, DOC, bearer()), wait=3.0)
check(status == 411 and b"Content-Length" in body and elapsed < 2,
      "PUT without Content-Length: 411 at once (got %d %r in %.1f s)" % (status, body, elapsed))
peak = server.peak_kib()
check(peak - baseline < 32 << 10,
      "peak memory under the attacks: %d KiB over %d KiB" % (peak - baseline, baseline))
status, _, body, _ = raw(server.port, put_head(server, DOC, bearer(), "Content-Length: %d" %
                                               len(BODY)), BODY)
check(status == 200, "a correction with Content-Length: 200 (got %d %r)" % (status, body))

# DNS rebinding: the Host must name this server.
status, headers, body, _ = get(server, "/api/categories", bearer(), host="evil.example:%d" % server.port)
check(status == 403 and b"--allow-host" in body, "a foreign Host: 403 (got %d %r)" % (status, body))
check(framing_forbidden(headers), "the 403 forbids framing: %s" % headers)
for host in ["localhost:%d" % server.port, "LOCALHOST:%d" % server.port]:
    check(get(server, "/api/categories", bearer(), host=host)[0] == 200, "Host %s: 200" % host)
status, _, _, _ = raw(server.port, "GET /api/categories HTTP/1.0\r\n" + bearer())
check(status == 400, "no Host: 400 (got %d)" % status)

# The token on every route; the page signs in through ?token= and a cookie.
status, headers, body, _ = get(server, "/")
check(status == 401 and b"?token=" in body and b"to sign in" in body and
      headers.get("content-type", [""])[0].startswith("text/html"),
      "the page without the token: 401 saying how to sign in (got %d %r)" % (status, body))
check(framing_forbidden(headers), "the 401 forbids framing: %s" % headers)
status, _, body, _ = get(server, "/api/search?q=the")
check(status == 401 and b"Bearer" in body, "a search without the token: 401 (got %d)" % status)
check(get(server, "/api/search?q=the", bearer("wrong"))[0] == 401, "a wrong token: 401")
status, _, body, _ = get(server, "/?token=wrong")
check(status == 401 and b"to sign in" in body, "a wrong ?token=: 401 (got %d)" % status)
status, headers, _, _ = get(server, "/?token=" + urllib.parse.quote(TOKEN))
cookie = headers.get("set-cookie", [""])[0]
attributes = [a.strip() for a in cookie.split(";")]
check(status in (302, 303) and headers.get("location") == ["/"] and "HttpOnly" in attributes and
      "SameSite=Strict" in attributes and "Path=/" in attributes,
      "?token= sets the cookie and goes to /: %d %s" % (status, headers))
cookie_header = "Cookie: " + attributes[0]
status, headers, body, _ = get(server, "/", cookie_header)
check(status == 200 and b"<!DOCTYPE html>" in body, "the page with the cookie: 200 (got %d)" % status)
check(framing_forbidden(headers), "the page forbids framing: %s" % headers)
status, headers, _, _ = get(server, "/api/search?q=the", cookie_header)
check(status == 200, "a search with the cookie: 200 (got %d)" % status)
check(framing_forbidden(headers), "the API forbids framing: %s" % headers)
status, headers, _, _ = get(server, "/api/nope", bearer())
check(status == 404 and framing_forbidden(headers), "a 404 forbids framing: %s" % headers)
check(get(server, "/api/search?q=the", "Cookie: autocat_token_%d=00" % server.port)[0] == 401,
      "a wrong cookie: 401")

# 64 clients trickling a header line every 2 s: a search still answers at once.
slow = []
for i in range(64):
    sock = connect(server.port)
    sock.sendall(b"GET /api/categories HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    slow.append(sock)
latencies = []
trickle_started = time.time()
next_line = trickle_started + 2
while time.time() - trickle_started < 5:
    if time.time() >= next_line:
        for sock in slow:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                pass
        next_line += 2
    began = time.time()
    status = get(server, "/api/search?q=the&facets=1", bearer(), wait=5.0)[0]
    latencies.append((status, time.time() - began))
    time.sleep(0.5)
check(all(s == 200 and t <= 1.0 for s, t in latencies),
      "searches beside 64 slow clients answer in 1 s: %s" % latencies)
for sock in slow:
    sock.close()
server.stop()

# --tokens, --public-read, --allow-host, --request-timeout.
server = Server("--tokens", TOKENS_FILE, "--public-read", "--allow-host", "search.example",
                "--request-timeout", "2")
check(server.first == "listening on http://127.0.0.1:%d/" % server.port,
      "with --tokens no token is printed: %r" % server.first)
check(get(server, "/api/search?q=the")[0] == 200, "--public-read: a search without a token")
check(get(server, "/api/search?q=the", host="search.example:%d" % server.port)[0] == 200,
      "--allow-host: its name is accepted")
check(get(server, "/api/search?q=the", host="other.example:%d" % server.port)[0] == 403,
      "--allow-host: other names are not")
length = "Content-Length: %d" % len(BODY)
check(raw(server.port, put_head(server, DOC, length), BODY)[0] == 401,
      "--public-read: a write without a token: 401")
check(raw(server.port, put_head(server, DOC, length, "X-Autocat-Editor: alice"), BODY)[0] == 401,
      "a client's own X-Autocat-Editor is no token")
for token in ["alice-token-77", "bob-token-88"]:
    status, _, body, _ = raw(server.port, put_head(server, DOC, length, bearer(token)), BODY)
    check(status == 200, "--tokens: %s writes (got %d %r)" % (token, status, body))
check(raw(server.port, put_head(server, DOC, length, bearer(TOKEN)), BODY)[0] == 401,
      "--tokens: another token is refused")
sock = connect(server.port)
sock.sendall(b"GET /api/categories HTTP/1.1\r\n")
status, _, _, elapsed = read_reply(sock, 6.0)
sock.close()
check(status == 408 and elapsed < 4, "--request-timeout 2: a slow request ends with 408 "
      "(got %d after %.1f s)" % (status, elapsed))
server.stop()

# Bad token files: one line naming the file (and line), exit 1 or 2.
bad_tokens = os.path.join(WORK, "bad-tokens")
with open(bad_tokens, "w") as f:
    f.write("# editors\nalice\n")
dup_tokens = os.path.join(WORK, "dup-tokens")
with open(dup_tokens, "w") as f:
    f.write("alice same-token-1\nbob same-token-1\n")
for args, expected in [(["--tokens", WORK], WORK + ": is a directory"),
                       (["--tokens", bad_tokens], bad_tokens + ":2: give NAME TOKEN"),
                       (["--tokens", dup_tokens], dup_tokens + ":2: 'bob' has the token of"),
                       (["--tokens", os.path.join(WORK, "none")], "no such tokens file"),
                       (["--token-file", WORK], WORK + ": is a directory"),
                       (["--tokens", TOKENS_FILE, "--token-file", TOKEN_FILE], "not both")]:
    done = subprocess.run([CLI, "serve", "--db", DB, "--model", MODEL, "--listen", "127.0.0.1:0",
                           *args], capture_output=True, text=True, timeout=10)
    check(done.returncode in (1, 2) and done.stderr.count("\n") == 1 and expected in done.stderr,
          "serve %s: one line saying %r (got %d %r)" % (args, expected, done.returncode,
                                                         done.stderr))

finish_test()
