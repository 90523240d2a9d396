// Category sums: one walk over the postings (batch training) or over one
// document's terms (live learning), with the same weighting.
#include "classify/corpus/category_sums.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"

namespace autocat::internal {
namespace {

bool is_selected(const std::vector<uint8_t>& selected, TermId term) {
  return selected.empty() || selected[term] != 0;
}

// What one term of a document adds; `inverse_norm` is 1/|d| of the
// document's tf-idf vector (kTfidf only).
inline double term_amount(TermAmount amount, uint32_t wdf, const std::vector<float>& idf, TermId t,
                          double inverse_norm) {
  switch (amount) {
    case TermAmount::kPresence:
      return 1.0;
    case TermAmount::kTfidf:
      return sublinear_tf(wdf) * idf[t] * inverse_norm;
    case TermAmount::kCount:
      break;
  }
  return wdf;
}

// A term's share of a document's squared tf-idf norm (0 if left out).
inline double squared_component(uint32_t wdf, const std::vector<uint8_t>& selected,
                                const std::vector<float>& idf, TermId t) {
  if (!is_selected(selected, t) || !(idf[t] > 0.0f)) return 0.0;
  const double x = sublinear_tf(wdf) * idf[t];
  return x * x;
}

CategorySums empty_sums(TermAmount amount, uint32_t num_terms, uint32_t num_categories,
                        const std::vector<uint8_t>& selected, const std::vector<float>& idf) {
  if (!selected.empty() && selected.size() != num_terms) {
    throw InvalidArgumentError("category sums: the feature selection has " +
                               std::to_string(selected.size()) + " flags for " +
                               std::to_string(num_terms) + " terms");
  }
  if (amount == TermAmount::kTfidf && idf.size() != num_terms) {
    throw InvalidArgumentError("category sums: " + std::to_string(idf.size()) + " idf values for " +
                               std::to_string(num_terms) + " terms");
  }
  CategorySums result;
  result.amount = amount;
  result.num_terms = num_terms;
  result.num_categories = num_categories;
  result.row_start.assign(size_t(num_terms) + 1, 0);
  result.term_total.assign(num_terms, 0.0);
  result.category_docs.assign(num_categories, 0);
  return result;
}

// Row t's entry for category c, inserted with amount 0 if missing.
SumEntry& entry_for(std::vector<SumEntry>* row, uint32_t c) {
  auto it = std::lower_bound(row->begin(), row->end(), c, [](const SumEntry& e, uint32_t category) {
    return e.category < category;
  });
  if (it == row->end() || it->category != c) it = row->insert(it, SumEntry{c, 0.0});
  return *it;
}

}  // namespace

double CategorySums::at(TermId t, uint32_t c) const {
  const SumRow entries_of_t = row(t);
  const SumEntry* it =
      std::lower_bound(entries_of_t.begin(), entries_of_t.end(), c,
                       [](const SumEntry& e, uint32_t category) { return e.category < category; });
  return it != entries_of_t.end() && it->category == c ? it->amount : 0.0;
}

uint64_t CategorySums::num_entries() const {
  if (rows.empty()) return entries.size();
  uint64_t total = 0;
  for (const std::vector<SumEntry>& entries_of_t : rows) total += entries_of_t.size();
  return total;
}

CategorySums sum_categories(const TrainingCorpus& corpus, TermAmount amount,
                            const std::vector<uint8_t>& selected, const std::vector<float>& idf) {
  const uint32_t num_categories = corpus.num_categories();
  CategorySums result = empty_sums(amount, corpus.num_terms(), num_categories, selected, idf);
  for (const std::vector<uint32_t>& labels : corpus.doc_categories) {
    for (uint32_t c : labels) {
      if (c < num_categories) ++result.category_docs[c];
    }
  }
  std::vector<double> inverse_norm;
  if (amount == TermAmount::kTfidf) {
    inverse_norm.assign(corpus.num_docs(), 0.0);
    for (TermId t = 0; t < corpus.num_terms(); ++t) {
      for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
        inverse_norm[corpus.posting_doc[p]] +=
            squared_component(corpus.posting_wdf[p], selected, idf, t);
      }
    }
    for (double& value : inverse_norm) value = value > 0.0 ? 1.0 / std::sqrt(value) : 0.0;
  }
  // Which terms a walk visits.
  const auto walked = [&](TermId t) {
    return is_selected(selected, t) && (amount != TermAmount::kTfidf || idf[t] > 0.0f);
  };
  std::vector<uint8_t> touched(num_categories, 0);
  std::vector<uint32_t> touched_list;
  const auto touch = [&](uint32_t doc) {
    for (uint32_t c : corpus.doc_categories[doc]) {
      if (c >= num_categories || touched[c] != 0) continue;
      touched[c] = 1;
      touched_list.push_back(c);
    }
  };
  // First the categories of each term, so that the entries are allocated
  // once at their size.
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    result.row_start[t + 1] = result.row_start[t];
    if (!walked(t)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      touch(corpus.posting_doc[p]);
    }
    result.row_start[t + 1] += touched_list.size();
    for (uint32_t c : touched_list) touched[c] = 0;
    touched_list.clear();
  }
  result.entries.resize(result.row_start[corpus.num_terms()]);
  // Then the amounts, a row at a time: they gather in a dense scratch row
  // (added in the postings' order, as a dense matrix would add them) and
  // leave it as the sparse entries of the categories touched.
  std::vector<double> scratch(num_categories, 0.0);
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    if (!walked(t)) continue;
    double total = 0.0;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t doc = corpus.posting_doc[p];
      const double value = term_amount(amount, corpus.posting_wdf[p], idf, t,
                                       inverse_norm.empty() ? 1.0 : inverse_norm[doc]);
      total += value;
      touch(doc);
      for (uint32_t c : corpus.doc_categories[doc]) {
        if (c < num_categories) scratch[c] += value;
      }
    }
    result.term_total[t] = total;
    std::sort(touched_list.begin(), touched_list.end());
    SumEntry* entry = result.entries.data() + result.row_start[t];
    for (uint32_t c : touched_list) {
      *entry++ = SumEntry{c, scratch[c]};
      scratch[c] = 0.0;
      touched[c] = 0;
    }
    touched_list.clear();
  }
  return result;
}

void add_document(const DocumentTerms& doc, const std::vector<uint32_t>& categories, double sign,
                  const std::vector<uint8_t>& selected, const std::vector<float>& idf,
                  CategorySums* sums) {
  if (sums->rows.empty()) {
    // A document may add a category to a term: a vector per term from now.
    std::vector<std::vector<SumEntry>> rows(sums->num_terms);
    for (TermId t = 0; t < sums->num_terms; ++t) {
      const SumRow packed = sums->row(t);
      rows[t].assign(packed.begin(), packed.end());
    }
    sums->rows = std::move(rows);
    std::vector<uint64_t>().swap(sums->row_start);
    std::vector<SumEntry>().swap(sums->entries);
  }
  for (uint32_t c : categories) sums->category_docs[c] += sign > 0 ? 1 : -1;
  double inverse_norm = 1.0;
  if (sums->amount == TermAmount::kTfidf) {
    double norm2 = 0.0;
    for (const TermCount& term : doc.terms) {
      if (term.term < sums->num_terms)
        norm2 += squared_component(term.count, selected, idf, term.term);
    }
    inverse_norm = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
  }
  for (const TermCount& term : doc.terms) {
    const TermId t = term.term;
    if (t >= sums->num_terms || term.count == 0 || !is_selected(selected, t)) continue;
    if (sums->amount == TermAmount::kTfidf && !(idf[t] > 0.0f)) continue;
    const double value = sign * term_amount(sums->amount, term.count, idf, t, inverse_norm);
    sums->term_total[t] += value;
    for (uint32_t c : categories) entry_for(&sums->rows[t], c).amount += value;
  }
}

}  // namespace autocat::internal
