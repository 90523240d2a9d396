// Sublinear tf-idf weighting shared by kNN and Rocchio.
#include "classify/corpus/weighting.h"

#include <algorithm>
#include <cassert>

namespace autocat::internal {

std::vector<float> compute_idf(const std::vector<uint32_t>& df, uint32_t num_docs,
                               const std::vector<uint8_t>& selected) {
  assert(selected.empty() || selected.size() == df.size());
  std::vector<float> idf(df.size(), 0.0f);
  for (size_t t = 0; t < df.size(); ++t) {
    if (!selected.empty() && selected[t] == 0) continue;
    // df > num_docs cannot happen for a consistent corpus; clamp rather than
    // let a negative weight reach the classifiers.
    idf[t] = static_cast<float>(std::max(0.0, inverse_document_frequency(df[t], num_docs)));
  }
  return idf;
}

const char* knn_tf_name(KnnTf transform) {
  return transform == KnnTf::kDoubleLog ? "double-log" : "sublinear";
}

}  // namespace autocat::internal
