#include "indexer/relabel.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "autocat/error.h"
#include "autocat/types.h"
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

Correction relabel_document(Xapian::WritableDatabase& db, const std::string& db_path,
                            CategoryIndexer& indexer, const std::string& id,
                            const std::vector<std::string>& names, bool learn,
                            Xapian::valueno text_slot, const std::string& editor) {
  const Xapian::Document doc = find_document(db, db_path, id);  // the error names the database
  // Xapian ends the process when the disk fills while a commit writes value
  // slots: room for the commit inside correct_document() is reserved first.
  const CommitRoom room(db_path, 2 * document_bytes(doc) + (uint64_t{1} << 12));
  CorrectionOptions options;
  options.editor = editor;
  options.learn = learn;
  options.text_slot = text_slot;
  return correct_document(db, indexer, id, names, options);
}

std::string editor_name(const std::string& given, const std::string& fallback) {
  if (!given.empty()) return given;
  const char* user = std::getenv("USER");
  return user != nullptr && *user != '\0' ? std::string(user) : fallback;
}

}  // namespace autocat::cli
