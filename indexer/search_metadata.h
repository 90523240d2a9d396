// What `autocat index` records in a search database's metadata so that
// `autocat search` can analyze queries as the documents were analyzed and
// find the categories where they were written.
//
// Thread safety: free functions; Xapian handles follow Xapian's rules.
#pragma once

#include <xapian.h>

#include <memory>
#include <string>

#include "classify/analyzer.h"

namespace autocat::cli {

// Metadata keys.
inline const std::string kModelKey = "autocat:model";
inline const std::string kPrefixKey = "autocat:category_prefix";
inline const std::string kSlotKey = "autocat:category_slot";
// Stemmer of the search terms `autocat index` wrote (IndexOptions::stemmer),
// so `autocat search` parses queries the same way.
inline const std::string kStemmerKey = "autocat:stemmer";

struct SearchMetadata {
  std::string model_dir;  // absolute path of the model used; empty if unknown
  std::string prefix;     // category term prefix; empty if unknown
  std::string slot;       // category value slot as text; empty if unknown
  std::string stemmer;    // stemmer of the indexed text; empty if unknown
};

// Records the model directory (made absolute), prefix and slot.
void write_search_metadata(Xapian::WritableDatabase& db, const std::string& model_dir,
                           const std::string& prefix, Xapian::valueno slot);
SearchMetadata read_search_metadata(const Xapian::Database& db);

// The analyzer of the model in `model_dir` (from its model file alone).
// Throws NotFoundError or ModelFormatError.
std::unique_ptr<internal::Analyzer> load_model_analyzer(const std::string& model_dir);

}  // namespace autocat::cli
