// Term weighting shared by kNN and Rocchio: sublinear tf times idf.
//   w(t, d) = (1 + ln tf(t, d)) * ln(N / df(t))
// A term in every training document gets weight 0. kNN chooses its tf
// transform by cross-validation (KnnTf).
//
// Thread safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace autocat::internal {

inline double sublinear_tf(uint32_t tf) { return tf == 0 ? 0.0 : 1.0 + std::log(double(tf)); }

// kNN's tf transforms, for training documents and queries alike; both give
// a term occurring once weight 1. The values are stored in model files:
// never renumber.
enum class KnnTf : uint8_t {
  kSublinear = 0,  // 1 + ln tf
  kDoubleLog = 1,  // 1 + ln(1 + ln tf): repetition counts for less still
};
inline constexpr uint8_t kNumKnnTf = 2;

inline double double_log_tf(uint32_t tf) {
  return tf == 0 ? 0.0 : 1.0 + std::log(1.0 + std::log(double(tf)));
}

inline double knn_tf(uint32_t tf, KnnTf transform) {
  return transform == KnnTf::kDoubleLog ? double_log_tf(tf) : sublinear_tf(tf);
}

// "sublinear", "double-log".
const char* knn_tf_name(KnnTf transform);

inline double inverse_document_frequency(uint32_t df, uint32_t num_docs) {
  return df == 0 ? 0.0 : std::log(double(num_docs) / double(df));
}

// idf of every term; terms not selected (selected[t] == 0) get 0.
// REQUIRES: selected is empty (all selected) or has df.size() entries.
std::vector<float> compute_idf(const std::vector<uint32_t>& df, uint32_t num_docs,
                               const std::vector<uint8_t>& selected);

}  // namespace autocat::internal
