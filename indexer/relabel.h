// Setting a document's categories by hand, in an index autocat index wrote:
// what `autocat relabel` and `autocat serve` share on top of
// autocat/corrections.h (the rules themselves live there).
//
// Thread safety: none; one writer per database (Xapian's lock).
#pragma once

#include <xapian.h>

#include <string>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/corrections.h"
#include "indexer/search_metadata.h"

namespace autocat::cli {

// What a CategoryIndexer that rewrites categories in the index recorded by
// `metadata` needs: its category prefix, slot and stemmer; no text indexed.
IndexOptions relabel_index_options(const SearchMetadata& metadata);

// The value slot holding the full text `autocat index --store-text` kept, or
// Xapian::BAD_VALUENO when the index did not keep it.
Xapian::valueno stored_text_slot(const SearchMetadata& metadata);

// The document whose unique id term is Q+`id`. Throws NotFoundError naming
// `id` and the database.
Xapian::Document find_document(const Xapian::Database& db, const std::string& db_path,
                               const std::string& id);

// Gives document `id` of `db` the categories `names` through
// autocat::correct_document() (score 1, editor-set, logged, committed),
// teaching them to `indexer`'s model when `learn`. Returns the record.
// Throws NotFoundError naming `db_path` and `id`, InvalidArgumentError, or
// what Xapian throws; on a throw the index is unchanged.
Correction relabel_document(Xapian::WritableDatabase& db, const std::string& db_path,
                            CategoryIndexer& indexer, const std::string& id,
                            const std::vector<std::string>& names, bool learn,
                            Xapian::valueno text_slot, const std::string& editor);

// The editor name of a command-line correction: `given`, else $USER, else
// `fallback`.
std::string editor_name(const std::string& given, const std::string& fallback);

}  // namespace autocat::cli
