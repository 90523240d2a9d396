// Feature selection (IIR 13.5): per term and category utilities computed in
// one walk over each term's postings, and top-k selection with ties broken
// by term id so the result never depends on sort stability.
#include "classify/corpus/feature_selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

// NaN utilities sort last, as -inf, so the comparisons stay a strict weak
// ordering.
double rank_key(double utility) {
  return std::isnan(utility) ? -std::numeric_limits<double>::infinity() : utility;
}

// Ids of the `count` terms with the highest key, best first, ties by id.
std::vector<TermId> top_terms(const std::vector<double>& key, size_t count) {
  std::vector<TermId> order(key.size());
  std::iota(order.begin(), order.end(), TermId{0});
  count = std::min(count, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    [&key](TermId a, TermId b) {
                      if (key[a] != key[b]) return key[a] > key[b];
                      return a < b;
                    });
  order.resize(count);
  return order;
}

void check_utility_size(const std::vector<double>& utility, uint64_t num_terms,
                        uint64_t num_categories) {
  if (utility.size() != num_terms * num_categories) {
    throw InvalidArgumentError("feature selection: " + std::to_string(utility.size()) +
                               " utilities for " + std::to_string(num_terms) + " terms x " +
                               std::to_string(num_categories) + " categories");
  }
}

// Per-category document counts n11 (binary) or token counts (wdf) of term t
// into row[0..num_categories), from t's postings.
void count_term(const TrainingCorpus& corpus, TermId t, bool binary, double* row) {
  for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
    const double amount = binary ? 1.0 : corpus.posting_wdf[p];
    for (uint32_t c : corpus.doc_categories[corpus.posting_doc[p]]) row[c] += amount;
  }
}

// KL utility: the contribution of term t to KL(P(.|c) || P(.)) in bits,
//   u(t,c) = P(t|c) log2(P(t|c) / P(t)),
//   P(t|c) = (T_ct + 1) / (sum_t' T_ct' + |V|),  P(t) = (T_t + 1) / (sum_t' T_t' + |V|),
// where T_ct = tokens of t in documents labelled c, T_t = tokens of t in the
// whole collection, |V| = every term (add-one smoothing). Summed over t it is
// the KL divergence of the class's term distribution from the collection's,
// so u > 0 for terms over-represented in c and u < 0 for under-represented ones.
std::vector<double> kl_utility(const TrainingCorpus& corpus) {
  const uint32_t num_terms = corpus.num_terms();
  const uint32_t num_categories = corpus.num_categories();
  std::vector<double> utility(static_cast<size_t>(num_terms) * num_categories, 0.0);
  std::vector<double> term_total(num_terms, 0.0);
  std::vector<double> category_total(num_categories, 0.0);
  double total = 0;
  for (TermId t = 0; t < num_terms; ++t) {
    double* row = &utility[static_cast<size_t>(t) * num_categories];
    count_term(corpus, t, /*binary=*/false, row);
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      term_total[t] += corpus.posting_wdf[p];
    }
    total += term_total[t];
    for (uint32_t c = 0; c < num_categories; ++c) category_total[c] += row[c];
  }
  for (TermId t = 0; t < num_terms; ++t) {
    const double p_term = (term_total[t] + 1.0) / (total + num_terms);
    double* row = &utility[static_cast<size_t>(t) * num_categories];
    for (uint32_t c = 0; c < num_categories; ++c) {
      const double p_term_class = (row[c] + 1.0) / (category_total[c] + num_terms);
      row[c] = p_term_class * std::log2(p_term_class / p_term);
    }
  }
  return utility;
}

}  // namespace

double mutual_information(const ContingencyTable& table) {
  const double n = table.n11 + table.n10 + table.n01 + table.n00;
  if (!(n > 0)) return 0.0;
  const double with_term = table.n11 + table.n10;     // N1.
  const double without_term = table.n01 + table.n00;  // N0.
  const double in_class = table.n11 + table.n01;      // N.1
  const double out_class = table.n10 + table.n00;     // N.0
  // One cell: N_ij/N log2(N N_ij / (N_i. N_.j)); 0 log 0 = 0. A positive cell
  // has positive marginals.
  auto cell = [n](double count, double row, double column) {
    return count > 0 ? count / n * std::log2(n * count / (row * column)) : 0.0;
  };
  const double mi = cell(table.n11, with_term, in_class) + cell(table.n01, without_term, in_class) +
                    cell(table.n10, with_term, out_class) +
                    cell(table.n00, without_term, out_class);
  return std::max(mi, 0.0);  // >= 0 in exact arithmetic; clip rounding
}

double chi_square(const ContingencyTable& table) {
  const double n = table.n11 + table.n10 + table.n01 + table.n00;
  const double denominator = (table.n11 + table.n01) * (table.n11 + table.n10) *
                             (table.n10 + table.n00) * (table.n01 + table.n00);
  if (!(denominator > 0)) return 0.0;  // a marginal is 0: term or class constant
  const double d = table.n11 * table.n00 - table.n10 * table.n01;
  return n * d * d / denominator;
}

std::vector<double> term_class_utility(const TrainingCorpus& corpus, FeatureSelection measure) {
  const uint32_t num_terms = corpus.num_terms();
  const uint32_t num_categories = corpus.num_categories();
  switch (measure) {
    case FeatureSelection::kKlDivergence:
      return kl_utility(corpus);
    case FeatureSelection::kDocumentFrequency: {
      std::vector<double> utility(static_cast<size_t>(num_terms) * num_categories);
      for (TermId t = 0; t < num_terms; ++t) {
        std::fill_n(utility.begin() + static_cast<std::ptrdiff_t>(t) * num_categories,
                    num_categories, static_cast<double>(corpus.df[t]));
      }
      return utility;
    }
    case FeatureSelection::kMutualInformation:
    case FeatureSelection::kChiSquare: {
      const std::vector<uint32_t> class_docs = corpus.category_doc_counts();
      const double n = corpus.num_docs();
      std::vector<double> utility(static_cast<size_t>(num_terms) * num_categories, 0.0);
      for (TermId t = 0; t < num_terms; ++t) {
        double* row = &utility[static_cast<size_t>(t) * num_categories];
        count_term(corpus, t, /*binary=*/true, row);
        const double df =
            static_cast<double>(corpus.postings_start[t + 1] - corpus.postings_start[t]);
        for (uint32_t c = 0; c < num_categories; ++c) {
          ContingencyTable table;
          table.n11 = row[c];
          table.n10 = df - table.n11;
          table.n01 = class_docs[c] - table.n11;
          table.n00 = n - table.n11 - table.n10 - table.n01;
          row[c] = measure == FeatureSelection::kChiSquare ? chi_square(table)
                                                           : mutual_information(table);
        }
      }
      return utility;
    }
    case FeatureSelection::kNone:
      break;
  }
  throw InvalidArgumentError("feature selection: no utility measure for '" +
                             feature_selection_name(measure) + "'");
}

std::vector<uint8_t> select_features(const std::vector<double>& utility, uint32_t num_terms,
                                     uint32_t num_categories, int count, bool per_category) {
  check_utility_size(utility, num_terms, num_categories);
  const auto wanted = static_cast<uint32_t>(std::max(count, 0));
  if (count <= 0 || (!per_category && wanted >= num_terms)) {
    return std::vector<uint8_t>(num_terms, 1);
  }
  std::vector<uint8_t> selected(num_terms, 0);
  std::vector<double> key(num_terms);
  if (!per_category) {
    // Global: a term is as useful as it is for its best category.
    for (TermId t = 0; t < num_terms; ++t) {
      double best = -std::numeric_limits<double>::infinity();
      for (uint32_t c = 0; c < num_categories; ++c) {
        best = std::max(best, rank_key(utility[static_cast<size_t>(t) * num_categories + c]));
      }
      key[t] = best;
    }
    for (TermId t : top_terms(key, wanted)) selected[t] = 1;
    return selected;
  }
  for (uint32_t c = 0; c < num_categories; ++c) {
    for (TermId t = 0; t < num_terms; ++t) {
      key[t] = rank_key(utility[static_cast<size_t>(t) * num_categories + c]);
    }
    for (TermId t : top_terms(key, wanted)) selected[t] = 1;
  }
  return selected;
}

std::vector<RankedTerm> rank_terms(const TrainingCorpus& corpus, const std::vector<double>& utility,
                                   uint32_t category, int top) {
  const uint32_t num_terms = corpus.num_terms();
  const uint32_t num_categories = corpus.num_categories();
  check_utility_size(utility, num_terms, num_categories);
  if (category >= num_categories) {
    throw InvalidArgumentError("feature selection: no category " + std::to_string(category) +
                               " (the corpus has " + std::to_string(num_categories) + ")");
  }
  std::vector<double> key(num_terms);
  for (TermId t = 0; t < num_terms; ++t) {
    key[t] = rank_key(utility[static_cast<size_t>(t) * num_categories + category]);
  }
  // Terms are sorted, so ties broken by id are ties broken by term.
  const size_t wanted = top <= 0 ? num_terms : static_cast<size_t>(top);
  std::vector<RankedTerm> ranked;
  for (TermId t : top_terms(key, wanted)) {
    ranked.push_back(
        {corpus.terms[t], utility[static_cast<size_t>(t) * num_categories + category]});
  }
  return ranked;
}

std::vector<uint8_t> selected_features(const TrainingCorpus& corpus, const TrainOptions& options) {
  if (options.feature_selection == FeatureSelection::kNone || options.num_features <= 0) return {};
  const std::vector<double> utility = term_class_utility(corpus, options.feature_selection);
  return select_features(utility, corpus.num_terms(), corpus.num_categories(), options.num_features,
                         options.features_per_category);
}

}  // namespace autocat::internal
