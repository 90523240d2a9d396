#include "classify/methods/combo.h"

#include <algorithm>
#include <cmath>

#include "classify/base/method_traits.h"
#include "classify/methods/linear.h"

namespace autocat::internal {

const std::vector<Method>& combo_members() {
  static const std::vector<Method> members = [] {
    std::vector<Method> combo;
    for (const MethodTraits& traits : method_table()) {
      if (traits.combo_member) combo.push_back(traits.method);
    }
    return combo;
  }();
  return members;
}

namespace {

// Solves the small dense system a x = b (a symmetric positive definite, n x
// n, row-major) by Gaussian elimination with partial pivoting; false if
// singular.
bool solve(std::vector<double> a, std::vector<double> b, size_t n, std::vector<double>* x) {
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row) {
      if (std::fabs(a[row * n + col]) > std::fabs(a[pivot * n + col])) pivot = row;
    }
    if (!(std::fabs(a[pivot * n + col]) > 1e-300)) return false;
    if (pivot != col) {
      for (size_t k = 0; k < n; ++k) std::swap(a[col * n + k], a[pivot * n + k]);
      std::swap(b[col], b[pivot]);
    }
    for (size_t row = col + 1; row < n; ++row) {
      const double factor = a[row * n + col] / a[col * n + col];
      for (size_t k = col; k < n; ++k) a[row * n + k] -= factor * a[col * n + k];
      b[row] -= factor * b[col];
    }
  }
  x->assign(n, 0.0);
  for (size_t i = n; i-- > 0;) {
    double sum = b[i];
    for (size_t k = i + 1; k < n; ++k) sum -= a[i * n + k] * (*x)[k];
    (*x)[i] = sum / a[i * n + i];
  }
  return true;
}

double log1p_exp(double z) {
  return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
}

// Logistic regression by Newton's method with backtracking, minimizing
// sum_i log(1 + exp(-y_i w.x_i)) + shrink/2 |w - prior|^2. Rows are given
// as (row features, label) through `rows`: rows(i, x) fills x (n features,
// the last one the constant 1) and returns the label.
template <class Rows>
std::vector<double> fit_logistic(size_t num_rows, size_t n, const Rows& rows,
                                 const std::vector<double>& prior, double shrink) {
  std::vector<double> w = prior, x(n), grad(n), hessian(n * n), step;
  const auto objective = [&](const std::vector<double>& v) {
    double value = 0;
    for (size_t i = 0; i < num_rows; ++i) {
      const bool label = rows(i, &x);
      double z = 0;
      for (size_t k = 0; k < n; ++k) z += v[k] * x[k];
      value += log1p_exp(label ? -z : z);
    }
    for (size_t k = 0; k < n; ++k) value += 0.5 * shrink * (v[k] - prior[k]) * (v[k] - prior[k]);
    return value;
  };
  double value = objective(w);
  for (int iteration = 0; iteration < 30; ++iteration) {
    std::fill(grad.begin(), grad.end(), 0.0);
    std::fill(hessian.begin(), hessian.end(), 0.0);
    for (size_t i = 0; i < num_rows; ++i) {
      const bool label = rows(i, &x);
      double z = 0;
      for (size_t k = 0; k < n; ++k) z += w[k] * x[k];
      const double p = sigmoid(z);
      const double residual = p - (label ? 1.0 : 0.0), curvature = std::max(p * (1 - p), 1e-12);
      for (size_t k = 0; k < n; ++k) {
        grad[k] += residual * x[k];
        for (size_t l = 0; l <= k; ++l) hessian[k * n + l] += curvature * x[k] * x[l];
      }
    }
    for (size_t k = 0; k < n; ++k) {
      grad[k] += shrink * (w[k] - prior[k]);
      hessian[k * n + k] += shrink + 1e-9;
      for (size_t l = 0; l < k; ++l) hessian[l * n + k] = hessian[k * n + l];
    }
    std::vector<double> minus_grad(n);
    for (size_t k = 0; k < n; ++k) minus_grad[k] = -grad[k];
    if (!solve(hessian, minus_grad, n, &step)) break;
    double decrease = 0;
    for (size_t k = 0; k < n; ++k) decrease += grad[k] * step[k];
    if (-decrease < 1e-9 * (1 + std::fabs(value))) break;
    bool improved = false;
    for (double t = 1.0; t >= 1e-6; t /= 2) {
      std::vector<double> next(n);
      for (size_t k = 0; k < n; ++k) next[k] = w[k] + t * step[k];
      const double next_value = objective(next);
      if (next_value <= value + 1e-4 * t * decrease) {
        w = std::move(next);
        value = next_value;
        improved = true;
        break;
      }
    }
    if (!improved) break;
  }
  return w;
}

}  // namespace

ComboModel fit_combo(const std::vector<Method>& members,
                     const std::vector<std::vector<float>>& member_logits,
                     const std::vector<uint8_t>& use, const std::vector<uint8_t>& positive,
                     uint32_t num_categories) {
  ComboModel model;
  model.num_categories = num_categories;
  for (Method member : members) model.members.push_back(static_cast<int32_t>(member));
  const size_t n = model.stride();
  std::vector<uint32_t> docs;
  for (uint32_t d = 0; d < use.size(); ++d) {
    if (use[d]) docs.push_back(d);
  }
  const auto features = [&](uint32_t d, uint32_t c, std::vector<double>* x) {
    const size_t cell = size_t(d) * num_categories + c;
    for (size_t m = 0; m < members.size(); ++m) (*x)[m] = member_logits[m][cell];
    (*x)[members.size()] = 1.0;
    return positive[cell] != 0;
  };
  // Pooled: every (document, category) pair, weakly regularized; start from
  // the members' mean (each member's log-odds already calibrated).
  std::vector<double> start(n, 1.0 / double(members.size()));
  start.back() = 0.0;
  const std::vector<double> pooled = fit_logistic(
      docs.size() * num_categories, n,
      [&](size_t i, std::vector<double>* x) {
        return features(docs[i / num_categories], static_cast<uint32_t>(i % num_categories), x);
      },
      start, 1.0);
  model.weights.resize(size_t(num_categories) * n);
  for (uint32_t c = 0; c < num_categories; ++c) {
    const std::vector<double> own = fit_logistic(
        docs.size(), n, [&](size_t i, std::vector<double>* x) { return features(docs[i], c, x); },
        pooled, kComboShrink);
    for (size_t k = 0; k < n; ++k) model.weights[c * n + k] = static_cast<float>(own[k]);
  }
  return model;
}

void combo_probabilities(const ComboModel& model, Decision decision,
                         const std::vector<std::vector<double>>& logits,
                         std::vector<double>* scores) {
  const size_t n = model.stride(), members = model.members.size();
  double total = 0.0;
  for (uint32_t c = 0; c < model.num_categories; ++c) {
    const float* w = &model.weights[c * n];
    double z = w[members];
    for (size_t m = 0; m < members; ++m) z += w[m] * logits[m][c];
    (*scores)[c] = sigmoid(z);
    total += (*scores)[c];
  }
  if (decision == Decision::kOneOf && total > 0.0) {
    for (double& score : *scores) score /= total;
  }
}

ComboClassifier::ComboClassifier(const ComboModel& model,
                                 const std::vector<Calibration>& calibration, Decision decision,
                                 MemberScores member_scores)
    : model_(model),
      calibration_(calibration),
      decision_(decision),
      member_scores_(std::move(member_scores)) {}

void ComboClassifier::score(const DocumentTerms& doc, const ClassifyOptions& options,
                            std::vector<double>* scores) const {
  ClassifyOptions member_options = options;
  std::vector<double> member(scores->size());
  if (model_.empty()) {
    static const std::vector<Method> fallback = {Method::kKnn, Method::kRocchio,
                                                 Method::kNaiveBayes};
    std::fill(scores->begin(), scores->end(), 0.0);
    for (Method method : fallback) {
      member_options.method = method;
      member_scores_(method, doc, member_options, &member);
      for (size_t c = 0; c < scores->size(); ++c) (*scores)[c] += member[c] / fallback.size();
    }
    return;
  }
  thread_local std::vector<std::vector<double>> logits;
  logits.resize(model_.members.size());
  for (size_t m = 0; m < model_.members.size(); ++m) {
    const auto method = static_cast<Method>(model_.members[m]);
    member_options.method = method;
    member_scores_(method, doc, member_options, &member);
    const Calibration& calibration = calibration_[static_cast<size_t>(method)];
    logits[m].resize(member.size());
    for (uint32_t c = 0; c < member.size(); ++c)
      logits[m][c] = calibrated_logit(calibration, c, member[c]);
  }
  combo_probabilities(model_, options.decision.value_or(decision_), logits, scores);
}

}  // namespace autocat::internal
