// The sufficient statistics of Rocchio and the Naive Bayes family: per
// category and term, the sum of what the term contributes in the documents
// labelled with the category (its counts, its presence, or its component of
// the document's L2-normalized tf-idf vector), the same sum over every
// document, and the documents per category. Batch training computes them
// from the postings and fits the models from them (rocchio.h,
// naive_bayes.h); live learning (live_models.h) adds and subtracts single
// documents and fits the models again from the same sums.
//
// Thread safety: CategorySums is data.
#pragma once

#include <cstdint>
#include <vector>

#include "classify/corpus/training_collection.h"

namespace autocat::internal {

// What one occurrence of a term in a document adds to the sums.
enum class TermAmount {
  kCount,     // its wdf (multinomial and complement NB on counts)
  kPresence,  // 1 (Bernoulli NB)
  kTfidf,     // (1 + log wdf) idf / |d| (Rocchio; NB on tf-idf vectors)
};

// One category's amount of a term.
struct SumEntry {
  uint32_t category = 0;
  double amount = 0.0;
};

// Term t's entries, ascending by category.
class SumRow {
 public:
  SumRow(const SumEntry* first, const SumEntry* last) : first_(first), last_(last) {}
  const SumEntry* begin() const { return first_; }
  const SumEntry* end() const { return last_; }
  size_t size() const { return size_t(last_ - first_); }

 private:
  const SumEntry* first_;
  const SumEntry* last_;
};

struct CategorySums {
  TermAmount amount = TermAmount::kCount;
  uint32_t num_terms = 0;
  uint32_t num_categories = 0;
  // Per term, sparse: the amounts of term t in the documents labelled c (a
  // document with several labels adds to each), one entry per category
  // whose documents contain t, ascending by category. A category absent
  // from a row has amount 0; an entry may hold 0 too (a learned document
  // forgotten again). Memory follows the (term, category) pairs the
  // documents have, never terms x categories.
  // Packed as sum_categories() builds them: term t's entries are
  // entries[row_start[t], row_start[t + 1]). The first add_document()
  // moves them to one vector per term (`rows`), where a document can add a
  // category to a term; a vector per term costs twice the memory or more
  // at millions of terms, most of them in one category.
  std::vector<uint64_t> row_start;
  std::vector<SumEntry> entries;
  std::vector<std::vector<SumEntry>> rows;
  // Per term: its amounts over every document, each counted once (labelled
  // or not): complement NB's complements are term_total - the row's amount.
  std::vector<double> term_total;
  // Per category: the documents labelled with it.
  std::vector<int64_t> category_docs;

  SumRow row(TermId t) const {
    if (!rows.empty()) return SumRow(rows[t].data(), rows[t].data() + rows[t].size());
    return SumRow(entries.data() + row_start[t], entries.data() + row_start[t + 1]);
  }
  // The amount of term t in category c (0 if c has none).
  double at(TermId t, uint32_t c) const;
  // Entries over every row.
  uint64_t num_entries() const;
};

// One walk over the corpus' postings. `selected`: empty = every term,
// otherwise terms with selected[t] == 0 stay 0. `idf` (kTfidf only; 0 for
// left-out terms): REQUIRES idf.size() == corpus.num_terms().
CategorySums sum_categories(const TrainingCorpus& corpus, TermAmount amount,
                            const std::vector<uint8_t>& selected, const std::vector<float>& idf);

// Adds (sign +1) or subtracts (sign -1) one document, weighted exactly as
// sum_categories() weights a training document: it touches only the rows
// of its terms, and in them only its categories' entries. Terms at or beyond
// num_terms are ignored. REQUIRES: every category < num_categories.
void add_document(const DocumentTerms& doc, const std::vector<uint32_t>& categories, double sign,
                  const std::vector<uint8_t>& selected, const std::vector<float>& idf,
                  CategorySums* sums);

}  // namespace autocat::internal
