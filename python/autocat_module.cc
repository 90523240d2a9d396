// The compiled half of the Python module `autocat` (autocat._autocat). It
// never touches python3-xapian's objects: documents cross as bytes
// (Xapian::Document::serialise) and come back as the terms, positions and
// values to apply, which autocat/__init__.py applies through xapian's public
// Python API.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <xapian.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "autocat/autocat.h"
#include "autocat/version.h"

namespace py = pybind11;

namespace {

// (term, wdf to add, positions to add)
using TermChange = std::tuple<py::bytes, Xapian::termcount, std::vector<Xapian::termpos>>;

// Category names are bytes to Xapian and to a model. A name that is not
// valid UTF-8 (a model trained before training refused such labels, or a
// category slot written by another program) comes back as a str with each
// invalid byte a lone surrogate (errors="surrogateescape"), and a name
// argument may be such a str or bytes: the name round-trips and one bad name
// never makes the others unreadable.
py::str name_to_python(const std::string& name) {
  PyObject* text =
      PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), "surrogateescape");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

std::string name_from_python(const py::handle& name) {
  if (PyBytes_Check(name.ptr())) return name.cast<std::string>();
  if (!PyUnicode_Check(name.ptr())) {
    throw py::type_error("a category name must be a str or bytes, not " +
                         std::string(Py_TYPE(name.ptr())->tp_name));
  }
  PyObject* bytes = PyUnicode_AsEncodedString(name.ptr(), "utf-8", "surrogateescape");
  if (bytes == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::bytes>(bytes).cast<std::string>();
}

// An id or a text argument (`what` names it in messages): a str, encoded
// as UTF-8 with each lone surrogate from U+DC80 to U+DCFF the byte it
// stands for (errors="surrogateescape", as names), or bytes. Any other
// lone surrogate cannot become UTF-8: InvalidArgumentError naming it and
// its index, as the CLI names what it refuses.
std::string utf8_from_python(const py::handle& value, const std::string& what) {
  if (PyBytes_Check(value.ptr())) return value.cast<std::string>();
  if (!PyUnicode_Check(value.ptr())) {
    throw py::type_error(what + " must be a str or bytes, not " +
                         std::string(Py_TYPE(value.ptr())->tp_name));
  }
  PyObject* bytes = PyUnicode_AsEncodedString(value.ptr(), "utf-8", "surrogateescape");
  if (bytes != nullptr) return py::reinterpret_steal<py::bytes>(bytes).cast<std::string>();
  PyErr_Clear();
  const Py_ssize_t length = PyUnicode_GetLength(value.ptr());
  for (Py_ssize_t i = 0; i < length; ++i) {
    const Py_UCS4 c = PyUnicode_ReadChar(value.ptr(), i);
    if (c >= 0xD800 && c <= 0xDFFF) {
      char code[8];
      std::snprintf(code, sizeof code, "%04X", static_cast<unsigned>(c));
      throw autocat::InvalidArgumentError(
          what + " is not valid Unicode: a lone surrogate U+" + code + " at index " +
          std::to_string(i) +
          "; give text that encodes as UTF-8 (decode its bytes with errors=\"replace\" or "
          "\"surrogateescape\"), or bytes");
    }
  }
  throw autocat::InvalidArgumentError(what + " cannot be encoded as UTF-8");
}

// One name (str or bytes) or an iterable of names.
std::vector<std::string> names_from_python(const py::handle& names) {
  if (PyUnicode_Check(names.ptr()) || PyBytes_Check(names.ptr())) {
    return {name_from_python(names)};
  }
  std::vector<std::string> out;
  for (const py::handle& name : py::iter(names)) out.push_back(name_from_python(name));
  return out;
}

py::list names_to_python(const std::vector<std::string>& names) {
  py::list list;
  for (const std::string& name : names) list.append(name_to_python(name));
  return list;
}

// [(name, score)]
py::list to_tuples(const std::vector<autocat::Category>& categories) {
  py::list tuples;
  for (const autocat::Category& category : categories) {
    tuples.append(py::make_tuple(name_to_python(category.name), category.score));
  }
  return tuples;
}

std::vector<autocat::Category> from_tuples(const py::iterable& tuples) {
  std::vector<autocat::Category> categories;
  for (const py::handle& item : tuples) {
    const py::tuple pair = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
    if (pair.size() != 2) throw py::value_error("a category is a (name, score) pair");
    categories.push_back({name_from_python(pair[0]), pair[1].cast<double>()});
  }
  return categories;
}

autocat::IndexOptions make_options(
    const std::optional<std::string>& method, int k, const std::optional<std::string>& decision,
    std::optional<bool> other, double min_score, bool tuned_thresholds, int max_categories,
    int knn_max_query_terms, const std::optional<std::string>& knn_search,
    const std::string& category_prefix, Xapian::valueno category_slot, bool categorize,
    bool index_text) {
  autocat::IndexOptions options;
  if (method) {
    options.classify.method = autocat::parse_method(*method);
    if (!options.classify.method) {
      std::string choices;
      for (autocat::Method known : autocat::all_methods()) {
        choices += (choices.empty() ? "" : ", ") + autocat::method_name(known);
      }
      throw autocat::InvalidArgumentError("unknown method '" + *method + "'; choose one of " +
                                          choices);
    }
  }
  if (decision) {
    options.classify.decision = autocat::parse_decision(*decision);
    if (!options.classify.decision) {
      throw autocat::InvalidArgumentError("unknown decision '" + *decision +
                                          "'; choose one-of or any-of");
    }
  }
  options.classify.k = k;
  options.classify.other = other;
  // As the CLI's --min-score: a number from 0 to 1 (NaN or 2 would let
  // every call return no category).
  if (!std::isfinite(min_score)) {
    throw autocat::InvalidArgumentError("min_score needs a number, got " +
                                        std::to_string(min_score));
  }
  if (min_score < 0.0 || min_score > 1.0) {
    std::ostringstream given;
    given << min_score;
    throw autocat::InvalidArgumentError("min_score must be between 0 and 1, got " + given.str());
  }
  options.classify.min_score = min_score;
  options.classify.tuned_thresholds = tuned_thresholds;
  options.classify.max_categories = max_categories;
  options.classify.knn_max_query_terms = knn_max_query_terms;
  if (knn_search) {
    options.classify.knn_search = autocat::parse_knn_search(*knn_search);
    if (!options.classify.knn_search) {
      throw autocat::InvalidArgumentError("unknown knn_search '" + *knn_search +
                                          "'; choose exact or two-step");
    }
  }
  options.category_prefix = category_prefix;
  options.category_slot = category_slot;
  options.categorize = categorize;
  options.index_text = index_text;
  return options;
}

// What CategoryIndexer::index changed in a document: terms to remove, terms
// to add (wdf increase and new positions), values to set (empty = remove).
struct DocumentChanges {
  std::vector<py::bytes> removed_terms;
  std::vector<TermChange> added_terms;
  std::vector<std::pair<Xapian::valueno, py::bytes>> values;
};

std::vector<Xapian::termpos> positions_of(const Xapian::TermIterator& it) {
  return std::vector<Xapian::termpos>(it.positionlist_begin(), it.positionlist_end());
}

DocumentChanges diff_documents(const Xapian::Document& before, const Xapian::Document& after) {
  DocumentChanges changes;
  Xapian::TermIterator old_it = before.termlist_begin();
  Xapian::TermIterator new_it = after.termlist_begin();
  const Xapian::TermIterator old_end = before.termlist_end();
  const Xapian::TermIterator new_end = after.termlist_end();
  while (old_it != old_end || new_it != new_end) {
    if (new_it == new_end || (old_it != old_end && *old_it < *new_it)) {
      changes.removed_terms.emplace_back(*old_it);
      ++old_it;
      continue;
    }
    const std::vector<Xapian::termpos> new_positions = positions_of(new_it);
    if (old_it == old_end || *new_it < *old_it) {
      changes.added_terms.emplace_back(py::bytes(*new_it), new_it.get_wdf(), new_positions);
      ++new_it;
      continue;
    }
    // In both: add what is new; a term that lost wdf or positions is replaced.
    const std::vector<Xapian::termpos> old_positions = positions_of(old_it);
    if (new_it.get_wdf() < old_it.get_wdf() ||
        !std::includes(new_positions.begin(), new_positions.end(), old_positions.begin(),
                       old_positions.end())) {
      changes.removed_terms.emplace_back(*old_it);
      changes.added_terms.emplace_back(py::bytes(*new_it), new_it.get_wdf(), new_positions);
    } else if (new_it.get_wdf() != old_it.get_wdf() || new_positions != old_positions) {
      std::vector<Xapian::termpos> added;
      std::set_difference(new_positions.begin(), new_positions.end(), old_positions.begin(),
                          old_positions.end(), std::back_inserter(added));
      changes.added_terms.emplace_back(py::bytes(*new_it), new_it.get_wdf() - old_it.get_wdf(),
                                       std::move(added));
    }
    ++old_it;
    ++new_it;
  }
  for (auto it = before.values_begin(); it != before.values_end(); ++it) {
    if (after.get_value(it.get_valueno()).empty()) {
      changes.values.emplace_back(it.get_valueno(), py::bytes());
    }
  }
  for (auto it = after.values_begin(); it != after.values_end(); ++it) {
    if (before.get_value(it.get_valueno()) != *it) {
      changes.values.emplace_back(it.get_valueno(), py::bytes(*it));
    }
  }
  return changes;
}

// Passes the indexer's journal warnings not reported yet to Python's
// warnings module (RuntimeWarning: on stderr once each by default).
void emit_warnings(const autocat::CategoryIndexer& indexer) {
  for (const std::string& warning : indexer.take_warnings()) {
    if (PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0) {
      throw py::error_already_set();
    }
  }
}

py::tuple index_changes(const autocat::CategoryIndexer& indexer, std::string_view text,
                        const std::string& serialised_document) {
  Xapian::Document before;
  Xapian::Document after;
  if (!serialised_document.empty()) {
    before = Xapian::Document::unserialise(serialised_document);
    after = Xapian::Document::unserialise(serialised_document);
  }
  std::vector<autocat::Category> assigned;
  {
    py::gil_scoped_release release;
    assigned = indexer.index(text, after);
  }
  emit_warnings(indexer);
  DocumentChanges changes = diff_documents(before, after);
  return py::make_tuple(to_tuples(assigned), std::move(changes.removed_terms),
                        std::move(changes.added_terms), std::move(changes.values));
}

// What set_categories() changes in a serialised document (as index_changes).
py::tuple set_categories_changes(const autocat::CategoryIndexer& indexer,
                                 const std::string& serialised_document,
                                 const py::iterable& categories, bool check) {
  Xapian::Document before;
  Xapian::Document after;
  if (!serialised_document.empty()) {
    before = Xapian::Document::unserialise(serialised_document);
    after = Xapian::Document::unserialise(serialised_document);
  }
  const std::vector<autocat::Category> wanted = from_tuples(categories);
  std::vector<std::string> names;
  for (const autocat::Category& category : wanted) names.push_back(category.name);
  if (check && !names.empty()) {
    try {
      autocat::known_categories(indexer, names);  // as relabel and serve's PUT
    } catch (const autocat::InvalidArgumentError& e) {
      throw py::value_error(e.what());
    }
  }
  indexer.set_categories(after, wanted);
  DocumentChanges changes = diff_documents(before, after);
  return py::make_tuple(std::move(changes.removed_terms), std::move(changes.added_terms),
                        std::move(changes.values));
}

// The value slot `autocat index --store-text` recorded in `db`, or
// Xapian::BAD_VALUENO.
Xapian::valueno stored_text_slot(const Xapian::Database& db) {
  const std::string text = db.get_metadata("autocat:text_slot");
  if (text.empty()) return Xapian::BAD_VALUENO;
  return static_cast<Xapian::valueno>(std::stoul(text));
}

Xapian::WritableDatabase open_for_corrections(const std::string& path) {
  return Xapian::WritableDatabase(path, Xapian::DB_OPEN);
}

// correct_document() on the database at `db_path`; the record as JSON text.
std::string correct(autocat::CategoryIndexer& indexer, const std::string& db_path,
                    const std::string& id, const py::object& categories, const std::string& editor,
                    bool learn) {
  const std::vector<std::string> names = names_from_python(categories);
  autocat::Correction correction;
  {
    py::gil_scoped_release release;
    Xapian::WritableDatabase db = open_for_corrections(db_path);
    autocat::CorrectionOptions options;
    options.editor = editor;
    options.learn = learn;
    options.text_slot = stored_text_slot(db);
    correction = autocat::correct_document(db, indexer, id, names, options);
    db.close();
  }
  emit_warnings(indexer);
  return autocat::correction_json(correction);
}

std::vector<std::string> undo(autocat::CategoryIndexer& indexer, const std::string& db_path,
                              uint64_t seq, const std::string& editor) {
  std::vector<autocat::Correction> undone;
  {
    py::gil_scoped_release release;
    Xapian::WritableDatabase db = open_for_corrections(db_path);
    undone = autocat::undo_correction(db, indexer, seq, editor, stored_text_slot(db));
    db.close();
  }
  emit_warnings(indexer);
  std::vector<std::string> records;
  for (const autocat::Correction& correction : undone) {
    records.push_back(autocat::correction_json(correction));
  }
  return records;
}

py::tuple corrections(const std::string& db_path, uint64_t offset, uint64_t limit) {
  const autocat::CorrectionPage page =
      autocat::list_corrections(Xapian::Database(db_path), offset, limit);
  std::vector<std::string> records;
  for (const autocat::Correction& correction : page.corrections) {
    records.push_back(autocat::correction_json(correction));
  }
  return py::make_tuple(page.total, records);
}

// A batch's progress callable is called at most this often (and at the end).
constexpr std::chrono::milliseconds kProgressInterval(500);
// With one, the batch runs in chunks of about this much work: the GIL-free
// batch calls cannot call Python, so a report waits for the end of a chunk.
constexpr double kChunkSeconds = 0.1;

// Runs `work(begin, end)` (without the GIL) and then `after(begin, end)`
// (with it) over [0, total). With no `progress` (None), in one piece. Else
// in chunks sized from the time the previous one took (at least one item per
// thread, so the threads stay busy), calling progress(done, total) once at
// least kProgressInterval has passed since the last call, and at the end. An
// exception from `progress` or `after` stops the batch there and propagates.
template <typename Work, typename After>
void in_chunks(size_t total, unsigned threads, const py::object& progress, Work work, After after) {
  if (progress.is_none()) {
    {
      py::gil_scoped_release release;
      work(0, total);
    }
    after(0, total);
    return;
  }
  using Clock = std::chrono::steady_clock;
  const size_t min_chunk =
      std::max<size_t>(1, threads != 0 ? threads : std::thread::hardware_concurrency());
  size_t chunk = min_chunk;
  Clock::time_point last_report = Clock::now();
  size_t done = 0;
  while (done < total) {
    const size_t end = std::min(total, done + chunk);
    const Clock::time_point start = Clock::now();
    {
      py::gil_scoped_release release;
      work(done, end);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    after(done, end);
    // Grow at most fourfold a step, so one fast chunk cannot make the next
    // one run far past the interval.
    const double wanted =
        seconds > 0 ? kChunkSeconds / seconds * double(end - done) : double(chunk) * 4;
    chunk = std::max(min_chunk, static_cast<size_t>(std::min(wanted, double(chunk) * 4)));
    done = end;
    if (done < total && Clock::now() - last_report < kProgressInterval) continue;
    progress(done, total);
    last_report = Clock::now();
  }
  if (total == 0) progress(0, 0);
}

// prepare_documents() of (id, text, title) tuples, categorized on `threads`
// threads without the GIL; `write` is called (with the GIL) with each
// chunk's [(id_term, serialised document, categories)], in input order
// (one chunk for everything without `progress`).
void prepare_documents(const autocat::CategoryIndexer& indexer, const py::iterable& documents,
                       unsigned threads, const py::object& write, const py::object& progress) {
  std::vector<autocat::DocumentToIndex> batch;
  for (const py::handle& item : documents) {
    const auto fields = item.cast<py::tuple>();
    if (fields.size() != 3) {
      throw autocat::InvalidArgumentError("each document must be an (id, text, title) tuple");
    }
    batch.push_back(autocat::DocumentToIndex{fields[0].cast<std::string>(),
                                             fields[1].cast<std::string>(),
                                             fields[2].cast<std::string>()});
  }
  std::vector<autocat::PreparedDocument> prepared;
  std::vector<std::string> serialised;
  auto work = [&](size_t begin, size_t end) {
    const std::vector<autocat::DocumentToIndex> part(
        std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(begin)),
        std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(end)));
    prepared = indexer.prepare_documents(part, threads);
    serialised.clear();
    serialised.reserve(prepared.size());
    for (const autocat::PreparedDocument& doc : prepared) {
      serialised.push_back(doc.document.serialise());
    }
  };
  auto after = [&](size_t, size_t) {
    emit_warnings(indexer);
    py::list result;
    for (size_t i = 0; i < prepared.size(); ++i) {
      result.append(py::make_tuple(py::bytes(prepared[i].id_term), py::bytes(serialised[i]),
                                   to_tuples(prepared[i].categories)));
    }
    write(result);
  };
  in_chunks(batch.size(), threads, progress, work, after);
}

// The terms autocat::category_filter matches for `names`, so Python filters
// follow whatever term convention the C++ library writes.
std::vector<py::bytes> category_terms(const py::object& names, const std::string& prefix) {
  const Xapian::Query query =
      autocat::category_filter(Xapian::Query::MatchAll, names_from_python(names), prefix);
  std::vector<py::bytes> terms;
  for (auto it = query.get_unique_terms_begin(); it != query.get_unique_terms_end(); ++it) {
    if (!(*it).empty()) terms.emplace_back(*it);
  }
  return terms;
}

// Docstrings (help(autocat)): each says the arguments, what comes back and
// what is raised.
const char kInitDoc[] =
    "Opens the model directory model_dir written by `autocat train`.\n\n"
    "Keyword arguments (all optional): method (\"knn\", \"rocchio\", \"nb\", \"bnb\", \"cnb\", "
    "\"svm\", \"logreg\", \"combo\"; None: the model's default), k (kNN neighbours; 0: the "
    "model's), decision (\"one-of\" or \"any-of\"; None: the model's), other (whether one-of may "
    "assign no category; None: the model's), min_score (categories scoring below it are not "
    "assigned), tuned_thresholds (use the thresholds tuned at training), max_categories (at most "
    "this many assigned), knn_max_query_terms (0: all), knn_search (\"exact\" or \"two-step\"; "
    "None: the search the model was tuned with), category_prefix (term prefix of "
    "categories, \"XC\"), category_slot (value slot of categories, 200), categorize (False: "
    "index() adds text terms only), index_text (False: index() adds categories only).\n\n"
    "Returns the opened indexer. Raises NotFoundError (no model there), ModelFormatError (a "
    "damaged or foreign model file) or InvalidArgumentError (an unknown method or decision, a "
    "bad prefix), each naming the directory or file. Journal warnings come as RuntimeWarning.";
const char kCategoriesDoc[] = "Every category of the model, sorted (a list of str).";
const char kDefaultMethodDoc[] =
    "The method used when none is given (str, e.g. \"knn\"): the model's default.";
const char kCategoryPrefixDoc[] = "The term prefix of category terms (str, \"XC\" by default).";
const char kCategorySlotDoc[] =
    "The value slot holding each document's categories and scores (int, 200 by default).";
const char kScoreDoc[] =
    "Scores every category for `text` (str), no decision applied.\n\n"
    "Returns [(name, score)], best first. Runs without the GIL. Raises Error if the model "
    "cannot be read.";
const char kCategorizeDoc[] =
    "The categories the model assigns to `text` (str), with the indexer's decision.\n\n"
    "Returns [(name, score)], best first; empty if none is assigned. Runs without the GIL. "
    "Raises Error if the model cannot be read.";
const char kLearnDoc[] =
    "Adds a training document to the open model, or replaces the one with the same `id` "
    "(str), with `text` (str) and `labels` (category names, or one name as a str or bytes). "
    "Journaled and fsynced first: models opened later see it, and every method uses it at once, "
    "with idf, vocabulary, C, thresholds and calibration as trained until autocat train --add.\n\n"
    "Returns None. Raises InvalidArgumentError (empty id, no labels, a category the model does "
    "not have, a text without terms), NotFoundError (no training database next to the model) or "
    "IOError (the journal cannot be written); nothing changes then.";
const char kForgetDoc[] =
    "Removes the training document `id` (str) from the open model (journaled).\n\n"
    "Returns None. Raises NotFoundError if no training document has that id, IOError if the "
    "journal cannot be written; nothing changes then.";
const char kRefreshDoc[] =
    "Follows the model directory: switches to a newer model generation (after `autocat train` "
    "or `train --add`) or applies the documents other processes learned or forgot since. "
    "Returns True if anything changed. Cheap when nothing did (a read of CURRENT and two "
    "stat calls): a long-lived program calls it between requests. Raises NotFoundError or "
    "ModelFormatError if the new generation or journal records cannot be read; the indexer "
    "keeps its model then.";
const char kModelTermDoc[] =
    "The term each categorized document gets, naming the model (bytes, b'XAUTOCATMODEL...'; "
    "b'' with categorize=False).";
const char kStemmerDoc[] =
    "The stemmer the text is indexed with (str; configure_query_parser uses it).";
const char kCategorizeManyDoc[] =
    "categorize() of each str in `texts` (an iterable), on `threads` threads (0: every core) "
    "without the GIL.\n\n"
    "`progress`, if given, is called as progress(done, total) with the number of texts done so "
    "far, at most about every 0.5 s and once at the end (with the GIL held only for the call; "
    "the texts are then categorized in chunks). An exception it raises stops the batch and "
    "propagates.\n\n"
    "Returns [[(name, score)], ...] in input order. Raises TypeError for a text that is not a "
    "str, Error if the model cannot be read.";
const char kQueryStopwordsDoc[] =
    "The stopwords configure_query_parser gives a QueryParser.\n\n"
    "Returns a list of str. Raises nothing.";
const char kDecodeCategoriesDoc[] =
    "Decodes the category value slot `value` (bytes, as doc.get_value(DEFAULT_CATEGORY_SLOT)): "
    "\"name<TAB>score\" entries joined by newlines.\n\n"
    "Returns [(name, score)] in stored order; empty for b''. Raises TypeError for a value that "
    "is not bytes or str.";
const char kEncodeCategoriesDoc[] =
    "Encodes `categories`, an iterable of (name, score) pairs, as the category value slot "
    "(scores with 6 significant digits).\n\n"
    "Returns bytes. Raises ValueError for an item that is not a pair, TypeError for a name "
    "that is not str or bytes or a score that is not a number.";
const char kCategoryTermsDoc[] =
    "The index terms a filter on the category `names` matches (an iterable of names, or one "
    "name as a str or bytes), with term prefix `prefix`.\n\n"
    "Returns a list of bytes. Raises InvalidArgumentError for a prefix autocat does not allow "
    "(not capitals A-Z, X alone, or starting with Q or Z).";

}  // namespace

PYBIND11_MODULE(_autocat, module) {
  module.doc() =
      "autocat: automatic text categorization for Xapian indexes (compiled part).\n\n"
      "Category names are str; a name that is not valid UTF-8 comes back with its invalid "
      "bytes as lone surrogates (errors=\"surrogateescape\"). Name arguments take a str "
      "(such names included) or bytes.";
  module.attr("__version__") = AUTOCAT_VERSION_STRING;
  // The Xapian autocat is built against ("1.4.22"): python3-xapian must be
  // of the same series for documents to pass between them.
  module.attr("XAPIAN_VERSION") = Xapian::version_string();
  module.attr("DEFAULT_CATEGORY_PREFIX") = autocat::kDefaultCategoryPrefix;
  module.attr("DEFAULT_CATEGORY_SLOT") = autocat::kDefaultCategorySlot;
  module.attr("ID_PREFIX") = autocat::kIdPrefix;
  module.attr("CATEGORY_FIELD") = autocat::kCategoryField;
  module.attr("EDITOR_SET_TERM") = autocat::kEditorSetTerm;
  module.attr("EDITOR_SLOT") = autocat::kDefaultEditorSlot;
  module.attr("RUNNER_UP_SLOT") = autocat::kDefaultRunnerUpSlot;

  static py::exception<autocat::Error> error(module, "Error", PyExc_RuntimeError);
  static py::exception<autocat::InvalidArgumentError> invalid_argument(
      module, "InvalidArgumentError", error.ptr());
  static py::exception<autocat::NotFoundError> not_found(module, "NotFoundError", error.ptr());
  static py::exception<autocat::ModelFormatError> model_format(module, "ModelFormatError",
                                                               error.ptr());
  static py::exception<autocat::IOError> io_error(module, "IOError", error.ptr());
  static py::exception<autocat::ConflictError> conflict(module, "ConflictError", error.ptr());
  conflict.attr("__doc__") =
      "A request that contradicts the index: undoing a correction already undone, or one a "
      "later correction of the same document replaced.";
  error.attr("__doc__") =
      "Base class of autocat's errors (a RuntimeError); the message says what went wrong, "
      "naming the file, id or name, and what to do.";
  invalid_argument.attr("__doc__") =
      "An argument autocat cannot use: an unknown method or category, an empty id, a bad "
      "prefix.";
  not_found.attr("__doc__") =
      "Something named does not exist: a model directory, a training document, a training "
      "database.";
  model_format.attr("__doc__") =
      "A model file that is damaged, truncated or of an unknown format version.";
  io_error.attr("__doc__") = "A file could not be read or written (the journal, a model file).";
  // A message may quote an id or name that is not UTF-8: its bytes show as
  // \xHH instead of the message being lost.
  py::register_exception_translator([](std::exception_ptr thrown) {
    auto raise = [](const py::handle& type, const std::string& message) {
      PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()),
                                            "backslashreplace");
      if (text == nullptr) return;  // the decoding error stays set
      PyErr_SetObject(type.ptr(), text);
      Py_DECREF(text);
    };
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const autocat::InvalidArgumentError& e) {
      raise(invalid_argument, e.what());
    } catch (const autocat::NotFoundError& e) {
      raise(not_found, e.what());
    } catch (const autocat::ConflictError& e) {
      raise(conflict, e.what());
    } catch (const autocat::ModelFormatError& e) {
      raise(model_format, e.what());
    } catch (const autocat::IOError& e) {
      raise(io_error, e.what());
    } catch (const autocat::Error& e) {
      raise(error, e.what());
    } catch (const Xapian::Error& e) {
      raise(error, e.get_description());
    }
  });

  py::class_<autocat::CategoryIndexer>(module, "CategoryIndexer")
      .def(py::init([](const std::string& model_dir, const std::optional<std::string>& method,
                       int k, const std::optional<std::string>& decision, std::optional<bool> other,
                       double min_score, bool tuned_thresholds, int max_categories,
                       int knn_max_query_terms, const std::optional<std::string>& knn_search,
                       const std::string& category_prefix, Xapian::valueno category_slot,
                       bool categorize, bool index_text) {
             auto indexer = std::make_unique<autocat::CategoryIndexer>(
                 model_dir, make_options(method, k, decision, other, min_score, tuned_thresholds,
                                         max_categories, knn_max_query_terms, knn_search,
                                         category_prefix, category_slot, categorize, index_text));
             emit_warnings(*indexer);
             return indexer;
           }),
           py::arg("model_dir"), py::kw_only(), py::arg("method") = py::none(), py::arg("k") = 0,
           py::arg("decision") = py::none(), py::arg("other") = py::none(),
           py::arg("min_score") = 0.0, py::arg("tuned_thresholds") = true,
           py::arg("max_categories") = 5, py::arg("knn_max_query_terms") = 0,
           py::arg("knn_search") = py::none(),
           py::arg("category_prefix") = autocat::kDefaultCategoryPrefix,
           py::arg("category_slot") = autocat::kDefaultCategorySlot, py::arg("categorize") = true,
           py::arg("index_text") = true, kInitDoc)
      .def_property_readonly(
          "categories",
          [](const autocat::CategoryIndexer& indexer) {
            return names_to_python(indexer.categories());
          },
          kCategoriesDoc)
      .def_property_readonly(
          "default_method",
          [](const autocat::CategoryIndexer& indexer) {
            return autocat::method_name(indexer.default_method());
          },
          kDefaultMethodDoc)
      .def_property_readonly(
          "category_prefix",
          [](const autocat::CategoryIndexer& indexer) { return indexer.options().category_prefix; },
          kCategoryPrefixDoc)
      .def_property_readonly(
          "category_slot",
          [](const autocat::CategoryIndexer& indexer) { return indexer.options().category_slot; },
          kCategorySlotDoc)
      .def(
          "score",
          [](const autocat::CategoryIndexer& indexer, const py::handle& text_object) {
            const std::string text = utf8_from_python(text_object, "text");
            std::vector<autocat::Category> result;
            {
              py::gil_scoped_release release;
              result = indexer.score(text);
            }
            emit_warnings(indexer);
            return to_tuples(result);
          },
          py::arg("text"), kScoreDoc)
      .def(
          "categorize",
          [](const autocat::CategoryIndexer& indexer, const py::handle& text_object) {
            const std::string text = utf8_from_python(text_object, "text");
            std::vector<autocat::Category> result;
            {
              py::gil_scoped_release release;
              result = indexer.categorize(text);
            }
            emit_warnings(indexer);
            return to_tuples(result);
          },
          py::arg("text"), kCategorizeDoc)
      .def(
          "learn",
          [](autocat::CategoryIndexer& indexer, const py::handle& id_object,
             const py::handle& text_object, const py::object& labels) {
            const std::string id = utf8_from_python(id_object, "id");
            const std::string text = utf8_from_python(text_object, "text");
            const std::vector<std::string> names = names_from_python(labels);
            {
              py::gil_scoped_release release;
              indexer.learn(id, text, names);
            }
            emit_warnings(indexer);
          },
          py::arg("id"), py::arg("text"), py::arg("labels"), kLearnDoc)
      .def(
          "forget",
          [](autocat::CategoryIndexer& indexer, const py::handle& id_object) {
            const std::string id = utf8_from_python(id_object, "id");
            {
              py::gil_scoped_release release;
              indexer.forget(id);
            }
            emit_warnings(indexer);
          },
          py::arg("id"), kForgetDoc)
      .def(
          "refresh",
          [](autocat::CategoryIndexer& indexer) {
            bool changed = false;
            {
              py::gil_scoped_release release;
              changed = indexer.refresh();
            }
            emit_warnings(indexer);
            return changed;
          },
          kRefreshDoc)
      .def_property_readonly(
          "model_term",
          [](const autocat::CategoryIndexer& indexer) { return py::bytes(indexer.model_term()); },
          kModelTermDoc)
      .def_property_readonly(
          "stemmer",
          [](const autocat::CategoryIndexer& indexer) { return indexer.options().stemmer; },
          kStemmerDoc)
      .def(
          "categorize_many",
          [](const autocat::CategoryIndexer& indexer, const py::iterable& texts, unsigned threads,
             const py::object& progress) {
            std::vector<std::string> batch;
            for (const py::handle& text : texts) {
              batch.push_back(
                  utf8_from_python(text, "texts[" + std::to_string(batch.size()) + "]"));
            }
            std::vector<std::vector<autocat::Category>> part;
            py::list out;
            in_chunks(
                batch.size(), threads, progress,
                [&](size_t begin, size_t end) {
                  const std::vector<std::string> texts_part(
                      std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(begin)),
                      std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(end)));
                  part = indexer.categorize_batch(texts_part, threads);
                },
                [&](size_t, size_t) {
                  emit_warnings(indexer);
                  for (const std::vector<autocat::Category>& categories : part) {
                    out.append(to_tuples(categories));
                  }
                });
            return out;
          },
          py::arg("texts"), py::arg("threads") = 0, py::arg("progress") = py::none(),
          kCategorizeManyDoc)
      .def("_correct", &correct, py::arg("db"), py::arg("id"), py::arg("categories"),
           py::arg("editor"), py::arg("learn"))
      .def("_undo", &undo, py::arg("db"), py::arg("seq"), py::arg("editor"))
      .def("_index_changes", &index_changes, py::arg("text"), py::arg("serialised_document"))
      .def("_set_categories_changes", &set_categories_changes, py::arg("serialised_document"),
           py::arg("categories"), py::arg("check") = true)
      .def_property_readonly(
          "category_slot",
          [](const autocat::CategoryIndexer& indexer) { return indexer.options().category_slot; },
          "The value slot holding the categories and scores (category_slot=, 200 by default).")
      .def("_prepare_documents", &prepare_documents, py::arg("documents"), py::arg("threads"),
           py::arg("write"), py::arg("progress") = py::none());

  module.def("_corrections", &corrections, py::arg("db"), py::arg("offset"), py::arg("limit"));
  module.def(
      "query_stopwords", [] { return autocat::query_stopwords(); }, kQueryStopwordsDoc);
  module.def(
      "decode_categories",
      [](const std::string& value) { return to_tuples(autocat::decode_categories(value)); },
      py::arg("value"), kDecodeCategoriesDoc);
  module.def(
      "encode_categories",
      [](const py::iterable& categories) {
        return py::bytes(autocat::encode_categories(from_tuples(categories)));
      },
      py::arg("categories"), kEncodeCategoriesDoc);
  module.def("category_terms", &category_terms, py::arg("names"),
             py::arg("prefix") = autocat::kDefaultCategoryPrefix, kCategoryTermsDoc);
}
