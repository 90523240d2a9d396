// Category filters, the QueryParser `category:` field and facet counts.
//
// Category terms follow Xapian's prefix convention (category_term(),
// classify/text/category_terms.cc), so the QueryParser field is a plain
// boolean prefix and stock QueryParsers (Python, Omega) find every category.
#include "autocat/facets.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "autocat/category_indexer.h"
#include "autocat/error.h"

namespace autocat {

namespace {

std::vector<FacetCount> sorted_counts(const std::map<std::string, Xapian::doccount>& counts) {
  std::vector<FacetCount> sorted;
  sorted.reserve(counts.size());
  for (const auto& [category, count] : counts) sorted.push_back(FacetCount{category, count});
  // The map is in name order and stable_sort keeps it among equal counts.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const FacetCount& a, const FacetCount& b) { return a.count > b.count; });
  return sorted;
}

// Serialisation for the spy: unsigned LEB128 integers and length-prefixed
// strings. Malformed input throws Xapian::SerialisationError, which Xapian's
// remote protocol knows how to report.
void put_uint(std::string* out, uint64_t n) {
  while (n >= 0x80) {
    *out += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  *out += static_cast<char>(n);
}

void put_string(std::string* out, const std::string& s) {
  put_uint(out, s.size());
  *out += s;
}

class Reader {
 public:
  Reader(const std::string& data, const char* what) : data_(data), what_(what) {}

  uint64_t get_uint() {
    uint64_t n = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) fail("truncated");
      const auto byte = static_cast<unsigned char>(data_[pos_++]);
      n |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return n;
    }
    fail("integer too long");
  }

  Xapian::doccount get_doccount() {
    const uint64_t n = get_uint();
    if (n > static_cast<Xapian::doccount>(-1)) fail("count out of range");
    return static_cast<Xapian::doccount>(n);
  }

  std::string get_string() {
    const uint64_t size = get_uint();
    if (size > data_.size() - pos_) fail("truncated");
    std::string s = data_.substr(pos_, size);
    pos_ += size;
    return s;
  }

  void finish() const {
    if (pos_ != data_.size()) fail("junk at end");
  }

 private:
  [[noreturn]] void fail(const char* problem) const {
    throw Xapian::SerialisationError(std::string("bad serialised ") + what_ + ": " + problem);
  }

  const std::string& data_;
  const char* what_;
  size_t pos_ = 0;
};

}  // namespace

// An empty `query` (Xapian::Query(), which alone matches nothing) is taken
// to mean "everything": the result is the filter on its own, scaled to weight
// 0, so it returns exactly the documents in the categories, in docid order.
Xapian::Query category_filter(const Xapian::Query& query,
                              const std::vector<std::string>& categories,
                              const std::string& prefix) {
  if (categories.empty()) return query;
  check_category_prefix(prefix);
  std::vector<Xapian::Query> terms;
  terms.reserve(categories.size());
  for (const std::string& name : categories) terms.emplace_back(category_term(name, prefix));
  Xapian::Query filter(Xapian::Query::OP_OR, terms.begin(), terms.end());
  if (query.empty()) return Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT, filter, 0.0);
  return Xapian::Query(Xapian::Query::OP_FILTER, query, filter);
}

void CategoryFacetSpy::operator()(const Xapian::Document& doc, double /*weight*/) {
  ++documents_seen_;
  const std::string value = doc.get_value(slot_);
  if (value.empty()) return;
  for (const Category& category : decode_categories(value)) ++counts_[category.name];
}

Xapian::MatchSpy* CategoryFacetSpy::clone() const { return new CategoryFacetSpy(slot_); }

std::string CategoryFacetSpy::name() const { return "autocat::CategoryFacetSpy"; }

std::string CategoryFacetSpy::serialise() const {
  std::string out;
  put_uint(&out, slot_);
  return out;
}

Xapian::MatchSpy* CategoryFacetSpy::unserialise(const std::string& serialised,
                                                const Xapian::Registry& /*context*/) const {
  Reader reader(serialised, "CategoryFacetSpy");
  const uint64_t slot = reader.get_uint();
  reader.finish();
  if (slot >= Xapian::BAD_VALUENO) {
    throw Xapian::SerialisationError("bad serialised CategoryFacetSpy: slot out of range");
  }
  return new CategoryFacetSpy(static_cast<Xapian::valueno>(slot));
}

// documents_seen, number of categories, then (name, count) per category.
std::string CategoryFacetSpy::serialise_results() const {
  std::string out;
  put_uint(&out, documents_seen_);
  put_uint(&out, counts_.size());
  for (const auto& [category, count] : counts_) {
    put_string(&out, category);
    put_uint(&out, count);
  }
  return out;
}

void CategoryFacetSpy::merge_results(const std::string& serialised) {
  // Parse everything before changing anything, so bad input leaves the spy as it was.
  Reader reader(serialised, "CategoryFacetSpy results");
  const Xapian::doccount seen = reader.get_doccount();
  const uint64_t entries = reader.get_uint();
  std::vector<FacetCount> parsed;
  for (uint64_t i = 0; i < entries; ++i) {
    FacetCount entry;
    entry.category = reader.get_string();
    entry.count = reader.get_doccount();
    parsed.push_back(std::move(entry));
  }
  reader.finish();
  documents_seen_ += seen;
  for (FacetCount& entry : parsed) counts_[std::move(entry.category)] += entry.count;
}

std::string CategoryFacetSpy::get_description() const {
  return "autocat::CategoryFacetSpy(slot=" + std::to_string(slot_) +
         ", documents_seen=" + std::to_string(documents_seen_) +
         ", categories=" + std::to_string(counts_.size()) + ")";
}

std::vector<FacetCount> CategoryFacetSpy::counts() const { return sorted_counts(counts_); }

std::vector<FacetCount> category_counts(const Xapian::Database& db, const Xapian::Query& query,
                                        Xapian::doccount* matching, const std::string& prefix) {
  check_category_prefix(prefix);
  const Xapian::doccount everything = db.get_doccount();
  Xapian::Enquire enquire(db);
  // Counting needs no weights; BoolWeight lets the matcher skip computing them.
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  auto count = [&](const Xapian::Query& q) {
    enquire.set_query(q);
    return enquire.get_mset(0, 0, everything).get_matches_estimated();
  };
  // An empty query matches nothing (as Enquire does); MatchAll counts all.
  if (matching != nullptr) *matching = query.empty() ? 0 : count(query);
  std::map<std::string, Xapian::doccount> counts;
  if (query.empty()) return {};
  for (const FacetCount& category : collection_category_counts(db, prefix)) {
    const Xapian::Query term(category_term(category.category, prefix));
    const Xapian::doccount n = count(Xapian::Query(Xapian::Query::OP_FILTER, query, term));
    if (n > 0) counts[category.category] = n;
  }
  return sorted_counts(counts);
}

// Reads the slot in place (no decode_categories() copy): a decider runs on
// every match. Same parse as decode_categories(): a name without a score
// scores 0.
std::optional<double> category_score(const std::string& value, const std::string& category) {
  size_t start = 0;
  while (start < value.size()) {
    size_t end = value.find('\n', start);
    if (end == std::string::npos) end = value.size();
    const size_t tab = value.find('\t', start);
    const size_t name_end = tab == std::string::npos || tab > end ? end : tab;
    if (name_end - start == category.size() &&
        value.compare(start, category.size(), category) == 0) {
      if (name_end == end) return 0.0;
      return std::strtod(value.substr(tab + 1, end - tab - 1).c_str(), nullptr);
    }
    start = end + 1;
  }
  return std::nullopt;
}

CategoryScoreDecider::CategoryScoreDecider(std::vector<std::string> categories, double min_score,
                                           Xapian::valueno slot)
    : categories_(std::move(categories)), min_score_(min_score), slot_(slot) {
  if (categories_.empty()) {
    throw InvalidArgumentError("a minimum score needs the categories it applies to");
  }
  for (const std::string& name : categories_) {
    if (name.empty()) throw InvalidArgumentError("a category name must not be empty");
  }
  if (std::isnan(min_score_)) throw InvalidArgumentError("the minimum score must be a number");
}

bool CategoryScoreDecider::operator()(const Xapian::Document& doc) const {
  const std::string value = doc.get_value(slot_);
  if (value.empty()) return false;
  for (const std::string& name : categories_) {
    const std::optional<double> score = category_score(value, name);
    if (score && *score >= min_score_) return true;
  }
  return false;
}

CategoryScoreKeyMaker::CategoryScoreKeyMaker(std::string category, Xapian::valueno slot)
    : category_(std::move(category)), slot_(slot) {
  if (category_.empty()) throw InvalidArgumentError("a category name must not be empty");
}

// A document without the category (or with an unreadable score) gets the
// empty key, which sorts below every sortable_serialise()d score (-inf,
// which serialises empty, ties with it).
std::string CategoryScoreKeyMaker::operator()(const Xapian::Document& doc) const {
  const std::optional<double> score = category_score(doc.get_value(slot_), category_);
  return score && !std::isnan(*score) ? Xapian::sortable_serialise(*score) : std::string();
}

std::vector<FacetCount> category_counts(const Xapian::Database& db, const Xapian::Query& query,
                                        const Xapian::MatchDecider& decider,
                                        Xapian::doccount* matching, Xapian::valueno slot) {
  if (matching != nullptr) *matching = 0;
  if (query.empty()) return {};
  Xapian::Enquire enquire(db);
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  enquire.set_query(query);
  CategoryFacetSpy spy(slot);
  enquire.add_matchspy(&spy);
  // check_at_least = every document: the matcher looks at every match, and
  // the spy sees each one the decider accepts (multimatch.cc calls the
  // decider first and skips the spy for a rejected document).
  const Xapian::MSet mset = enquire.get_mset(0, 0, db.get_doccount(), nullptr, &decider);
  if (matching != nullptr) *matching = spy.documents_seen();
  return spy.counts();
}

std::vector<FacetCount> collection_category_counts(const Xapian::Database& db,
                                                   const std::string& prefix) {
  check_category_prefix(prefix);
  std::map<std::string, Xapian::doccount> counts;
  for (Xapian::TermIterator it = db.allterms_begin(prefix); it != db.allterms_end(prefix); ++it) {
    std::string name = category_from_term(*it, prefix);
    const Xapian::doccount freq = it.get_termfreq();
    if (!name.empty() && freq > 0) counts[std::move(name)] = freq;
  }
  return sorted_counts(counts);
}

}  // namespace autocat
