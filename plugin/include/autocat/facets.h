// Category-aware search helpers: filters, QueryParser setup, facet counts,
// and filtering or sorting by a category's stored score.
//
// Thread safety: free functions are thread-safe; a CategoryFacetSpy counts
// one match at a time (Xapian clones it per remote shard); a
// CategoryScoreDecider and a CategoryScoreKeyMaker only read their settings,
// so one may serve several Enquires at once.
#pragma once

#include <xapian.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autocat/category_terms.h"
#include "autocat/export.h"
#include "autocat/query_parser.h"
#include "autocat/types.h"

namespace autocat {

// `query` filtered to documents in any of `categories` (OP_FILTER, so the
// filter does not change weights). Empty `categories` returns `query`.
AUTOCAT_EXPORT Xapian::Query category_filter(const Xapian::Query& query,
                                             const std::vector<std::string>& categories,
                                             const std::string& prefix = kDefaultCategoryPrefix);

struct FacetCount {
  std::string category;
  Xapian::doccount count = 0;
};

// MatchSpy counting each category of the matching documents (documents with
// several categories count once for each). Reads the category value slot.
// One pass over the matches, but a remote server must have it registered
// (stock xapian-tcpsrv does not): use category_counts() there.
class AUTOCAT_EXPORT CategoryFacetSpy : public Xapian::MatchSpy {
 public:
  explicit CategoryFacetSpy(Xapian::valueno slot = kDefaultCategorySlot) : slot_(slot) {}
  void operator()(const Xapian::Document& doc, double weight) override;
  Xapian::MatchSpy* clone() const override;
  std::string name() const override;
  std::string serialise() const override;
  Xapian::MatchSpy* unserialise(const std::string& serialised,
                                const Xapian::Registry& context) const override;
  std::string serialise_results() const override;
  void merge_results(const std::string& serialised) override;
  std::string get_description() const override;

  // Counts by descending count, then category name.
  std::vector<FacetCount> counts() const;
  Xapian::doccount documents_seen() const { return documents_seen_; }

 private:
  Xapian::valueno slot_;
  Xapian::doccount documents_seen_ = 0;
  std::map<std::string, Xapian::doccount> counts_;
};

// Exact category counts over every match of `query` in `db` (any
// combination of local shards and remote databases, including stock
// xapian-tcpsrv servers: nothing needs registering server-side). Counts one
// filtered match per category of the collection (check_at_least = document
// count, so each count is exact); a document with several categories counts
// once for each. `matching` receives the number of matching documents.
// Sorted by descending count, then name; categories with no match left out.
AUTOCAT_EXPORT std::vector<FacetCount> category_counts(
    const Xapian::Database& db, const Xapian::Query& query, Xapian::doccount* matching = nullptr,
    const std::string& prefix = kDefaultCategoryPrefix);

// The score a category value slot `value` (encode_categories()) records for
// `category`; nullopt if it does not hold the category.
AUTOCAT_EXPORT std::optional<double> category_score(const std::string& value,
                                                    const std::string& category);

// Accepts the documents whose stored score (category value slot) for any of
// `categories` is at least `min_score`. Use it with Enquire::get_mset(...,
// &decider) on local databases: Xapian refuses a MatchDecider when a shard is
// remote (UnimplementedError), since a stock xapian-tcpsrv cannot run it.
// Xapian calls match spies only on the documents the decider accepts, so a
// CategoryFacetSpy on the same Enquire counts exactly the documents kept.
// Throws InvalidArgumentError for no categories, an empty name or a NaN
// `min_score`.
class AUTOCAT_EXPORT CategoryScoreDecider : public Xapian::MatchDecider {
 public:
  CategoryScoreDecider(std::vector<std::string> categories, double min_score,
                       Xapian::valueno slot = kDefaultCategorySlot);
  bool operator()(const Xapian::Document& doc) const override;

 private:
  std::vector<std::string> categories_;
  double min_score_;
  Xapian::valueno slot_;
};

// Sort key: the document's stored score for `category`
// (Xapian::sortable_serialise), empty for a document without it, so with
// Enquire::set_sort_by_key_then_relevance(&key_maker, true) the results come
// highest score first, documents without the category last, ties by
// relevance. Local databases only, as CategoryScoreDecider.
// Throws InvalidArgumentError for an empty name.
class AUTOCAT_EXPORT CategoryScoreKeyMaker : public Xapian::KeyMaker {
 public:
  explicit CategoryScoreKeyMaker(std::string category, Xapian::valueno slot = kDefaultCategorySlot);
  std::string operator()(const Xapian::Document& doc) const override;

 private:
  std::string category_;
  Xapian::valueno slot_;
};

// Exact category counts over the matches of `query` in `db` that `decider`
// accepts (e.g. a CategoryScoreDecider), in one pass with a
// CategoryFacetSpy reading `slot`. `matching` receives the number of
// accepted matches. Local databases only: throws Xapian::UnimplementedError
// if a shard is remote. Sorted as category_counts().
AUTOCAT_EXPORT std::vector<FacetCount> category_counts(const Xapian::Database& db,
                                                       const Xapian::Query& query,
                                                       const Xapian::MatchDecider& decider,
                                                       Xapian::doccount* matching = nullptr,
                                                       Xapian::valueno slot = kDefaultCategorySlot);

// Collection-wide documents per category, from the term frequencies of the
// prefixed category terms. Sorted by descending count, then name.
AUTOCAT_EXPORT std::vector<FacetCount> collection_category_counts(
    const Xapian::Database& db, const std::string& prefix = kDefaultCategoryPrefix);

}  // namespace autocat
