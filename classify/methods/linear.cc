// Linear SVM and logistic regression by dual coordinate descent: each step
// optimizes one document's dual variable exactly (squared hinge) or by a few
// Newton steps (logistic), keeping w = sum_i y_i alpha_i x_i up to date, so
// an epoch costs one pass over the non-zeros.
#include "classify/methods/linear.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/io/filenames.h"
#include "classify/io/spill_file.h"

namespace autocat::internal {

namespace {

constexpr int kMaxEpochs = 1000;
constexpr double kBiasValue = 1.0;

// The compact form's value of entry k in a row of norm `norm`: the same
// operations, on the same operands, as make_linear_problem's. kEscapes:
// whether the problem has escaped entries (most have none, and skip the
// test).
template <bool kEscapes>
inline float compact_value(const LinearProblem& p, const double* code_tf, const float* feature_idf,
                           uint64_t k, double norm) {
  const uint32_t entry = p.packed[k];
  const double tf = kEscapes ? p.tf_at(k) : code_tf[entry & 0xff];
  return static_cast<float>(tf * feature_idf[entry >> 8] / norm);
}

template <bool kEscapes>
double compact_dot(const LinearProblem& p, uint32_t row, const std::vector<double>& w) {
  const double* weight = w.data();
  uint64_t k = p.row_start[row];
  const uint64_t end = p.row_start[row + 1];
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const uint32_t* entry = p.packed.data();
  const double* tf = p.code_tf.data();
  const float* idf = p.feature_idf.data();
  const double norm = p.row_norm[row];
  for (; k + 4 <= end; k += 4) {
    s0 += weight[entry[k] >> 8] * compact_value<kEscapes>(p, tf, idf, k, norm);
    s1 += weight[entry[k + 1] >> 8] * compact_value<kEscapes>(p, tf, idf, k + 1, norm);
    s2 += weight[entry[k + 2] >> 8] * compact_value<kEscapes>(p, tf, idf, k + 2, norm);
    s3 += weight[entry[k + 3] >> 8] * compact_value<kEscapes>(p, tf, idf, k + 3, norm);
  }
  for (; k < end; ++k) s0 += weight[entry[k] >> 8] * compact_value<kEscapes>(p, tf, idf, k, norm);
  return w[p.num_features] * kBiasValue + ((s0 + s1) + (s2 + s3));
}

template <bool kEscapes>
void compact_add_row(const LinearProblem& p, uint32_t row, double scale, double* weight) {
  const uint32_t* entry = p.packed.data();
  const double* tf = p.code_tf.data();
  const float* idf = p.feature_idf.data();
  const double norm = p.row_norm[row];
  for (uint64_t k = p.row_start[row]; k < p.row_start[row + 1]; ++k) {
    weight[entry[k] >> 8] += scale * compact_value<kEscapes>(p, tf, idf, k, norm);
  }
}

double dot(const LinearProblem& p, uint32_t row, const std::vector<double>& w) {
  if (p.compact) {
    return p.escaped_entry.empty() ? compact_dot<false>(p, row, w) : compact_dot<true>(p, row, w);
  }
  const double* weight = w.data();
  uint64_t k = p.row_start[row];
  const uint64_t end = p.row_start[row + 1];
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const uint32_t* column = p.column.data();
  const float* value = p.value.data();
  for (; k + 4 <= end; k += 4) {
    s0 += weight[column[k]] * value[k];
    s1 += weight[column[k + 1]] * value[k + 1];
    s2 += weight[column[k + 2]] * value[k + 2];
    s3 += weight[column[k + 3]] * value[k + 3];
  }
  for (; k < end; ++k) s0 += weight[column[k]] * value[k];
  return w[p.num_features] * kBiasValue + ((s0 + s1) + (s2 + s3));
}

void add_row(const LinearProblem& p, uint32_t row, double scale, std::vector<double>* w) {
  (*w)[p.num_features] += scale * kBiasValue;
  double* weight = w->data();
  if (p.compact) {
    if (p.escaped_entry.empty()) return compact_add_row<false>(p, row, scale, weight);
    return compact_add_row<true>(p, row, scale, weight);
  }
  for (uint64_t k = p.row_start[row]; k < p.row_start[row + 1]; ++k) {
    weight[p.column[k]] += scale * p.value[k];
  }
}

double squared_norm(const LinearProblem& p, uint32_t row) {
  if (!p.row_squared_norm.empty()) return p.row_squared_norm[row];
  double sum = kBiasValue * kBiasValue;
  for (uint64_t k = p.row_start[row]; k < p.row_start[row + 1]; ++k) {
    const float value = p.value_at(row, k);
    sum += double(value) * value;
  }
  return sum;
}

void fill_row_squared_norms(LinearProblem* p) {
  std::vector<double> norms(p->num_rows());
  for (uint32_t row = 0; row < norms.size(); ++row) norms[row] = squared_norm(*p, row);
  p->row_squared_norm = std::move(norms);
}

// A deterministic shuffle (std::shuffle's order is left to the library).
void shuffle(std::vector<uint32_t>* items, size_t count, std::mt19937* generator) {
  for (size_t i = count; i > 1; --i) {
    const size_t j = (*generator)() % i;
    std::swap((*items)[i - 1], (*items)[j]);
  }
}

// Hsieh et al. 2008, Algorithm 3 (with shrinking), for the squared hinge
// loss: D = 1/(2C) on the diagonal, no upper bound on alpha.
void solve_squared_hinge(const LinearProblem& p, const std::vector<int8_t>& y, double c, double eps,
                         BinarySolution* s) {
  const uint32_t n = p.num_rows();
  const double diag = 0.5 / c;
  std::vector<double> qd(n);
  for (uint32_t i = 0; i < n; ++i) qd[i] = squared_norm(p, i) + diag;
  std::vector<uint32_t> index(n);
  std::iota(index.begin(), index.end(), 0);
  std::mt19937 generator(1);
  size_t active = n;
  // No upper bound on alpha: only variables at 0 can be shrunk.
  double pg_max_old = std::numeric_limits<double>::infinity();
  for (s->epochs = 0; s->epochs < kMaxEpochs; ++s->epochs) {
    shuffle(&index, active, &generator);
    double pg_max = -std::numeric_limits<double>::infinity(), pg_min = -pg_max;
    for (size_t k = 0; k < active; ++k) {
      const uint32_t i = index[k];
      double& alpha = s->alpha[i];
      const double g = y[i] * dot(p, i, s->w) - 1.0 + diag * alpha;
      double pg = g;
      if (alpha == 0.0) {
        if (g > pg_max_old) {  // at its bound and likely to stay there: shrink
          --active;
          std::swap(index[k], index[active]);
          --k;
          continue;
        }
        pg = std::min(g, 0.0);
      }
      pg_max = std::max(pg_max, pg);
      pg_min = std::min(pg_min, pg);
      if (std::fabs(pg) > 1e-12) {
        const double old = alpha;
        alpha = std::max(alpha - g / qd[i], 0.0);
        add_row(p, i, (alpha - old) * y[i], &s->w);
      }
    }
    if (pg_max - pg_min <= eps) {
      if (active == n) break;
      // Converged on the active set: check every variable once more.
      active = n;
      pg_max_old = std::numeric_limits<double>::infinity();
      continue;
    }
    pg_max_old = pg_max <= 0 ? std::numeric_limits<double>::infinity() : pg_max;
  }
}

// Yu, Huang and Lin 2011: each alpha_i in (0, C) is kept with its
// complement C - alpha_i; the one-variable problem
//   min_z z log z + (C - z) log(C - z) + a/2 (z - alpha_i)^2 + b (z - alpha_i)
// is solved by Newton's method on whichever of z and C - z is the smaller
// at the optimum, which keeps the logarithms accurate.
void solve_logistic(const LinearProblem& p, const std::vector<int8_t>& y, double c, double eps,
                    BinarySolution* s) {
  const uint32_t n = p.num_rows();
  std::vector<double> qd(n);
  for (uint32_t i = 0; i < n; ++i) qd[i] = squared_norm(p, i);
  std::vector<uint32_t> index(n);
  std::iota(index.begin(), index.end(), 0);
  std::mt19937 generator(1);
  constexpr int kMaxNewton = 100;
  double inner_eps = 1e-2;
  constexpr double kMinInnerEps = 1e-8;
  for (s->epochs = 0; s->epochs < kMaxEpochs; ++s->epochs) {
    shuffle(&index, n, &generator);
    double g_max = 0;
    int newton_steps = 0;
    for (uint32_t i : index) {
      const LogisticCoordinate step = logistic_dual_coordinate(qd[i], y[i] * dot(p, i, s->w), c,
                                                               s->alpha[i], inner_eps, kMaxNewton);
      g_max = std::max(g_max, step.gradient_at_old);
      newton_steps += step.steps;
      if (step.steps > 0) {
        add_row(p, i, (step.alpha - s->alpha[i]) * y[i], &s->w);
        s->alpha[i] = step.alpha;
      }
    }
    if (g_max < eps) break;
    // Few Newton steps this epoch: the coordinates are nearly optimal, so
    // solve each one more precisely.
    if (newton_steps <= static_cast<int>(n / 10))
      inner_eps = std::max(kMinInnerEps, 0.1 * inner_eps);
  }
}

}  // namespace

LogisticCoordinate logistic_dual_coordinate(double a, double margin, double c, double alpha,
                                            double inner_eps, int max_newton) {
  const double complement = c - alpha;
  // Solve for the variable that is below C/2 at the optimum.
  const bool flip = 0.5 * a * (complement - alpha) + margin < 0;
  const double sign = flip ? -1.0 : 1.0;
  const double old = flip ? complement : alpha;
  const double log_ratio_at_old = std::log(old / (c - old));
  double z = old;
  double gp = sign * margin + log_ratio_at_old;
  // Usually the smaller variable is below C/2 already; otherwise Newton
  // starts from a tenth of it (one more logarithm).
  if (c - z < 0.5 * c) {
    z *= 0.1;
    gp = a * (z - old) + sign * margin + std::log(z / (c - z));
  }
  LogisticCoordinate result;
  result.alpha = alpha;
  result.gradient_at_old = std::fabs(sign * margin + log_ratio_at_old);
  while (result.steps < max_newton && std::fabs(gp) >= inner_eps) {
    const double gpp = a + c / ((c - z) * z);
    const double next = z - gp / gpp;
    z = next <= 0 ? z * 0.1 : next;
    gp = a * (z - old) + sign * margin + std::log(z / (c - z));
    ++result.steps;
  }
  if (result.steps > 0) result.alpha = flip ? c - z : z;
  return result;
}

double LinearProblem::escaped_tf_at(uint64_t k) const {
  const auto it = std::lower_bound(escaped_entry.begin(), escaped_entry.end(), k);
  return escaped_tf[size_t(it - escaped_entry.begin())];
}

uint64_t LinearProblem::memory_bytes() const {
  return row_start.size() * sizeof(uint64_t) + column.size() * sizeof(uint32_t) +
         value.size() * sizeof(float) + packed.size() * sizeof(uint32_t) +
         code_tf.size() * sizeof(double) + feature_idf.size() * sizeof(float) +
         row_norm.size() * sizeof(double) + row_squared_norm.size() * sizeof(double) +
         term_of_feature.size() * sizeof(uint32_t) +
         escaped_entry.size() * (sizeof(uint64_t) + sizeof(double));
}

LinearProblem make_linear_problem(uint32_t num_docs, const std::vector<float>& idf,
                                  const ForEachTermPostings& for_each_term_postings,
                                  LinearProblemForm form) {
  const bool allow_compact = form != LinearProblemForm::kPlain;
  LinearProblem p;
  p.num_features = static_cast<uint32_t>(idf.size());
  const uint32_t n = num_docs;
  std::vector<uint64_t> count(n, 0);
  std::vector<double> norm2(n, 0.0);
  std::vector<uint32_t> df(idf.size(), 0);
  // How often each wdf value below kWdfTable occurs, for the compact form's
  // codes; larger ones (only in odd collections) are escaped.
  constexpr uint32_t kWdfTable = uint32_t{1} << 16;
  constexpr uint64_t kMaxCompactFeatures = uint64_t{1} << 24;
  std::vector<uint64_t> wdf_count(allow_compact ? kWdfTable : 0, 0);
  for_each_term_postings([&](TermId t, const uint32_t* doc, const uint32_t* wdf, size_t postings) {
    if (!(idf[t] > 0.0f)) return;
    df[t] += static_cast<uint32_t>(postings);  // a term may come in pieces
    for (size_t k = 0; k < postings; ++k) {
      const double w = sublinear_tf(wdf[k]) * idf[t];
      ++count[doc[k]];
      norm2[doc[k]] += w * w;
    }
    if (allow_compact) {
      for (size_t k = 0; k < postings; ++k) {
        if (wdf[k] < kWdfTable) ++wdf_count[wdf[k]];
      }
    }
  });
  const uint64_t entries = std::accumulate(count.begin(), count.end(), uint64_t{0});
  // Codes for the 255 commonest wdf values, given in increasing wdf order.
  std::vector<uint8_t> code_of_wdf;
  std::vector<uint32_t> coded_wdf;
  uint64_t coded_entries = 0;
  if (allow_compact) {
    std::vector<uint32_t> seen;
    for (uint32_t wdf = 0; wdf < kWdfTable; ++wdf) {
      if (wdf_count[wdf] > 0) seen.push_back(wdf);
    }
    const size_t kept = std::min<size_t>(seen.size(), LinearProblem::kEscapeCode);
    std::stable_sort(seen.begin(), seen.end(),
                     [&](uint32_t a, uint32_t b) { return wdf_count[a] > wdf_count[b]; });
    coded_wdf.assign(seen.begin(), seen.begin() + ptrdiff_t(kept));
    std::sort(coded_wdf.begin(), coded_wdf.end());
    for (uint32_t wdf : coded_wdf) coded_entries += wdf_count[wdf];
  }
  std::vector<uint64_t>().swap(wdf_count);
  // Escapes cost 16 bytes and a search each: compact only where they are
  // rare (here one entry in 64 at most).
  const uint64_t escaped_entries = entries - coded_entries;
  const bool large = entries >= kCompactFromEntries;
  if (allow_compact && (large || form == LinearProblemForm::kCompactWhereItFits) &&
      idf.size() <= kMaxCompactFeatures && escaped_entries <= entries / 64) {
    p.compact = true;
    code_of_wdf.assign(kWdfTable, LinearProblem::kEscapeCode);
    for (uint32_t wdf : coded_wdf) {
      code_of_wdf[wdf] = static_cast<uint8_t>(p.code_tf.size());
      p.code_tf.push_back(sublinear_tf(wdf));
    }
  }
  // Features by falling df (ties by term id). A row's entries stay in term
  // order, so every dot product sums in the same order as with term ids.
  p.term_of_feature.resize(idf.size());
  std::iota(p.term_of_feature.begin(), p.term_of_feature.end(), 0u);
  std::stable_sort(p.term_of_feature.begin(), p.term_of_feature.end(),
                   [&](uint32_t a, uint32_t b) { return df[a] > df[b]; });
  std::vector<uint32_t> feature_of_term(idf.size());
  for (uint32_t f = 0; f < p.term_of_feature.size(); ++f) feature_of_term[p.term_of_feature[f]] = f;
  std::vector<uint32_t>().swap(df);
  p.row_start.assign(size_t(n) + 1, 0);
  for (uint32_t d = 0; d < n; ++d) p.row_start[d + 1] = p.row_start[d] + count[d];
  std::vector<uint64_t>().swap(count);
  std::vector<uint64_t> next(p.row_start.begin(), p.row_start.end() - 1);
  if (p.compact) {
    p.feature_idf.resize(idf.size());
    for (uint32_t f = 0; f < p.term_of_feature.size(); ++f) {
      p.feature_idf[f] = idf[p.term_of_feature[f]];
    }
    p.row_norm.resize(n);
    for (uint32_t d = 0; d < n; ++d) p.row_norm[d] = std::sqrt(norm2[d]);
    std::vector<double>().swap(norm2);
    p.packed.resize(p.row_start[n]);
    std::vector<std::pair<uint64_t, double>> escaped;
    escaped.reserve(escaped_entries);
    // Terms in id order, so each row's entries come out in term order.
    for_each_term_postings([&](TermId t, const uint32_t* doc, const uint32_t* wdf,
                               size_t postings) {
      if (!(idf[t] > 0.0f)) return;
      const uint32_t feature = feature_of_term[t] << 8;
      for (size_t k = 0; k < postings; ++k) {
        const uint64_t entry = next[doc[k]]++;
        const uint32_t code = wdf[k] < kWdfTable ? code_of_wdf[wdf[k]] : LinearProblem::kEscapeCode;
        p.packed[entry] = feature | code;
        if (code == LinearProblem::kEscapeCode) escaped.emplace_back(entry, sublinear_tf(wdf[k]));
      }
    });
    std::sort(escaped.begin(), escaped.end());
    p.escaped_entry.reserve(escaped.size());
    p.escaped_tf.reserve(escaped.size());
    for (const auto& [entry, tf] : escaped) {
      p.escaped_entry.push_back(entry);
      p.escaped_tf.push_back(tf);
    }
    fill_row_squared_norms(&p);
    return p;
  }
  p.column.resize(p.row_start[n]);
  p.value.resize(p.row_start[n]);
  // Terms in id order, so each row's columns come out sorted.
  for_each_term_postings([&](TermId t, const uint32_t* doc, const uint32_t* wdf, size_t postings) {
    if (!(idf[t] > 0.0f)) return;
    for (size_t k = 0; k < postings; ++k) {
      const uint32_t d = doc[k];
      const double w = sublinear_tf(wdf[k]) * idf[t];
      p.column[next[d]] = feature_of_term[t];
      p.value[next[d]] = static_cast<float>(w / std::sqrt(norm2[d]));
      ++next[d];
    }
  });
  fill_row_squared_norms(&p);
  return p;
}

LinearProblem make_linear_problem(const TrainingCorpus& corpus, const std::vector<float>& idf,
                                  LinearProblemForm form) {
  if (idf.size() != corpus.num_terms()) {
    throw InvalidArgumentError("linear training: " + std::to_string(idf.size()) +
                               " idf values for " + std::to_string(corpus.num_terms()) + " terms");
  }
  return make_linear_problem(
      corpus.num_docs(), idf,
      [&](const TermPostingsVisitor& visit) {
        std::vector<uint32_t> wdf;
        for (TermId t = 0; t < corpus.num_terms(); ++t) {
          const uint64_t first = corpus.postings_start[t];
          const size_t count = static_cast<size_t>(corpus.postings_start[t + 1] - first);
          wdf.resize(count);
          corpus.posting_wdf.copy_to(first, count, wdf.data());
          visit(t, corpus.posting_doc.data() + first, wdf.data(), count);
        }
      },
      form);
}

BinarySolution solve_binary(const LinearProblem& problem, const std::vector<int8_t>& y,
                            LinearLoss loss, double c, double eps,
                            const std::vector<double>& warm_alpha) {
  if (!(c > 0)) throw InvalidArgumentError("linear training: C must be > 0");
  const uint32_t n = problem.num_rows();
  BinarySolution s;
  s.w.assign(size_t(problem.num_features) + 1, 0.0);
  if (warm_alpha.size() == n) {
    s.alpha = warm_alpha;
    for (double& alpha : s.alpha) {
      alpha = loss == LinearLoss::kLogistic ? std::clamp(alpha, 1e-12 * c, c * (1 - 1e-12))
                                            : std::max(alpha, 0.0);
    }
  } else {
    // Logistic: strictly inside (0, C), where the entropy terms are finite.
    s.alpha.assign(n, loss == LinearLoss::kLogistic ? std::min(0.001 * c, 1e-8) : 0.0);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (s.alpha[i] != 0.0) add_row(problem, i, s.alpha[i] * y[i], &s.w);
  }
  if (loss == LinearLoss::kSquaredHinge) {
    solve_squared_hinge(problem, y, c, eps, &s);
  } else {
    solve_logistic(problem, y, c, eps, &s);
  }
  return s;
}

double dual_objective(const LinearProblem& problem, const std::vector<int8_t>& y, LinearLoss loss,
                      double c, const std::vector<double>& alpha) {
  std::vector<double> w(size_t(problem.num_features) + 1, 0.0);
  for (uint32_t i = 0; i < problem.num_rows(); ++i) add_row(problem, i, alpha[i] * y[i], &w);
  double value = 0.0;
  for (double x : w) value += 0.5 * x * x;  // 0.5 a'Qa = 0.5 |w|^2
  for (double a : alpha) {
    if (loss == LinearLoss::kSquaredHinge) {
      value += a * a / (4 * c) - a;
    } else {
      value += (a > 0 ? a * std::log(a) : 0.0) + (c - a > 0 ? (c - a) * std::log(c - a) : 0.0);
    }
  }
  return value;
}

namespace {

// One C's weights while its categories are fitted: blocks of consecutive
// terms, each a [category][term in block] matrix, so that the term-major
// entries can be built a block at a time, each block freed once copied. A
// matrix of every category's dense row held whole beside the entries
// needed both at once: at 10,000 categories about twice logistic
// regression's weights. With a spill directory, each category's row waits
// in a file there instead, and only the block being packed is in memory:
// at three million documents the matrix is 1 GB (20 categories, 12 M
// terms), a fifth of training's peak.
class WeightBlocks {
 public:
  WeightBlocks(uint32_t num_categories, uint32_t num_terms, const std::string& spill_dir)
      : num_categories_(num_categories),
        num_terms_(num_terms),
        // About 64 MB a block (large allocations go back to the system
        // when freed); a small model is one block.
        terms_per_block_(std::max<uint32_t>(
            1, uint32_t(std::min<uint64_t>(
                   num_terms, (uint64_t{16} << 20) / std::max<uint32_t>(1, num_categories))))) {
    if (!spill_dir.empty()) {
      spilled_ =
          std::make_unique<SpillFile>(spill_dir, kWeightsSpillFilePrefix, "the linear weights'");
      return;
    }
    allocate_blocks();
  }

  // Category `cat`'s weights: w[f] is feature f's (the problem's), in term
  // order. Categories may be set on several threads at once.
  void set_category(uint32_t cat, const LinearProblem& problem, const std::vector<double>& w) {
    if (!spilled_) {
      for (uint32_t f = 0; f < problem.num_features; ++f) {
        at(cat, problem.term_of(f)) = static_cast<float>(w[f]);
      }
      return;
    }
    std::vector<float> row(num_terms_, 0.0f);
    for (uint32_t f = 0; f < problem.num_features; ++f) {
      row[problem.term_of(f)] = static_cast<float>(w[f]);
    }
    spilled_->write_at(row_offset(cat, 0), row.data(), row.size() * sizeof(float));
  }

  // Term-major entries of the weights; the blocks are freed as they are
  // copied.
  void move_into(LinearModel* model) {
    if (spilled_) read_back();
    model->term_start.assign(size_t(num_terms_) + 1, 0);
    // Sized exactly: growing by doubling held up to twice the weights at once.
    size_t nonzero = 0;
    for (const std::vector<float>& block : blocks_) {
      nonzero +=
          size_t(std::count_if(block.begin(), block.end(), [](float w) { return w != 0.0f; }));
    }
    model->entry_category.reserve(nonzero);
    model->entry_weight.reserve(nonzero);
    for (uint32_t b = 0; b < blocks_.size(); ++b) {
      const uint32_t first = b * terms_per_block_, terms = block_terms(b);
      const std::vector<float>& block = blocks_[b];
      for (uint32_t i = 0; i < terms; ++i) {
        model->term_start[first + i] = model->entry_category.size();
        for (uint32_t cat = 0; cat < num_categories_; ++cat) {
          const float w = block[size_t(cat) * terms + i];
          if (w == 0.0f) continue;
          model->entry_category.push_back(cat);
          model->entry_weight.push_back(w);
        }
      }
      std::vector<float>().swap(blocks_[b]);
    }
    model->term_start[num_terms_] = model->entry_category.size();
  }
  // The same weights packed (LinearModel::packed_rows), the blocks freed
  // as they are packed; as entries where they do not fit packed rows.
  void pack_into(LinearModel* model) {
    // Spilled: the block being packed, read from the file when a row of
    // another block is asked for (each pass asks for them in order).
    std::vector<float> loaded;
    uint32_t loaded_block = UINT32_MAX;
    std::shared_ptr<std::vector<uint8_t>> bytes =
        pack_dense_rows(num_categories_, num_terms_, [&](uint32_t t, bool last_pass, float* row) {
          const uint32_t b = t / terms_per_block_, i = t - b * terms_per_block_;
          const uint32_t terms = block_terms(b);
          const float* block = nullptr;
          if (spilled_) {
            if (b != loaded_block) {
              read_block(b, &loaded);
              loaded_block = b;
            }
            block = loaded.data();
          } else {
            block = blocks_[b].data();
          }
          for (uint32_t cat = 0; cat < num_categories_; ++cat)
            row[cat] = block[size_t(cat) * terms + i];
          if (!spilled_ && last_pass && i + 1 == terms) std::vector<float>().swap(blocks_[b]);
        });
    if (!bytes) return move_into(model);  // the blocks are all there still
    auto rows = std::make_shared<PackedLinearRows>();
    rows->bytes = bytes->data();
    rows->size = bytes->size();
    rows->num_categories = num_categories_;
    if (rows->index()) {
      rows->owner = std::move(bytes);
      model->packed_rows = std::move(rows);
    } else {
      model->unpack_weights(*bytes);  // weights it refuses (not finite) kept as entries
    }
  }

 private:
  float& at(uint32_t category, uint32_t term) {
    const uint32_t b = term / terms_per_block_;
    return blocks_[b][size_t(category) * block_terms(b) + (term - b * terms_per_block_)];
  }
  uint32_t block_terms(uint32_t b) const {
    return std::min(terms_per_block_, num_terms_ - b * terms_per_block_);
  }
  void allocate_blocks() {
    for (uint32_t first = 0; first < num_terms_; first += terms_per_block_) {
      blocks_.emplace_back(size_t(num_categories_) * block_terms(first / terms_per_block_), 0.0f);
    }
  }
  // The file holds each category's row of every term, one after another.
  uint64_t row_offset(uint32_t category, uint32_t term) const {
    return (uint64_t(category) * num_terms_ + term) * sizeof(float);
  }
  // Block b's matrix from the file.
  void read_block(uint32_t b, std::vector<float>* block) const {
    const uint32_t first = b * terms_per_block_, terms = block_terms(b);
    block->resize(size_t(num_categories_) * terms);
    for (uint32_t cat = 0; cat < num_categories_; ++cat) {
      spilled_->read_at(row_offset(cat, first), block->data() + size_t(cat) * terms,
                        size_t(terms) * sizeof(float));
    }
  }
  // Every block in memory again, the file dropped.
  void read_back() {
    allocate_blocks();
    for (uint32_t b = 0; b < blocks_.size(); ++b) read_block(b, &blocks_[b]);
    spilled_.reset();
  }

  uint32_t num_categories_, num_terms_, terms_per_block_;
  std::vector<std::vector<float>> blocks_;
  std::unique_ptr<SpillFile> spilled_;
};

}  // namespace

void for_each_linear_path_model(const LinearProblem& problem, const TrainingCorpus& corpus,
                                LinearLoss loss, const std::vector<double>& cs, unsigned threads,
                                const std::function<void(size_t, LinearModel&&)>& fitted,
                                const LinearPathDuals* start, LinearPathDuals* duals, double eps,
                                bool packed, const std::string& spill_dir) {
  const uint32_t num_categories = corpus.num_categories();
  if (duals) duals->assign(cs.size(), std::vector<std::vector<float>>(num_categories));
  const uint32_t num_terms = problem.num_features;
  if (corpus.num_docs() != problem.num_rows()) {
    throw InvalidArgumentError("linear training: the problem is not the corpus's");
  }
  // Each category's dual solution at the previous C, the next one's start.
  std::vector<std::vector<double>> alpha(num_categories);
  for (size_t k = 0; k < cs.size(); ++k) {
    LinearModel model;
    model.num_categories = num_categories;
    model.c = cs[k];
    model.bias.assign(num_categories, 0.0f);
    model.slope.assign(num_categories, 1.0f);
    model.intercept.assign(num_categories, 0.0f);
    WeightBlocks weights(num_categories, num_terms, packed ? spill_dir : std::string());
    const bool warm_start_next = k + 1 < cs.size();
    // One-vs-rest: the categories' problems are independent, each solved
    // deterministically, so they run on `threads` threads with the same
    // result.
    const auto fit_category = [&](uint32_t cat, std::vector<int8_t>* y) {
      for (uint32_t d = 0; d < problem.num_rows(); ++d) {
        const auto& labels = corpus.doc_categories[d];
        (*y)[d] = std::find(labels.begin(), labels.end(), cat) != labels.end() ? 1 : -1;
      }
      if (start) {
        const std::vector<float>& given = (*start)[k][cat];
        alpha[cat].assign(given.begin(), given.end());
      }
      BinarySolution s = solve_binary(problem, *y, loss, cs[k], eps, alpha[cat]);
      weights.set_category(cat, problem, s.w);
      model.bias[cat] = static_cast<float>(s.w[num_terms]);
      if (duals) (*duals)[k][cat].assign(s.alpha.begin(), s.alpha.end());
      alpha[cat] = warm_start_next && !start ? std::move(s.alpha) : std::vector<double>();
    };
    std::atomic<uint32_t> next_category{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    const auto worker = [&] {
      std::vector<int8_t> y(problem.num_rows());
      for (uint32_t cat; (cat = next_category++) < num_categories;) {
        try {
          fit_category(cat, &y);
        } catch (...) {
          const std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
          next_category = num_categories;  // the others stop after their current category
        }
      }
    };
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < std::min<unsigned>(std::max(threads, 1u), num_categories); ++t) {
      helpers.emplace_back(worker);
    }
    worker();
    for (std::thread& helper : helpers) helper.join();
    if (failure) std::rethrow_exception(failure);
    if (packed) {
      weights.pack_into(&model);
    } else {
      weights.move_into(&model);
    }
    fitted(k, std::move(model));
  }
}

std::vector<LinearModel> train_linear_path(const LinearProblem& problem,
                                           const TrainingCorpus& corpus, LinearLoss loss,
                                           const std::vector<double>& cs, unsigned threads) {
  std::vector<LinearModel> models(cs.size());
  for_each_linear_path_model(problem, corpus, loss, cs, threads,
                             [&](size_t k, LinearModel&& model) { models[k] = std::move(model); });
  return models;
}

LinearModel train_linear(const TrainingCorpus& corpus, const std::vector<float>& idf,
                         LinearLoss loss, double c) {
  return std::move(train_linear_path(make_linear_problem(corpus, idf), corpus, loss, {c}).front());
}

Sigmoid fit_platt(const std::vector<double>& f, const std::vector<uint8_t>& positive) {
  // p = 1 / (1 + exp(A f + B)) in Lin, Lin and Weng's notation; slope = -A.
  const size_t n = f.size();
  double prior1 = 0, prior0 = 0;
  for (uint8_t is_positive : positive) (is_positive ? prior1 : prior0) += 1;
  const double hi = (prior1 + 1.0) / (prior1 + 2.0), lo = 1.0 / (prior0 + 2.0);
  std::vector<double> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = positive[i] ? hi : lo;
  double a = 0.0, b = std::log((prior0 + 1.0) / (prior1 + 1.0));
  // Each objective evaluation keeps z and exp(-|z|) per score: the Newton
  // step at the point accepted reads them back instead of calling exp
  // again (the same values, so the same fit, at half the exp calls).
  std::vector<double> z_at(n), e_at(n), trial_z(n), trial_e(n);
  const auto objective = [&](double a_, double b_, std::vector<double>* zs,
                             std::vector<double>* es) {
    double value = 0;
    for (size_t i = 0; i < n; ++i) {
      const double z = f[i] * a_ + b_;
      const double e = std::exp(-std::fabs(z));
      (*zs)[i] = z;
      (*es)[i] = e;
      value += (z >= 0 ? t[i] * z : (t[i] - 1) * z) + std::log1p(e);
    }
    return value;
  };
  double fval = objective(a, b, &z_at, &e_at);
  constexpr double kSigma = 1e-12, kEps = 1e-5;
  for (int iter = 0; iter < 100; ++iter) {
    double h11 = kSigma, h22 = kSigma, h21 = 0, g1 = 0, g2 = 0;
    for (size_t i = 0; i < n; ++i) {
      const double e = e_at[i];
      // p = 1 / (1 + exp(z)), q = 1 - p, each from exp(-|z|) without overflow.
      const double p = z_at[i] >= 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
      const double q = z_at[i] >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
      const double d2 = p * q;
      h11 += f[i] * f[i] * d2;
      h22 += d2;
      h21 += f[i] * d2;
      const double d1 = t[i] - p;
      g1 += f[i] * d1;
      g2 += d1;
    }
    if (std::fabs(g1) < kEps && std::fabs(g2) < kEps) break;
    const double det = h11 * h22 - h21 * h21;
    const double da = -(h22 * g1 - h21 * g2) / det, db = -(-h21 * g1 + h11 * g2) / det;
    const double gd = g1 * da + g2 * db;
    double step = 1.0;
    bool improved = false;
    while (step >= 1e-10) {
      const double na = a + step * da, nb = b + step * db;
      const double nf = objective(na, nb, &trial_z, &trial_e);
      if (nf < fval + 1e-4 * step * gd) {
        a = na;
        b = nb;
        fval = nf;
        z_at.swap(trial_z);
        e_at.swap(trial_e);
        improved = true;
        break;
      }
      step /= 2;
    }
    if (!improved) break;
  }
  return Sigmoid{-a, -b};
}

void linear_decision_values(const LinearModel& model, const std::vector<float>& idf,
                            const DocumentTerms& doc, std::vector<double>* values) {
  values->assign(model.num_categories, 0.0);
  double* const out = values->data();
  const size_t vocabulary = std::min(idf.size(), model.num_terms());
  // Accumulate with unnormalized weights, then divide once by |x|.
  double norm2 = 0.0;
  for (const TermCount& tc : doc.terms) {
    if (tc.term >= vocabulary || tc.count == 0) continue;
    const float weight = idf[tc.term];
    if (!(weight > 0.0f)) continue;
    const double x = (tc.count == 1 ? 1.0 : sublinear_tf(tc.count)) * weight;
    norm2 += x * x;
    model.for_each_weight(tc.term,
                          [out, x](uint32_t category, float w) { out[category] += x * w; });
  }
  const double inverse_norm = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
  for (size_t c = 0; c < values->size(); ++c) out[c] = out[c] * inverse_norm + model.bias[c];
}

std::vector<float> dense_term_weights(const LinearModel& model) {
  const size_t terms = model.num_terms();
  std::vector<float> weights(terms * model.num_categories, 0.0f);
  for (size_t t = 0; t < terms; ++t) {
    float* const row = &weights[t * model.num_categories];
    model.for_each_weight(uint32_t(t),
                          [row](uint32_t category, float weight) { row[category] = weight; });
  }
  return weights;
}

void dense_linear_decision_values(const LinearModel& model, const std::vector<float>& dense_weights,
                                  const std::vector<float>& idf, const DocumentTerms& doc,
                                  std::vector<double>* values) {
  const size_t num_categories = model.num_categories;
  values->assign(num_categories, 0.0);
  double* const out = values->data();
  const size_t vocabulary = idf.size();
  double norm2 = 0.0;
  const size_t num_terms = doc.terms.size();
  const size_t row_bytes = num_categories * sizeof(float);
  for (size_t i = 0; i < num_terms; ++i) {
    // The rows are scattered over megabytes: ask for a later term's row
    // now, so its cache misses overlap this term's work.
    constexpr size_t kPrefetchDistance = 8;
    if (i + kPrefetchDistance < num_terms) {
      const TermId ahead = doc.terms[i + kPrefetchDistance].term;
      if (ahead < vocabulary) {
        const char* const row =
            reinterpret_cast<const char*>(dense_weights.data()) + size_t(ahead) * row_bytes;
        for (size_t offset = 0; offset < row_bytes; offset += 64) __builtin_prefetch(row + offset);
        __builtin_prefetch(row + row_bytes - 1);
      }
    }
    const TermCount& tc = doc.terms[i];
    if (tc.term >= vocabulary || tc.count == 0) continue;
    const float weight = idf[tc.term];
    if (!(weight > 0.0f)) continue;
    const double x = (tc.count == 1 ? 1.0 : sublinear_tf(tc.count)) * weight;
    norm2 += x * x;
    // Adding x * 0 where the sparse entries have none leaves each sum as it
    // is (x > 0, and no sum is -0), so the values match the sparse ones.
    const float* const row = dense_weights.data() + size_t(tc.term) * num_categories;
    for (size_t c = 0; c < num_categories; ++c) out[c] += x * row[c];
  }
  const double inverse_norm = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
  for (size_t c = 0; c < num_categories; ++c) out[c] = out[c] * inverse_norm + model.bias[c];
}

void linear_probabilities(const LinearModel& model, Decision decision,
                          std::vector<double>* values) {
  double total = 0.0;
  for (size_t c = 0; c < values->size(); ++c) {
    (*values)[c] = sigmoid(model.slope[c] * (*values)[c] + model.intercept[c]);
    total += (*values)[c];
  }
  if (decision == Decision::kOneOf && total > 0.0) {
    for (double& value : *values) value /= total;
  }
}

LinearClassifier::LinearClassifier(Method method, const LinearModel& model,
                                   const std::vector<float>& idf, Decision decision)
    : method_(method), model_(model), idf_(idf), decision_(decision) {
  const auto bad = [&](const std::string& what) {
    return InvalidArgumentError(method_name(method) + " model: " + what);
  };
  if (!model.trained()) return;  // not trained: score() gives zeros
  if (model.num_terms() != idf.size()) throw bad("terms disagree with the vocabulary");
  if (model.packed_rows) {
    // Scored where the file holds them (checked when read): no copy.
    if (model.packed_rows->num_categories != model.num_categories ||
        model.bias.size() != model.num_categories || model.slope.size() != model.num_categories ||
        model.intercept.size() != model.num_categories) {
      throw bad("inconsistent weight entries");
    }
    return;
  }
  if (model.entry_category.size() != model.entry_weight.size() || model.term_start.front() != 0 ||
      model.term_start.back() != model.entry_category.size() ||
      !std::is_sorted(model.term_start.begin(), model.term_start.end()) ||
      model.bias.size() != model.num_categories || model.slope.size() != model.num_categories ||
      model.intercept.size() != model.num_categories) {
    throw bad("inconsistent weight entries");
  }
  for (uint32_t c : model.entry_category) {
    if (c >= model.num_categories) throw bad("category index out of range");
  }
  // Dense rows cost 4 bytes per (term, category), entries 8 per non-zero:
  // go dense when that at most doubles the weights' memory, or stays small.
  constexpr uint64_t kSmallDenseBytes = uint64_t{64} << 20;
  const uint64_t dense_bytes = uint64_t(idf.size()) * model.num_categories * sizeof(float);
  const uint64_t entry_bytes = model.entry_weight.size() * (sizeof(uint32_t) + sizeof(float));
  if (dense_bytes <= std::max(2 * entry_bytes, kSmallDenseBytes)) {
    dense_weights_ = dense_term_weights(model);
  }
}

void LinearClassifier::decision_values(const DocumentTerms& doc,
                                       std::vector<double>* values) const {
  if (!model_.trained()) {
    throw InvalidArgumentError("this model has no " + method_name(method_) +
                               " weights (written by an older autocat); train it again");
  }
  if (dense_weights_.empty()) {
    linear_decision_values(model_, idf_, doc, values);
  } else {
    dense_linear_decision_values(model_, dense_weights_, idf_, doc, values);
  }
}

void LinearClassifier::score(const DocumentTerms& doc, const ClassifyOptions& options,
                             std::vector<double>* scores) const {
  decision_values(doc, scores);
  linear_probabilities(model_, options.decision.value_or(decision_), scores);
}

}  // namespace autocat::internal
