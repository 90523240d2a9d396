// Evaluation: accuracy, precision, recall and F1 (per category, micro and
// macro averaged), support and the confusion matrix, for one-of and any-of
// decisions; and log-loss for methods whose scores are probabilities.
//
// Thread safety: an Evaluation or LogLoss is not synchronized; use one per
// thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autocat/types.h"

namespace autocat::internal {

struct CategoryMetrics {
  std::string name;
  uint64_t true_positives = 0, false_positives = 0, false_negatives = 0;
  uint64_t support = 0;  // documents truly in the category (tp + fn)
  double precision = 0, recall = 0, f1 = 0;
};

class Evaluation {
 public:
  explicit Evaluation(std::vector<std::string> categories);
  // Records one document: its true categories and the assigned ones (indexes
  // into the category list). A document counts as correct for accuracy when
  // the two sets are equal (so a document with no true category is correct
  // when nothing is assigned).
  void add(const std::vector<uint32_t>& truth, const std::vector<uint32_t>& assigned);

  uint64_t documents() const { return documents_; }
  double accuracy() const;
  double micro_precision() const;
  double micro_recall() const;
  double micro_f1() const;
  // Means of the per-category values over the categories with at least one
  // true or assigned document (the others have no evidence either way).
  double macro_precision() const;
  double macro_recall() const;
  double macro_f1() const;
  std::vector<CategoryMetrics> per_category() const;
  // confusion()[true][assigned] counts, for documents with exactly one true
  // and at most one assigned category; column num_categories = "none".
  const std::vector<std::vector<uint64_t>>& confusion() const { return confusion_; }
  const std::vector<std::string>& categories() const { return categories_; }

 private:
  std::vector<std::string> categories_;
  uint64_t documents_ = 0, exact_matches_ = 0;
  std::vector<uint64_t> tp_, fp_, fn_;
  std::vector<std::vector<uint64_t>> confusion_;
};

// True for the methods whose scores are posterior probabilities summing to 1
// over the categories (the Naive Bayes family); kNN's votes and Rocchio's
// cosines are not, so log-loss is undefined for them.
bool gives_probabilities(Method method);

// Log-loss (cross-entropy): the mean over documents of -ln p(true category),
// p clipped to at least kMinProbability so one confident mistake costs a
// finite 34.5 instead of infinity. Callers add only documents with exactly
// one true category that the model knows (a multi-label document has no
// single right answer); a document for which the method gives no
// distribution (every score 0: no term known to the model) is counted apart
// in no_evidence() and left out of the mean.
class LogLoss {
 public:
  static constexpr double kMinProbability = 1e-15;
  // `scores`: the method's probability of every model category; `truth`:
  // the index of the document's true category among them.
  void add(const std::vector<double>& scores, uint32_t truth);
  uint64_t documents() const { return documents_; }
  uint64_t no_evidence() const { return no_evidence_; }
  // The mean; 0 when no document was added (check documents()).
  double value() const;

 private:
  double total_ = 0;
  uint64_t documents_ = 0, no_evidence_ = 0;
};

// Reliability of probabilities: each (document, category) pair is one
// prediction `predicted` that the document is in the category, `observed`
// whether it is. Predictions are binned by value into equal-width bins over
// [0, 1]; a calibrated method's mean prediction in a bin is close to the
// share of its pairs that are observed.
class Reliability {
 public:
  explicit Reliability(size_t bins = 10);
  void add(double predicted, bool observed);
  struct Bin {
    double lower = 0, upper = 0;
    uint64_t pairs = 0;
    double mean_predicted = 0;  // 0 for an empty bin
    double observed = 0;        // share of the bin's pairs observed; 0 for an empty bin
  };
  std::vector<Bin> bins() const;
  uint64_t pairs() const { return pairs_; }
  // Expected calibration error: the pair-weighted mean of
  // |mean_predicted - observed| over the bins; 0 without pairs.
  double expected_calibration_error() const;

 private:
  std::vector<uint64_t> count_, positive_;
  std::vector<double> predicted_sum_;
  uint64_t pairs_ = 0;
};

// A method's probabilities judged three ways. Pooled: every (document,
// category) pair, as Reliability; with many categories most pairs are
// near-certain negatives, which flatter it. Top label: one prediction per
// document, its best score against whether the best category is one of its
// labels (what a one-of decision claims). Per category: each category's
// pairs on their own (what an any-of decision claims), the calibration
// errors averaged over the categories with pairs.
class CalibrationReport {
 public:
  explicit CalibrationReport(size_t num_categories, size_t bins = 10);
  // One document: the scores of every category (index = category) and its
  // labels. The best is the first of equal scores, as ranking keeps them.
  void add(const std::vector<double>& scores, const std::vector<uint32_t>& truth);
  const Reliability& pooled() const { return pooled_; }
  const Reliability& top_label() const { return top_label_; }
  // Category c's own pairs (c < categories()).
  const Reliability& category(size_t c) const { return per_category_.at(c); }
  size_t categories() const { return per_category_.size(); }
  // Mean of the categories' expected calibration errors; 0 without pairs.
  double per_category_expected_calibration_error() const;
  size_t categories_with_pairs() const;

 private:
  Reliability pooled_, top_label_;
  std::vector<Reliability> per_category_;
};

}  // namespace autocat::internal
