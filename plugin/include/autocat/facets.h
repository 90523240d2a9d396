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
// Builds a query object only (no database access); throws nothing of its own.
AUTOCAT_EXPORT Xapian::Query category_filter(const Xapian::Query& query,
                                             const std::vector<std::string>& categories,
                                             const std::string& prefix = kDefaultCategoryPrefix);

// One category and how many documents of a result or collection it has.
struct FacetCount {
  std::string category;        // the category name, UTF-8
  Xapian::doccount count = 0;  // documents counted for it
};

// MatchSpy counting each category of the matching documents (documents with
// several categories count once for each). Reads the category value slot.
// One pass over the matches, but a remote server must have it registered
// (stock xapian-tcpsrv does not): use category_counts() there.
// Cost: a read of the value slot and a map update per match and category.
class AUTOCAT_EXPORT CategoryFacetSpy : public Xapian::MatchSpy {
 public:
  // A spy reading the category value slot `slot` (autocat index's, 200,
  // by default). Add it with Enquire::add_matchspy(); throws nothing.
  explicit CategoryFacetSpy(Xapian::valueno slot = kDefaultCategorySlot) : slot_(slot) {}
  // Counts the categories of one matching document; Xapian calls it.
  void operator()(const Xapian::Document& doc, double weight) override;
  // A new spy on the same slot, with no counts (owned by the caller).
  Xapian::MatchSpy* clone() const override;
  // "autocat::CategoryFacetSpy": the name a Xapian::Registry knows it by.
  std::string name() const override;
  // The slot, serialised for a remote server that has the spy registered.
  std::string serialise() const override;
  // A spy from serialise()'s bytes (owned by the caller). Throws
  // Xapian::SerialisationError for malformed bytes.
  Xapian::MatchSpy* unserialise(const std::string& serialised,
                                const Xapian::Registry& context) const override;
  // The counts so far, serialised for merge_results().
  std::string serialise_results() const override;
  // Adds a remote shard's counts (serialise_results()' bytes). Throws
  // Xapian::SerialisationError for malformed bytes.
  void merge_results(const std::string& serialised) override;
  // A one-line description for debugging.
  std::string get_description() const override;

  // Counts by descending count, then category name.
  std::vector<FacetCount> counts() const;
  // The matching documents counted so far (with or without categories).
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
// Cost: one match per category of the collection. Throws what Xapian throws
// (Xapian::NetworkError naming an unreachable remote shard).
AUTOCAT_EXPORT std::vector<FacetCount> category_counts(
    const Xapian::Database& db, const Xapian::Query& query, Xapian::doccount* matching = nullptr,
    const std::string& prefix = kDefaultCategoryPrefix);

// The score a category value slot `value` (encode_categories()) records for
// `category`; nullopt if it does not hold the category (or `value` is
// malformed). Parses the value; throws nothing of its own.
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
  // Accepts documents scoring at least `min_score` for one of `categories`
  // in value slot `slot`; throws as the class comment says.
  CategoryScoreDecider(std::vector<std::string> categories, double min_score,
                       Xapian::valueno slot = kDefaultCategorySlot);
  // Whether `doc` is accepted: a read and parse of its category slot.
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
  // Sorts by the score for `category` in value slot `slot`; throws as the
  // class comment says.
  explicit CategoryScoreKeyMaker(std::string category, Xapian::valueno slot = kDefaultCategorySlot);
  // The sort key of `doc`: a read and parse of its category slot.
  std::string operator()(const Xapian::Document& doc) const override;

 private:
  std::string category_;
  Xapian::valueno slot_;
};

// Exact category counts over the matches of `query` in `db` that `decider`
// accepts (e.g. a CategoryScoreDecider), in one pass with a
// CategoryFacetSpy reading `slot`. `matching` receives the number of
// accepted matches. Local databases only: throws Xapian::UnimplementedError
// if a shard is remote. Sorted as category_counts(). Cost: one match over
// every accepted document, a slot read for each.
AUTOCAT_EXPORT std::vector<FacetCount> category_counts(const Xapian::Database& db,
                                                       const Xapian::Query& query,
                                                       const Xapian::MatchDecider& decider,
                                                       Xapian::doccount* matching = nullptr,
                                                       Xapian::valueno slot = kDefaultCategorySlot);

// Collection-wide documents per category, from the term frequencies of the
// prefixed category terms. Sorted by descending count, then name. Cost: a
// walk over the prefix's terms, no document read; throws what Xapian throws.
AUTOCAT_EXPORT std::vector<FacetCount> collection_category_counts(
    const Xapian::Database& db, const std::string& prefix = kDefaultCategoryPrefix);

}  // namespace autocat
