// The linear methods' (svm, logreg) live view of a model: the trained
// weights plus a sparse correction for the documents learned and forgotten
// since.
//
// The trained weights are w = sum_i alpha_i y_i x_i over the training
// documents (linear.h), per category. A learned document gets its own dual
// variable per category; the training documents' variables stay as trained
// (they are not in the model file), and w = trained w + sum_learned
// alpha_j y_j x_j. The next score after a change (fit()) runs the
// coordinate descent that trained the model (exact steps for the squared
// hinge, Newton for the logistic loss) over the learned documents,
// warm-started from their variables as they are, in a fixed shuffled order,
// until no projected gradient exceeds kTolerance or kMaxPasses passes. With
// the trained variables held the dual is strictly convex, so the result is
// its unique optimum (to kTolerance) whether the learns came with scores
// between them or all before one, as at a journal replay. A forgotten
// learned document takes its alpha_j y_j x_j out of w; forgetting all that
// was learned restores the trained weights exactly. A forgotten training
// document takes out the dual value the optimality conditions give for it
// from the trained weights: alpha_i = 2C max(0, 1 - y_i f_i) (squared
// hinge) or C / (1 + exp(y_i f_i)) (logistic), f_i its trained decision
// value. A learn costs one trained decision value per category; a fit
// costs a pass over the learned documents per pass (a warm start needs one
// or two) and a copy of the correction.
//
// Frozen until the refit, as for Rocchio and Naive Bayes (live_models.h):
// idf, the vocabulary, C, the training documents' dual variables, the bias
// weights, Platt's sigmoids, thresholds and calibration. Learned documents
// have no bias feature: with the training documents' variables held, a few
// corrections would move each category's bias freely (it weighs as much as
// a whole normalized document) and shift every document's scores, costing
// accuracy on every other document (BENCHMARKS.md, "Live learning"). All of these are fitted
// over the whole collection (the sigmoids out of fold), which a learned
// document would move only by its share; refitting them costs a retrain.
// So the live model is not the batch optimum on the same documents but the
// trained one moved by the learned documents' own dual variables: a learned
// document changes the scores of documents that share terms with it only.
//
// Thread safety: none here; LiveModels calls it under its mutex. The
// classifiers fit() returns are immutable and share nothing mutable.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "autocat/options.h"
#include "classify/methods/classifier.h"
#include "classify/methods/linear.h"

namespace autocat::internal {

// The change to the trained weights: per touched term, one weight per
// category. The bias stays as trained (see LiveLinear).
struct LinearDelta {
  std::unordered_map<TermId, uint32_t> row;  // term -> index of its weights
  std::vector<double> weights;               // row * num_categories + category
};

class LiveLinear {
 public:
  static constexpr int kMaxPasses = 50;
  static constexpr double kTolerance = 1e-3;

  // Keeps references: `model` and `idf` must outlive this and what fit()
  // returns. REQUIRES: `model` trained (term_start not empty).
  LiveLinear(Method method, const LinearModel& model, const std::vector<float>& idf,
             Decision decision);
  ~LiveLinear();

  // Adds a learned document. REQUIRES: no learned document with this id
  // (forget it first); categories < the model's.
  void learn(const std::string& id, const DocumentTerms& doc,
             const std::vector<uint32_t>& categories);
  // Removes a learned document's contribution; false if there is none.
  bool forget_learned(const std::string& id);
  // Removes a training document's contribution.
  void forget_trained(const DocumentTerms& doc, const std::vector<uint32_t>& categories);
  // Optimizes the learned documents' variables if something changed since
  // the last fit, and returns a classifier over the weights now.
  std::unique_ptr<Classifier> fit();

 private:
  struct Row {
    std::vector<TermId> terms;  // the L2-normalized tf-idf vector x
    std::vector<double> values;
    std::vector<int8_t> y;          // per category
    std::vector<double> alpha;      // per category
    std::vector<double> trained_f;  // the trained decision values
    double norm2 = 0;               // |x|^2
  };
  Row make_row(const DocumentTerms& doc, const std::vector<uint32_t>& categories) const;
  // Adds scale[c] * x to the delta.
  void add(const Row& row, const std::vector<double>& scale);
  // The current decision values of a row.
  void decision_values(const Row& row, std::vector<double>* f) const;
  // One coordinate step per category; returns the largest projected gradient.
  double step(Row* row);

  LinearLoss loss_;
  double c_;
  uint32_t num_categories_;
  const std::vector<float>& idf_;
  std::unique_ptr<LinearClassifier> trained_;
  std::unordered_map<std::string, Row> learned_;
  std::vector<std::string> order_;    // learned_'s ids as learned
  std::vector<std::string> pending_;  // learned since the last fit (some maybe forgotten since)
  bool changed_ = false;              // since the last fit
  LinearDelta delta_;
  bool forgot_trained_ = false;  // a training document's contribution was taken out
  std::shared_ptr<const LinearDelta> published_;  // delta_ at the last fit
};

}  // namespace autocat::internal
