"""What the tests of `autocat serve` share: checks that are counted rather
than raised, so one run reports every failure; a urllib opener that never
goes through a proxy; and servers that are killed however a test ends."""
import atexit
import os
import shutil
import sys
import tempfile
import urllib.request

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def finish(name, seconds, work):
    """Prints the summary line and exits 0 only if every check passed; a
    passing run's files in `work` are removed, a failing run's stay for a
    look."""
    print("%s: %d failures, %.1f s" % (name, len(failures), seconds))
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failures else 0)


# No proxy: an http_proxy in the environment would otherwise carry these
# 127.0.0.1 requests to a proxy, failing or answering for the server.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
# Every server started (append its Popen), killed however the test ends: a
# failure that raises must not leave `autocat serve` running after the test.
SERVERS = []


@atexit.register
def kill_servers():
    for process in SERVERS:
        if process.poll() is None:
            process.kill()
            process.wait()


def run_directory(work, token):
    """A directory of its own under `work` for this run (two runs at once,
    e.g. ctest --repeat beside the suite, never delete each other's files),
    with a token file holding `token`. Returns (directory, model path,
    database path, token file)."""
    os.makedirs(work, exist_ok=True)
    directory = tempfile.mkdtemp(prefix="run-", dir=work)
    token_file = os.path.join(directory, "token")
    with open(token_file, "w") as f:
        f.write(token + "\n")
    return directory, os.path.join(directory, "model"), os.path.join(directory, "db"), token_file


def chromedriver_or_skip(name, skip_code):
    """The path of chromedriver; exits with `skip_code` (ctest's skip), saying
    why, when Chromium or its driver is missing."""
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not os.path.exists(chromedriver) or not (shutil.which("chromium") or
                                                shutil.which("chromium-browser")):
        print("%s: skipped: chromium or chromium-driver is not installed "
              "(scripts/install-deps.sh)" % name)
        sys.exit(skip_code)
    return chromedriver
