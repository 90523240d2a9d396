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

#include "classify/analyzer.h"

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
};

// `model_dir` made absolute and normal (as recorded in kModelKey).
std::string absolute_model_dir(const std::string& model_dir);

// The identity of the model in `model_dir`: size and CRC-32 of its model
// file ("crc32:1a2b3c4d bytes:81234"), so a model copied elsewhere keeps its
// identity and one retrained in place does not (model_file_fingerprint).
// Throws NotFoundError or ModelFormatError naming the file. Each document
// records it as a term: autocat::model_version_term().
std::string model_fingerprint(const std::string& model_dir);

// Records `metadata` (model_dir as given; see absolute_model_dir).
void write_search_metadata(Xapian::WritableDatabase& db, const SearchMetadata& metadata);
SearchMetadata read_search_metadata(const Xapian::Database& db);

// How `wanted` differs from what a database `recorded`, one phrase per
// difference ("model: ... was indexed with X, --model is Y"); empty if the
// database records nothing yet or the same model (by fingerprint when both
// have one, else by path), prefix and slot.
std::vector<std::string> search_metadata_differences(const SearchMetadata& recorded,
                                                     const SearchMetadata& wanted);

// The analyzer of the model in `model_dir` (from its model file alone).
// Throws NotFoundError or ModelFormatError.
std::unique_ptr<internal::Analyzer> load_model_analyzer(const std::string& model_dir);

}  // namespace autocat::cli
