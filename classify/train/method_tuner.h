// One tuner per method family, behind one interface: tune_settings()
// deals the folds and hands each fold to every tuner, which fits its
// candidate settings there and keeps the held-out documents' scores; then
// each tuner chooses its setting, thresholds and objective, and gives its
// out-of-fold scores at that setting to the calibrations and combo.
//
// Thread safety: fit_fold() and refit_fold() are called from several
// threads at once, each call of one tuner on a different fold (the
// held-out documents, hence the entries written, are disjoint), while
// other tuners may be fitting the same fold (its TuneFold is shared and
// read only); every other call comes from one thread after the folds.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/training_collection.h"
#include "classify/train/thresholds.h"

namespace autocat::internal {

// What every tuner of one tune_settings() run shares.
struct TuneContext {
  const TrainingCorpus& corpus;
  const TrainOptions& options;
  Decision decision;
  // One-of decisions compare candidates by their top category alone
  // (objective()): Rocchio's and Naive Bayes' candidates then keep only that
  // per document, and the winners' full lists are made in a second pass
  // over the folds (refit_fold), instead of holding every candidate's lists
  // at once (most of cross-validation's memory). Any-of objectives need
  // each candidate's thresholds, hence its full lists.
  bool compact;
  // Documents held out with a term their fold knows (filled by the folds).
  const std::vector<uint8_t>& scored;
  // Fold threads left without a fold: the last folds' linear fits use them.
  const std::atomic<unsigned>& idle_workers;
};

// A fold's training documents and what its fits share.
struct TuneFold {
  FoldCorpus training;
  std::vector<uint32_t> original;  // fold-corpus document -> corpus document
  std::vector<uint8_t> selected;
  std::vector<float> idf;
  std::vector<std::pair<uint32_t, DocumentTerms>> held_out;  // in the fold's term ids
  // Terms some held-out document has: the only Naive Bayes weights looked
  // up (a weight costs a logarithm per category).
  std::vector<uint8_t> wanted;
};

// Reports one step of a fold done ("svm"); the caller adds which fold.
using FoldStepDone = std::function<void(const std::string& step)>;

class MethodTuner {
 public:
  virtual ~MethodTuner() = default;
  // The methods this tuner sets (thresholds, objective, calibration input).
  virtual std::vector<Method> methods() const = 0;
  // Progress steps fit_fold() reports per fold.
  virtual uint64_t steps_per_fold() const { return 1; }
  // Work on the whole collection done once, before any fold, that the
  // folds' fits start from.
  virtual void before_folds() {}
  // Fits every candidate on `fold` and keeps its held-out documents' scores.
  virtual void fit_fold(const TuneFold& fold, const FoldStepDone& step_done) = 0;
  // One-of, after the first folds (TuneContext::compact): drops the
  // candidates that cannot win (candidates_in_contention()); the other
  // folds fit only those left.
  virtual void prune() {}
  // Chooses the setting with the best objective (ties keep the earlier
  // candidate) and writes it, its thresholds and objective into *tuned.
  virtual void choose(TunedSettings* tuned) = 0;
  // One-of's second pass (TuneContext::compact): whether this tuner refits
  // its winner on every fold for its full lists, under which progress name.
  virtual bool refits_winner() const { return false; }
  virtual std::string name() const = 0;
  virtual void refit_fold(const TuneFold& /*fold*/) {}
  // After the second pass: the winner's thresholds from its full lists.
  virtual void finish_refit(TunedSettings* /*tuned*/) {}
  // `method`'s out-of-fold scores at the setting chosen, as its classifier
  // gives them, documents x categories. Called once per method, after
  // choose() (and finish_refit()); may hand over the tuner's own copy.
  virtual std::vector<float> member_scores(Method method, const TunedSettings& tuned) = 0;
};

// Rocchio's gamma.
std::unique_ptr<MethodTuner> make_rocchio_tuner(const TuneContext& context);
// kNN's term weighting (concentration), k and vote power.
std::unique_ptr<MethodTuner> make_knn_tuner(const TuneContext& context);
// svm's and logreg's C (and svm's Platt sigmoids), for the linear
// `methods` (svm, logreg or both).
std::unique_ptr<MethodTuner> make_linear_tuner(const TuneContext& context,
                                               const std::vector<Method>& methods);
// nb, bnb and cnb: features (counts or tf-idf) and alpha, for the Naive
// Bayes `methods` (the others keep their defaults, untuned).
std::unique_ptr<MethodTuner> make_naive_bayes_tuner(const TuneContext& context,
                                                    const std::vector<Method>& methods);

}  // namespace autocat::internal
