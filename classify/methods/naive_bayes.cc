// Naive Bayes training and scoring (IIR 13.2-13.3; Rennie et al. 2003).
//
// Every model is trained by walking each term's postings once and adding the
// posting into every category of its document, so a document with several
// labels counts once for each of them. Weights are stored term-major, so
// scoring a document reads one contiguous row of num_categories floats per
// document term: its cost depends on the document, not on the vocabulary.
#include "classify/methods/naive_bayes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "autocat/error.h"
#include "classify/base/method_traits.h"
#include "classify/corpus/weighting.h"

namespace autocat::internal {
namespace {

bool is_selected(const std::vector<uint8_t>& selected, TermId term) {
  return selected.empty() || selected[term] != 0;
}

void check_training_arguments(const TrainingCorpus& corpus, const std::vector<uint8_t>& selected,
                              double alpha) {
  if (!(alpha > 0.0) || !std::isfinite(alpha)) {
    throw InvalidArgumentError("Naive Bayes: the smoothing alpha must be a positive number, got " +
                               std::to_string(alpha));
  }
  if (corpus.num_categories() == 0) {
    throw InvalidArgumentError("Naive Bayes: the training corpus has no category");
  }
  if (!selected.empty() && selected.size() != corpus.num_terms()) {
    throw InvalidArgumentError("Naive Bayes: the feature selection has " +
                               std::to_string(selected.size()) + " flags for " +
                               std::to_string(corpus.num_terms()) + " terms");
  }
}

uint32_t vocabulary_size(uint32_t num_terms, const std::vector<uint8_t>& selected) {
  if (selected.empty()) return num_terms;
  return static_cast<uint32_t>(
      std::count_if(selected.begin(), selected.end(), [](uint8_t flag) { return flag != 0; }));
}

NaiveBayesModel empty_model(const CategorySums& sums, Method method, double alpha) {
  NaiveBayesModel model;
  model.variant = static_cast<int>(method);
  model.alpha = alpha;
  model.num_categories = sums.num_categories;
  model.log_prior.assign(model.num_categories, 0.0);
  model.class_constant.assign(model.num_categories, 0.0);
  return model;
}

// Empty weight rows, every row zero until marked otherwise.
std::shared_ptr<NbWeightRows> empty_rows(const CategorySums& sums) {
  auto rows = std::make_shared<NbWeightRows>();
  rows->num_terms = sums.num_terms;
  rows->num_categories = sums.num_categories;
  rows->zero_row.assign(sums.num_terms, 1);
  rows->row_start.assign(size_t(sums.num_terms) + 1, 0);
  return rows;
}

// Reserves exactly the entries the rows will hold (the nonzero amounts of
// the terms kept), so that they never grow by doubling: at millions of
// terms a doubling's copy was the largest memory of the fit.
void reserve_entries(const CategorySums& sums, const std::vector<uint8_t>& selected,
                     const std::vector<uint8_t>& wanted, NbWeightRows* rows) {
  uint64_t count = 0;
  for (TermId t = 0; t < sums.num_terms; ++t) {
    if (!is_selected(selected, t) || !is_selected(wanted, t)) continue;
    for (const SumEntry& entry : sums.row(t)) count += entry.amount != 0.0 ? 1 : 0;
  }
  rows->entry_category.reserve(count);
  rows->entry_weight.reserve(count);
}

// Checks what a model is fitted from: `expected` the amount the variant
// needs, alpha positive, the selection sized to the vocabulary.
void check_sums(const CategorySums& sums, TermAmount expected, const std::vector<uint8_t>& selected,
                double alpha, const std::vector<uint8_t>& wanted) {
  if (!(alpha > 0.0) || !std::isfinite(alpha)) {
    throw InvalidArgumentError("Naive Bayes: the smoothing alpha must be a positive number, got " +
                               std::to_string(alpha));
  }
  if (sums.num_categories == 0) {
    throw InvalidArgumentError("Naive Bayes: the training corpus has no category");
  }
  if (sums.amount != expected || (!selected.empty() && selected.size() != sums.num_terms) ||
      (!wanted.empty() && wanted.size() != sums.num_terms)) {
    throw InvalidArgumentError("Naive Bayes: the category sums do not fit this model");
  }
}

// log P(c) = log(N_c / sum_c' N_c'), N_c = documents labelled c. A category
// without documents (impossible in a corpus built from labels) gets -inf.
std::vector<double> log_priors(const std::vector<int64_t>& counts) {
  double total = 0;
  for (int64_t count : counts) total += static_cast<double>(count);
  std::vector<double> priors(counts.size(), -std::numeric_limits<double>::infinity());
  for (size_t c = 0; c < counts.size(); ++c) {
    if (counts[c] > 0) priors[c] = std::log(static_cast<double>(counts[c]) / total);
  }
  return priors;
}

TermAmount counting_amount(const std::vector<float>& idf) {
  return idf.empty() ? TermAmount::kCount : TermAmount::kTfidf;
}

// The idf a tf-idf model keeps: 0 for terms left out.
std::vector<float> kept_idf(const std::vector<float>& idf, const std::vector<uint8_t>& selected) {
  std::vector<float> kept = idf;
  for (TermId t = 0; t < kept.size(); ++t) {
    if (!is_selected(selected, t)) kept[t] = 0.0f;
  }
  return kept;
}

// Complement NB's stored weight from log(complement amount + alpha) and the
// category's log denominator: the trainer and the model file's sparse form
// (NbSparseWeights) both compute it here, so they agree bit for bit.
float complement_weight(double log_amount, double log_denominator) {
  return static_cast<float>(-(log_amount - log_denominator));
}

uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

bool is_naive_bayes(int variant) {
  // variant is the Method's value as written in model files.
  const MethodTraits* traits = find_method_traits(static_cast<Method>(variant));
  return traits != nullptr && traits->family == MethodFamily::kNaiveBayes;
}

}  // namespace

// Multinomial NB (IIR fig. 13.2): P(t|c) = (T_ct + alpha) /
// (sum_t' T_ct' + alpha |V|), weight = log P(t|c); a document scores
// log P(c) + sum_t count(t,d) log P(t|c).
NaiveBayesModel multinomial_nb_from_sums(const CategorySums& sums,
                                         const std::vector<uint8_t>& selected, double alpha,
                                         const std::vector<float>& idf,
                                         const std::vector<uint8_t>& wanted) {
  check_sums(sums, counting_amount(idf), selected, alpha, wanted);
  NaiveBayesModel model = empty_model(sums, Method::kNaiveBayes, alpha);
  model.log_prior = log_priors(sums.category_docs);
  const uint32_t num_categories = model.num_categories;
  if (!idf.empty()) model.idf = kept_idf(idf, selected);
  // Per category, in term order (the order a dense matrix adds them).
  std::vector<double> totals(num_categories, 0.0);
  for (TermId t = 0; t < sums.num_terms; ++t) {
    for (const SumEntry& entry : sums.row(t)) totals[entry.category] += entry.amount;
  }
  const double vocabulary = vocabulary_size(sums.num_terms, selected);
  std::vector<double> log_denominator(num_categories);
  for (uint32_t c = 0; c < num_categories; ++c) {
    log_denominator[c] = std::log(totals[c] + alpha * vocabulary);
  }
  // Most terms are absent from most categories: their weight is
  // log(0 + alpha) - log_denominator, the category's default.
  const double log_alpha = std::log(alpha);
  std::shared_ptr<NbWeightRows> rows = empty_rows(sums);
  reserve_entries(sums, selected, wanted, rows.get());
  rows->column_default.resize(num_categories);
  for (uint32_t c = 0; c < num_categories; ++c) {
    rows->column_default[c] = static_cast<float>(log_alpha - log_denominator[c]);
  }
  for (TermId t = 0; t < sums.num_terms; ++t) {
    rows->row_start[t] = rows->entry_category.size();
    if (!is_selected(selected, t) || !is_selected(wanted, t)) continue;
    rows->zero_row[t] = 0;
    for (const SumEntry& entry : sums.row(t)) {
      if (entry.amount == 0.0) continue;
      rows->entry_category.push_back(entry.category);
      rows->entry_weight.push_back(
          static_cast<float>(std::log(entry.amount + alpha) - log_denominator[entry.category]));
    }
  }
  rows->row_start[sums.num_terms] = rows->entry_category.size();
  model.weight_rows = std::move(rows);
  return model;
}

NaiveBayesModel train_multinomial_nb(const TrainingCorpus& corpus,
                                     const std::vector<uint8_t>& selected, double alpha,
                                     const std::vector<float>& idf) {
  check_training_arguments(corpus, selected, alpha);
  return multinomial_nb_from_sums(sum_categories(corpus, counting_amount(idf), selected, idf),
                                  selected, alpha, idf);
}

// Bernoulli NB (IIR fig. 13.3): P(t|c) = (N_ct + alpha) / (N_c + 2 alpha).
// The score log P(c) + sum_{t in V} log(1 - P(t|c))
//                    + sum_{t in d} [log P(t|c) - log(1 - P(t|c))]
// is split into class_constant (the vocabulary sum, computed once here) and
// term_weight (the bracket), so scoring walks only the document's terms.
NaiveBayesModel bernoulli_nb_from_sums(const CategorySums& sums,
                                       const std::vector<uint8_t>& selected, double alpha,
                                       const std::vector<uint8_t>& wanted) {
  check_sums(sums, TermAmount::kPresence, selected, alpha, wanted);
  NaiveBayesModel model = empty_model(sums, Method::kBernoulliNaiveBayes, alpha);
  model.log_prior = log_priors(sums.category_docs);
  const uint32_t num_categories = model.num_categories;
  const std::vector<int64_t>& doc_counts = sums.category_docs;
  std::vector<double> log_denominator(num_categories);
  // A term in none of c's documents (most terms, for most categories):
  // its log(1 - P) is the same for every such term.
  std::vector<double> log_absent_unseen(num_categories);
  for (uint32_t c = 0; c < num_categories; ++c) {
    log_denominator[c] = std::log(static_cast<double>(doc_counts[c]) + 2.0 * alpha);
    log_absent_unseen[c] =
        std::log(static_cast<double>(doc_counts[c]) + alpha) - log_denominator[c];
  }
  const double log_alpha = std::log(alpha);
  std::shared_ptr<NbWeightRows> rows = empty_rows(sums);
  reserve_entries(sums, selected, wanted, rows.get());
  rows->column_default.resize(num_categories);
  for (uint32_t c = 0; c < num_categories; ++c) {
    const double log_present = log_alpha - log_denominator[c];
    rows->column_default[c] = static_cast<float>(log_present - log_absent_unseen[c]);
  }
  // class_constant: log(1 - P) over the vocabulary, the seen terms' own
  // and log_absent_unseen for every other term of the vocabulary.
  std::vector<double> seen_sum(num_categories, 0.0);
  std::vector<uint64_t> seen(num_categories, 0);
  for (TermId t = 0; t < sums.num_terms; ++t) {
    rows->row_start[t] = rows->entry_category.size();
    if (!is_selected(selected, t)) continue;
    const bool weights = is_selected(wanted, t);
    if (weights) rows->zero_row[t] = 0;
    for (const SumEntry& entry : sums.row(t)) {
      const double count = entry.amount;
      if (count == 0.0) continue;
      const uint32_t c = entry.category;
      const double n_c = static_cast<double>(doc_counts[c]);
      // log P and log(1 - P) from the counts, without forming 1 - P.
      const double log_absent = std::log(n_c - count + alpha) - log_denominator[c];
      seen_sum[c] += log_absent;
      ++seen[c];
      if (!weights) continue;
      const double log_present = std::log(count + alpha) - log_denominator[c];
      rows->entry_category.push_back(c);
      rows->entry_weight.push_back(static_cast<float>(log_present - log_absent));
    }
  }
  rows->row_start[sums.num_terms] = rows->entry_category.size();
  const double vocabulary = vocabulary_size(sums.num_terms, selected);
  for (uint32_t c = 0; c < num_categories; ++c) {
    model.class_constant[c] =
        (vocabulary - static_cast<double>(seen[c])) * log_absent_unseen[c] + seen_sum[c];
  }
  model.weight_rows = std::move(rows);
  return model;
}

NaiveBayesModel train_bernoulli_nb(const TrainingCorpus& corpus,
                                   const std::vector<uint8_t>& selected, double alpha,
                                   const std::vector<float>& /*idf: presence only*/) {
  check_training_arguments(corpus, selected, alpha);
  return bernoulli_nb_from_sums(sum_categories(corpus, TermAmount::kPresence, selected, {}),
                                selected, alpha);
}

// Complement NB (Rennie et al. 2003, sec. 3.1):
//   theta~_ct = (sum_{d not in c} tf_td + alpha)
//               / (sum_{d not in c} sum_t' tf_t'd + alpha |V|)
//   w_ct = log theta~_ct
// and the class is argmin_c sum_t count(t,d) w_ct. We store -w_ct so that,
// as for the other models, higher is better. "Not in c" means not labelled
// c: a document labelled c and c' is outside both complements, and an
// unlabelled document is in every complement. Rennie drops the prior (it is
// dominated by the weights), so log_prior is 0. The counts are the raw wdf
// or, when cross-validation prefers it, tf-idf vectors (NaiveBayesModel::idf).
// Rennie's weight normalization (WCNB, sec. 3.2: w_ct / sum_t |w_ct|) is not
// applied: without it the cross-validated objective was higher on all three
// benchmark sets (20 Newsgroups 0.9207 -> 0.9222, Reuters micro-F1 0.8442 ->
// 0.8474, Subject lines 0.8284 -> 0.8294) and so was test accuracy
// (0.8489 -> 0.8505 on 20 Newsgroups); scikit-learn's ComplementNB does not
// normalize by default either. Models trained with it keep their weights.
NaiveBayesModel complement_nb_from_sums(const CategorySums& sums,
                                        const std::vector<uint8_t>& selected, double alpha,
                                        const std::vector<float>& idf,
                                        const std::vector<uint8_t>& wanted) {
  check_sums(sums, counting_amount(idf), selected, alpha, wanted);
  NaiveBayesModel model = empty_model(sums, Method::kComplementNaiveBayes, alpha);
  const uint32_t num_categories = model.num_categories;
  if (!idf.empty()) model.idf = kept_idf(idf, selected);
  // The complement amount sum_{d not in c} tf_td of a selected term is
  // its total minus its amount in c (a term left out keeps its own amount
  // in the totals), so c's total over the vocabulary is the selected
  // terms' totals plus what c's own entries take away or add: never a
  // dense complement.
  double selected_total = 0.0;
  for (TermId t = 0; t < sums.num_terms; ++t) {
    if (is_selected(selected, t)) selected_total += sums.term_total[t];
  }
  std::vector<double> own(num_categories, 0.0);
  for (TermId t = 0; t < sums.num_terms; ++t) {
    const bool in_vocabulary = is_selected(selected, t);
    for (const SumEntry& entry : sums.row(t)) {
      own[entry.category] += in_vocabulary ? -entry.amount : entry.amount;
    }
  }
  const double vocabulary = vocabulary_size(sums.num_terms, selected);
  std::vector<double> log_denominator(num_categories);
  for (uint32_t c = 0; c < num_categories; ++c) {
    log_denominator[c] = std::log(selected_total + own[c] + alpha * vocabulary);
  }
  // A category without term t has its complement amount equal to t's
  // total: the row's base (NbSparseWeights).
  model.complement_row_log.assign(sums.num_terms, 0.0);
  model.complement_column_log = log_denominator;
  std::shared_ptr<NbWeightRows> rows = empty_rows(sums);
  reserve_entries(sums, selected, wanted, rows.get());
  for (TermId t = 0; t < sums.num_terms; ++t) {
    rows->row_start[t] = rows->entry_category.size();
    if (!is_selected(selected, t)) continue;
    model.complement_row_log[t] = std::log(sums.term_total[t] + alpha);
    if (!is_selected(wanted, t)) continue;
    rows->zero_row[t] = 0;
    for (const SumEntry& entry : sums.row(t)) {
      if (entry.amount == 0.0) continue;
      const double log_amount = std::log(sums.term_total[t] - entry.amount + alpha);
      rows->entry_category.push_back(entry.category);
      rows->entry_weight.push_back(complement_weight(log_amount, log_denominator[entry.category]));
    }
  }
  rows->row_start[sums.num_terms] = rows->entry_category.size();
  rows->row_log = model.complement_row_log;
  rows->column_log = log_denominator;
  model.weight_rows = std::move(rows);
  return model;
}

NaiveBayesModel train_complement_nb(const TrainingCorpus& corpus,
                                    const std::vector<uint8_t>& selected, double alpha,
                                    const std::vector<float>& idf) {
  check_training_arguments(corpus, selected, alpha);
  return complement_nb_from_sums(sum_categories(corpus, counting_amount(idf), selected, idf),
                                 selected, alpha, idf);
}

uint64_t NbSparseWeights::file_bytes() const {
  constexpr uint64_t kLength = 8;  // each vector's length
  return 4 + 8 * kLength + zero_row.size() + 4 * column_default.size() + 8 * row_log.size() +
         8 * column_log.size() + 4 * row_entries.size() + 4 * entry_category.size() +
         4 * entry_weight.size();
}

bool NaiveBayesModel::encode_sparse(NbSparseWeights* sparse) const {
  const uint32_t cats = num_categories;
  if (cats == 0 || term_weight.size() % cats != 0 ||
      term_weight.size() / cats > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  const auto terms = static_cast<uint32_t>(term_weight.size() / cats);
  NbSparseWeights out;
  out.num_terms = terms;
  out.zero_row.assign(terms, 0);
  const auto row_of = [&](uint32_t t) { return &term_weight[static_cast<size_t>(t) * cats]; };
  for (uint32_t t = 0; t < terms; ++t) {
    const float* row = row_of(t);
    out.zero_row[t] = std::all_of(row, row + cats, [](float w) { return bits_of(w) == 0; });
  }
  const bool complement =
      complement_row_log.size() == terms && complement_column_log.size() == cats;
  std::vector<uint32_t> default_bits(cats, 0);
  if (complement) {
    out.row_log = complement_row_log;
    out.column_log = complement_column_log;
  } else {
    // The value most of each category's weights share (Boyer-Moore
    // majority vote; any candidate is correct, a poor one only costs
    // exceptions).
    std::vector<uint32_t> votes(cats, 0);
    for (uint32_t t = 0; t < terms; ++t) {
      if (out.zero_row[t]) continue;
      const float* row = row_of(t);
      for (uint32_t c = 0; c < cats; ++c) {
        const uint32_t b = bits_of(row[c]);
        if (votes[c] == 0) {
          default_bits[c] = b;
          votes[c] = 1;
        } else {
          votes[c] += default_bits[c] == b ? 1 : -1;
        }
      }
    }
    out.column_default.resize(cats);
    for (uint32_t c = 0; c < cats; ++c) out.column_default[c] = float_of(default_bits[c]);
  }
  const auto base_bits = [&](uint32_t t, uint32_t c) {
    return complement ? bits_of(complement_weight(out.row_log[t], out.column_log[c]))
                      : default_bits[c];
  };
  uint64_t exceptions = 0;
  for (uint32_t t = 0; t < terms; ++t) {
    if (out.zero_row[t]) continue;
    const float* row = row_of(t);
    for (uint32_t c = 0; c < cats; ++c) exceptions += bits_of(row[c]) != base_bits(t, c);
  }
  out.row_entries.assign(terms, 0);
  const uint64_t dense_bytes = 8 + 4 * uint64_t{term_weight.size()};
  if (out.file_bytes() + 8 * exceptions >= dense_bytes) return false;
  out.entry_category.reserve(exceptions);
  out.entry_weight.reserve(exceptions);
  for (uint32_t t = 0; t < terms; ++t) {
    if (out.zero_row[t]) continue;
    const float* row = row_of(t);
    for (uint32_t c = 0; c < cats; ++c) {
      if (bits_of(row[c]) == base_bits(t, c)) continue;
      out.entry_category.push_back(c);
      out.entry_weight.push_back(row[c]);
      ++out.row_entries[t];
    }
  }
  *sparse = std::move(out);
  return true;
}

std::shared_ptr<const NbWeightRows> NaiveBayesModel::rows_from_sparse(
    const NbSparseWeights& sparse) const {
  const uint32_t cats = num_categories;
  const uint64_t terms = sparse.num_terms;
  const bool complement = !sparse.row_log.empty();
  const bool consistent =
      cats > 0 && sparse.zero_row.size() == terms && sparse.row_entries.size() == terms &&
      sparse.entry_category.size() == sparse.entry_weight.size() &&
      (complement ? sparse.row_log.size() == terms && sparse.column_log.size() == cats &&
                        sparse.column_default.empty()
                  : sparse.column_default.size() == cats && sparse.column_log.empty());
  if (!consistent) return nullptr;
  auto rows = std::make_shared<NbWeightRows>();
  rows->row_start.assign(terms + 1, 0);
  uint64_t listed = 0;
  for (uint64_t t = 0; t < terms; ++t) {
    if (sparse.zero_row[t] && sparse.row_entries[t] != 0) return nullptr;
    rows->row_start[t] = listed;
    listed += sparse.row_entries[t];
  }
  rows->row_start[terms] = listed;
  if (listed != sparse.entry_category.size()) return nullptr;
  for (uint64_t t = 0; t < terms; ++t) {
    for (uint64_t e = rows->row_start[t], last = 0; e < rows->row_start[t + 1]; ++e) {
      const uint32_t c = sparse.entry_category[e];
      // Out of range or out of order.
      if (c >= cats || (e > rows->row_start[t] && c <= last)) return nullptr;
      last = c;
    }
  }
  rows->num_terms = static_cast<uint32_t>(terms);
  rows->num_categories = cats;
  rows->zero_row = sparse.zero_row;
  rows->column_default = sparse.column_default;
  rows->row_log = sparse.row_log;
  rows->column_log = sparse.column_log;
  rows->entry_category = sparse.entry_category;
  rows->entry_weight = sparse.entry_weight;
  return rows;
}

void NaiveBayesModel::decode_sparse(const NbSparseWeights& sparse) {
  term_weight.clear();
  weight_rows = rows_from_sparse(sparse);
  make_dense();
}

std::shared_ptr<const NbWeightRows> NaiveBayesModel::rows_from_mapped(
    const NbMappedSparse& sparse) const {
  const uint32_t cats = num_categories;
  const uint64_t terms = sparse.num_terms;
  const bool complement = sparse.row_log.size != 0;
  const bool consistent =
      cats > 0 && sparse.zero_row.size == terms && sparse.row_entries.size == terms &&
      sparse.entry_category.size == sparse.entry_weight.size &&
      (complement ? sparse.row_log.size == terms && sparse.column_log.size() == cats &&
                        sparse.column_default.empty()
                  : sparse.column_default.size() == cats && sparse.column_log.empty());
  if (!consistent) return nullptr;
  const auto u32_at = [](const char* data, uint64_t i) {
    uint32_t value;
    std::memcpy(&value, data + i * sizeof value, sizeof value);
    return value;
  };
  auto rows = std::make_shared<NbWeightRows>();
  rows->row_start.assign(terms + 1, 0);
  uint64_t listed = 0;
  for (uint64_t t = 0; t < terms; ++t) {
    const uint32_t entries = u32_at(sparse.row_entries.data, t);
    if (sparse.zero_row.data[t] != 0 && entries != 0) return nullptr;
    rows->row_start[t] = listed;
    listed += entries;
  }
  rows->row_start[terms] = listed;
  if (listed != sparse.entry_category.size) return nullptr;
  for (uint64_t t = 0; t < terms; ++t) {
    for (uint64_t e = rows->row_start[t], last = 0; e < rows->row_start[t + 1]; ++e) {
      const uint32_t c = u32_at(sparse.entry_category.data, e);
      // Out of range or out of order.
      if (c >= cats || (e > rows->row_start[t] && c <= last)) return nullptr;
      last = c;
    }
  }
  // What the model check asks of the rows held in memory.
  for (uint64_t e = 0; e < listed; ++e) {
    float weight;
    std::memcpy(&weight, sparse.entry_weight.data + e * sizeof weight, sizeof weight);
    if (std::isnan(weight)) return nullptr;
  }
  for (uint64_t t = 0; complement && t < terms; ++t) {
    double log;
    std::memcpy(&log, sparse.row_log.data + t * sizeof log, sizeof log);
    if (!std::isfinite(log)) return nullptr;
  }
  // Checked: their pages go until a document's terms read them again.
  for (const auto& [array, element_bytes] : {std::pair{&sparse.zero_row, size_t{1}},
                                             {&sparse.row_log, sizeof(double)},
                                             {&sparse.row_entries, sizeof(uint32_t)},
                                             {&sparse.entry_category, sizeof(uint32_t)},
                                             {&sparse.entry_weight, sizeof(float)}}) {
    if (array->release) array->release(array->size * element_bytes);
  }
  rows->num_terms = static_cast<uint32_t>(terms);
  rows->num_categories = cats;
  rows->column_default = sparse.column_default;
  rows->column_log = sparse.column_log;
  rows->mapped_owner = sparse.owner;
  rows->mapped_zero_row = sparse.zero_row.data;
  rows->mapped_row_log = complement ? sparse.row_log.data : nullptr;
  rows->mapped_entry_category = sparse.entry_category.data;
  rows->mapped_entry_weight = sparse.entry_weight.data;
  return rows;
}

NbWeightRows NbWeightRows::owned() const {
  NbWeightRows rows = *this;
  if (!mapped_owner) return rows;
  rows.mapped_owner.reset();
  rows.mapped_zero_row = rows.mapped_row_log = nullptr;
  rows.mapped_entry_category = rows.mapped_entry_weight = nullptr;
  const uint64_t entries = row_start.empty() ? 0 : row_start.back();
  rows.zero_row.assign(mapped_zero_row, mapped_zero_row + num_terms);
  if (mapped_row_log != nullptr) {
    rows.row_log.resize(num_terms);
    std::memcpy(rows.row_log.data(), mapped_row_log, num_terms * sizeof(double));
  }
  rows.entry_category.resize(entries);
  std::memcpy(rows.entry_category.data(), mapped_entry_category, entries * sizeof(uint32_t));
  rows.entry_weight.resize(entries);
  std::memcpy(rows.entry_weight.data(), mapped_entry_weight, entries * sizeof(float));
  return rows;
}

void NaiveBayesModel::decode_pending(size_t terms, size_t categories) {
  if (pending_mapped) {
    const std::shared_ptr<const NbMappedSparse> mapped = std::move(pending_mapped);
    pending_mapped.reset();
    if (mapped->num_terms != terms || num_categories != categories) return;
    // Read where the file holds them: scoring expands the rows of a
    // document's terms from the mapped pages.
    weight_rows = rows_from_mapped(*mapped);
    return;
  }
  if (!pending_sparse) return;
  const std::shared_ptr<const NbSparseWeights> sparse = std::move(pending_sparse);
  pending_sparse.reset();
  if (sparse->num_terms != terms || num_categories != categories) return;
  // Kept sparse: scoring expands one row at a time, bit for bit the dense
  // weights, in memory that follows the file's entries.
  weight_rows = rows_from_sparse(*sparse);
}

void NbWeightRows::fill_row(uint32_t t, float* row) const {
  if (mapped_owner) {
    // As below, from the mapped arrays.
    if (mapped_zero_row[t] != 0) {
      std::fill(row, row + num_categories, 0.0f);
      return;
    }
    if (mapped_row_log == nullptr) {
      std::copy(column_default.begin(), column_default.end(), row);
    } else {
      double log;
      std::memcpy(&log, mapped_row_log + size_t(t) * sizeof log, sizeof log);
      for (uint32_t c = 0; c < num_categories; ++c) row[c] = complement_weight(log, column_log[c]);
    }
    for (uint64_t e = row_start[t]; e < row_start[t + 1]; ++e) {
      uint32_t category;
      std::memcpy(&category, mapped_entry_category + e * sizeof category, sizeof category);
      std::memcpy(&row[category], mapped_entry_weight + e * sizeof(float), sizeof(float));
    }
    return;
  }
  if (zero_row[t]) {
    std::fill(row, row + num_categories, 0.0f);
    return;
  }
  if (row_log.empty()) {
    std::copy(column_default.begin(), column_default.end(), row);
  } else {
    for (uint32_t c = 0; c < num_categories; ++c)
      row[c] = complement_weight(row_log[t], column_log[c]);
  }
  for (uint64_t e = row_start[t]; e < row_start[t + 1]; ++e)
    row[entry_category[e]] = entry_weight[e];
}

const float* NaiveBayesModel::row(uint32_t t, std::vector<float>* scratch) const {
  if (!weight_rows) return &term_weight[static_cast<size_t>(t) * num_categories];
  scratch->resize(num_categories);
  weight_rows->fill_row(t, scratch->data());
  return scratch->data();
}

std::vector<float> NaiveBayesModel::dense_weights() const {
  if (!weight_rows) return term_weight;
  std::vector<float> dense(static_cast<size_t>(weight_rows->num_terms) * num_categories);
  for (uint32_t t = 0; t < weight_rows->num_terms; ++t) {
    weight_rows->fill_row(t, &dense[static_cast<size_t>(t) * num_categories]);
  }
  return dense;
}

void NaiveBayesModel::make_dense() {
  if (!weight_rows) return;
  term_weight = dense_weights();
  weight_rows.reset();
}

bool NaiveBayesModel::rows_to_sparse(NbSparseWeights* sparse) const {
  if (!weight_rows) return false;
  const NbWeightRows copied = weight_rows->mapped_owner ? weight_rows->owned() : NbWeightRows();
  const NbWeightRows& rows = weight_rows->mapped_owner ? copied : *weight_rows;
  const uint64_t entries = rows.entry_category.size();
  const uint64_t sparse_bytes = 64 + 5ULL * rows.num_terms + 8ULL * entries +
                                4ULL * rows.column_default.size() + 8ULL * rows.row_log.size() +
                                8ULL * rows.column_log.size();
  if (sparse_bytes >= 8 + 4ULL * rows.num_terms * rows.num_categories) return false;
  NbSparseWeights out;
  out.num_terms = rows.num_terms;
  out.zero_row = rows.zero_row;
  out.column_default = rows.column_default;
  out.row_log = rows.row_log;
  out.column_log = rows.column_log;
  out.row_entries.resize(rows.num_terms);
  for (uint32_t t = 0; t < rows.num_terms; ++t) {
    out.row_entries[t] = static_cast<uint32_t>(rows.row_start[t + 1] - rows.row_start[t]);
  }
  out.entry_category = rows.entry_category;
  out.entry_weight = rows.entry_weight;
  *sparse = std::move(out);
  return true;
}

NaiveBayesClassifier::NaiveBayesClassifier(const NaiveBayesModel& model) : model_(model) {
  const size_t num_categories = model.num_categories;
  if (!is_naive_bayes(model.variant) || num_categories == 0 ||
      model.log_prior.size() != num_categories || model.class_constant.size() != num_categories ||
      (model.weight_rows
           ? model.weight_rows->num_categories != num_categories || !model.term_weight.empty()
           : model.term_weight.size() % num_categories != 0) ||
      (model.tfidf() && model.idf.size() != model.num_terms())) {
    throw ModelFormatError("Naive Bayes model is inconsistent: variant " +
                           std::to_string(model.variant) + ", " + std::to_string(num_categories) +
                           " categories, " + std::to_string(model.log_prior.size()) + " priors, " +
                           std::to_string(model.term_weight.size()) + " weights");
  }
}

void NaiveBayesClassifier::log_scores(const DocumentTerms& doc, std::vector<double>* scores) const {
  accumulate(doc, scores);
}

bool NaiveBayesClassifier::accumulate(const DocumentTerms& doc, std::vector<double>* scores) const {
  const uint32_t num_categories = model_.num_categories;
  const size_t num_terms = model_.num_terms();
  scores->resize(num_categories);
  double* out = scores->data();
  for (uint32_t c = 0; c < num_categories; ++c) {
    out[c] = model_.log_prior[c] + model_.class_constant[c];
  }
  const double inverse_norm = nb_inverse_norm(model_, doc);
  // A term is in the model's vocabulary unless feature selection left it
  // out, which leaves its weight row all zero (so does a Bernoulli term with
  // P(t|c) = 1/2 in every class, which carries no evidence either).
  bool has_known_term = false;
  std::vector<float> scratch;
  for (const TermCount& term : doc.terms) {
    if (term.term >= num_terms) continue;
    const float* weight = model_.row(term.term, &scratch);
    if (!has_known_term) {
      has_known_term =
          std::any_of(weight, weight + num_categories, [](float w) { return w != 0.0f; });
    }
    const double value = nb_feature_value(model_, term, inverse_norm);
    for (uint32_t c = 0; c < num_categories; ++c) out[c] += value * weight[c];
  }
  return has_known_term;
}

double nb_feature_value(const NaiveBayesModel& model, const TermCount& term, double inverse_norm) {
  if (model.variant == static_cast<int>(Method::kBernoulliNaiveBayes)) return 1.0;
  if (!model.tfidf()) return static_cast<double>(term.count);
  return sublinear_tf(term.count) * model.idf[term.term] * inverse_norm;
}

double nb_inverse_norm(const NaiveBayesModel& model, const DocumentTerms& doc) {
  if (!model.tfidf()) return 1.0;
  double norm2 = 0.0;
  for (const TermCount& term : doc.terms) {
    if (term.term >= model.idf.size()) continue;
    const double x = sublinear_tf(term.count) * model.idf[term.term];
    norm2 += x * x;
  }
  return norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
}

// For multinomial and Bernoulli NB this is the posterior P(c|d). For
// complement NB the "posterior" is the softmax of the (prior-free, negated)
// complement scores: it ranks like Rennie's argmin
// and is as sharp as multinomial NB's, but it is not a calibrated probability.
void NaiveBayesClassifier::score(const DocumentTerms& doc, const ClassifyOptions& /*options*/,
                                 std::vector<double>* scores) const {
  const uint32_t num_categories = model_.num_categories;
  // Without a known term the document gets all zeros (the Classifier
  // contract), not the prior.
  const bool has_known_term = accumulate(doc, scores);
  const double max_score = *std::max_element(scores->begin(), scores->end());
  if (!has_known_term || !std::isfinite(max_score)) {
    scores->assign(num_categories, 0.0);
    return;
  }
  // exp(s_c - logsumexp(s)), shifted by the maximum so nothing overflows and
  // the best category's term is exp(0) = 1.
  double sum = 0;
  for (double& s : *scores) {
    s = std::exp(s - max_score);
    sum += s;
  }
  for (double& s : *scores) s /= sum;
}

}  // namespace autocat::internal
