#include "classify/methods/calibration.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>

#include "classify/methods/linear.h"

namespace autocat::internal {

double clamped_logit(double score) {
  if (!(score > 0.0)) return -kMaxLogit;
  if (!(score < 1.0)) return kMaxLogit;
  return std::clamp(std::log(score) - std::log1p(-score), -kMaxLogit, kMaxLogit);
}

double calibrated_logit(const Calibration& calibration, uint32_t c, double score) {
  const double z = calibration.slope[c] * clamped_logit(score) + calibration.intercept[c];
  return std::clamp(z, -kMaxLogit, kMaxLogit);
}

Calibration fit_calibration(const std::vector<float>& scores, const std::vector<uint8_t>& use,
                            const std::vector<uint8_t>& positive, uint32_t num_categories) {
  Calibration calibration;
  calibration.slope.assign(num_categories, 1.0f);
  calibration.intercept.assign(num_categories, 0.0f);
  // Every used (document, category) pair's logit, taken once for both fits.
  std::vector<double> logits;
  std::vector<uint8_t> all_labels;
  for (size_t d = 0; d < use.size(); ++d) {
    if (!use[d]) continue;
    for (uint32_t c = 0; c < num_categories; ++c) {
      logits.push_back(clamped_logit(scores[d * num_categories + c]));
      all_labels.push_back(positive[d * num_categories + c]);
    }
  }
  if (logits.empty()) return calibration;
  const size_t used = logits.size() / num_categories;
  // Shared: every pair. It is as large as all the per-category fits
  // together, so it runs on a thread of its own beside them (each writes
  // only its own fields: the same result).
  std::exception_ptr shared_failure;
  std::thread shared_fit([&] {
    try {
      const Sigmoid shared = fit_platt(logits, all_labels);
      if (shared.slope > 0.0 && std::isfinite(shared.intercept)) {
        calibration.shared_slope = static_cast<float>(shared.slope);
        calibration.shared_intercept = static_cast<float>(shared.intercept);
      }
    } catch (...) {
      shared_failure = std::current_exception();
    }
  });
  std::exception_ptr failure;
  try {
    std::vector<double> f(used);
    std::vector<uint8_t> labels(used);
    for (uint32_t c = 0; c < num_categories; ++c) {
      for (size_t i = 0; i < used; ++i) {
        f[i] = logits[i * num_categories + c];
        labels[i] = all_labels[i * num_categories + c];
      }
      Sigmoid sigmoid = fit_platt(f, labels);
      // A decreasing map would reverse the category's ranking (possible when
      // a category has a handful of documents): fall back to the prior alone.
      if (!(sigmoid.slope > 0.0) || !std::isfinite(sigmoid.intercept)) {
        sigmoid.slope = 1e-6;
        sigmoid.intercept = fit_platt(std::vector<double>(f.size(), 0.0), labels).intercept;
        if (!std::isfinite(sigmoid.intercept)) sigmoid.intercept = 0.0;
      }
      calibration.slope[c] = static_cast<float>(sigmoid.slope);
      calibration.intercept[c] = static_cast<float>(sigmoid.intercept);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  shared_fit.join();
  if (failure) std::rethrow_exception(failure);
  if (shared_failure) std::rethrow_exception(shared_failure);
  return calibration;
}

void apply_calibration(const Calibration& calibration, Decision decision,
                       std::vector<double>* scores) {
  if (calibration.empty()) return;
  const bool one_of = decision == Decision::kOneOf;
  double total = 0.0;
  for (uint32_t c = 0; c < scores->size(); ++c) {
    const double z = one_of ? std::clamp(calibration.shared_slope * clamped_logit((*scores)[c]) +
                                             calibration.shared_intercept,
                                         -kMaxLogit, kMaxLogit)
                            : calibrated_logit(calibration, c, (*scores)[c]);
    (*scores)[c] = sigmoid(z);
    total += (*scores)[c];
  }
  if (one_of && total > 0.0) {
    for (double& score : *scores) score /= total;
  }
}

}  // namespace autocat::internal
