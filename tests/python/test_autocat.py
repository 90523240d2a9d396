"""The Python module autocat next to python3-xapian: run by ctest with the
built module on PYTHONPATH and AUTOCAT_CLI naming the built CLI."""

import inspect
import json
import os
import pydoc
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

import xapian

import autocat

if xapian.major_version() != int(autocat.XAPIAN_VERSION.split(".")[0]):
    print(f"SKIPPED: python3-xapian is built on Xapian {xapian.version_string()} and autocat on "
          f"Xapian {autocat.XAPIAN_VERSION}; their serialised documents do not mix. Build "
          "autocat against the same Xapian series as python3-xapian to run these tests.")
    sys.exit(77)
SOURCE_DIR = os.environ["AUTOCAT_SOURCE_DIR"]
CLI = os.environ["AUTOCAT_CLI"]
TRAIN = os.path.join(SOURCE_DIR, "examples", "data", "train.jsonl")

ASTRONOMY = "The telescope photographed a comet passing close to Jupiter and its moons."
COOKING = "Stir the risotto slowly and add warm stock a ladle at a time, then the parmesan."


def termlist(doc):
    """{term: (wdf, [positions])} of a xapian.Document."""
    return {item.term: (item.wdf, list(item.positer)) for item in doc.termlist()}


def values(doc):
    return {item.num: item.value for item in doc.values()}


class AutocatPythonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="autocat_python_test_")
        cls.model = os.path.join(cls.tmp, "model")
        subprocess.run([CLI, "train", "--model", cls.model, TRAIN], check=True,
                       stdout=subprocess.DEVNULL)
        cls.indexer = autocat.CategoryIndexer(cls.model)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_score_and_categorize(self):
        scores = self.indexer.score(ASTRONOMY)
        self.assertEqual(sorted(name for name, _ in scores), sorted(self.indexer.categories))
        self.assertEqual(scores, sorted(scores, key=lambda item: -item[1]))
        self.assertTrue(all(0.0 <= score <= 1.0 for _, score in scores))
        self.assertEqual(scores[0][0], "astronomy")
        self.assertEqual(self.indexer.categorize(ASTRONOMY)[0][0], "astronomy")
        self.assertEqual(self.indexer.categorize(COOKING)[0][0], "cooking")

    def test_index_matches_the_cli(self):
        # The same text through `autocat index` (C++) and through Python gives
        # the same terms, wdfs, positions and category value.
        records = os.path.join(self.tmp, "one.jsonl")
        with open(records, "w", encoding="utf-8") as out:
            out.write(json.dumps({"id": "comet", "text": ASTRONOMY}) + "\n")
        cli_db_path = os.path.join(self.tmp, "cli.db")
        subprocess.run([CLI, "index", "--model", self.model, "--db", cli_db_path, records],
                       check=True, stdout=subprocess.DEVNULL)
        cli_doc = xapian.Database(cli_db_path).get_document(1)

        doc = xapian.Document()
        doc.add_boolean_term("Qcomet")
        categories = self.indexer.index(ASTRONOMY, doc)
        self.assertEqual(categories[0][0], "astronomy")
        # Both record the model in the same XAUTOCATMODEL term.
        self.assertTrue(self.indexer.model_term.startswith(b"XAUTOCATMODEL"))
        self.assertIn(self.indexer.model_term, termlist(doc))
        self.assertEqual(termlist(doc), termlist(cli_doc))
        self.assertEqual(values(doc), values(cli_doc))
        self.assertEqual(autocat.decode_categories(doc.get_value(autocat.DEFAULT_CATEGORY_SLOT)),
                         [(name, round(score, 6)) for name, score in categories])

    def test_reindex_replaces_categories_and_keeps_application_terms(self):
        doc = xapian.Document()
        doc.add_boolean_term("XCOLORred")
        doc.add_posting("appword", 1000)
        doc.add_value(1, b"application value")
        self.indexer.index(ASTRONOMY, doc)
        self.assertIn(b"XCastronomy", termlist(doc))
        self.indexer.index(COOKING, doc)
        terms = termlist(doc)
        self.assertNotIn(b"XCastronomy", terms)
        self.assertIn(b"XCcooking", terms)
        self.assertIn(b"XCOLORred", terms)
        self.assertEqual(terms[b"appword"], (1, [1000]))
        self.assertEqual(doc.get_value(1), b"application value")
        self.assertEqual(autocat.decode_categories(doc.get_value(200))[0][0], "cooking")

    def test_categories_only(self):
        indexer = autocat.CategoryIndexer(self.model, index_text=False)
        doc = xapian.Document()
        indexer.index(ASTRONOMY, doc)
        self.assertEqual(sorted(termlist(doc)), sorted([b"XCastronomy", indexer.model_term]))
        # Without categorizing, no model term either.
        plain = autocat.CategoryIndexer(self.model, categorize=False)
        self.assertEqual(plain.model_term, b"")
        doc = xapian.Document()
        plain.index(ASTRONOMY, doc)
        self.assertFalse(any(term.startswith(b"XAUTOCATMODEL") for term in termlist(doc)))

    def test_batch_calls_match_one_at_a_time(self):
        texts = [ASTRONOMY, COOKING, "The striker scored twice before half time.", ""] * 5
        self.assertEqual(self.indexer.categorize_many(texts),
                         [self.indexer.categorize(text) for text in texts])
        self.assertEqual(self.indexer.categorize_many(texts, threads=1),
                         self.indexer.categorize_many(texts, threads=2))
        documents = [("d%d" % i, text, "title %d" % i if i % 2 else "")
                     for i, text in enumerate(texts[:4])] + [("d0", COOKING, "again")]
        one_db = xapian.WritableDatabase(os.path.join(self.tmp, "one_by_one.db"),
                                         xapian.DB_CREATE_OR_OVERWRITE)
        expected = [self.indexer.index_document(one_db, *document) for document in documents]
        batch_db = xapian.WritableDatabase(os.path.join(self.tmp, "batch.db"),
                                           xapian.DB_CREATE_OR_OVERWRITE)
        self.assertEqual(self.indexer.index_documents(batch_db, documents), expected)
        self.assertEqual(batch_db.get_doccount(), 4)
        for docid in range(1, 5):
            one, batch = one_db.get_document(docid), batch_db.get_document(docid)
            self.assertEqual(termlist(batch), termlist(one))
            self.assertEqual(values(batch), values(one))
            self.assertEqual(batch.get_data(), one.get_data())
        with self.assertRaises(autocat.InvalidArgumentError):
            self.indexer.index_documents(batch_db, [("", COOKING, "")])

    def test_set_categories_relabels_a_stored_document(self):
        doc = xapian.Document()
        doc.add_boolean_term("Qcomet")
        self.indexer.index(ASTRONOMY, doc)
        text_terms = {term for term in termlist(doc) if not term.startswith(b"XC")}
        self.indexer.set_categories(doc, [("cooking", 1.0), ("medicine", 0.5)])
        terms = termlist(doc)
        self.assertNotIn(b"XCastronomy", terms)
        self.assertIn(b"XCcooking", terms)
        self.assertIn(b"XCmedicine", terms)
        self.assertEqual({term for term in terms if not term.startswith(b"XC")}, text_terms)
        self.assertEqual(autocat.decode_categories(doc.get_value(autocat.DEFAULT_CATEGORY_SLOT)),
                         [("cooking", 1.0), ("medicine", 0.5)])

    @staticmethod
    def ids(mset):
        return {term.decode()[1:] for match in mset for term in
                (item.term for item in match.document.termlist()) if term.startswith(b"Q")}

    def test_search_filter_and_facets(self):
        db = xapian.WritableDatabase("", xapian.DB_BACKEND_INMEMORY)
        texts = {"comet": ASTRONOMY, "risotto": COOKING,
                 "moon": "The full moon rose over the observatory dome tonight.",
                 "bread": "Knead the dough and let the bread rise overnight in a warm kitchen."}
        for doc_id, text in texts.items():
            self.indexer.index_document(db, doc_id, text)
        db.commit()
        self.assertEqual(db.get_doccount(), 4)
        self.indexer.index_document(db, "comet", ASTRONOMY)  # replaces, never duplicates
        self.assertEqual(db.get_doccount(), 4)

        parser = xapian.QueryParser()
        parser.set_database(db)
        autocat.add_category_prefix(parser)
        enquire = xapian.Enquire(db)
        enquire.set_query(parser.parse_query("category:astronomy"))
        self.assertEqual(self.ids(enquire.get_mset(0, 10)), {"comet", "moon"})

        filtered = autocat.category_filter(xapian.Query(""), ["cooking"])
        enquire.set_query(filtered)
        self.assertEqual(self.ids(enquire.get_mset(0, 10)), {"risotto", "bread"})

        enquire.set_query(xapian.Query(""))
        mset, counts = autocat.facet_counts(enquire)
        brute = {}
        for doc_id in range(1, db.get_lastdocid() + 1):
            for name, _ in autocat.decode_categories(db.get_document(doc_id).get_value(200)):
                brute[name] = brute.get(name, 0) + 1
        self.assertEqual(dict(counts), brute)
        self.assertEqual(dict(counts), {"astronomy": 2, "cooking": 2})
        self.assertEqual(mset.size(), 4)

    def test_learn_and_forget(self):
        model = os.path.join(self.tmp, "live-model")
        shutil.copytree(self.model, model)
        indexer = autocat.CategoryIndexer(model, method="knn", k=1)
        self.assertEqual(indexer.categorize(ASTRONOMY)[0][0], "astronomy")
        indexer.learn("live-1", ASTRONOMY, ["cooking"])
        # The nearest neighbour is now the learned copy of the text itself.
        self.assertEqual(indexer.categorize(ASTRONOMY)[0][0], "cooking")
        # Another indexer opened later replays the journal.
        reopened = autocat.CategoryIndexer(model, method="knn", k=1)
        self.assertEqual(reopened.categorize(ASTRONOMY)[0][0], "cooking")
        indexer.forget("live-1")
        self.assertEqual(indexer.categorize(ASTRONOMY)[0][0], "astronomy")
        with self.assertRaises(autocat.InvalidArgumentError) as raised:
            indexer.learn("live-2", ASTRONOMY, ["gardening"])
        self.assertIn("gardening", str(raised.exception))
        with self.assertRaises(autocat.NotFoundError) as raised:
            indexer.forget("live-1")
        self.assertIn("live-1", str(raised.exception))

    def test_set_categories_refuses_a_category_the_model_lacks(self):
        doc = xapian.Document()
        self.indexer.index(ASTRONOMY, doc)
        with self.assertRaises(ValueError) as raised:
            self.indexer.set_categories(doc, [("gardening", 1.0)])
        self.assertIn("category 'gardening' is not in the model", str(raised.exception))
        self.assertIn(b"XCastronomy", termlist(doc))

    def test_corrections_are_marked_logged_kept_and_undone(self):
        model = os.path.join(self.tmp, "corrections-model")
        shutil.copytree(self.model, model)
        indexer = autocat.CategoryIndexer(model, method="knn", k=1)
        path = os.path.join(self.tmp, "corrections-db")
        db = xapian.WritableDatabase(path, xapian.DB_CREATE)
        indexer.index_document(db, "comet", ASTRONOMY)
        indexer.index_document(db, "risotto", COOKING)
        db.commit()
        db.close()
        with self.assertRaises(autocat.InvalidArgumentError) as raised:
            indexer.correct(path, "comet", ["cooking", "medicine"])
        self.assertIn("one-of", str(raised.exception))
        record = indexer.correct(path, "comet", ["cooking"], editor="ana")
        self.assertEqual((record["seq"], record["editor"], record["categories"]),
                         (1, "ana", ["cooking"]))
        self.assertEqual(record["previous"][0]["name"], "astronomy")
        self.assertEqual(indexer.categorize(ASTRONOMY)[0][0], "cooking")  # taught
        # Re-indexing keeps the editor's label.
        db = xapian.WritableDatabase(path, xapian.DB_OPEN)
        indexer.index_document(db, "comet", ASTRONOMY + " Again.")
        indexer.index_documents(db, [("comet", ASTRONOMY, "")])
        db.commit()
        doc = db.get_document(next(iter(db.postlist("Qcomet"))).docid)
        self.assertTrue(autocat.is_editor_set(doc))
        self.assertEqual(autocat.decode_categories(doc.get_value(autocat.DEFAULT_CATEGORY_SLOT)),
                         [("cooking", 1.0)])
        self.assertTrue(doc.get_value(autocat.EDITOR_SLOT).startswith(b"ana\t"))
        db.close()
        total, records = autocat.corrections(path)
        self.assertEqual((total, records[0]["id"]), (1, "comet"))
        undone = indexer.undo(path, 1, editor="ana")
        self.assertTrue(undone[0]["undone"])
        with self.assertRaises(autocat.ConflictError):
            indexer.undo(path, 1)
        self.assertEqual(indexer.categorize(ASTRONOMY)[0][0], "astronomy")  # forgotten
        db = xapian.Database(path)
        doc = db.get_document(next(iter(db.postlist("Qcomet"))).docid)
        self.assertFalse(autocat.is_editor_set(doc))
        self.assertEqual(autocat.decode_categories(doc.get_value(autocat.DEFAULT_CATEGORY_SLOT))[0][0],
                         "astronomy")

    def test_refresh_follows_what_another_indexer_learned(self):
        model = os.path.join(self.tmp, "refresh-model")
        shutil.copytree(self.model, model)
        reader = autocat.CategoryIndexer(model, method="knn", k=1)
        self.assertEqual(reader.categorize(ASTRONOMY)[0][0], "astronomy")
        self.assertFalse(reader.refresh())
        autocat.CategoryIndexer(model).learn("live-1", ASTRONOMY, ["cooking"])
        self.assertEqual(reader.categorize(ASTRONOMY)[0][0], "astronomy")
        self.assertTrue(reader.refresh())
        self.assertEqual(reader.categorize(ASTRONOMY)[0][0], "cooking")
        self.assertFalse(reader.refresh())

    def test_category_filter_takes_one_name_as_a_string(self):
        # A str is one category, not a sequence of one-letter categories.
        for names in ("astronomy", b"astronomy", ["astronomy"]):
            query = autocat.category_filter(xapian.Query(""), names)
            self.assertEqual(sorted(set(query)), [b"XCastronomy"], names)
        self.assertEqual(sorted(set(autocat.category_filter(xapian.Query(""), ["a", "b"]))),
                         [b"XCa", b"XCb"])

    def test_names_that_are_not_utf8(self):
        # tests/data/latin1_label_model was trained (before training refused
        # such labels) on tests/data/latin1_label_model.jsonl, whose coffee
        # documents have the Latin-1 label b"caf\xe9". The bytes come back with
        # errors="surrogateescape" and go in again the same way.
        model = os.path.join(self.tmp, "latin1-model")
        shutil.copytree(os.path.join(SOURCE_DIR, "tests", "data", "latin1_label_model"), model)
        indexer = autocat.CategoryIndexer(model)
        cafe = b"caf\xe9".decode("utf-8", "surrogateescape")
        self.assertEqual(sorted(indexer.categories), sorted(["astronomy", "cooking", cafe]))
        self.assertEqual(indexer.categorize("simmer the garlic sauce")[0][0], "cooking")
        self.assertEqual(indexer.categorize("espresso coffee beans")[0][0], cafe)
        self.assertEqual(sorted(name for name, _ in indexer.score("comet")),
                         sorted(indexer.categories))

        db = xapian.WritableDatabase("", xapian.DB_BACKEND_INMEMORY)
        self.assertEqual(indexer.index_document(db, "c1", "espresso coffee beans")[0][0], cafe)
        indexer.index_document(db, "s1", "a comet and the telescope")
        self.assertIn(b"XCcaf\xe9", [item.term for item in db.get_document(1).termlist()])
        enquire = xapian.Enquire(db)
        enquire.set_query(xapian.Query(""))
        _, counts = autocat.facet_counts(enquire)
        self.assertIn((cafe, 1), counts)
        for names in ([cafe], cafe, [b"caf\xe9"]):
            enquire.set_query(autocat.category_filter(xapian.Query(""), names))
            self.assertEqual(self.ids(enquire.get_mset(0, 10)), {"c1"}, names)
        # An error quoting such bytes keeps its message.
        with self.assertRaises(autocat.NotFoundError) as raised:
            indexer.forget(b"doc\xe9")
        self.assertIn("doc\\xe9", str(raised.exception))
        value = autocat.encode_categories([(cafe, 0.5)])
        self.assertIn(b"caf\xe9", value)
        self.assertEqual(autocat.decode_categories(value), [(cafe, 0.5)])

    def test_journal_warnings_are_issued_once(self):
        model = os.path.join(self.tmp, "torn-model")
        shutil.copytree(self.model, model)
        autocat.CategoryIndexer(model).learn("live-1", ASTRONOMY, ["cooking"])
        journal = [os.path.join(root, name) for root, _, names in os.walk(model)
                   for name in names if name == "journal"][0]
        with open(journal, "ab") as f:
            f.write(b"torn")  # a crash after 4 bytes of the next append
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            indexer = autocat.CategoryIndexer(model, method="knn", k=1)
            indexer.categorize(ASTRONOMY)
        torn = [w for w in caught if "torn tail" in str(w.message)]
        self.assertEqual(len(torn), 1, [str(w.message) for w in caught])
        self.assertIs(torn[0].category, RuntimeWarning)
        self.assertIn(journal, str(torn[0].message))

    def test_progress_is_reported_and_its_errors_stop_the_batch(self):
        texts = [ASTRONOMY, COOKING, "The striker scored twice before half time."] * 40
        calls = []
        self.assertEqual(self.indexer.categorize_many(texts, progress=lambda *a: calls.append(a)),
                         self.indexer.categorize_many(texts))
        # At least the final call; done only grows; the last is (total, total).
        self.assertTrue(calls)
        self.assertEqual(calls[-1], (len(texts), len(texts)))
        self.assertEqual([done for done, _ in calls], sorted(done for done, _ in calls))
        self.assertTrue(all(total == len(texts) for _, total in calls))

        documents = [("p%d" % i, text, "") for i, text in enumerate(texts)]
        db = xapian.WritableDatabase(os.path.join(self.tmp, "progress.db"),
                                     xapian.DB_CREATE_OR_OVERWRITE)
        calls = []
        written = []

        def note(done, total):
            calls.append((done, total))
            written.append(db.get_doccount())

        self.assertEqual(self.indexer.index_documents(db, documents, progress=note),
                         self.indexer.categorize_many(texts))
        self.assertEqual(calls[-1], (len(texts), len(texts)))
        # done counts documents already in the database.
        self.assertEqual([done for done, _ in calls], written)
        self.assertEqual(self.indexer.index_documents(db, [], progress=note), [])
        self.assertEqual(calls[-1], (0, 0))

        # A batch of about 2 s on one thread, sized by the faster of two
        # timed samples: the first runs cold, and either may share its core
        # with another test; a sample timed too slow made a batch too short.
        long_text = ASTRONOMY * 400
        per_text = float("inf")
        for _ in range(2):
            started = time.monotonic()
            self.indexer.categorize_many([long_text] * 50, threads=1)
            per_text = min(per_text, (time.monotonic() - started) / 50)
        slow = [long_text] * min(50000, max(200, int(2.0 / max(per_text, 1e-6))))

        # Calls come at most about every 0.5 s: the gaps between them (but
        # the last, which ends the batch) are at least that.
        times = []
        started = time.monotonic()
        self.indexer.categorize_many(slow, threads=1,
                                     progress=lambda done, total: times.append(time.monotonic()))
        self.assertGreaterEqual(len(times), 3, "the batch took %.2f s" % (time.monotonic() - started))
        gaps = [b - a for a, b in zip([started] + times, times[:-1])]
        self.assertTrue(all(gap >= 0.5 for gap in gaps), gaps)

        class Stop(Exception):
            pass

        def stop(done, total):
            raise Stop("enough at %d" % done)

        # An exception from the callable stops the batch at its first call.
        started = time.monotonic()
        with self.assertRaises(Stop):
            self.indexer.categorize_many(slow, threads=1, progress=stop)
        self.assertLess(time.monotonic() - started, 1.5)
        before = db.get_doccount()
        with self.assertRaises(Stop):
            self.indexer.index_documents(db, [("s%d" % i, t, "") for i, t in enumerate(slow)],
                                         threads=1, progress=stop)
        self.assertGreater(db.get_doccount(), before)  # the chunks before the call stay
        self.assertLess(db.get_doccount(), before + len(slow))
        with self.assertRaises(TypeError):
            self.indexer.categorize_many(texts, progress=lambda: None)  # wrong arity

    def test_every_public_name_is_documented(self):
        missing = []

        def text_of(obj):
            # Its own docstring: inspect.getdoc() would inherit a base class's.
            doc = inspect.cleandoc(obj.__doc__ or "")
            # pybind11 starts a docstring with the signature: skip it.
            lines = doc.splitlines()
            if lines and re.match(r"^\w+\(.*\)( -> .*)?$", lines[0]):
                lines = lines[1:]
            return "\n".join(lines).strip()

        def parameters(obj, name):
            try:
                return [p for p in inspect.signature(obj).parameters if p not in ("self", "args",
                                                                                  "kwargs")]
            except (TypeError, ValueError):
                first = (inspect.getdoc(obj) or "").splitlines()[:1]
                match = re.match(r"^\w+\((.*)\)", first[0]) if first else None
                if not match:
                    return []
                return [p for p in re.findall(r"(\w+):", match.group(1)) if p != "self"]

        def check(obj, name, callable_=True):
            text = text_of(obj)
            if not text:
                missing.append(name + ": no docstring")
                return
            if not callable_:
                return
            for parameter in parameters(obj, name):
                if not re.search(r"\b%s\b" % re.escape(parameter), text):
                    missing.append("%s: argument %s not described" % (name, parameter))
            if not name.endswith("__init__") and "return" not in text.lower():
                missing.append(name + ": return value not described")

        for name in sorted(set(autocat.__all__) | {n for n in dir(autocat)
                                                   if not n.startswith("_")}):
            obj = getattr(autocat, name)
            if inspect.ismodule(obj) or isinstance(obj, (int, str, bytes, float)):
                continue
            if inspect.isclass(obj):
                check(obj, name, callable_=False)
                if issubclass(obj, BaseException):
                    continue
                for attribute, member in inspect.getmembers(obj):
                    if attribute.startswith("_") and attribute not in ("__init__", "__call__"):
                        continue
                    owner = next(k for k in obj.__mro__ if attribute in vars(k))
                    if owner.__module__.split(".")[0] != "autocat":
                        continue  # inherited from object or xapian
                    if isinstance(member, property):
                        check(member, name + "." + attribute, callable_=False)
                    else:
                        check(member, name + "." + attribute)
            else:
                check(obj, name)
        self.assertEqual(missing, [])
        # help() renders it all.
        self.assertIn("progress", pydoc.render_doc(autocat.CategoryIndexer.categorize_many))

    def test_arguments_are_checked_as_the_cli_checks_them(self):
        # min_score: a number from 0 to 1, as --min-score.
        for bad, wording in ((float("nan"), "min_score needs a number, got nan"),
                             (2.0, "min_score must be between 0 and 1, got 2")):
            with self.assertRaises(autocat.InvalidArgumentError) as raised:
                autocat.CategoryIndexer(self.model, min_score=bad)
            self.assertIn(wording, str(raised.exception))
        # An item of categorize_many that is no text names its place.
        with self.assertRaises(TypeError) as raised:
            self.indexer.categorize_many(["goal", 7])
        self.assertIn("texts[1] must be a str or bytes, not int", str(raised.exception))
        # A lone surrogate that cannot become UTF-8 is named with its index.
        for call, what in ((lambda: self.indexer.categorize("goal \ud800"), "text"),
                           (lambda: self.indexer.score("goal \ud800"), "text"),
                           (lambda: self.indexer.forget("id\ud800"), "id"),
                           (lambda: self.indexer.learn("id\ud800", "goal", ["sports"]), "id")):
            with self.assertRaises(autocat.InvalidArgumentError) as raised:
                call()
            self.assertIn(what + " is not valid Unicode: a lone surrogate U+D800 at index",
                          str(raised.exception))

    def test_errors_name_the_model(self):
        missing = os.path.join(self.tmp, "no-such-model")
        with self.assertRaises(autocat.NotFoundError) as raised:
            autocat.CategoryIndexer(missing)
        self.assertIn("no-such-model", str(raised.exception))
        with self.assertRaises(autocat.InvalidArgumentError) as raised:
            autocat.CategoryIndexer(self.model, method="bogus")
        # The error lists every method.
        for method in ("knn", "rocchio", "nb", "bnb", "cnb", "svm", "logreg", "combo"):
            self.assertIn(method, str(raised.exception))
        self.assertTrue(issubclass(autocat.NotFoundError, autocat.Error))


if __name__ == "__main__":
    unittest.main()
