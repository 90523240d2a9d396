// Feature selection (IIR 13.5): utility of each term for each category from
// the 2x2 term/class document counts, and the selection of the best terms.
//
// Thread safety: free functions over immutable data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/training_collection.h"

namespace autocat::internal {

// Document counts for one term t and one class c (IIR notation):
// n11 = in c with t, n10 = not in c with t, n01 = in c without t, n00 = neither.
struct ContingencyTable {
  double n11 = 0, n10 = 0, n01 = 0, n00 = 0;
};

// Expected mutual information in bits (IIR eq. 13.17); 0·log 0 = 0.
double mutual_information(const ContingencyTable& table);
// Chi-square statistic of the 2x2 table (IIR eq. 13.18).
double chi_square(const ContingencyTable& table);

// Utility of every term for every category: num_terms x num_categories,
// term-major. kDocumentFrequency gives df(t) in every column.
std::vector<double> term_class_utility(const TrainingCorpus& corpus, FeatureSelection measure);

// Marks the selected terms: the `count` terms of highest global utility (max
// over categories), or with `per_category` the union of each category's top
// `count`. Returns one flag per term. count <= 0 selects every term.
std::vector<uint8_t> select_features(const std::vector<double>& utility, uint32_t num_terms,
                                     uint32_t num_categories, int count, bool per_category);

struct RankedTerm {
  std::string term;
  double utility;
};
// The `top` terms of category `category` by utility, best first (ties by term).
std::vector<RankedTerm> rank_terms(const TrainingCorpus& corpus, const std::vector<double>& utility,
                                   uint32_t category, int top);

// The terms `options` keep (ModelState::selected; empty: all).
std::vector<uint8_t> selected_features(const TrainingCorpus& corpus, const TrainOptions& options);

}  // namespace autocat::internal
