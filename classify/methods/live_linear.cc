// Live svm and logreg: dual variables for the learned documents, optimized
// by warm-started coordinate descent, and a sparse correction of the trained
// weights published copy-on-write.
#include "classify/methods/live_linear.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"

namespace autocat::internal {
namespace {

// The trained scores plus the correction's, mapped to probabilities as the
// trained classifier maps its own.
class LiveLinearClassifier : public Classifier {
 public:
  LiveLinearClassifier(const LinearClassifier& trained, std::shared_ptr<const LinearDelta> delta,
                       const std::vector<float>& idf)
      : trained_(trained), delta_(std::move(delta)), idf_(idf) {}
  Method method() const override { return trained_.method(); }
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override {
    trained_.decision_values(doc, scores);
    if (delta_) {
      const size_t num_categories = scores->size();
      std::vector<double> sum(num_categories, 0.0);
      double norm2 = 0.0;
      for (const TermCount& tc : doc.terms) {
        if (tc.term >= idf_.size() || tc.count == 0 || !(idf_[tc.term] > 0.0f)) continue;
        const double x = sublinear_tf(tc.count) * idf_[tc.term];
        norm2 += x * x;
        const auto it = delta_->row.find(tc.term);
        if (it == delta_->row.end()) continue;
        const double* const row = delta_->weights.data() + size_t(it->second) * num_categories;
        for (size_t c = 0; c < num_categories; ++c) sum[c] += x * row[c];
      }
      const double inverse_norm = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
      for (size_t c = 0; c < num_categories; ++c) {
        (*scores)[c] += sum[c] * inverse_norm;
      }
    }
    linear_probabilities(trained_.model(), options.decision.value_or(trained_.decision()), scores);
  }

 private:
  const LinearClassifier& trained_;
  std::shared_ptr<const LinearDelta> delta_;  // null: the trained scores
  const std::vector<float>& idf_;
};

}  // namespace

LiveLinear::LiveLinear(Method method, const LinearModel& model, const std::vector<float>& idf,
                       Decision decision)
    : loss_(method == Method::kLogreg ? LinearLoss::kLogistic : LinearLoss::kSquaredHinge),
      c_(model.c),
      num_categories_(model.num_categories),
      idf_(idf),
      trained_(std::make_unique<LinearClassifier>(method, model, idf, decision)) {
  if (!model.trained() || !(c_ > 0)) {
    throw InvalidArgumentError("live " + method_name(method) + ": the model is not trained");
  }
}

LiveLinear::~LiveLinear() = default;

LiveLinear::Row LiveLinear::make_row(const DocumentTerms& doc,
                                     const std::vector<uint32_t>& categories) const {
  Row row;
  double norm2 = 0.0;
  for (const TermCount& tc : doc.terms) {
    if (tc.term >= idf_.size() || tc.count == 0 || !(idf_[tc.term] > 0.0f)) continue;
    const double x = sublinear_tf(tc.count) * idf_[tc.term];
    row.terms.push_back(tc.term);
    row.values.push_back(x);
    norm2 += x * x;
  }
  const double inverse_norm = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
  row.norm2 = 0.0;  // no bias feature: the bias stays as trained
  for (double& x : row.values) {
    x *= inverse_norm;
    row.norm2 += x * x;
  }
  row.y.assign(num_categories_, -1);
  for (uint32_t c : categories) row.y.at(c) = 1;
  row.alpha.assign(num_categories_, 0.0);
  trained_->decision_values(doc, &row.trained_f);
  return row;
}

void LiveLinear::add(const Row& row, const std::vector<double>& scale) {
  const size_t k = num_categories_;
  for (size_t i = 0; i < row.terms.size(); ++i) {
    const auto [it, added] = delta_.row.try_emplace(row.terms[i], uint32_t(delta_.row.size()));
    if (added) delta_.weights.resize(delta_.weights.size() + k, 0.0);
    double* const weights = delta_.weights.data() + size_t(it->second) * k;
    for (size_t c = 0; c < k; ++c) weights[c] += scale[c] * row.values[i];
  }
}

void LiveLinear::decision_values(const Row& row, std::vector<double>* f) const {
  const size_t k = num_categories_;
  f->assign(row.trained_f.begin(), row.trained_f.end());
  for (size_t i = 0; i < row.terms.size(); ++i) {
    const auto it = delta_.row.find(row.terms[i]);
    if (it == delta_.row.end()) continue;
    const double* const weights = delta_.weights.data() + size_t(it->second) * k;
    for (size_t c = 0; c < k; ++c) (*f)[c] += weights[c] * row.values[i];
  }
}

double LiveLinear::step(Row* row) {
  std::vector<double> f;
  decision_values(*row, &f);
  std::vector<double> scale(num_categories_, 0.0);
  double pg_max = 0.0;
  const double a = row->norm2;
  for (size_t cat = 0; cat < num_categories_; ++cat) {
    double& alpha = row->alpha[cat];
    const double y = row->y[cat];
    double next = alpha;
    if (loss_ == LinearLoss::kSquaredHinge) {
      // Hsieh et al. 2008: D = 1/(2C), no upper bound.
      const double diag = 0.5 / c_;
      const double g = y * f[cat] - 1.0 + diag * alpha;
      const double pg = alpha == 0.0 ? std::min(g, 0.0) : g;
      pg_max = std::max(pg_max, std::fabs(pg));
      if (std::fabs(pg) > 1e-12) next = std::max(alpha - g / (a + diag), 0.0);
    } else {
      const LogisticCoordinate coordinate = logistic_dual_coordinate(
          a, y * f[cat], c_, alpha, /*inner_eps=*/1e-8, /*max_newton=*/100);
      pg_max = std::max(pg_max, coordinate.gradient_at_old);
      next = coordinate.alpha;
    }
    scale[cat] = (next - alpha) * y;
    alpha = next;
  }
  add(*row, scale);
  return pg_max;
}

void LiveLinear::learn(const std::string& id, const DocumentTerms& doc,
                       const std::vector<uint32_t>& categories) {
  Row row = make_row(doc, categories);
  if (loss_ == LinearLoss::kLogistic) {
    // Strictly inside (0, C), where the entropy terms are finite, as
    // solve_binary starts.
    const double start = std::min(0.001 * c_, 1e-8);
    std::vector<double> scale(num_categories_);
    for (size_t c = 0; c < num_categories_; ++c) {
      row.alpha[c] = start;
      scale[c] = start * row.y[c];
    }
    add(row, scale);
  }
  learned_.insert_or_assign(id, std::move(row));
  order_.push_back(id);
  pending_.push_back(id);
  changed_ = true;
}

bool LiveLinear::forget_learned(const std::string& id) {
  const auto it = learned_.find(id);
  if (it == learned_.end()) return false;
  std::vector<double> scale(num_categories_);
  for (size_t c = 0; c < num_categories_; ++c) scale[c] = -it->second.alpha[c] * it->second.y[c];
  add(it->second, scale);
  learned_.erase(it);
  order_.erase(std::find(order_.begin(), order_.end(), id));
  changed_ = true;
  if (learned_.empty() && !forgot_trained_) {
    // Nothing changed any more: exactly the trained weights, not their
    // rounding residue.
    delta_.row.clear();
    delta_.weights.clear();
  }
  return true;
}

void LiveLinear::forget_trained(const DocumentTerms& doc, const std::vector<uint32_t>& categories) {
  const Row row = make_row(doc, categories);
  std::vector<double> scale(num_categories_);
  for (size_t c = 0; c < num_categories_; ++c) {
    const double margin = row.y[c] * row.trained_f[c];
    const double alpha = loss_ == LinearLoss::kSquaredHinge ? 2.0 * c_ * std::max(0.0, 1.0 - margin)
                                                            : c_ * sigmoid(-margin);
    scale[c] = -alpha * row.y[c];
  }
  add(row, scale);
  forgot_trained_ = true;
  changed_ = true;
}

std::unique_ptr<Classifier> LiveLinear::fit() {
  if (changed_) {
    // Passes over every learned document in a fixed shuffled order (a
    // sorted stream of learns, one category after another, would drag the
    // biases along with it), until their dual variables are optimal to
    // kTolerance: the optimum with the trained variables held is unique,
    // so it does not depend on when the fits came.
    // The documents learned since the last fit first, alone: after a few
    // learns the full passes then find the rest optimal at once.
    std::vector<Row*> rows;
    for (const std::string& id : pending_) {
      if (const auto it = learned_.find(id); it != learned_.end()) rows.push_back(&it->second);
    }
    if (rows.size() < order_.size()) {
      for (int pass = 0; pass < kMaxPasses && !rows.empty(); ++pass) {
        double pg_max = 0.0;
        for (Row* row : rows) pg_max = std::max(pg_max, step(row));
        if (pg_max < kTolerance) break;
      }
    }
    pending_.clear();
    rows.clear();
    rows.reserve(order_.size());
    for (const std::string& id : order_) rows.push_back(&learned_.at(id));
    std::mt19937 generator(1);
    for (int pass = 0; pass < kMaxPasses && !rows.empty(); ++pass) {
      for (size_t i = rows.size(); i > 1; --i) std::swap(rows[i - 1], rows[generator() % i]);
      double pg_max = 0.0;
      for (Row* row : rows) pg_max = std::max(pg_max, step(row));
      if (pg_max < kTolerance) break;
    }
    changed_ = false;
  }
  if (learned_.empty() && !forgot_trained_) {
    published_.reset();
  } else {
    published_ = std::make_shared<const LinearDelta>(delta_);
  }
  return std::make_unique<LiveLinearClassifier>(*trained_, published_, idf_);
}

}  // namespace autocat::internal
