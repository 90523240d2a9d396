// Calibrated probabilities for every method through one mechanism: each
// category's raw score s (kNN vote share, Rocchio cosine, a Naive Bayes or
// linear probability) is mapped to
//   p_c = sigmoid(slope_c * logit(s) + intercept_c),
// a Platt sigmoid over the score's log-odds, fitted at training time on the
// out-of-fold scores of the threshold-tuning cross-validation (see
// thresholds.h). The map is increasing in s for every category, so it keeps
// each category's ranking of documents; any-of decisions use these (each
// category a yes/no question). One-of decisions use one sigmoid shared by
// every category (fitted on all pairs), then divide by the sum so a
// document's scores sum to 1: the same increasing map for every category
// keeps the order of a document's categories, so the best one (the one-of
// decision) is the raw method's. The log-odds are clamped (kMaxLogit): Naive Bayes
// posteriors span hundreds of orders of magnitude, and a vote share of 0 must
// still map to a finite, small probability.
//
// Thread safety: Calibration is data; the functions are pure.
#pragma once

#include <boost/serialization/vector.hpp>
#include <cstdint>
#include <vector>

#include "autocat/options.h"

namespace autocat::internal {

inline constexpr double kMaxLogit = 30.0;

// Per category: slope and intercept. Empty: the method is not calibrated
// (a model trained without threshold tuning, or before format version 4).
struct Calibration {
  std::vector<float> slope;
  std::vector<float> intercept;
  float shared_slope = 1, shared_intercept = 0;  // one-of

  bool empty() const { return slope.empty(); }
  template <class Archive>
  void serialize(Archive& ar, const unsigned int /*version*/) {
    ar& slope& intercept& shared_slope& shared_intercept;
  }
};

// log(s / (1 - s)), clamped to [-kMaxLogit, kMaxLogit].
double clamped_logit(double score);

// The calibrated log-odds of category c for raw score `score`, clamped.
double calibrated_logit(const Calibration& calibration, uint32_t c, double score);

// Fits one sigmoid per category. `scores` are out-of-fold raw scores,
// document-major (documents x categories); `use[d]` whether document d was
// scored; `positive[d * categories + c]` whether d is labelled c.
Calibration fit_calibration(const std::vector<float>& scores, const std::vector<uint8_t>& use,
                            const std::vector<uint8_t>& positive, uint32_t num_categories);

// Raw scores to calibrated probabilities in place (see above). An empty
// calibration leaves them as they are.
void apply_calibration(const Calibration& calibration, Decision decision,
                       std::vector<double>* scores);

}  // namespace autocat::internal
