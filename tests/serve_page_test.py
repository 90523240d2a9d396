#!/usr/bin/python3
# The page of autocat serve in a headless Chromium (python3-selenium,
# chromium-driver): it loads and lists results, a click on a facet filters
# them, markup in a title shows as text, an open document shows its
# explanation's neighbours, combo members or terms, and a category corrected with chips
# and the type-ahead picker is saved (the JSON API then returns it). The page signs
# in through the address serve prints (?token=, then a cookie); without it, it says
# how. Skips (exit 77)
# without Chromium or Selenium.
#
# usage: serve_page_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

from serve_fixture import chromedriver_or_skip

SKIP = 77
CLI, SOURCE, WORK = sys.argv[1:4]
TOKEN = "page-token"
SCRIPT_TITLE = "<script>window.pwned=1</script><b>bold</b>"

try:
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("serve_page_test: skipped: python3-selenium is not installed (scripts/install-deps.sh)")
    sys.exit(SKIP)
CHROMEDRIVER = chromedriver_or_skip("serve_page_test", SKIP)


def run(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
model, db, token_file = (os.path.join(WORK, n) for n in ("model", "db", "token"))
with open(token_file, "w") as f:
    f.write(TOKEN + "\n")
docs = os.path.join(WORK, "docs.jsonl")
shutil.copy(os.path.join(SOURCE, "tests/data/fixture_test.jsonl"), docs)
with open(docs, "a") as f:
    f.write(json.dumps({"id": "x-script", "title": SCRIPT_TITLE,
                        "text": "The chef baked fresh bread with butter"}) + "\n")
run("train", "--model", model, os.path.join(SOURCE, "tests/data/fixture_train.jsonl"))
run("index", "--model", model, "--db", db, "--store-text", docs)

server = subprocess.Popen([CLI, "serve", "--db", db, "--model", model, "--listen", "127.0.0.1:0",
                           "--token-file", token_file], stdout=subprocess.PIPE, text=True)
sign_in = server.stdout.readline().strip()[len("listening on "):]
url = sign_in.split("/?token=")[0]
server.stdout.readline()
failures = []


def urlopen(address):
    return urllib.request.urlopen(urllib.request.Request(
        address, headers={"Authorization": "Bearer " + TOKEN}))


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


options = webdriver.ChromeOptions()
for argument in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
    options.add_argument(argument)
service = webdriver.ChromeService(executable_path=CHROMEDRIVER) \
    if hasattr(webdriver, "ChromeService") else webdriver.chrome.service.Service(CHROMEDRIVER)
started = time.time()
browser = webdriver.Chrome(service=service, options=options)
try:
    wait = WebDriverWait(browser, 10)
    browser.get(url + "/")
    check("to sign in" in browser.find_element(By.TAG_NAME, "body").text,
          "without the token the page says how to sign in")
    browser.get(sign_in)
    check(browser.current_url == url + "/", "signing in leaves the token out of the address: %s"
          % browser.current_url)
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#results li")) == 10)
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#facets li"))

    # Markup in a title is text: shown as typed, not run, no element made.
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#results .title")]
    check(SCRIPT_TITLE in titles, "the title with markup shows as text: %s" % titles)
    check(browser.execute_script("return window.pwned === undefined"), "no script ran")
    check(not browser.find_elements(By.CSS_SELECTOR, "#results b"), "no element from a title")

    # A facet click filters the results to its count.
    facet = browser.find_element(By.CSS_SELECTOR, '#facets li[data-category="sports"]')
    count = int(facet.find_element(By.CSS_SELECTOR, ".count").text)
    facet.click()
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, '#facets li.on[data-category="sports"]'))
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#results li")) == count)
    ids = [e.get_attribute("data-id") for e in browser.find_elements(By.CSS_SELECTOR, "#results li")]
    with urlopen(url + "/api/search?category=sports&limit=100") as response:
        expected = [d["id"] for d in json.load(response)["documents"]]
    check(ids == expected, "the facet filters the results: %s vs %s" % (ids, expected))

    # A minimum score applies to the chosen facet, as min_score= in the API:
    # the best sports score keeps some documents and drops the others.
    with urlopen(url + "/api/search?category=sports&limit=100") as response:
        scores = [c["score"] for d in json.load(response)["documents"] for c in d["categories"]
                  if c["name"] == "sports"]
    minimum = repr(max(scores))
    with urlopen(url + "/api/search?category=sports&limit=100&min_score=" +
                                minimum) as response:
        kept = [d["id"] for d in json.load(response)["documents"]]
    check(0 < len(kept) < count or len(set(scores)) == 1, "the minimum score cuts: %s" % scores)
    browser.find_element(By.ID, "min-score").send_keys(minimum)
    browser.find_element(By.CSS_SELECTOR, "#search-form button").click()
    wait.until(lambda b: "scoring at least " + minimum in b.find_element(By.ID, "status").text)
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#results li")) == len(kept))
    shown = [e.get_attribute("data-id") for e in browser.find_elements(By.CSS_SELECTOR, "#results li")]
    check(shown == kept, "the minimum score filters the results: %s vs %s" % (shown, kept))
    browser.find_element(By.ID, "min-score").clear()
    browser.find_element(By.CSS_SELECTOR, "#search-form button").click()
    wait.until(lambda b: "scoring" not in b.find_element(By.ID, "status").text)

    # Open a document, replace its category by chips, save with the token.
    target = ids[0]
    browser.find_element(By.CSS_SELECTOR, '#results li[data-id="%s"]' % target).click()
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#doc-chips .chip"))
    # The explanation's evidence, as the API gives it: kNN's neighbours,
    # combo's members for the top categories, the terms behind a category.
    with urlopen(url + "/api/documents/" + target) as response:
        explanation = json.load(response)["explanation"]
    shown = 0
    for table, cell, key, first in [
            ("doc-neighbours", "td:first-child", "neighbours", lambda n: n["id"]),
            ("doc-members", "th:not(:first-child)", "combo_top", lambda c: c["category"]),
            ("doc-terms", "td:first-child", "terms", lambda t: t["term"])]:
        # textContent: a folded <details> hides its table from .text.
        cells = [e.get_attribute("textContent")
                 for e in browser.find_elements(By.CSS_SELECTOR, "#%s %s" % (table, cell))]
        check(cells == [first(x) for x in explanation.get(key) or []],
              "%s shows the explanation's %s: %s" % (table, key, cells))
        shown += len(cells)
    check(shown > 0, "the document view shows the explanation's evidence")
    for remove in browser.find_elements(By.CSS_SELECTOR, "#doc-chips .chip button"):
        remove.click()
    browser.find_element(By.ID, "doc-pick").send_keys("foo", Keys.ENTER)
    wait.until(lambda b: [e.text for e in b.find_elements(By.CSS_SELECTOR, "#doc-chips .name")] ==
               ["food"])
    browser.find_element(By.ID, "doc-save").click()

    def stored_categories(b):
        with urlopen(url + "/api/documents/" + target) as response:
            return [c["name"] for c in json.load(response)["categories"]]
    try:
        wait.until(lambda b: stored_categories(b) == ["food"])
    except Exception:
        pass
    stored = stored_categories(browser)
    check(stored == ["food"], "the correction is stored: %s (%s)" %
          (stored, browser.find_element(By.ID, "error").text))
finally:
    browser.quit()
    server.terminate()
    server.wait(timeout=10)

print("serve_page_test: %d failures, %.1f s" % (len(failures), time.time() - started))
sys.exit(1 if failures else 0)
