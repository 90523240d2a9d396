// CategoryIndexer: the indexing hook. Open a model once, then for each
// document add its text terms (as Xapian::TermGenerator does), one boolean
// term per assigned category and a value slot with the categories and scores.
//
// Thread safety: after construction every const method may be called from
// many threads at once (kNN's index is built once, under a lock, on first
// use), also while learn(), forget() and refresh() run on other threads
// (learn and forget change the open model under its locks and serialize
// among themselves; refresh() serializes with itself). Each call works on
// the model generation that was current when it began. Xapian::WritableDatabase
// is not thread-safe: serialize your own calls to add_document/replace_document.
#pragma once

#include <xapian.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autocat/export.h"
#include "autocat/options.h"
#include "autocat/types.h"

namespace autocat {

namespace internal {
struct IndexerAccess;
struct IndexerNames;
}  // namespace internal

// One document for CategoryIndexer::prepare_documents / index_documents.
struct DocumentToIndex {
  std::string id;     // unique term "Q" + id; must not be empty
  std::string text;   // the text to categorize and index
  std::string title;  // empty: the data is the start of the text
};

// What CategoryIndexer decides for one text: the categories assigned and
// the best-scoring category not assigned (none when every one was).
struct Categorization {
  std::vector<Category> assigned;     // best first; empty when none is assigned
  std::optional<Category> runner_up;  // the best category not assigned
};

// A document built by CategoryIndexer::prepare_documents, ready for
// db.replace_document(id_term, document).
struct PreparedDocument {
  std::string id_term;               // "Q" + id
  Xapian::Document document;         // text terms, category terms, slots, data
  std::vector<Category> categories;  // what was stored
};

// An open model that categorizes texts and indexes Xapian documents with
// their categories; it can also learn and forget documents (journaled) and
// follow the model directory as `autocat train` installs new generations.
// Thread safety: see the top of this header (const methods, learn, forget
// and refresh from many threads at once). Errors are autocat::Error
// subclasses (error.h) naming the file or id, and Xapian's own from a
// database passed in. Cost: opening decodes the model's core (0.3 s and
// 305 MB for a model of a million documents, BENCHMARKS.md); a method's
// part is checked and decoded on its first use; categorizing costs the
// analysis plus the method's scoring (docs/training.md).
class AUTOCAT_EXPORT CategoryIndexer {
 public:
  // Opens the model directory written by `autocat train`.
  // Throws NotFoundError or ModelFormatError naming the directory or file,
  // InvalidArgumentError for options the model cannot take (an unknown
  // method or prefix).
  CategoryIndexer(const std::string& model_dir, const IndexOptions& options = IndexOptions());
  // Closes the model; snapshots taken from it stay valid.
  ~CategoryIndexer();
  CategoryIndexer(const CategoryIndexer&) = delete;
  CategoryIndexer& operator=(const CategoryIndexer&) = delete;

  // Every category of the model, sorted.
  const std::vector<std::string>& categories() const;
  // The method used when options name none.
  Method default_method() const;
  // The options this indexer was opened with.
  const IndexOptions& options() const;

  // Scores every category for `text`, best first (no decision applied).
  // Throws ModelFormatError naming the section if the method's part of the
  // model file is damaged (checked on its first use).
  std::vector<Category> score(std::string_view text) const;
  // score() with `options` (method, k, ...) instead of the indexer's.
  std::vector<Category> score(std::string_view text, const ClassifyOptions& options) const;
  // The categories that would be assigned to `text`, best first; throws as
  // score().
  std::vector<Category> categorize(std::string_view text) const;
  // categorize() with `options` (method, decision, thresholds) instead of
  // the indexer's.
  std::vector<Category> categorize(std::string_view text, const ClassifyOptions& options) const;

  // categorize() of each text, on `threads` threads at once (0: one per
  // core), in input order. Throws the first error in input order.
  std::vector<std::vector<Category>> categorize_batch(const std::vector<std::string>& texts,
                                                      unsigned threads = 0) const;
  // The same, each with its runner-up (see Categorization).
  std::vector<Categorization> categorize_batch_with_runner_up(const std::vector<std::string>& texts,
                                                              unsigned threads = 0) const;
  // How the model decides with these options: one category per document
  // (one-of) or every category that reaches its threshold (any-of).
  Decision decision_mode() const;

  // Adds to `doc` the text's search terms as Xapian::TermGenerator makes
  // them (if options.index_text; see IndexOptions::stemmer), one boolean
  // term per assigned category (category_term()), the category value slot
  // and the runner-up slot (kDefaultRunnerUpSlot).
  // Removes category terms and the slot a previous call may have left. The
  // application's other terms and values are not touched. Returns what was
  // stored.
  std::vector<Category> index(std::string_view text, Xapian::Document& doc) const;

  // Replaces the categories `doc` holds (the terms and slot a previous
  // index() or set_categories() stored) by `categories`, leaving its text
  // terms, id and data alone: to re-categorize a stored document with
  // categories computed elsewhere (e.g. by categorize() on other threads).
  // The runner-up slot is cleared: categories set this way have none.
  void set_categories(Xapian::Document& doc, const std::vector<Category>& categories) const;
  // The same, storing `categorization`'s runner-up in kDefaultRunnerUpSlot.
  void set_categories(Xapian::Document& doc, const Categorization& categorization) const;

  // The term index() and set_categories() add to each document they
  // categorize, naming this indexer's model (model_version_term()), so an
  // index shows which model categorized which document:
  // allterms_begin(kModelTermPrefix) lists them, Xapian::Query(term) filters.
  // Empty when options().categorize is false.
  const std::string& model_term() const;

  // The identity of the model this indexer opened, "crc32:1a2b3c4d
  // bytes:123456" (the CRC-32 and size of its model file), followed by
  // " journal:N" once documents were learned or forgotten on it (N: where
  // its journal ended when it was opened). What `autocat index` records in
  // the database; model_term() is the term form. Documents learned through
  // this object show in the fingerprint of indexers opened after them.
  const std::string& model_fingerprint() const;

  // Live learning: adds a training document to the open model (or replaces
  // the one with the same id), or removes one. The change is appended to the
  // model directory's journal (fsynced) before it takes effect, so models
  // opened later, in any process, see it; `autocat train --add --model DIR`
  // folds the journal into the next training. Every method (kNN, Rocchio,
  // Naive Bayes, svm, logreg, and combo over them) sees the change at once,
  // with the idf, vocabulary, feature selection, smoothing, C, combo's
  // weights, thresholds and calibration of the last training (terms the
  // model does not know count only after that refit). The first learn()
  // or forget() reads the generation's training database (Rocchio's and
  // NB's category sums) and throws NotFoundError without it.
  // learn() throws InvalidArgumentError naming the id for an empty id, no
  // labels, a category the model does not have (new categories need a
  // refit) or a text without terms; forget() throws NotFoundError for an id
  // that is not a training document; both throw IOError if the journal
  // cannot be written. Nothing changes when they throw.
  // Cost: an fsync of the journal each call; at most milliseconds of work
  // (0.12-0.54 ms a document on 20 Newsgroups, docs/learning.md).
  void learn(const std::string& id, std::string_view text, const std::vector<std::string>& labels);
  // Removes the training document `id` from the open model, as learn() says.
  void forget(const std::string& id);

  // Follows the model directory between requests: if it holds a newer model
  // generation (`autocat train` or `train --add` installed one, or the
  // directory was replaced), switches to it; otherwise applies the journal
  // records other processes or indexers appended (their learn and forget)
  // since this one last read it. Returns whether anything changed. Costs a
  // read of DIR/CURRENT and two stat() calls when nothing did, so a
  // long-lived user (a server) calls it before each request.
  // Calls already running on other threads finish on the generation they
  // began with; references returned by categories(), model_fingerprint()
  // and model_term() stay valid for this object's lifetime. The
  // fingerprint and model_term() name the generation switched to; journal
  // records applied do not change them (as for learn()).
  // Throws NotFoundError or ModelFormatError naming the directory or file
  // if the new generation cannot be opened or the journal's new records are
  // damaged; nothing changes then and this object keeps working on what it had.
  bool refresh();

  // A CategoryIndexer on the generation this one holds now, sharing its
  // open model (no reload; what either learns, the other sees), that this
  // object's refresh() leaves alone: for a series of calls that must all
  // see one generation (a reply's scores, decision and explanation).
  // Cheap: one small allocation. It follows newer generations only through
  // its own refresh().
  std::unique_ptr<CategoryIndexer> snapshot() const;

  // Warnings about the model's journal not returned by an earlier call,
  // one line each: a torn last append ignored (a crash while it was
  // written), journal documents skipped (a category the model lacks), the
  // journal not applied to a method for want of the training database.
  // Some appear only once a method is first used: call it after opening
  // and after categorizing. Each is returned once.
  std::vector<std::string> take_warnings() const;

  // Sets up `parser` to search text indexed by this indexer: its stemmer,
  // stopwords and the `category:` prefix (see autocat::configure_query_parser).
  // Parse with autocat::kQueryParserFlags.
  void configure_query_parser(Xapian::QueryParser& parser) const;

  // Builds a complete document for `id` (unique term "Q"+id, data = title or
  // the start of the text) and adds it to `db`, replacing any document with
  // the same id; a replaced document an editor labelled keeps its
  // categories and editor mark (replace_keeping_editor_labels() in
  // corrections.h). Returns the categories computed. Does not commit.
  // Throws InvalidArgumentError for an empty id, and what Xapian throws
  // writing `db`. REQUIRES: no other thread writes `db` meanwhile.
  std::vector<Category> index_document(Xapian::WritableDatabase& db, const std::string& id,
                                       std::string_view text,
                                       const std::string& title = std::string()) const;

  // Builds the documents index_document() would add, categorizing them on
  // `threads` threads at once (0: one per core), and returns them in input
  // order. Touches no database, so an application can write them from one
  // thread while the next batch is prepared. If a document fails (e.g. an
  // empty id), throws the error of the first failing one in input order.
  std::vector<PreparedDocument> prepare_documents(const std::vector<DocumentToIndex>& documents,
                                                  unsigned threads = 0) const;
  // prepare_documents(), then replace_keeping_editor_labels() of each in
  // input order (so docids and "later id wins" are as with
  // index_document() one by one).
  // Returns the categories stored, in input order. Does not commit.
  // REQUIRES: no other thread writes `db` meanwhile.
  std::vector<std::vector<Category>> index_documents(Xapian::WritableDatabase& db,
                                                     const std::vector<DocumentToIndex>& documents,
                                                     unsigned threads = 0) const;

 private:
  friend struct internal::IndexerAccess;
  struct SnapshotTag {};
  CategoryIndexer(const CategoryIndexer& other, SnapshotTag);
  PreparedDocument prepare_document(const std::string& id, std::string_view text,
                                    const std::string& title) const;
  // index() with the title that rules' title: field matches.
  std::vector<Category> index_with_title(std::string_view text, std::string_view title,
                                         Xapian::Document& doc) const;
  void set_runner_up(Xapian::Document& doc, const std::optional<Category>& runner_up) const;
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// Prefix of the term that records the model that categorized a document:
// "XAUTOCATMODEL1a2b3c4d-123456" (the CRC-32 and size of its model file).
inline const std::string kModelTermPrefix = "XAUTOCATMODEL";
// The term for a model fingerprint "crc32:1a2b3c4d bytes:123456" (what
// `autocat index` records in the database metadata):
// "XAUTOCATMODEL1a2b3c4d-123456", with "-j<N>" added for " journal:N".
AUTOCAT_EXPORT std::string model_version_term(const std::string& fingerprint);

// Encodes / decodes the category value slot: one entry per category,
// "name<TAB>score" joined by newlines, scores with 6 significant digits.
// Throw nothing of their own.
AUTOCAT_EXPORT std::string encode_categories(const std::vector<Category>& categories);
// The categories a category value slot `value` holds, in its order (a
// line without a score gets score 0; empty lines are skipped).
AUTOCAT_EXPORT std::vector<Category> decode_categories(const std::string& value);

}  // namespace autocat
