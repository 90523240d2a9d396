// Stratified k-fold cross-validation over a training corpus: the documents
// are dealt into K folds, and for each fold every classifier is fitted on the
// other K-1 folds exactly as `autocat train` would fit a model on those
// documents alone (same options, a vocabulary of the terms they contain),
// then the held-out fold is categorized and evaluated, with every requested
// method on the same folds.
//
// Thread safety: free functions over immutable data; cross_validate() runs
// its folds one after another (each fold's fit_model() cross-validates its
// own settings on every core).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/training_collection.h"
#include "classify/metrics/evaluation.h"
#include "classify/text/analyzer.h"

namespace autocat::internal {

struct CrossValidationOptions {
  uint32_t folds = 5;  // K, at least 2
  uint32_t seed = 1;   // the same seed deals the same folds, on any platform
  // Methods evaluated, each on the same folds and fitted models.
  std::vector<Method> methods = {Method::kKnn};
  // kNN's k and the decision options; `method` is ignored (see methods).
  ClassifyOptions classify;
  // Documents without labels (kept with TrainOptions::keep_unlabelled) count
  // as "no category" documents, or are skipped. Unset: counted when the
  // decision mode is any-of, skipped for one-of.
  std::optional<bool> count_unlabelled;
};

// The results of one method.
struct MethodFolds {
  Method method = Method::kKnn;
  std::vector<Evaluation> folds;       // one per fold, over its held-out documents
  std::vector<LogLoss> fold_log_loss;  // one per fold; empty unless gives_probabilities()
  Evaluation pooled{std::vector<std::string>()};  // every held-out document of every fold
  LogLoss pooled_log_loss;
};

struct CrossValidationResult {
  uint32_t folds = 0, seed = 0;
  Decision decision = Decision::kOneOf;  // the mode every fold decided with
  bool count_unlabelled = false;
  std::vector<uint32_t> fold_of;         // the fold of each corpus document
  std::vector<uint32_t> fold_documents;  // documents held out in each fold
  // Documents with the same terms and counts as an earlier one, held out in
  // its fold (stratified_folds).
  uint32_t copied_documents = 0;
  uint64_t unlabelled_counted = 0, unlabelled_skipped = 0;
  std::vector<MethodFolds> methods;  // in the order of CrossValidationOptions::methods
};

// Runs the cross-validation. `train` are the training options of every fold
// fit (threshold tuning included); `analyzer` the settings the corpus was
// analyzed with. `on_progress`, if set, is called with the number of
// held-out documents evaluated so far. Throws as stratified_folds().
CrossValidationResult cross_validate(const TrainingCorpus& corpus, const AnalyzerSettings& analyzer,
                                     const TrainOptions& train,
                                     const CrossValidationOptions& options,
                                     const std::function<void(uint64_t)>& on_progress = {});

}  // namespace autocat::internal
