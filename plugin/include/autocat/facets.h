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

#include "autocat/types.h"

namespace autocat {

// Throws InvalidArgumentError unless `prefix` can be a category prefix: one
// or more capital letters A-Z, not "X" alone (the start of every
// user-defined prefix), not starting with "Q" (unique ids, "Q" + id) or "Z"
// (stemmed text terms), so category terms never collide with those.
void check_category_prefix(const std::string& prefix);

// The boolean term of category `name`, by Xapian's convention (what
// QueryParser::add_boolean_prefix produces): prefix + ':' + name when the
// prefix is longer than one character and `name` starts with a capital A-Z
// or ':', else prefix + name. "XCsci.med", "XC:Sports", "XC:New York".
std::string category_term(const std::string& name,
                          const std::string& prefix = kDefaultCategoryPrefix);

// The category name of `term` if category_term() could have made it with
// `prefix`, else empty ("XCOLORred" is not a category term for "XC").
std::string category_from_term(const std::string& term,
                               const std::string& prefix = kDefaultCategoryPrefix);

// `query` filtered to documents in any of `categories` (OP_FILTER, so the
// filter does not change weights). Empty `categories` returns `query`.
Xapian::Query category_filter(const Xapian::Query& query,
                              const std::vector<std::string>& categories,
                              const std::string& prefix = kDefaultCategoryPrefix);

// Adds the boolean prefix `category:` (mapped to `prefix`) to a QueryParser:
// plain add_boolean_prefix(), so `category:Sports` and
// `category:"New York"` give the terms category_term() writes.
void add_category_prefix(Xapian::QueryParser& parser,
                         const std::string& prefix = kDefaultCategoryPrefix);

// Flags for QueryParser::parse_query on text indexed by CategoryIndexer:
// Xapian's defaults plus CJK n-grams (as the text was indexed).
constexpr unsigned kQueryParserFlags =
    Xapian::QueryParser::FLAG_DEFAULT | Xapian::QueryParser::FLAG_CJK_NGRAM;

// The stopword list configure_query_parser() gives the parser, for
// bindings that set up a QueryParser of their own (Python).
const std::vector<std::string>& query_stopwords();

// Sets up `parser` the way CategoryIndexer indexed the text with stemmer
// `stemmer` ("english", ..., or "none"): that stemmer with STEM_SOME (stemmed
// words match the "Z" terms), autocat's English stopword list (stopwords are
// dropped from queries outside phrases, as Omega does) and the `category:`
// prefix. Parse with kQueryParserFlags. A stock QueryParser set up the same
// way (C++, Python, Omega) finds the same documents.
// Throws InvalidArgumentError for an unknown stemmer.
void configure_query_parser(Xapian::QueryParser& parser, const std::string& stemmer,
                            const std::string& prefix = kDefaultCategoryPrefix);

struct FacetCount {
  std::string category;
  Xapian::doccount count = 0;
};

// MatchSpy counting each category of the matching documents (documents with
// several categories count once for each). Reads the category value slot.
// One pass over the matches, but a remote server must have it registered
// (stock xapian-tcpsrv does not): use category_counts() there.
class CategoryFacetSpy : public Xapian::MatchSpy {
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
std::vector<FacetCount> category_counts(const Xapian::Database& db, const Xapian::Query& query,
                                        Xapian::doccount* matching = nullptr,
                                        const std::string& prefix = kDefaultCategoryPrefix);

// Collection-wide documents per category, from the term frequencies of the
// prefixed category terms. Sorted by descending count, then name.
std::vector<FacetCount> collection_category_counts(
    const Xapian::Database& db, const std::string& prefix = kDefaultCategoryPrefix);

}  // namespace autocat
