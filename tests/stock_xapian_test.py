#!/usr/bin/python3
# A stock Xapian application finds what `autocat search` finds: an index built
# by `autocat index` is searched through python3-xapian (no autocat code) and
# through the Omega CGI (xapian-omega, default template), and every query
# must return the same documents (Python) and the same match count (Omega).
#
# usage: stock_xapian_test.py AUTOCAT_CLI SOURCE_DIR WORK_DIR
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
        rename = {"astronomy": "Space", "football": "New York", "medicine": "sci.med",
                  "cooking": "料理"}
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
