// CategoryIndexer: the indexing hook. Open a model once, then for each
// document add its text terms (as Xapian::TermGenerator does), one boolean
// term per assigned category and a value slot with the categories and scores.
//
// Thread safety: after construction every const method may be called from
// many threads at once (the model is immutable; kNN's index is built once,
// under a lock, on first use). Xapian::WritableDatabase is not thread-safe:
// serialize your own calls to add_document/replace_document.
#pragma once

#include <xapian.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"

namespace autocat {

class CategoryIndexer {
 public:
  // Opens the model directory written by `autocat train`.
  // Throws NotFoundError or ModelFormatError naming the directory or file.
  CategoryIndexer(const std::string& model_dir, const IndexOptions& options = IndexOptions());
  ~CategoryIndexer();
  CategoryIndexer(const CategoryIndexer&) = delete;
  CategoryIndexer& operator=(const CategoryIndexer&) = delete;

  // Every category of the model, sorted.
  const std::vector<std::string>& categories() const;
  // The method used when options name none.
  Method default_method() const;
  const IndexOptions& options() const;

  // Scores every category for `text`, best first (no decision applied).
  std::vector<Category> score(std::string_view text) const;
  std::vector<Category> score(std::string_view text, const ClassifyOptions& options) const;
  // The categories that would be assigned to `text`.
  std::vector<Category> categorize(std::string_view text) const;
  std::vector<Category> categorize(std::string_view text, const ClassifyOptions& options) const;

  // Adds to `doc` the text's search terms as Xapian::TermGenerator makes
  // them (if options.index_text; see IndexOptions::stemmer), one boolean
  // term per assigned category (category_term()) and the category value slot.
  // Removes category terms and the slot a previous call may have left. The
  // application's other terms and values are not touched. Returns what was
  // stored.
  std::vector<Category> index(std::string_view text, Xapian::Document& doc) const;

  // Sets up `parser` to search text indexed by this indexer: its stemmer,
  // stopwords and the `category:` prefix (see autocat::configure_query_parser).
  // Parse with autocat::kQueryParserFlags.
  void configure_query_parser(Xapian::QueryParser& parser) const;

  // Builds a complete document for `id` (unique term "Q"+id, data = title or
  // the start of the text) and adds it to `db`, replacing any document with
  // the same id. Returns the categories stored.
  // Throws InvalidArgumentError for an empty id.
  std::vector<Category> index_document(Xapian::WritableDatabase& db, const std::string& id,
                                       std::string_view text,
                                       const std::string& title = std::string()) const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// Encodes / decodes the category value slot: one entry per category,
// "name<TAB>score" joined by newlines, scores with 6 significant digits.
std::string encode_categories(const std::vector<Category>& categories);
std::vector<Category> decode_categories(const std::string& value);

}  // namespace autocat
