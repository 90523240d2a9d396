// Semi-supervised multinomial Naive Bayes by expectation-maximization
// (Nigam, McCallum, Thrun & Mitchell 2000, "Text classification from labeled
// and unlabeled documents using EM", sections 4 and 5.3, "EM-lambda").
//
// Start from NB trained on the labelled documents; then repeat
//   E-step: P(c|d) of every unlabelled document under the current model;
//   M-step: NB parameters from the labelled counts plus lambda times the
//           unlabelled documents' counts split by their P(c|d),
// until the log-likelihood changes by less than `tolerance` (relative) or
// `max_iterations` M-steps have run. The weight lambda of the unlabelled
// documents is chosen by cross-validation on the labelled documents.
//
// The objective, non-decreasing from one iteration to the next (EM on a
// MAP estimate), is
//   sum_{c,t} alpha log P(t|c)                                  (the prior)
//   + sum_{labelled d} sum_{c in labels(d)} log P(c) P(d|c)
//   + lambda sum_{unlabelled d} log sum_c P(c) P(d|c)
// with P(d|c) = prod_t P(t|c)^count(t,d) (the multinomial coefficient, the
// same for every class, is left out).
//
// Only the multinomial NB parameters are re-estimated; the labelled corpus
// (and with it kNN, Rocchio and the other NB variants) is not changed.
//
// Thread safety: free functions on const inputs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "classify/corpus/training_collection.h"
#include "classify/methods/naive_bayes.h"

namespace autocat::internal {

struct EmOptions {
  // Weights tried by cross-validation (0 = labelled documents only, so EM is
  // not used where the labelled documents say it hurts).
  std::vector<double> lambda_grid = {0.0, 0.01, 0.1, 0.3, 1.0};
  // A positive value is used as is, without cross-validation.
  double lambda = -1.0;
  int folds = 5;  // cross-validation folds over the labelled documents
  int max_iterations = 20;
  double tolerance = 1e-4;  // stop when |L_k - L_{k-1}| < tolerance * |L_{k-1}|
  uint64_t seed = 1;        // fold assignment
  // Each unlabelled document's counts are scaled to this length, so long
  // documents neither dominate the M-step nor get near-certain posteriors
  // (Nigam et al. normalize word counts by document length). Negative = the
  // mean length of the labelled documents; 0 = raw counts.
  double normalized_length = -1;
};

// What EM did, for reports and the model file.
struct EmReport {
  double lambda = 0;   // weight of the unlabelled documents used
  int iterations = 0;  // M-steps with unlabelled documents (0: EM not used)
  bool converged = false;
  // The objective of each model: [0] labelled documents only, [k] after the
  // k-th M-step.
  std::vector<double> log_likelihood;
  // Cross-validated accuracy on the labelled documents per lambda tried.
  std::vector<std::pair<double, double>> lambda_accuracy;
  uint64_t unlabelled_docs = 0;  // with at least one term in the vocabulary
  double seconds = 0;
};

struct EmResult {
  NaiveBayesModel model;  // multinomial NB after EM
  EmReport report;
};

// EM with a fixed `lambda` (> 0) over `corpus` (its labelled documents;
// documents without labels are ignored) and `unlabelled`, whose term ids are
// those of `corpus`. `selected` as for train_multinomial_nb.
EmResult run_naive_bayes_em(const TrainingCorpus& corpus,
                            const std::vector<DocumentTerms>& unlabelled,
                            const std::vector<uint8_t>& selected, double alpha, double lambda,
                            int max_iterations, double tolerance, double normalized_length = -1);

// Chooses lambda by cross-validation (unless options.lambda > 0), then runs
// EM on every labelled document. With lambda 0 chosen the result is plain
// multinomial NB (iterations 0). Throws InvalidArgumentError on bad options.
EmResult train_multinomial_nb_em(const TrainingCorpus& corpus,
                                 const std::vector<DocumentTerms>& unlabelled,
                                 const std::vector<uint8_t>& selected, double alpha,
                                 const EmOptions& options);

}  // namespace autocat::internal
