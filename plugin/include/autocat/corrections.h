// Editors' corrections of an index autocat wrote: the rules every path that
// writes categories obeys (autocat index, recategorize, relabel, serve, the
// Python module and applications).
//
// - An editor's categories are facts. A corrected document carries the
//   boolean term kEditorSetTerm and, in kDefaultEditorSlot, who corrected it
//   and when. Re-indexing it (replace_keeping_editor_labels(),
//   CategoryIndexer::index_document(s)) keeps its categories; recategorizing
//   skips it.
// - Every correction is logged in the index itself, as metadata written in
//   the same commit as the document: key kCorrectionKeyPrefix + the sequence
//   number in 12 digits, value one JSON object (correction_json()). Undo
//   restores the previous categories and marks the record undone.
//
// Thread safety: free functions; Xapian::WritableDatabase is not
// thread-safe, so serialize the calls that write one database.
// Errors: autocat::Error subclasses (error.h) as each function says, and
// what Xapian throws reading or writing the database. Cost: a correction is
// bound by its durable writes (the journal's fsync when the model learns,
// Xapian's commit); the log's readers walk the log's metadata keys.
#pragma once

#include <xapian.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/export.h"
#include "autocat/types.h"

namespace autocat {

// Metadata key prefix of the corrections log; a record's key is the prefix
// followed by its sequence number in 12 digits, zero-padded.
inline const std::string kCorrectionKeyPrefix = "autocat:correction:";
// Metadata key holding the last sequence number given.
inline const std::string kCorrectionLastKey = "autocat:correction_last";

// Who set a document's categories, and when (ISO 8601 UTC).
struct EditorMark {
  std::string name;  // the editor's name
  std::string at;    // when, ISO 8601 UTC
};

// One correction, as logged.
struct Correction {
  uint64_t seq = 0;                           // 1, 2, ... in the order made
  std::string id;                             // the document's id (its Q term less Q)
  std::vector<std::string> categories;        // what the editor gave
  std::vector<Category> previous;             // what the document had before
  std::optional<EditorMark> previous_editor;  // its editor mark before, if any
  std::string editor;                         // who corrected
  std::string at;                             // when, ISO 8601 UTC
  std::string model_top;                      // the category the model ranked first then
  bool learned = false;                       // the model was taught the correction
  uint64_t batch = 0;                         // a bulk correction's batch; 0: none
  bool undone = false;                        // undone by undo_correction()
  std::string undone_at;                      // when undone; empty if not
  std::string undone_by;                      // who undid it; empty if not
};

// Per-call options of correct_document().
struct CorrectionOptions {
  std::string editor = "editor";  // recorded as who corrected
  bool learn = true;              // teach the model the document with these categories
  // The value slot holding the document's full text (autocat index
  // --store-text); Xapian::BAD_VALUENO: the model learns the document data.
  Xapian::valueno text_slot = Xapian::BAD_VALUENO;
  uint64_t batch = 0;  // groups the records of one bulk correction; 0: none
  std::string at;      // the time recorded; empty: now
};

// True if an editor set `doc`'s categories (it carries kEditorSetTerm).
AUTOCAT_EXPORT bool is_editor_set(const Xapian::Document& doc);
// The editor mark of `doc` (kDefaultEditorSlot), or nullopt when it is not
// editor-set.
AUTOCAT_EXPORT std::optional<EditorMark> editor_mark(const Xapian::Document& doc);

// The current time in ISO 8601 UTC, to the second: "2026-12-05T23:01:02Z".
AUTOCAT_EXPORT std::string utc_now();

// What replace_keeping_editor_labels() did.
enum class Replaced {
  kAdded,          // no document had the id
  kReplaced,       // the document with the id was replaced
  kEditorSetKept,  // replaced, keeping the editor-set categories it had
};

// Writes `doc` to `db` under the unique term `id_term`, replacing the
// document with that term. If that document is editor-set, `doc` first
// takes its categories (terms and slot, through `indexer`), its editor mark
// and slot, and loses its runner-up slot: the text is indexed anew, the
// editor's labels stay. With `overwrite_editor_set`, `doc` replaces it as
// it is (the model's categories, no editor mark). Does not commit.
AUTOCAT_EXPORT Replaced replace_keeping_editor_labels(Xapian::WritableDatabase& db,
                                                      const std::string& id_term,
                                                      Xapian::Document& doc,
                                                      const CategoryIndexer& indexer,
                                                      bool overwrite_editor_set = false);

// The document whose unique id term is Q+`id`. Throws NotFoundError naming
// `id`.
AUTOCAT_EXPORT Xapian::Document find_document_by_id(const Xapian::Database& db,
                                                    const std::string& id);

// The text a model learns from: the value in `text_slot` when it holds one,
// else the document data (the title or a snippet).
AUTOCAT_EXPORT std::string document_text(const Xapian::Document& doc, Xapian::valueno text_slot);

// `names` without repeats, each a category of `indexer`'s model. Throws
// InvalidArgumentError naming the first unknown category, or for none.
AUTOCAT_EXPORT std::vector<std::string> known_categories(const CategoryIndexer& indexer,
                                                         const std::vector<std::string>& names);

// Gives document `id` of `db` the categories `categories` (score 1: an
// editor's categories are certain), marks it editor-set by
// `options.editor` now, logs the correction and commits. With
// `options.learn` the model of `indexer` is taught the document first
// (journaled); a document without learnable text is still corrected, with
// learned false. Returns the record logged.
// Throws NotFoundError (no such id), InvalidArgumentError (an unknown
// category, none, or two or more for a one-of model: the error names the
// decision mode) or what Xapian throws. On a throw the index is unchanged
// and the model taught nothing.
AUTOCAT_EXPORT Correction correct_document(Xapian::WritableDatabase& db, CategoryIndexer& indexer,
                                           const std::string& id,
                                           const std::vector<std::string>& categories,
                                           const CorrectionOptions& options = CorrectionOptions());

// Corrections of documents matching one search, as one batch: one record
// per document, all with the same batch number (options.batch, or when 0
// the sequence number of the batch's first record). Each document gets its
// categories with `remove` taken out and `add` put in (a one-of model: `add`
// replaces them; more than one in `add` is refused). Commits once. Throws
// as correct_document(), before anything changes.
AUTOCAT_EXPORT std::vector<Correction> correct_documents(
    Xapian::WritableDatabase& db, CategoryIndexer& indexer, const std::vector<std::string>& ids,
    const std::vector<std::string>& add, const std::vector<std::string>& remove,
    const CorrectionOptions& options = CorrectionOptions());

// A page of the corrections log, newest first.
struct CorrectionPage {
  uint64_t total = 0;                   // records in the log, undone ones included
  std::vector<Correction> corrections;  // at most `limit`, newest first
};
// Up to `limit` records of `db`'s log, newest first, after skipping the
// `offset` newest. Cost: reads limit records. Throws InvalidArgumentError
// for a record that is not valid JSON (a log another program damaged).
AUTOCAT_EXPORT CorrectionPage list_corrections(const Xapian::Database& db, uint64_t offset,
                                               uint64_t limit);
// The record with sequence number `seq`, or nullopt.
AUTOCAT_EXPORT std::optional<Correction> find_correction(const Xapian::Database& db, uint64_t seq);

// Undoes correction `seq` (every record of its batch, for a bulk one): each
// document gets its previous categories and editor mark (or none) back, the
// model forgets what was taught (or learns the previous editor's categories
// again), the records are marked undone by `editor`, and `db` is committed.
// Returns the records as marked. The model forgets by id: a document that
// was also one of the model's training documents (the id the correction
// taught replaced it) leaves the model, its labels being unknown to the
// index. Throws NotFoundError (no such record or
// document), ConflictError (already undone, or a later correction of the
// same document is in force: undo that first).
AUTOCAT_EXPORT std::vector<Correction> undo_correction(Xapian::WritableDatabase& db,
                                                       CategoryIndexer& indexer, uint64_t seq,
                                                       const std::string& editor,
                                                       Xapian::valueno text_slot);

// The corrections in force: the last record of each document not undone,
// whose document is still editor-set, in sequence order. Cost: reads the
// whole log and each corrected document.
AUTOCAT_EXPORT std::vector<Correction> corrections_in_force(const Xapian::Database& db);

// How far the review has come.
struct CorrectionStats {
  uint64_t documents = 0;           // in the index
  uint64_t editor_set = 0;          // documents an editor labelled
  uint64_t queue = 0;               // documents not editor-set
  std::optional<double> agreement;  // share of the window whose model_top the editor kept
  uint64_t agreement_window = 0;    // corrections (not undone) the share covers, at most 100
};
// The review's progress in `db`. Cost: a term frequency and the newest
// log records until 100 not undone are found (at most 10,000 read).
AUTOCAT_EXPORT CorrectionStats correction_stats(const Xapian::Database& db);

// A record as one JSON object (the log's format): {"seq", "id",
// "categories", "previous": [{"name", "score"}], "previous_editor": {"name",
// "at"} or null, "editor", "at", "model_top", "learned", "batch" (bulk
// only), "undone", "undone_at" and "undone_by" (once undone)}.
AUTOCAT_EXPORT std::string correction_json(const Correction& correction);
// Parses correction_json()'s text. Throws InvalidArgumentError.
AUTOCAT_EXPORT Correction parse_correction(const std::string& json);

}  // namespace autocat
