// Category-aware search helpers: filters, QueryParser setup and facet counts.
//
// Thread safety: free functions are thread-safe; a CategoryFacetSpy counts
// one match at a time (Xapian clones it per remote shard).
#pragma once

#include <xapian.h>

#include <cstdint>
#include <map>
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

// Collection-wide documents per category, from the term frequencies of the
// prefixed category terms. Sorted by descending count, then name.
AUTOCAT_EXPORT std::vector<FacetCount> collection_category_counts(
    const Xapian::Database& db, const std::string& prefix = kDefaultCategoryPrefix);

}  // namespace autocat
