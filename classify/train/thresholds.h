// Per-category decision thresholds (any-of decisions, one-of's "other",
// Rocchio's radius), tuned by k-fold cross-validation on the training data
// (Yang's SCut): every classifier is fitted k times, each time without one
// fold, and scores that fold; each category then gets the score threshold
// that maximizes its F1 over these out-of-fold scores. Categories too rare to
// calibrate fall back to the median threshold of the others, or, for some
// methods and when the folds show it pays, to a proportional cut of their
// own scores (rank_cut_threshold). kNN's k and vote power and Rocchio's
// gamma are chosen on the same folds.
//
// tune_settings() (tune_settings.cc) deals the folds and runs one
// MethodTuner per method family on each (method_tuner.h, tune_*.cc);
// fit_calibrations() is in tune_calibration.cc.
//
// Thread safety: free functions over immutable data.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/training_collection.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"

namespace autocat::internal {

// Below this cross-validated F1 a per-category cut is noise.
inline constexpr double kMinUsefulF1 = 0.3;
// Categories with fewer training documents than this get a fallback cut
// (the median of the others', kNeverAssign when no other has one).
inline constexpr size_t kMinPositives = 5;

// The F1-maximizing threshold of one category: `scores` of held-out
// documents, `positive` whether each is labelled with the category;
// `missed_positives` more positive documents scored 0 (they are never
// accepted: a category needs a score above 0). Returns the midpoint between
// the lowest accepted and the highest rejected score, or kNeverAssign when
// there is no positive document or the best F1 is below `min_f1`.
// "Just above the best held-out score" is no safe cut: posteriors of Naive
// Bayes span hundreds of orders of magnitude, so any test document clears it.
double best_f1_threshold(const std::vector<double>& scores, const std::vector<uint8_t>& positive,
                         double min_f1, size_t missed_positives = 0);

// A proportional cut for a category too rare for best_f1_threshold: the
// threshold that accepts about `ratio` x `documents` of its held-out
// `scores` (at least one; ties at the cut all accepted; scores of 0 never),
// midway below the lowest accepted. kNeverAssign when no score is above 0,
// or when the cut would accept every score above 0 (no held-out score
// below it shows where to place it). Scale-free, unlike a cut borrowed from
// other categories, which a rare category's low scores seldom reach.
double rank_cut_threshold(std::vector<double> scores, uint32_t documents, double ratio);
// The same on scores already made positive_descending(): tried at several
// ratios, a category's scores are sorted once.
double rank_cut_of_descending(const std::vector<double>& scores, uint32_t documents, double ratio);
// `scores` above 0, largest first.
std::vector<double> positive_descending(std::vector<double> scores);
// The ratios rank_cut_threshold is tried at (thresholds_from).
const std::vector<double>& rare_cut_ratios();
// How much cross-validated micro-F1 the rare categories' own cuts may cost
// (each wrong guess is a false positive): the margin within which training
// treats two cross-validated scores as equal (the analysis choice's too).
inline constexpr double kRareCutMicroTolerance = 0.002;
// Categories of a single training document keep the borrowed cut: the fold
// that holds that document out never saw the category, so no held-out
// score can show a cut of its own to work.
inline constexpr uint32_t kMinRankCutPositives = 2;
// Whether a category of `documents` training documents is rare: too few for
// its own F1-tuned cut, enough for a proportional one.
inline bool is_rare_category(uint64_t documents) {
  return documents >= kMinRankCutPositives && documents < kMinPositives;
}

// One method family's part of a cross-validation (one tuner): the methods
// it sets, the folds it ran of those dealt, its time, and whether its
// results were used. Under a time budget (TrainOptions::time_budget) a
// family may be skipped before its first fold or stopped after some, its
// results then dropped and its methods left untuned; `reason` says why.
struct TuneRun {
  std::vector<Method> methods;
  uint32_t folds_run = 0;
  uint32_t folds = 0;
  double seconds = 0;  // its fits' time (summed over the threads running them)
  bool used = false;
  std::string reason;  // why not used; empty when used
};

// What cross-validation chose.
struct TunedSettings {
  // thresholds[method][category]; empty if the corpus is too small to tune.
  std::vector<std::vector<double>> thresholds;
  int knn_k = kDefaultKnnK;
  int knn_similarity_power = 1;
  double knn_concentration = 0.0;  // knn_term_weights' exponent
  KnnTf knn_tf = KnnTf::kSublinear;
  double rocchio_gamma = 0.0;
  // The cross-validated objective of each candidate (micro-F1 for any-of
  // models, accuracy for one-of), for the training report.
  std::vector<KnnCandidate> knn_objective;
  std::vector<std::pair<double, double>> rocchio_gamma_objective;
  // svm and logreg: C in force and every candidate's objective; svm's Platt
  // sigmoid per category, fitted on out-of-fold decision values at that C
  // (empty without tuning).
  double svm_c = 1.0, logreg_c = 1.0;
  std::vector<std::pair<double, double>> svm_c_objective, logreg_c_objective;
  // Candidates dropped after the first folds (one-of successive halving):
  // they are missing from the *_objective lists.
  uint32_t pruned_candidates = 0;
  // The tuned collection's linear dual solutions at the C chosen,
  // [svm, logreg][category][document]: the final fits on the same
  // documents start there, and so converge at once (not kept in models).
  std::vector<std::vector<std::vector<float>>> linear_duals;
  std::vector<float> svm_slope, svm_intercept;
  // nb, bnb, cnb (kNaiveBayesMethods order): alpha in force and every
  // candidate's objective.
  std::vector<double> nb_alpha;
  std::vector<std::vector<std::pair<double, double>>> nb_alpha_objective;
  // Per Naive Bayes method: tf-idf features (NaiveBayesModel::idf) or counts.
  std::vector<bool> nb_tfidf;
  // Per Method: the best cross-validated objective (-1 = not tuned), to
  // choose the default method.
  std::vector<double> method_objective;
  // Per Method: the ratio of the rare categories' own cuts chosen at its
  // settings (rank_cut_threshold; 0 = they borrow the others' median cut),
  // or -1 where the method does not try them (takes_rare_cuts).
  std::vector<double> rare_cut_ratio;
  // Per Method: the variant of those cuts the folds chose (kRareCuts*,
  // tune_scores.h), -1 where not tried.
  std::vector<int> rare_cut_variant;
  // Each method's calibration (by method, combo's empty) and combo's
  // stacked model, fitted on the out-of-fold scores at the settings chosen;
  // the thresholds above are on the calibrated scale. Empty without
  // tuning.
  std::vector<Calibration> calibration;
  ComboModel combo;
  // Documents of the tuned collection with the same terms and counts as an
  // earlier one (copy_groups). Folds here are round-robin, so copies land
  // on both sides of a cut and the objectives above are optimistic for new
  // text; holding copies together did not choose better settings (see
  // BENCHMARKS.md), so it is only reported.
  uint32_t copied_documents = 0;
  // kNN's estimated search cost at the size of the model (postings walked
  // per token of a document; knn_postings_per_token()) and whether it is
  // within TrainOptions::knn_cost_limit. If not, combo is stacked without
  // kNN and the default method is chosen among the others.
  double knn_postings_per_token = 0;
  bool knn_keeps_up = true;
  // Each method family's run, cheapest first under a time budget; empty
  // without cross-validation.
  std::vector<TuneRun> runs;
};

// The postings a kNN search walks per token of a document, averaged over
// the collection's documents as queries, for a model of `model_documents`
// documents of which `corpus` is a uniform sample (or all): a document's
// search walks the posting list of each of its terms, sum of df(t), so the
// mean is sum_t df(t)^2 / N; a sample of n documents scales it by N / n.
double knn_postings_per_token(const TrainingCorpus& corpus, uint64_t model_documents);

// The Naive Bayes methods, in the order of TunedSettings::nb_alpha.
const std::vector<Method>& naive_bayes_methods();

// Candidates tried when TrainOptions leave kNN's k or Rocchio's gamma unset.
const std::vector<int>& knn_k_candidates();
const std::vector<double>& rocchio_gamma_candidates();
// Exponents of the class concentration in kNN's term weights tried when
// TrainOptions leave it negative (knn_term_weights; 0 = idf alone).
const std::vector<double>& knn_concentration_candidates();
// kNN's tf transforms cross-validation tries, each with every concentration.
const std::vector<KnnTf>& knn_tf_candidates();
// Naive Bayes' alpha tried when TrainOptions leave it 0.
const std::vector<double>& nb_alpha_candidates();
// C tried for svm and logreg (ascending) when TrainOptions leave it 0.
const std::vector<double>& linear_c_candidates(Method method);

// Called by tune_settings() as its work advances: `done` of `total` steps
// (each method's fits on one fold, then the calibrations), `step` the one
// just done ("svm, fold 3 of 5"). Calls come from the fold threads one at a
// time, never at once.
using TuneProgressCallback =
    std::function<void(uint64_t done, uint64_t total, const std::string& step)>;

// Which methods tune_settings() cross-validates: every one (then the
// calibrations and combo), or svm alone, the cheap judge of one analysis
// against another (choose_analysis()).
enum class TuneScope { kEveryMethod, kSvm };

// Cross-validates every method over options.threshold_folds folds: chooses
// kNN's k, Rocchio's gamma, the linear methods' C and each Naive Bayes
// method's alpha (when options leave them unset) by the
// objective of `decision`, and tunes the thresholds of every method.
// Without tuning (too few documents, or options.tune_thresholds false) the
// options' values or the defaults are returned with no thresholds.
// TuneScope::kSvm tunes svm alone; the other methods' objectives stay -1
// and nothing is calibrated.
// `model_documents`: the documents of the model these settings are for,
// when `corpus` is a sample of them (0 = the corpus's own), for kNN's cost.
// `deadline`, with TrainOptions::time_budget: when the cross-validation
// must end, the final fit's estimated time (final_fit_seconds(), given the
// fold times) reserved before it.
TunedSettings tune_settings(const TrainingCorpus& corpus, const TrainOptions& options,
                            Decision decision, const TuneProgressCallback& on_progress = {},
                            TuneScope scope = TuneScope::kEveryMethod, uint64_t model_documents = 0,
                            std::optional<std::chrono::steady_clock::time_point> deadline = {});

// Whether `method` is cross-validated under `options` (TrainOptions::methods).
bool method_selected(const TrainOptions& options, Method method);
// The default method when nothing was cross-validated: kNN for every
// method without a time budget (as with --threshold-folds 0), else svm if
// selected (the best untuned on 20 Newsgroups and Reuters), then kNN, then
// the first named.
Method untuned_default_method(const TrainOptions& options);
// Throws InvalidArgumentError if TrainOptions::methods names combo with
// fewer than two other methods.
void check_methods(const TrainOptions& options);

// Folds over the out-of-fold scores on which combo's own objective is
// cross-fitted (TunedSettings::method_objective).
inline constexpr uint32_t kComboObjectiveFolds = 5;

// Fits each member's calibration on its out-of-fold scores
// (`member_scores[m]`, documents x categories, in combo_members() order, as
// the classifier gives them; `scored[d]` whether d was scored), moves
// every member's thresholds onto the calibrated scale (any-of: each cut
// through its category's sigmoid, the same decisions; one-of: re-tuned on
// the calibrated scores), and fits combo, its thresholds and its objective
// (cross-fitted over kComboObjectiveFolds). Fills tuned->calibration,
// combo, thresholds and method_objective[kCombo]. Combo stacks every member
// but kNN when tuned->knn_keeps_up is false.
// Members whose scores are empty (not cross-validated) keep raw scores
// and their thresholds, and are left out of combo; combo is fitted only
// with `fit_combo_too` and at least two members.
void fit_calibrations(const TrainingCorpus& corpus, const std::vector<uint8_t>& scored,
                      Decision decision, const std::vector<std::vector<float>>& member_scores,
                      TunedSettings* tuned, bool fit_combo_too = true);

}  // namespace autocat::internal
