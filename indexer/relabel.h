// Setting a document's categories by hand, in an index autocat index wrote:
// what `autocat relabel` and `autocat serve`'s corrections share. The
// index is committed first (a full disk then leaves the model untaught),
// then the model is taught; if it refuses the text (no known terms), the
// document's earlier categories are put back.
//
// Thread safety: none; one writer per database (Xapian's lock).
#pragma once

#include <xapian.h>

#include <string>
#include <vector>

#include "autocat/category_indexer.h"
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

// The text a model learns from: the stored full text when there is one,
// else the document data (the title or a snippet).
std::string document_text(const Xapian::Document& doc, Xapian::valueno text_slot);

// `names` without repeats, each a category of `indexer`'s model. Throws
// InvalidArgumentError naming the first unknown category, or for none.
std::vector<std::string> known_categories(const CategoryIndexer& indexer,
                                          const std::vector<std::string>& names);

// Gives document `id` of `db` the categories `names` (score 1: an editor's
// categories are certain), teaching them to `indexer`'s model after the
// commit when `learn`. Returns the document as stored now. Throws
// NotFoundError (no such id), InvalidArgumentError (unknown category, or
// nothing to learn from) or what Xapian throws; on a throw the index is
// unchanged.
Xapian::Document relabel_document(Xapian::WritableDatabase& db, const std::string& db_path,
                                  CategoryIndexer& indexer, const std::string& id,
                                  const std::vector<std::string>& names, bool learn,
                                  Xapian::valueno text_slot);

}  // namespace autocat::cli
