// Evaluation counts per category (true positives, false positives, false
// negatives) and the metrics derived from them (IIR 13.6). A ratio whose
// denominator is 0 (nothing assigned, nothing true, no document) is 0.
#include "classify/metrics/evaluation.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "autocat/error.h"
#include "classify/base/method_traits.h"

namespace autocat::internal {
namespace {

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0.0;
}

// F1 = 2PR / (P + R) = 2 tp / (2 tp + fp + fn).
double f1(uint64_t tp, uint64_t fp, uint64_t fn) {
  return ratio(2.0 * static_cast<double>(tp),
               2.0 * static_cast<double>(tp) + static_cast<double>(fp) + static_cast<double>(fn));
}

uint64_t sum(const std::vector<uint64_t>& counts) {
  uint64_t total = 0;
  for (uint64_t count : counts) total += count;
  return total;
}

}  // namespace

Evaluation::Evaluation(std::vector<std::string> categories)
    : categories_(std::move(categories)),
      tp_(categories_.size(), 0),
      fp_(categories_.size(), 0),
      fn_(categories_.size(), 0),
      confusion_(categories_.size(), std::vector<uint64_t>(categories_.size() + 1, 0)) {}

void Evaluation::add(const std::vector<uint32_t>& truth, const std::vector<uint32_t>& assigned) {
  // Sets: order and repetitions do not matter.
  std::vector<uint32_t> true_set = truth;
  std::vector<uint32_t> assigned_set = assigned;
  for (std::vector<uint32_t>* set : {&true_set, &assigned_set}) {
    std::sort(set->begin(), set->end());
    set->erase(std::unique(set->begin(), set->end()), set->end());
    if (!set->empty() && set->back() >= categories_.size()) {
      throw InvalidArgumentError("evaluation: category index " + std::to_string(set->back()) +
                                 " out of range (" + std::to_string(categories_.size()) +
                                 " categories)");
    }
  }
  ++documents_;
  if (true_set == assigned_set) ++exact_matches_;
  // Merge the two sorted sets.
  auto t = true_set.begin();
  auto a = assigned_set.begin();
  while (t != true_set.end() || a != assigned_set.end()) {
    if (a == assigned_set.end() || (t != true_set.end() && *t < *a)) {
      ++fn_[*t++];
    } else if (t == true_set.end() || *a < *t) {
      ++fp_[*a++];
    } else {
      ++tp_[*t];
      ++t;
      ++a;
    }
  }
  if (true_set.size() == 1 && assigned_set.size() <= 1) {
    const size_t column = assigned_set.empty() ? categories_.size() : assigned_set.front();
    ++confusion_[true_set.front()][column];
  }
}

double Evaluation::accuracy() const {
  return ratio(static_cast<double>(exact_matches_), static_cast<double>(documents_));
}

double Evaluation::micro_precision() const {
  const double tp = static_cast<double>(sum(tp_));
  return ratio(tp, tp + static_cast<double>(sum(fp_)));
}

double Evaluation::micro_recall() const {
  const double tp = static_cast<double>(sum(tp_));
  return ratio(tp, tp + static_cast<double>(sum(fn_)));
}

double Evaluation::micro_f1() const { return f1(sum(tp_), sum(fp_), sum(fn_)); }

double Evaluation::macro_precision() const {
  double total = 0;
  size_t counted = 0;
  for (const CategoryMetrics& metrics : per_category()) {
    if (metrics.true_positives + metrics.false_positives + metrics.false_negatives == 0) continue;
    total += metrics.precision;
    ++counted;
  }
  return ratio(total, static_cast<double>(counted));
}

double Evaluation::macro_recall() const {
  double total = 0;
  size_t counted = 0;
  for (const CategoryMetrics& metrics : per_category()) {
    if (metrics.true_positives + metrics.false_positives + metrics.false_negatives == 0) continue;
    total += metrics.recall;
    ++counted;
  }
  return ratio(total, static_cast<double>(counted));
}

double Evaluation::macro_f1() const {
  double total = 0;
  size_t counted = 0;
  for (size_t c = 0; c < categories_.size(); ++c) {
    if (tp_[c] + fp_[c] + fn_[c] == 0) continue;  // never true, never assigned
    total += f1(tp_[c], fp_[c], fn_[c]);
    ++counted;
  }
  return ratio(total, static_cast<double>(counted));
}

std::vector<CategoryMetrics> Evaluation::per_category() const {
  std::vector<CategoryMetrics> metrics(categories_.size());
  for (size_t c = 0; c < categories_.size(); ++c) {
    CategoryMetrics& m = metrics[c];
    m.name = categories_[c];
    m.true_positives = tp_[c];
    m.false_positives = fp_[c];
    m.false_negatives = fn_[c];
    m.support = tp_[c] + fn_[c];
    const double tp = static_cast<double>(tp_[c]);
    m.precision = ratio(tp, tp + static_cast<double>(fp_[c]));
    m.recall = ratio(tp, tp + static_cast<double>(fn_[c]));
    m.f1 = f1(tp_[c], fp_[c], fn_[c]);
  }
  return metrics;
}

bool gives_probabilities(Method method) {
  const MethodTraits* traits = find_method_traits(method);
  return traits != nullptr && traits->gives_probabilities;
}

void LogLoss::add(const std::vector<double>& scores, uint32_t truth) {
  if (truth >= scores.size()) {
    throw InvalidArgumentError("log-loss: category index " + std::to_string(truth) +
                               " out of range (" + std::to_string(scores.size()) + " scores)");
  }
  if (std::all_of(scores.begin(), scores.end(), [](double score) { return score == 0.0; })) {
    ++no_evidence_;
    return;
  }
  total_ -= std::log(std::max(scores[truth], kMinProbability));
  ++documents_;
}

double LogLoss::value() const { return ratio(total_, static_cast<double>(documents_)); }

Reliability::Reliability(size_t bins)
    : count_(std::max<size_t>(bins, 1), 0),
      positive_(count_.size(), 0),
      predicted_sum_(count_.size(), 0.0) {}

void Reliability::add(double predicted, bool observed) {
  if (std::isnan(predicted)) return;
  const double p = std::clamp(predicted, 0.0, 1.0);
  const size_t bins = count_.size();
  const size_t bin = std::min(bins - 1, static_cast<size_t>(p * static_cast<double>(bins)));
  ++count_[bin];
  positive_[bin] += observed ? 1 : 0;
  predicted_sum_[bin] += p;
  ++pairs_;
}

std::vector<Reliability::Bin> Reliability::bins() const {
  std::vector<Bin> result(count_.size());
  // b / bins rather than b x (1 / bins): 6 / 10 is the double nearest 0.6,
  // 6 x 0.1 is not (0.6000000000000001 in --json).
  const auto bins = static_cast<double>(count_.size());
  for (size_t b = 0; b < count_.size(); ++b) {
    Bin& bin = result[b];
    bin.lower = static_cast<double>(b) / bins;
    bin.upper = static_cast<double>(b + 1) / bins;
    bin.pairs = count_[b];
    if (count_[b] == 0) continue;
    bin.mean_predicted = predicted_sum_[b] / static_cast<double>(count_[b]);
    bin.observed = static_cast<double>(positive_[b]) / static_cast<double>(count_[b]);
  }
  return result;
}

double Reliability::expected_calibration_error() const {
  if (pairs_ == 0) return 0.0;
  double total = 0.0;
  for (const Bin& bin : bins()) {
    total += static_cast<double>(bin.pairs) * std::fabs(bin.mean_predicted - bin.observed);
  }
  return total / static_cast<double>(pairs_);
}

CalibrationReport::CalibrationReport(size_t num_categories, size_t bins)
    : pooled_(bins), top_label_(bins), per_category_(num_categories, Reliability(bins)) {}

void CalibrationReport::add(const std::vector<double>& scores, const std::vector<uint32_t>& truth) {
  if (scores.empty()) return;
  const auto labelled = [&](uint32_t c) {
    return std::find(truth.begin(), truth.end(), c) != truth.end();
  };
  uint32_t best = 0;
  for (uint32_t c = 0; c < scores.size(); ++c) {
    const bool observed = labelled(c);
    pooled_.add(scores[c], observed);
    if (c < per_category_.size()) per_category_[c].add(scores[c], observed);
    if (scores[c] > scores[best]) best = c;
  }
  top_label_.add(scores[best], labelled(best));
}

double CalibrationReport::per_category_expected_calibration_error() const {
  double total = 0.0;
  size_t measured = 0;
  for (const Reliability& category : per_category_) {
    if (category.pairs() == 0) continue;
    total += category.expected_calibration_error();
    ++measured;
  }
  return measured == 0 ? 0.0 : total / static_cast<double>(measured);
}

size_t CalibrationReport::categories_with_pairs() const {
  return static_cast<size_t>(std::count_if(per_category_.begin(), per_category_.end(),
                                           [](const Reliability& r) { return r.pairs() != 0; }));
}

}  // namespace autocat::internal
