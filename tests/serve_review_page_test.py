#!/usr/bin/python3
# Keyboard review on autocat serve's page in a headless Chromium
# (python3-selenium, chromium-driver): 20 documents of the review queue are
# labelled with the keys alone (Enter accepts the model's suggestion, a
# digit chooses a candidate, u undoes), then the JSON API shows the
# corrections stored, the undone one reverted and the queue re-ranked; a
# <script> in a document's text shows as text, marked where it matches the
# query; the type-ahead picker adds nothing until a category is chosen; ?
# shows the keys; --read-only hides Save. Skips (exit 77) without Chromium
# or Selenium.
#
# usage: serve_review_page_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

from serve_fixture import chromedriver_or_skip

SKIP = 77
CLI, SOURCE, WORK = sys.argv[1:4]
TOKEN = "review-token"
SCRIPT_TEXT = "<script>window.pwned=1</script> a pwned recipe for soup"
REVIEWED = 20

try:
    from selenium import webdriver
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("serve_review_page_test: skipped: python3-selenium is not installed "
          "(scripts/install-deps.sh)")
    sys.exit(SKIP)
CHROMEDRIVER = chromedriver_or_skip("serve_review_page_test", SKIP)


def run(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


# Half of the example corpus trains, the other half is indexed and reviewed.
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
model, db, token_file = (os.path.join(WORK, n) for n in ("model", "db", "token"))
with open(token_file, "w") as f:
    f.write(TOKEN + "\n")
with open(os.path.join(SOURCE, "examples/data/train.jsonl"), encoding="utf-8") as f:
    lines = f.read().splitlines()
train, docs = (os.path.join(WORK, n) for n in ("train.jsonl", "docs.jsonl"))
with open(train, "w", encoding="utf-8") as f:
    f.write("\n".join(lines[0::2]) + "\n")
with open(docs, "w", encoding="utf-8") as f:
    f.write("\n".join(lines[1::2]) + "\n")
    f.write(json.dumps({"id": "x-script", "title": "Soup with markup", "text": SCRIPT_TEXT}) + "\n")
run("train", "--model", model, train)
run("index", "--model", model, "--db", db, "--store-text", docs)


def serve(*extra):
    process = subprocess.Popen([CLI, "serve", "--db", db, "--model", model, "--listen",
                                "127.0.0.1:0", "--token-file", token_file, *extra],
                               stdout=subprocess.PIPE, text=True)
    # "listening on http://HOST:PORT", maybe followed by the sign-in path.
    address = process.stdout.readline().strip()[len("listening on "):].split("/?token=")[0]
    process.stdout.readline()
    return process, address


server, url = serve()
servers = [server]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def get(path):
    request = urllib.request.Request(url + path, headers={"Authorization": "Bearer " + TOKEN})
    try:
        with urllib.request.urlopen(request) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:
        if e.code == 404 and path.startswith("/api/corrections"):
            return None
        raise


options = webdriver.ChromeOptions()
for argument in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900"]:
    options.add_argument(argument)
service = webdriver.ChromeService(executable_path=CHROMEDRIVER) \
    if hasattr(webdriver, "ChromeService") else webdriver.chrome.service.Service(CHROMEDRIVER)
started = time.time()
browser = webdriver.Chrome(service=service, options=options)
keys = 0
open_times = []


def press(key):
    global keys
    keys += 1
    ActionChains(browser).send_keys(key).perform()


def texts(selector):
    # In one script: the page may redraw between two calls.
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.textContent)",
        selector)


def shown_id():
    ids = texts("#doc-body > .id")
    return ids[0].split(" \u00b7 ")[0] if ids else ""


try:
    wait = WebDriverWait(browser, 15, poll_frequency=0.02)
    browser.get(url + "/?token=" + TOKEN)
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#results li"))
    check(TOKEN not in browser.current_url, "the token leaves the address bar")
    history = get("/api/corrections?limit=1") is not None
    before = {d["id"]: d for d in get("/api/review?limit=1000")["documents"]}
    initial_order = list(before)

    # ? shows the keys, Esc hides them.
    press("?")
    check(browser.find_element(By.ID, "keys").is_displayed(), "? shows the keys")
    press(Keys.ESCAPE)
    check(not browser.find_element(By.ID, "keys").is_displayed(), "Esc hides the keys")

    # r opens the queue and its least sure document.
    press("r")
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#doc-candidates li") and shown_id())
    check(shown_id() == initial_order[0],
          "the queue opens its least sure document: %s, not %s" % (shown_id(), initial_order[0]))

    # The picker adds nothing while typing; Esc leaves the label as it was.
    label = texts("#doc-chips .chip .name")
    press("c")
    ActionChains(browser).send_keys("cook").perform()
    wait.until(lambda b: texts("#pick-list li"))
    check(texts("#pick-list li") == ["cooking"], "type-ahead: %s" % texts("#pick-list li"))
    check(texts("#doc-chips .chip .name") == label, "typing added nothing to the label")
    ActionChains(browser).send_keys(Keys.ESCAPE).perform()
    check(texts("#doc-chips .chip .name") == label, "Esc added nothing to the label")

    keys = 1  # from here on, the keys of the review: r, then what follows
    expected = {}  # id -> the categories saved
    previous = {}  # id -> the categories before
    undone = None
    saves = 0
    # With a corrections log, one more: the one undone.
    while saves < REVIEWED + (1 if history else 0):
        current = shown_id()
        candidates = texts("#doc-candidates li .name")
        previous.setdefault(current, sorted(texts("#doc-stored .chip .name")))
        if saves % 3 == 1 and len(candidates) >= 2:
            key, label = "2", [candidates[1]]
        else:
            key, label = Keys.ENTER, texts("#doc-chips .chip .name")
        pressed = time.time()
        press(key)
        wait.until(lambda b: shown_id() != current or "done" in texts("#status")[0])
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#doc-candidates li"))
        open_times.append(time.time() - pressed)
        expected[current] = sorted(label)
        saves += 1
        if saves == 6:
            # u undoes the correction just made and reopens its document;
            # j passes over it.
            undone = current
            press("u")
            if history:
                wait.until(lambda b: shown_id() == undone)
                del expected[undone]
                press("j")
                wait.until(lambda b: shown_id() != undone)
            else:
                wait.until(lambda b: "cannot undo" in texts("#error")[0])
                undone = None
    review_keys = keys
    check(not texts("#error") or not texts("#error")[0], "no error: %s" % texts("#error"))

    # The corrections are in the index.
    for doc_id, categories in expected.items():
        stored = sorted(c["name"] for c in get("/api/documents/" + doc_id)["categories"])
        check(stored == categories, "%s holds %s, saved %s" % (doc_id, stored, categories))
    check(len(expected) == REVIEWED, "%d documents corrected" % len(expected))
    if history:
        log = get("/api/corrections?limit=1000")
        logged = {c["id"] for c in log["corrections"]}
        check(set(expected) <= logged, "every correction is logged: %s" % (set(expected) - logged))
        stored = sorted(c["name"] for c in get("/api/documents/" + undone)["categories"])
        check(stored == previous[undone], "the undone %s is back to %s: %s" %
              (undone, previous[undone], stored))
        check(any(c["id"] == undone and c.get("undone") for c in log["corrections"]),
              "the log marks %s's correction undone" % undone)
        check(not get("/api/documents/" + undone)["editor_set"],
              "the undone %s is no longer editor-set" % undone)
    else:
        print("serve_review_page_test: this server has no /api/corrections: the undo and "
              "history checks are left out")

    # The queue followed the corrections: documents nobody corrected were
    # scored again by the live model and moved.
    after = get("/api/review?limit=1000")["documents"]
    untouched = [d for d in after if d["id"] not in expected and d["id"] != undone]
    moved = [d["id"] for d in untouched if d["rescored"] and d["margin"] != before[d["id"]]["margin"]]
    check(moved, "re-ranking changed some margins")
    order_before = [i for i in initial_order if i in {d["id"] for d in untouched}]
    check([d["id"] for d in untouched] != order_before, "the queue order changed")
    if history:
        check(not set(expected) & {d["id"] for d in after}, "editor-set documents left the queue")

    # Markup in a document's text is text; the query's words are marked.
    press("/")
    ActionChains(browser).send_keys("pwned soup", Keys.ENTER).perform()
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, '#results li[data-id="x-script"]'))
    browser.find_element(By.CSS_SELECTOR, '#results li[data-id="x-script"]').click()
    wait.until(lambda b: shown_id() == "x-script")
    check(texts("#doc-text") == [SCRIPT_TEXT], "the text shows as typed: %s" % texts("#doc-text"))
    check(sorted(set(texts("#doc-text mark"))) == ["pwned", "soup"],
          "the query's words are marked: %s" % texts("#doc-text mark"))
    check(not browser.find_elements(By.CSS_SELECTOR, "#doc-body script"), "no script element")
    check(browser.execute_script("return window.pwned === undefined"), "no script ran")

    # --read-only: no Save, no label to edit.
    reader, read_only_url = serve("--read-only")
    servers.append(reader)
    browser.get(read_only_url + "/?token=" + TOKEN)
    press("r")
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#doc-candidates li"))
    check(not browser.find_elements(By.ID, "doc-save"), "--read-only hides Save")
finally:
    browser.quit()
    for process in servers:
        process.terminate()
        process.wait(timeout=10)

open_times.sort()
print("serve_review_page_test: %d keys for %d documents (%.2f a document); next document shown "
      "%.0f ms after a key (median), %.0f ms (slowest)" %
      (review_keys, REVIEWED, review_keys / REVIEWED, 1000 * open_times[len(open_times) // 2],
       1000 * open_times[-1]))
print("serve_review_page_test: %d failures, %.1f s" % (len(failures), time.time() - started))
sys.exit(1 if failures else 0)
