#!/usr/bin/python3
# A stock Xapian application finds what `autocat search` finds: an index built
# by `autocat index` is searched through python3-xapian (no autocat code) and
# through the Omega CGI (xapian-omega, default template), and every query
# must return the same documents (Python) and the same match count (Omega).
# The Omega template examples/omega/autocat must show each hit's document data
# and a category facet whose counts match python3-xapian's, with B=XC filters.
#
# usage: stock_xapian_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
import html
import json
import os
import re
import shutil
import subprocess
import sys

OMEGA = "/usr/lib/cgi-bin/omega/omega"

# Words, a stemmed form, phrases, a stopword inside a phrase, boolean
# operators, CJK text (found through Xapian's n-grams), other scripts, and
# category filters (lowercase, capitals, spaces).
QUERIES = [
    "comet",
    "comets",
    "doctor",
    "telescopes night",
    '"the flu season"',
    '"the comet"',
    "fever AND cough",
    "night NOT comet",
    "月球",
    "月球背面",
    "岩石样本",
    "tétanos",
    "médecin",
    "comet category:astronomy",
    "night category:astronomy",
    "category:Space",
    'category:"New York"',
    "category:sci.med",
    "category:料理",
]


def run(args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs).stdout


def autocat_ids(cli, db, query):
    out = json.loads(run([cli, "search", "--db", db, "--json", "--limit", "1000", "--", query]))
    return sorted(r["id"] for r in out["results"])


def python_ids(db, query):
    import xapian

    database = xapian.Database(db)
    parser = xapian.QueryParser()
    parser.set_database(database)
    parser.set_stemmer(xapian.Stem("english"))
    parser.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    parser.add_boolean_prefix("category", "XC")
    parsed = parser.parse_query(
        query, xapian.QueryParser.FLAG_DEFAULT | xapian.QueryParser.FLAG_CJK_NGRAM)
    enquire = xapian.Enquire(database)
    enquire.set_query(parsed)
    ids = []
    for match in enquire.get_mset(0, 1000):
        for term in match.document.termlist():
            if term.term.startswith(b"Q"):
                ids.append(term.term[1:].decode("utf-8"))
    return sorted(ids)


def omega_count(work, db, query):
    data_dir = os.path.join(work, "omega-data")
    os.makedirs(data_dir, exist_ok=True)
    name = os.path.basename(db)
    link = os.path.join(data_dir, name)
    if not os.path.islink(link):
        os.symlink(os.path.abspath(db), link)
    conf = os.path.join(work, "omega.conf")
    with open(conf, "w") as f:
        f.write(f"database_dir {data_dir}\ntemplate_dir /usr/share/xapian-omega/templates\n"
                f"log_dir {work}\n")
    # Omega 1.4 parses CJK text into n-grams only when XAPIAN_CJK_NGRAM is set.
    env = dict(os.environ, OMEGA_CONFIG_FILE=conf, XAPIAN_CJK_NGRAM="1")
    env.pop("REQUEST_METHOD", None)
    # Omega's query field takes the free text; its boolean filters go in B=.
    free = re.sub(r'category:("[^"]*"|\S+)', "", query).strip()
    values = [v.strip('"') for v in re.findall(r'category:("[^"]*"|\S+)', query)]
    filters = ["B=XC" + (":" if "A" <= v[0] <= "Z" else "") + v for v in values]
    # Omega ANDs words unless told otherwise; autocat search ORs them.
    page = run([OMEGA, "DB=" + name, "DEFAULTOP=or", "P=" + free] + filters, env=env)
    text = re.sub(r"<[^>]*>", " ", page)
    if re.search(r"No documents match your query", text) or re.search(r"No documents", text):
        return 0
    m = re.search(r"All\s+(\d+)\s+match", text) or re.search(r"of (?:exactly|about)\s+(\d+)", text)
    if not m:
        raise AssertionError("cannot read the match count from Omega's page for " + query)
    return int(m.group(1))


def omega_page(work, db, query, filters, template_dir, fmt):
    data_dir = os.path.join(work, "omega-data")
    os.makedirs(data_dir, exist_ok=True)
    name = os.path.basename(db)
    link = os.path.join(data_dir, name)
    if not os.path.islink(link):
        os.symlink(os.path.abspath(db), link)
    conf = os.path.join(work, "omega-" + fmt + ".conf")
    with open(conf, "w") as f:
        f.write(f"database_dir {data_dir}\ntemplate_dir {template_dir}\nlog_dir {work}\n")
    env = dict(os.environ, OMEGA_CONFIG_FILE=conf, XAPIAN_CJK_NGRAM="1")
    env.pop("REQUEST_METHOD", None)
    args = [OMEGA, "DB=" + name, "FMT=" + fmt, "DEFAULTOP=or", "HITSPERPAGE=1000", "P=" + query]
    return run(args + ["B=" + term for term in filters], env=env)


def python_hits(db, query):
    """(data, category names) of every match, as python3-xapian finds them."""
    import xapian

    database = xapian.Database(db)
    parser = xapian.QueryParser()
    parser.set_database(database)
    parser.set_stemmer(xapian.Stem("english"))
    parser.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    parser.add_boolean_prefix("category", "XC")
    parsed = parser.parse_query(
        query, xapian.QueryParser.FLAG_DEFAULT | xapian.QueryParser.FLAG_CJK_NGRAM)
    enquire = xapian.Enquire(database)
    enquire.set_query(parsed)
    hits = []
    for match in enquire.get_mset(0, 1000):
        names = []
        for term in match.document.termlist():
            t = term.term.decode("utf-8")
            if t.startswith("XC"):
                names.append(t[3:] if t[2:3] == ":" else t[2:])
        hits.append((match.document.get_data().decode("utf-8"), names))
    return hits


# Free text, and the B= filters of the same query (category names as terms).
FACET_QUERIES = [
    ("the", []),
    ("night", []),
    ("the", ["XC:Space"]),
    ("", ["XC:New York"]),
    ("comet OR doctor", ["XCsci.med", "XC:Space"]),
    ("", ["XC:Space|Tech"]),
    ("the", ["XC:Space|Tech", "XC:Space"]),
]


def check_omega_template(work, db, template_dir):
    """Failures of the examples/omega/autocat template on `db`."""
    failures = 0
    for free, filters in FACET_QUERIES:
        names = [t[3:] if t[2:3] == ":" else t[2:] for t in filters]
        query = " ".join([free] + ['category:"%s"' % n for n in names]).strip()
        hits = python_hits(db, query)
        expected = {}
        for _, categories in hits:
            for name in categories:
                expected[name] = expected.get(name, 0) + 1
        page = omega_page(work, db, free, filters, template_dir, "autocat")
        facet = {html.unescape(name): int(count) for name, count in re.findall(
            r'<li><a href="[^"]*">([^<]*)</a> <span class="count">(\d+)</span>', page)}
        m = re.search(r'<p class="matches">matches: (\d+)</p>', page)
        matches = int(m.group(1)) if m else -1
        samples = [html.unescape(s) for s in re.findall(r'<p class="sample">(.*?)</p>', page, re.S)]
        data_ok = len(samples) == len(hits) and all(
            any(data.split("\n")[0] in sample for sample in samples) for data, _ in hits)
        ok = facet == expected and matches == len(hits) and data_ok and hits
        failures += 0 if ok else 1
        print(f"{'ok' if ok else 'FAIL'}: omega template {query!r}: {matches} matches "
              f"(python3-xapian {len(hits)}), facet {facet} (python3-xapian {expected}), "
              f"data shown: {data_ok}")
    return failures


def main():
    cli, source, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    train = os.path.join(source, "examples", "data", "train.jsonl")
    model = os.path.join(work, "model")
    db = os.path.join(work, "index")
    run([cli, "train", "--model", model, "--threshold-folds", "0", train])
    # Documents with category names Xapian's prefix convention treats
    # specially (capital, space): retrained categories are the inbox's.
    docs = os.path.join(work, "docs.jsonl")
    with open(docs, "w") as f:
        for i, name in enumerate(sorted(os.listdir(os.path.join(source, "examples/data/inbox")))):
            with open(os.path.join(source, "examples/data/inbox", name), encoding="utf-8") as t:
                f.write(json.dumps({"id": name, "text": t.read()}) + "\n")
    run([cli, "index", "--model", model, "--db", db, docs])
    labelled = os.path.join(work, "labelled.jsonl")
    named_model = os.path.join(work, "named-model")
    with open(train, encoding="utf-8") as f, open(labelled, "w") as out:
        # "Space|Tech" holds the separator the template's page list once
        # used: its documents must not count as "Space".
        rename = {"astronomy": "Space", "football": "New York", "medicine": "sci.med",
                  "cooking": "料理", "computing": "Space|Tech"}
        for line in f:
            record = json.loads(line)
            record["labels"] = [rename.get(label, label) for label in record.get("labels", [])]
            out.write(json.dumps(record) + "\n")
    run([cli, "train", "--model", named_model, "--threshold-folds", "0", labelled])
    run([cli, "index", "--model", named_model, "--db", db + "-named", docs])

    failures = 0
    have_omega = os.access(OMEGA, os.X_OK)
    if not have_omega:
        print(f"FAILED: {OMEGA} is missing; install xapian-omega (scripts/install-deps.sh)")
        return 1
    for query in QUERIES:
        target = db + "-named" if "category:" in query and "astronomy" not in query else db
        expected = autocat_ids(cli, target, query)
        got = python_ids(target, query)
        omega = omega_count(work, target, query)
        status = "ok" if expected == got and omega == len(expected) and expected else "FAIL"
        if status != "ok":
            failures += 1
        print(f"{status}: {query!r}: autocat {len(expected)} {expected[:3]}, python3-xapian "
              f"{len(got)}, omega {omega}")
    failures += check_omega_template(work, db + "-named", os.path.join(source, "examples", "omega"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
