// How kNN's neighbours vote for categories: each with its similarity
// (or its square), and a category's score is its share of the votes.
//
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "classify/methods/knn_index.h"

namespace autocat::internal {

// A neighbour's vote: its similarity raised to `power` (1 or 2). Squaring
// lets the nearest neighbours outvote a long tail of weak ones at large k.
inline double knn_vote_weight(float similarity, int power) {
  const double s = similarity;
  return power == 2 ? s * s : s;
}

// Each neighbour votes for its categories; scores are the votes' shares.
template <typename CategoriesOf>
void knn_vote(const std::vector<KnnIndex::Neighbour>& neighbours, int similarity_power,
              uint32_t num_categories, const CategoriesOf& categories_of,
              std::vector<double>* scores) {
  scores->assign(num_categories, 0.0);
  double total = 0.0;
  for (const KnnIndex::Neighbour& neighbour : neighbours) {
    const double vote = knn_vote_weight(neighbour.similarity, similarity_power);
    total += vote;
    for (uint32_t category : categories_of(neighbour.doc)) {
      if (category < num_categories) (*scores)[category] += vote;
    }
  }
  if (!(total > 0.0)) return;
  for (double& score : *scores) score = std::min(1.0, score / total);
}

}  // namespace autocat::internal
