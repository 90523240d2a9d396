// What `autocat index` records in a search database's metadata so that
// `autocat search` can analyze queries as the documents were analyzed and
// find the categories where they were written, and so that a later
// `autocat index` can refuse to mix models, prefixes or slots in one database.
//
// Thread safety: free functions; Xapian handles follow Xapian's rules.
#pragma once

#include <xapian.h>

#include <memory>
#include <string>
#include <vector>

#include "classify/corpus/training_collection.h"
#include "classify/text/analyzer.h"

namespace autocat::cli {

// Metadata keys.
inline const std::string kModelKey = "autocat:model";
inline const std::string kModelFingerprintKey = "autocat:model_fingerprint";
inline const std::string kPrefixKey = "autocat:category_prefix";
inline const std::string kSlotKey = "autocat:category_slot";
// Stemmer of the search terms `autocat index` wrote (IndexOptions::stemmer),
// so `autocat search` parses queries the same way.
inline const std::string kStemmerKey = "autocat:stemmer";
// Value slot holding each document's full text (autocat index --store-text),
// which autocat recategorize reads; absent if the text is not stored.
inline const std::string kTextSlotKey = "autocat:text_slot";
constexpr Xapian::valueno kDefaultTextSlot = 201;

struct SearchMetadata {
  std::string model_dir;          // absolute path of the model used; empty if unknown
  std::string model_fingerprint;  // model_fingerprint() of that model; empty if unknown
  std::string prefix;             // category term prefix; empty if unknown
  std::string slot;               // category value slot as text; empty if unknown
  std::string stemmer;            // stemmer of the indexed text; empty if unknown
  std::string text_slot;          // kTextSlotKey; empty if the text is not stored
};

// `model_dir` made absolute and normal (as recorded in kModelKey).
std::string absolute_model_dir(const std::string& model_dir);

// A model's identity is CategoryIndexer::model_fingerprint() of the model
// actually opened ("crc32:1a2b3c4d bytes:81234", the size and CRC-32 of its
// model file, then " journal:N" once it has learned): a model copied
// elsewhere keeps its identity, one retrained in place does not, and
// reading DIR/CURRENT again could name a model installed meanwhile. Each
// document records it as a term: autocat::model_version_term().
//
// The fingerprint without its journal part: the model as trained.
std::string trained_model_fingerprint(const std::string& fingerprint);

// Records `metadata` (model_dir as given; see absolute_model_dir).
void write_search_metadata(Xapian::WritableDatabase& db, const SearchMetadata& metadata);
SearchMetadata read_search_metadata(const Xapian::Database& db);

// How `wanted` differs from what a database `recorded`, one phrase per
// difference ("model: ... was indexed with X, --model is Y"); empty if the
// database records nothing yet or the same model (by trained fingerprint
// when both have one, else by path), prefix and slot. The same model after
// more learning is no difference here: see learned_since_recorded().
std::vector<std::string> search_metadata_differences(const SearchMetadata& recorded,
                                                     const SearchMetadata& wanted);

// True if `wanted` is the model `recorded` names, with documents learned or
// forgotten since (its journal moved on).
bool learned_since_recorded(const SearchMetadata& recorded, const SearchMetadata& wanted);

using internal::xapian_reason;
// True if `reason` is the OS's "Too many open files" (or Xapian's own words
// for it): the advice is then to raise `ulimit -n`.
bool too_many_open_files(const std::string& reason);

// The one-line error for a writable database at `path` whose lock could
// not be taken: "locked by another writer" only if another writer holds it;
// otherwise the reason the lock file could not be used (a read-only mount,
// no permission, too many open files) and what to do.
std::string database_lock_message(const std::string& path, const Xapian::DatabaseLockError& e);

// Opens the database at `path` for reading. Throws IOError naming it when
// it is not a database (Xapian's own message names no path).
Xapian::Database open_database(const std::string& path);

// Opens the existing database at `path` for writing. Throws NotFoundError
// (none there), IOError for a lock held by another writer or a path that is
// not a Xapian database, each naming `path` and ending "; give --db "
// + `what_to_give`.
Xapian::WritableDatabase open_existing_database(const std::string& path,
                                                const std::string& what_to_give);

// The analyzer of the model in `model_dir` (from its model file alone).
// Throws NotFoundError or ModelFormatError.
std::unique_ptr<internal::Analyzer> load_model_analyzer(const std::string& model_dir);

}  // namespace autocat::cli
