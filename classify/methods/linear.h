// Linear classifiers over L2-normalized sublinear tf-idf vectors plus a bias
// feature (value 1), one-vs-rest:
//  - `svm`: L2-regularized L2-loss (squared hinge) linear SVM, trained by
//    dual coordinate descent with shrinking (Hsieh et al. 2008);
//  - `logreg`: L2-regularized logistic regression, trained by dual
//    coordinate descent with a Newton step per coordinate (Yu et al. 2011).
// Both minimize 0.5 |w|^2 + C * sum_i loss(y_i w.x_i), the bias regularized
// like any weight (as liblinear does).
//
// Scores: each category's decision value f_c = w_c.x is mapped to a
// probability p_c = 1 / (1 + exp(-(slope_c * f_c + intercept_c))). For svm
// slope and intercept are Platt's sigmoid fitted on out-of-fold decision
// values; for logreg they are 1 and 0 (its own probability). Any-of models
// report every p_c as it is (each category a yes/no question); one-of models
// divide by their sum, so the scores of a document sum to 1.
//
// Thread safety: LinearModel is data; LinearClassifier::score() is const.
#pragma once

#include <boost/serialization/split_member.hpp>
#include <boost/serialization/vector.hpp>
#include <boost/serialization/version.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/training_collection.h"
#include "classify/io/bounded_binary_iarchive.h"
#include "classify/methods/classifier.h"

namespace autocat::internal {

enum class LinearLoss { kSquaredHinge, kLogistic };

// The weights as the model file holds them (LinearModel::packed_weights()),
// read where they lie: a model opened from a file maps it, and scoring a
// document touches only the rows of its terms. `row_offset[t]` is where
// term t's row starts in `bytes` (num_terms + 1 offsets, the last one the
// end), found and checked when the model is read.
struct PackedLinearRows {
  std::shared_ptr<const void> owner;  // keeps `bytes` alive (the mapping)
  const uint8_t* bytes = nullptr;
  size_t size = 0;
  std::vector<uint32_t> row_offset;
  uint32_t num_categories = 0;
  uint64_t num_entries = 0;  // non-zero weights

  size_t num_terms() const { return row_offset.empty() ? 0 : row_offset.size() - 1; }
  // Calls f(category, weight) for each non-zero weight of term t, by
  // ascending category. REQUIRES t < num_terms().
  template <class F>
  void for_each_weight(uint32_t t, F f) const;
  // Indexes `size` packed bytes for `num_categories` categories; false if
  // they are damaged or inconsistent (a category out of range or out of
  // order, a weight not finite, a dense row whose count disagrees), hold no rows,
  // or are too large for 32-bit offsets. `release(offset)` is called as the scan passes the
  // bytes before `offset`, so a caller that maps them can drop those pages.
  bool index(const std::function<void(size_t)>& release = nullptr);
};

// Weights stored term-major and sparse (only non-zero weights, as float):
// for term t, the entries [term_start[t], term_start[t+1]) give (category,
// weight). Empty term_start and no packed_rows: not trained. A model read
// from a mapped model file holds its weights in packed_rows instead (the
// entries empty); for_each_weight() reads either form.
struct LinearModel {
  std::vector<uint64_t> term_start;
  std::vector<uint32_t> entry_category;
  std::vector<float> entry_weight;
  std::vector<float> bias;       // per category: weight of the bias feature
  std::vector<float> slope;      // per category: probability sigmoid
  std::vector<float> intercept;  // per category
  uint32_t num_categories = 0;
  double c = 0;  // the regularization constant it was trained with
  std::shared_ptr<const PackedLinearRows> packed_rows;  // instead of the entries

  template <class Archive>
  void save(Archive& ar, const unsigned int /*version*/) const {
    // The bytes of a std::vector<uint8_t> holding packed_weights(), written
    // a piece at a time rather than built whole first (or, read in place
    // from a mapped file, as they are there).
    ar << num_categories;
    const boost::serialization::collection_size_type count(packed_rows ? packed_rows->size
                                                                       : packed_bytes());
    ar << count;
    if (packed_rows) {
      if (packed_rows->size > 0) ar.save_binary(packed_rows->bytes, packed_rows->size);
    } else {
      pack_weights([&ar](const uint8_t* bytes, size_t size) { ar.save_binary(bytes, size); });
    }
    ar << bias << slope << intercept << c;
  }
  template <class Archive>
  void load(Archive& ar, const unsigned int version) {
    if (version == 0) {
      ar >> term_start >> entry_category >> entry_weight >> bias >> slope >> intercept >>
          num_categories >> c;
      return;
    }
    ar >> num_categories;
    if constexpr (std::is_same_v<Archive, BoundedBinaryIarchive>) {
      // From a mapped file: the packed bytes stay where they are.
      if (ar.can_view()) {
        auto rows = std::make_shared<PackedLinearRows>();
        const BoundedBinaryIarchive::View view = ar.view_bytes_vector();
        rows->owner = view.owner;
        rows->bytes = reinterpret_cast<const uint8_t*>(view.data);
        rows->size = view.size;
        rows->num_categories = num_categories;
        ar >> bias >> slope >> intercept >> c;
        if (view.size == 1 && view.data[0] == 0) return;  // not trained
        if (rows->index(view.release)) {
          packed_rows = std::move(rows);
        } else {
          term_start.assign(1, 1);  // inconsistent: the model check refuses it
        }
        return;
      }
    }
    std::vector<uint8_t> packed;
    ar >> packed >> bias >> slope >> intercept >> c;
    unpack_weights(packed);
  }
  BOOST_SERIALIZATION_SPLIT_MEMBER()

  // Trained: weights in either form.
  bool trained() const { return !term_start.empty() || packed_rows != nullptr; }
  // Terms with a row of weights.
  size_t num_terms() const {
    if (packed_rows) return packed_rows->num_terms();
    return term_start.empty() ? 0 : term_start.size() - 1;
  }
  // Non-zero weights.
  uint64_t num_entries() const {
    return packed_rows ? packed_rows->num_entries : entry_weight.size();
  }
  // Calls f(category, weight) for each non-zero weight of term t, by
  // ascending category, from either form. REQUIRES t < num_terms().
  template <class F>
  void for_each_weight(uint32_t t, F f) const {
    if (packed_rows) return packed_rows->for_each_weight(t, f);
    for (uint64_t e = term_start[t]; e < term_start[t + 1]; ++e)
      f(entry_category[e], entry_weight[e]);
  }

  // The weights as the model file stores them (version 1): the number of
  // terms + 1 (0: not trained), then per term its entry count and, if
  // any, either its categories as gaps (LEB128 varints, a byte each where
  // weights are dense) followed by the weights, or, where that is smaller
  // and no weight is zero, the whole row of num_categories floats. About
  // 5 bytes a weight instead of 8.
  std::vector<uint8_t> packed_weights() const;
  // The same bytes handed to `emit` in pieces, in order; and their number.
  void pack_weights(const std::function<void(const uint8_t*, size_t)>& emit) const;
  uint64_t packed_bytes() const;
  // Sets term_start, entry_category and entry_weight from packed_weights()'
  // bytes; damaged bytes leave a term_start the model check refuses.
  void unpack_weights(const std::vector<uint8_t>& packed);
  // Bytes of the weights in memory.
  uint64_t weight_bytes() const;
};

// Term t's weights for every category (zeros where it has none) into
// `row`; `last_pass` is true on the last call for t, after which the
// source may free what held them.
using DenseRowSource = std::function<void(uint32_t t, bool last_pass, float* row)>;
// The packed bytes pack_weights() gives for the non-zero weights of
// `num_terms` dense rows, built in a buffer sized exactly first (each row
// is asked for twice), without the sparse entries (8 bytes a weight) ever
// being in memory. Null, before any row's last pass, where they would be
// too large for PackedLinearRows' 32-bit offsets.
std::shared_ptr<std::vector<uint8_t>> pack_dense_rows(uint32_t num_categories, uint32_t num_terms,
                                                      const DenseRowSource& row);

template <class F>
void PackedLinearRows::for_each_weight(uint32_t t, F f) const {
  // index() checked the rows: well-formed and inside the bytes.
  const auto varint = [](const uint8_t*& at) {
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = *at++;
      value |= uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
  };
  const uint8_t* at = bytes + row_offset[t];
  const uint64_t count = varint(at);
  if (count == 0) return;
  const uint8_t kind = *at++;
  float weight;
  if (kind == 1) {  // a dense row: every category, zeros skipped
    for (uint32_t c = 0; c < num_categories; ++c, at += sizeof(float)) {
      std::memcpy(&weight, at, sizeof(float));
      if (weight != 0.0f) f(c, weight);
    }
    return;
  }
  // A list row: the categories as gaps, then their weights.
  const uint8_t* weights = at;
  for (uint64_t i = 0; i < count; ++i) {
    while (*weights++ & 0x80) {
    }
  }
  uint32_t category = 0;
  for (uint64_t i = 0; i < count; ++i, weights += sizeof(float)) {
    const uint64_t gap = varint(at);
    category = uint32_t(i == 0 ? gap : category + 1 + gap);
    std::memcpy(&weight, weights, sizeof(float));
    f(category, weight);
  }
}

// Rows of a training problem: each document's L2-normalized tf-idf vector
// over the terms with idf > 0 (document-major), the bias feature implicit.
// make_linear_problem numbers the features by falling document frequency,
// so the weights most rows touch share a few cache lines; `term_of_feature`
// maps them back (empty: feature f is term f).
//
// The entries come in one of two forms. Plain: `column` and `value`.
// Compact (`compact` true): one 32-bit `packed` entry each, the feature in
// the high 24 bits and a code of the term's wdf in the low 8, the value
// recomputed as it was computed in the first place,
//   float(code_tf[code] * feature_idf[feature] / row_norm[row]),
// so the values, and every weight fitted on them, are bit for bit the
// plain form's at half its memory (the largest allocation of a training
// at millions of documents). The 255 commonest wdf values have codes; an
// entry of any other (a few in a million at three million documents, which
// have 577 distinct values) has kEscapeCode, its tf in `escaped_tf`.
struct LinearProblem {
  std::vector<uint64_t> row_start;
  std::vector<uint32_t> column;
  std::vector<float> value;
  bool compact = false;
  std::vector<uint32_t> packed;
  std::vector<double> code_tf;  // sublinear tf of each wdf code
  static constexpr uint32_t kEscapeCode = 0xff;
  // The entries coded kEscapeCode, ascending, and their sublinear tf.
  std::vector<uint64_t> escaped_entry;
  std::vector<double> escaped_tf;
  std::vector<float> feature_idf;  // idf of each feature's term
  std::vector<double> row_norm;    // each row's L2 norm before normalizing
  // Each row's squared norm as stored, the bias included: every binary
  // problem's diagonal, computed once rather than per category and C.
  // Empty in a problem built by hand: the solvers compute it then.
  std::vector<double> row_squared_norm;
  std::vector<uint32_t> term_of_feature;
  uint32_t num_features = 0;  // terms; the bias is feature num_features
  uint32_t num_rows() const { return static_cast<uint32_t>(row_start.size() - 1); }
  uint64_t num_entries() const { return row_start.empty() ? 0 : row_start.back(); }
  uint32_t term_of(uint32_t feature) const {
    return term_of_feature.empty() ? feature : term_of_feature[feature];
  }
  // Entry k of row `row`, in either form.
  uint32_t feature_at(uint64_t k) const { return compact ? packed[k] >> 8 : column[k]; }
  float value_at(uint32_t row, uint64_t k) const {
    return compact ? static_cast<float>(tf_at(k) * feature_idf[packed[k] >> 8] / row_norm[row])
                   : value[k];
  }
  // The compact form's sublinear tf of entry k.
  double tf_at(uint64_t k) const {
    const uint32_t code = packed[k] & 0xff;
    return code != kEscapeCode ? code_tf[code] : escaped_tf_at(k);
  }
  double escaped_tf_at(uint64_t k) const;
  // Bytes of the entries and per-row data in memory.
  uint64_t memory_bytes() const;
};
// Which form make_linear_problem() builds. The compact one fits where the
// features are below 2^24 and at most 256 distinct wdf values occur; it
// recomputes each value as it reads it, which costs the solvers about a
// tenth more time, so by default it is taken only where the plain entries
// would take kCompactFromEntries or more (256 MB).
enum class LinearProblemForm { kBySize, kCompactWhereItFits, kPlain };
inline constexpr uint64_t kCompactFromEntries = uint64_t{32} << 20;
LinearProblem make_linear_problem(const TrainingCorpus& corpus, const std::vector<float>& idf,
                                  LinearProblemForm form = LinearProblemForm::kBySize);
// The same from postings visited in term order (SpilledPostings), for
// `num_docs` documents and the terms of `idf`.
using ForEachTermPostings = std::function<void(const TermPostingsVisitor&)>;
LinearProblem make_linear_problem(uint32_t num_docs, const std::vector<float>& idf,
                                  const ForEachTermPostings& for_each_term_postings,
                                  LinearProblemForm form = LinearProblemForm::kBySize);

struct BinarySolution {
  std::vector<double> w;      // num_features + 1 weights, the bias last
  std::vector<double> alpha;  // dual variables, one per row
  int epochs = 0;
};

// Solves one binary problem (y[i] = +1 or -1) to a projected-gradient
// tolerance `eps` (liblinear's default 0.1). `warm_alpha`, if not empty,
// starts from those dual variables (e.g. the solution at a smaller C).
BinarySolution solve_binary(const LinearProblem& problem, const std::vector<int8_t>& y,
                            LinearLoss loss, double c, double eps = 0.1,
                            const std::vector<double>& warm_alpha = {});

// One coordinate of the logistic regression dual (Yu, Huang and Lin 2011):
// Newton's method on whichever of alpha and C - alpha is the smaller, for a
// document with squared norm `a` whose margin y*f is `margin`, to tolerance
// `inner_eps` in at most `max_newton` steps. Shared by the batch solver and
// the live one, so that both move a variable the same way.
struct LogisticCoordinate {
  double alpha = 0;            // the new value (the old one when steps == 0)
  double gradient_at_old = 0;  // |projected gradient| before the step
  int steps = 0;               // Newton steps taken
};
LogisticCoordinate logistic_dual_coordinate(double a, double margin, double c, double alpha,
                                            double inner_eps, int max_newton);

// Dual objective of a solution (for tests): squared hinge
// 0.5 a'Qa + a'a/(4C) - sum a; logistic 0.5 a'Qa + sum a log a + (C-a) log(C-a).
double dual_objective(const LinearProblem& problem, const std::vector<int8_t>& y, LinearLoss loss,
                      double c, const std::vector<double>& alpha);

// One-vs-rest weights for every category (slope 1, intercept 0).
// REQUIRES: idf.size() == corpus.num_terms().
LinearModel train_linear(const TrainingCorpus& corpus, const std::vector<float>& idf,
                         LinearLoss loss, double c);
// Same, from a prepared problem, for each C of `cs` (ascending), each
// category's solver starting from its solution at the previous C. The
// categories are solved on up to `threads` threads (the same result).
std::vector<LinearModel> train_linear_path(const LinearProblem& problem,
                                           const TrainingCorpus& corpus, LinearLoss loss,
                                           const std::vector<double>& cs, unsigned threads = 1);
// The same models, handed to `fitted` (with their index in `cs`) one at a
// time as each C is done, so that only one is in memory at once.
// Dual variables of a path's solutions, [C index][category][row].
using LinearPathDuals = std::vector<std::vector<std::vector<float>>>;
// `start`, if given, holds each (C, category)'s starting dual variables for
// this problem's rows (e.g. a solution on a superset of the rows: a fold's
// fit starts from the whole collection's), used instead of the previous
// C's solution; `duals`, if given, receives every solution's. Each fit
// stops at the projected-gradient tolerance `eps` (solve_binary's).
// `packed`: each model's weights handed over packed (packed_rows, where
// they fit it) rather than as entries, as a model file holds them; with a
// `spill_dir`, each category's weights wait in an unlinked file there until
// they are packed, instead of in memory (throws IOError if it cannot be
// written).
void for_each_linear_path_model(const LinearProblem& problem, const TrainingCorpus& corpus,
                                LinearLoss loss, const std::vector<double>& cs, unsigned threads,
                                const std::function<void(size_t, LinearModel&&)>& fitted,
                                const LinearPathDuals* start = nullptr,
                                LinearPathDuals* duals = nullptr, double eps = 0.1,
                                bool packed = false, const std::string& spill_dir = {});

// Platt's sigmoid p = 1 / (1 + exp(-(slope * f + intercept))) fitted by
// Newton's method with backtracking (Lin, Lin and Weng 2007) to decision
// values `f` with labels `positive`, using Platt's smoothed targets.
struct Sigmoid {
  double slope = 1, intercept = 0;
};
Sigmoid fit_platt(const std::vector<double>& f, const std::vector<uint8_t>& positive);

inline double sigmoid(double z) {
  return z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
}

// Decision values w_c.x of a document (x its normalized tf-idf vector), one
// per category, from either form of the weights (the entries, or the packed
// rows a mapped model file holds), summed term by term in the same order.
void linear_decision_values(const LinearModel& model, const std::vector<float>& idf,
                            const DocumentTerms& doc, std::vector<double>* values);
// The same from a dense term-major copy of the weights (`dense_weights`,
// num_categories per term): no category indices to chase, and each term's
// row is contiguous, so the inner loop vectorizes. Sums in the same order as
// linear_decision_values, so the values are identical. `features` ranks
// terms by the same copy (0 where no weight is stored).
std::vector<float> dense_term_weights(const LinearModel& model);
void dense_linear_decision_values(const LinearModel& model, const std::vector<float>& dense_weights,
                                  const std::vector<float>& idf, const DocumentTerms& doc,
                                  std::vector<double>* values);
// Probabilities from decision values, in place, as score() reports them.
void linear_probabilities(const LinearModel& model, Decision decision, std::vector<double>* values);

class LinearClassifier : public Classifier {
 public:
  // Keeps references: `model` and `idf` must outlive the classifier.
  // `decision`: the model's mode, used when ClassifyOptions name none.
  LinearClassifier(Method method, const LinearModel& model, const std::vector<float>& idf,
                   Decision decision);
  Method method() const override { return method_; }
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override;
  // The decision values w_c.x that score() maps to probabilities.
  void decision_values(const DocumentTerms& doc, std::vector<double>* values) const;
  const LinearModel& model() const { return model_; }
  Decision decision() const { return decision_; }

 private:
  Method method_;
  const LinearModel& model_;
  const std::vector<float>& idf_;
  Decision decision_;
  // Dense copy of the weights for score(), when it is not much larger than
  // the sparse entries (else empty, and score() reads the entries).
  std::vector<float> dense_weights_;
};

}  // namespace autocat::internal

// Version 1: the weights packed (LinearModel::packed_weights). Version 0
// files (term_start, entry_category, entry_weight as vectors) still load.
BOOST_CLASS_VERSION(autocat::internal::LinearModel, 1)
