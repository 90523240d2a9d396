"""autocat: automatic text categorization built into a Xapian index.

Works next to python3-xapian in the same process through xapian's public
Python API only::

    import xapian, autocat
    indexer = autocat.CategoryIndexer("model")       # written by `autocat train`
    indexer.categorize("The striker scored twice")   # [("sports", 0.91)]
    doc = xapian.Document()
    indexer.index("The striker scored twice", doc)   # text terms, category terms, value slot
    parser = xapian.QueryParser()
    autocat.add_category_prefix(parser)              # category:sports
    spy = autocat.CategoryFacetSpy()                 # facet counts of an Enquire

Category names are str. A name that is not valid UTF-8 (a model trained
before training refused such labels, or a category slot written by another
program) is returned with each invalid byte as a lone surrogate
(errors="surrogateescape"): name.encode("utf-8", "surrogateescape") gives the
bytes back. Wherever a category name is taken, a str (such names included)
or bytes is accepted.

Thread safety: a CategoryIndexer may be used from several threads at once
(categorizing runs without the GIL); a CategoryFacetSpy serves one Enquire
at a time. Errors: autocat.Error and its subclasses (InvalidArgumentError,
NotFoundError, ModelFormatError, IOError, ConflictError), each message one
line naming the file or id; xapian's own errors pass through. The guide with
examples is docs/python.md in the source; the model's journal warnings
arrive as RuntimeWarning.
"""

import xapian

import json as _json

from ._autocat import (CATEGORY_FIELD, DEFAULT_CATEGORY_PREFIX, DEFAULT_CATEGORY_SLOT,
                       EDITOR_SET_TERM, EDITOR_SLOT, RUNNER_UP_SLOT,
                       ID_PREFIX, XAPIAN_VERSION, ConflictError, Error, InvalidArgumentError,
                       IOError, ModelFormatError, NotFoundError, __version__, category_terms,
                       decode_categories, encode_categories, query_stopwords)
from ._autocat import _corrections
from ._autocat import CategoryIndexer as _CategoryIndexer

__all__ = [
    "CategoryIndexer", "CategoryFacetSpy", "add_category_prefix", "category_filter",
    "facet_counts", "decode_categories", "encode_categories", "category_terms",
    "configure_query_parser", "query_stopwords", "QUERY_PARSER_FLAGS",
    "is_editor_set", "corrections",
    "Error", "InvalidArgumentError", "NotFoundError", "ModelFormatError", "IOError",
    "ConflictError", "EDITOR_SET_TERM", "EDITOR_SLOT", "RUNNER_UP_SLOT",
    "DEFAULT_CATEGORY_PREFIX", "DEFAULT_CATEGORY_SLOT", "ID_PREFIX", "CATEGORY_FIELD",
    "XAPIAN_VERSION", "__version__",
]


def is_editor_set(doc):
    """True if an editor set the categories of the xapian.Document `doc`
    (it carries EDITOR_SET_TERM, "XAUTOCATEDITED"): re-indexing keeps them.

    Returns a bool."""
    term = EDITOR_SET_TERM.encode()
    for item in doc.termlist():
        if item.term == term:
            return True
    return False


def corrections(db, offset=0, limit=50):
    """The corrections log of the index at the path `db`, newest first:
    `limit` records after skipping `offset`.

    Returns (total, [record]), each record a dict {"seq", "id",
    "categories", "previous", "previous_editor", "editor", "at",
    "model_top", "learned", "undone", ...} (docs/serve.md, "Editors'
    labels are facts"). Raises xapian errors opening `db`, InvalidArgumentError
    for a record that is not JSON. Cost: reads `limit` records."""
    total, records = _corrections(db, offset, limit)
    return total, [_json.loads(record) for record in records]


def _keep_editor_labels(indexer, db, id_term, doc):
    # An editor-set document keeps its categories, mark and editor slot when
    # its text is indexed again (autocat::replace_keeping_editor_labels).
    for posting in db.postlist(id_term):
        stored = db.get_document(posting.docid)
        if not is_editor_set(stored):
            return
        slot = indexer.category_slot
        serialised = doc.serialise()
        removed, added, values = indexer._set_categories_changes(
            serialised, decode_categories(stored.get_value(slot)), False)
        _apply_changes(doc, removed, added, values)
        doc.add_boolean_term(EDITOR_SET_TERM)
        doc.add_value(EDITOR_SLOT, stored.get_value(EDITOR_SLOT))
        doc.add_value(RUNNER_UP_SLOT, b"")  # empty: no value
        return


def _apply_changes(doc, removed_terms, added_terms, values):
    for term in removed_terms:
        doc.remove_term(term)
    for term, wdf, positions in added_terms:
        for position in positions:
            doc.add_posting(term, position, 0)
        if wdf or not positions:
            doc.add_term(term, wdf)  # wdf 0: a boolean term
    for slot, value in values:
        if value:
            doc.add_value(slot, value)
        else:
            doc.remove_value(slot)


class CategoryIndexer(_CategoryIndexer):
    """A model opened for indexing: CategoryIndexer(model_dir, method=None, k=0,
    decision=None, other=None, min_score=0.0, tuned_thresholds=True,
    max_categories=5, knn_max_query_terms=0, knn_search=None, category_prefix="XC",
    category_slot=200, categorize=True, index_text=True).

    model_dir is a directory written by `autocat train`; the keyword
    arguments are described under __init__. Raises NotFoundError,
    ModelFormatError or InvalidArgumentError naming the directory or file.
    Its methods may be called from several threads at once; the batch calls
    release the GIL while they categorize."""

    def index(self, text, doc):
        """Adds to the xapian.Document `doc` what autocat::CategoryIndexer::index
        adds in C++: the str `text`'s terms with positions (unless
        index_text=False), one boolean term per assigned category and the
        category value slot, replacing categories a previous call stored.

        Returns the categories stored, [(name, score)]. Raises Error if the
        model cannot be read; `doc` is unchanged then."""
        serialised = doc.serialise() if doc.termlist_count() or doc.values_count() else b""
        categories, removed, added, values = self._index_changes(text, serialised)
        _apply_changes(doc, removed, added, values)
        return categories

    def index_document(self, db, doc_id, text, title=""):
        """Builds a document for `doc_id` (str; unique term "Q"+id, data =
        `title` or the first 200 characters of the str `text`), indexes `text`
        into it and replaces any document with the same id in the
        xapian.WritableDatabase `db`. Does not commit.

        Returns the categories stored, [(name, score)]. Raises
        InvalidArgumentError for an empty doc_id, xapian errors from `db`."""
        if not doc_id:
            raise InvalidArgumentError("document id must not be empty")
        doc = xapian.Document()
        id_term = ID_PREFIX + doc_id
        doc.add_boolean_term(id_term)
        doc.set_data(title or text[:200])
        categories = self.index(text, doc)
        _keep_editor_labels(self, db, id_term, doc)
        db.replace_document(id_term, doc)
        return categories

    def correct(self, db, doc_id, categories, editor="python", learn=True):
        """An editor's correction of document `doc_id` of the index at the
        path `db` (written by `autocat index`), as `autocat relabel` and
        serve's PUT make it: the document gets `categories` (names) with
        score 1, is marked editor-set by `editor`, the model is taught it
        (journaled) when `learn`, and the correction is logged and committed.
        `db` must not be open for writing elsewhere.

        Returns the logged record, a dict (see corrections()). Raises
        NotFoundError (no such id), InvalidArgumentError (an unknown
        category, or two for a one-of model)."""
        return _json.loads(self._correct(db, doc_id, categories, editor, learn))

    def undo(self, db, seq, editor="python"):
        """Undoes correction `seq` (its whole batch, for a bulk one) in the
        index at the path `db`: the documents get their previous categories
        and editor mark back, the model forgets what was taught.

        Returns the records marked undone, [dict]. Raises NotFoundError (no
        such correction) or ConflictError (already undone, or a later
        correction of the same document is in force)."""
        return [_json.loads(record) for record in self._undo(db, seq, editor)]


    def set_categories(self, doc, categories):
        """Replaces the categories the xapian.Document `doc` holds (the terms
        and value slot index() or set_categories() stored) by `categories`,
        an iterable of (name, score), leaving its text terms, id and data
        alone: to relabel a stored document. Write it back with
        db.replace_document().

        Returns None. Raises ValueError for an item that is not a (name,
        score) pair or a category the model does not have, TypeError for a
        name that is not str or bytes. Does not mark the document
        editor-set: correct() does, and logs the correction."""
        serialised = doc.serialise() if doc.termlist_count() or doc.values_count() else b""
        removed, added, values = self._set_categories_changes(serialised, list(categories))
        _apply_changes(doc, removed, added, values)

    def index_documents(self, db, documents, threads=0, progress=None):
        """index_document() of each (doc_id, text, title) in `documents` (an
        iterable), the categorizing done on `threads` threads (0: every core)
        without the GIL; the documents are written to the
        xapian.WritableDatabase `db` in input order (a later id replaces an
        earlier one). Does not commit.

        `progress`, if given, is called as progress(done, total) with the
        number of documents written so far, at most about every 0.5 s and
        once at the end; the documents are then categorized and written in
        chunks. An exception it raises stops the batch and propagates: the
        documents written before it stay in `db` (uncommitted).

        Returns the categories stored for each document, [[(name, score)]],
        in input order. Raises ValueError for an item that is not an (id,
        text, title) triple, InvalidArgumentError for an empty id (without
        `progress`, before anything is written), xapian errors from `db`."""
        stored = []

        def write(prepared):
            for id_term, serialised, categories in prepared:
                doc = xapian.Document.unserialise(serialised)
                _keep_editor_labels(self, db, id_term, doc)
                db.replace_document(id_term, doc)
                stored.append(categories)

        self._prepare_documents([(doc_id, text, title) for doc_id, text, title in documents],
                                threads, write, progress)
        return stored


def add_category_prefix(parser, prefix=DEFAULT_CATEGORY_PREFIX):
    """Lets the xapian.QueryParser `parser` read `category:NAME` filters,
    as boolean terms with the category term prefix `prefix`.

    Returns None. Raises what parser.add_boolean_prefix raises (e.g.
    xapian.InvalidOperationError for a prefix already set another way)."""
    parser.add_boolean_prefix(CATEGORY_FIELD, prefix)


# Flags for parse_query on text indexed by autocat: Xapian's defaults plus
# CJK n-grams, as the text was indexed.
QUERY_PARSER_FLAGS = xapian.QueryParser.FLAG_DEFAULT | xapian.QueryParser.FLAG_CJK_NGRAM


def configure_query_parser(parser, stemmer="english", prefix=DEFAULT_CATEGORY_PREFIX):
    """Sets up the xapian.QueryParser `parser` as autocat indexed the text
    with `stemmer` (a language name, CategoryIndexer.stemmer): that stemmer
    with STEM_SOME, autocat's English stopwords and `category:` over the
    category term prefix `prefix`. Parse with QUERY_PARSER_FLAGS.

    Returns None. Raises xapian.InvalidArgumentError for an unknown
    stemmer."""
    parser.set_stemmer(xapian.Stem(stemmer))
    parser.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    stopper = xapian.SimpleStopper()
    for word in query_stopwords():
        stopper.add(word)
    parser.set_stopper(stopper)
    add_category_prefix(parser, prefix)


def category_filter(query, names, prefix=DEFAULT_CATEGORY_PREFIX):
    """The xapian.Query `query` restricted to documents in any of the
    categories `names` (an iterable of names, or one name as a str or bytes),
    whose terms have the prefix `prefix` (OP_FILTER: weights unchanged).

    Returns a xapian.Query; with no names, `query` itself. Raises
    InvalidArgumentError for a prefix autocat does not allow."""
    if not names:
        return query
    if not isinstance(names, (str, bytes)):
        names = list(names)
    terms = [xapian.Query(term) for term in category_terms(names, prefix)]
    return xapian.Query(xapian.Query.OP_FILTER, query, xapian.Query(xapian.Query.OP_OR, terms))


class _OwnMembersInHelp(type):
    # help() lists what dir() returns: without this, help(autocat) repeats
    # xapian.MatchSpy's whole documentation, which help(xapian.MatchSpy) has.
    def __dir__(cls):
        return sorted(vars(cls))


class CategoryFacetSpy(xapian.MatchSpy, metaclass=_OwnMembersInHelp):
    """A xapian.MatchSpy counting the categories of the matching documents
    (a document with several counts once for each), read from the category
    value slot. Local databases only: Python match spies cannot go to
    xapian-tcpsrv. Xapian calls a spy only for the documents a match
    decider accepts. Attribute documents_seen: the documents counted.

    One spy serves one Enquire at a time (it is not thread-safe); it costs a
    read and a parse of the value slot per match. Everything else of a
    xapian.MatchSpy (name(), serialise(), ...) is as help(xapian.MatchSpy)
    describes."""

    def __init__(self, slot=DEFAULT_CATEGORY_SLOT):
        """A spy reading the category value slot `slot` (int). Returns the
        spy; add it with enquire.add_matchspy(). Raises nothing."""
        xapian.MatchSpy.__init__(self)
        self.slot = slot
        self.documents_seen = 0
        self._counts = {}

    def __call__(self, doc, weight):
        """Counts the categories of the xapian.Document `doc` (Xapian calls
        this for each match; `weight` is its weight, unused); a document
        without categories counts in documents_seen only. Returns None.
        Raises nothing."""
        self.documents_seen += 1
        for name, _score in decode_categories(doc.get_value(self.slot)):
            self._counts[name] = self._counts.get(name, 0) + 1

    def counts(self):
        """Returns the counts so far, [(category, count)], by descending
        count, then name. Raises nothing."""
        return sorted(self._counts.items(), key=lambda item: (-item[1], item[0]))


def facet_counts(enquire, first=0, maxitems=10, slot=DEFAULT_CATEGORY_SLOT):
    """Runs the query of the xapian.Enquire `enquire` with a CategoryFacetSpy
    reading value slot `slot` over every match, asking for `maxitems` results
    from rank `first`.

    Returns (mset, [(category, count)]). Raises xapian errors (e.g. for a
    remote database, where a Python spy cannot go)."""
    spy = CategoryFacetSpy(slot)
    enquire.add_matchspy(spy)
    try:
        mset = enquire.get_mset(first, maxitems, 0xFFFFFFFF)  # check every match
    finally:
        enquire.clear_matchspies()
    return mset, spy.counts()
