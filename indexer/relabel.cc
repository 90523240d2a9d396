#include "indexer/relabel.h"

#include <algorithm>
#include <charconv>

#include "autocat/error.h"
#include "autocat/types.h"
#include "classify/io/json_text.h"
#include "indexer/index_transaction.h"

namespace autocat::cli {

namespace {

Xapian::valueno slot_or(const std::string& text, Xapian::valueno fallback) {
  Xapian::valueno slot = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, slot);
  if (text.empty() || ec != std::errc() || ptr != end || slot == Xapian::BAD_VALUENO) {
    return fallback;
  }
  return slot;
}

}  // namespace

IndexOptions relabel_index_options(const SearchMetadata& metadata) {
  IndexOptions options;
  options.category_prefix = metadata.prefix.empty() ? kDefaultCategoryPrefix : metadata.prefix;
  options.category_slot = slot_or(metadata.slot, kDefaultCategorySlot);
  if (!metadata.stemmer.empty()) options.stemmer = metadata.stemmer;
  options.index_text = false;
  return options;
}

Xapian::valueno stored_text_slot(const SearchMetadata& metadata) {
  return slot_or(metadata.text_slot, Xapian::BAD_VALUENO);
}

Xapian::Document find_document(const Xapian::Database& db, const std::string& db_path,
                               const std::string& id) {
  const std::string term = kIdPrefix + id;
  Xapian::PostingIterator it = db.postlist_begin(term);
  if (id.empty() || it == db.postlist_end(term)) {
    throw NotFoundError(db_path + ": no document has the id '" + id + "'");
  }
  return db.get_document(*it);
}

std::string document_text(const Xapian::Document& doc, Xapian::valueno text_slot) {
  if (text_slot != Xapian::BAD_VALUENO) {
    std::string text = doc.get_value(text_slot);
    if (!text.empty()) return text;
  }
  return doc.get_data();
}

std::vector<std::string> known_categories(const CategoryIndexer& indexer,
                                          const std::vector<std::string>& names) {
  const std::vector<std::string>& known = indexer.categories();
  std::vector<std::string> kept;
  for (const std::string& name : names) {
    if (!std::binary_search(known.begin(), known.end(), name)) {
      // Printable: a NUL would end the message where what() is read.
      throw InvalidArgumentError("category '" + internal::printable(name) +
                                 "' is not in the model; a new category needs a refit "
                                 "(autocat train --add)");
    }
    if (std::find(kept.begin(), kept.end(), name) == kept.end()) kept.push_back(name);
  }
  if (kept.empty()) throw InvalidArgumentError("give at least one category");
  return kept;
}

Xapian::Document relabel_document(Xapian::WritableDatabase& db, const std::string& db_path,
                                  CategoryIndexer& indexer, const std::string& id,
                                  const std::vector<std::string>& names, bool learn,
                                  Xapian::valueno text_slot) {
  const std::vector<std::string> checked = known_categories(indexer, names);
  Xapian::Document doc = find_document(db, db_path, id);
  const Xapian::docid docid = doc.get_docid();
  std::string text;
  if (learn) {
    text = document_text(doc, text_slot);
    if (text.empty()) {
      throw InvalidArgumentError(db_path + ": document '" + id + "' has no text to learn from");
    }
  }
  // The document as it is, read in full now: put back if the model refuses it.
  Xapian::Document previous = db.get_document(docid);
  const uint64_t previous_bytes = document_bytes(previous);

  IndexTransaction transaction(db, db_path);
  std::vector<Category> categories;
  for (const std::string& name : checked) categories.push_back(Category{name, 1.0});
  indexer.set_categories(doc, categories);
  db.replace_document(docid, doc);
  transaction.changed(document_bytes(doc) + previous_bytes);
  transaction.commit();
  // Taught after the commit, so that a failed write never leaves the model
  // knowing categories the index lacks.
  if (learn) {
    try {
      indexer.learn(id, text, checked);
    } catch (const std::exception& e) {
      std::string failure;
      try {
        db.replace_document(docid, previous);
        transaction.changed(2 * previous_bytes);
        transaction.commit();
      } catch (const Xapian::Error& put_back) {
        failure = xapian_reason(put_back);
      } catch (const Error& put_back) {
        failure = put_back.what();
      }
      if (!failure.empty()) {
        throw IOError(db_path + ": document '" + id + "' keeps the new categories, which the " +
                      "model did not learn (" + e.what() + "), and putting back its earlier " +
                      "ones failed: " + failure);
      }
      throw;
    }
  }
  return db.get_document(docid);
}

}  // namespace autocat::cli
