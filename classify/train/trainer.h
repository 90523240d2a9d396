// Training: reads labelled documents, writes the training collection, fits
// every classifier from its posting lists and writes the model file.
//
// Thread safety: one training function at a time per model directory; the
// model directory's lock (see model_dir.h) refuses a second at once, in this
// process or another. Reading and analysis run on the
// calling thread; the cross-validation folds of fit_model() run on every
// core (std::thread::hardware_concurrency()).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/document_reader.h"
#include "classify/corpus/training_collection.h"
#include "classify/methods/em.h"
#include "classify/model/model_io.h"
#include "classify/train/thresholds.h"

namespace autocat::internal {

// Where a training run is, for progress lines. Training runs in phases, one
// after another; a phase is reported when it starts (done 0), as its units
// are done, and when it ends (finished, with its seconds).
struct TrainProgress {
  // "read", "copy collection", "fold journal", "compare analyses",
  // "keep settings", "load collection", "cross-validate", "fit", "write".
  std::string phase;
  std::string detail;  // which part of it: "svm, fold 3 of 5", an analysis; may be empty
  std::string unit;    // what done and total count ("documents", "fits", "models"); may be empty
  uint64_t done = 0;
  uint64_t total = 0;  // 0: not known in advance
  bool finished = false;
  double seconds = 0;  // since the phase started
};
using TrainProgressCallback = std::function<void(const TrainProgress&)>;

// One phase of a training run, as it ended (TrainProgress with finished).
struct TrainPhase {
  std::string phase;
  std::string detail;  // the analysis of a "compare analyses" phase, ...
  std::string unit;
  uint64_t count = 0;  // units done
  double seconds = 0;
};

// A category left without a threshold, and why: fewer than kMinPositives
// training documents (and no other category's cut to borrow), or no cut
// reached kMinUsefulF1 on held-out scores.
struct NeverAssigned {
  std::string name;
  uint32_t documents = 0;  // training documents labelled with it
  bool too_few_documents = false;
};

struct TrainReport {
  uint64_t documents = 0;  // documents in the collection
  uint64_t added = 0;      // documents this run added (or replaced, by id)
  // add_to_model: journal records folded into the new generation (see
  // journal.h): documents learned and forgotten on the open model.
  uint64_t journal_learned = 0;
  uint64_t journal_forgotten = 0;
  uint64_t skipped_unlabelled = 0;
  uint64_t skipped_empty = 0;  // no terms after analysis
  uint32_t categories = 0;
  int ngrams = 1;                // the model's AnalyzerSettings::ngrams
  std::string stemmer = "none";  // the model's AnalyzerSettings::stemmer
  // Terms per document under the given analysis (0 if not counted).
  double mean_tokens = 0;
  // Short texts (TrainOptions::choose_short_text_analysis): the analyses
  // cross-validation compared, named ("words", "words and bigrams",
  // "stems (english)", ...), each with its objective; the given one first.
  bool analysis_chosen = false;
  std::vector<std::pair<std::string, double>> analysis_objective;
  Method default_method = Method::kKnn;
  // True if default_method is the best of method_objective (indexed by
  // Method; -1 = not tuned), chosen by cross-validation.
  bool default_method_chosen = false;
  std::vector<double> method_objective;
  // Naive Bayes' alpha of nb, bnb, cnb, and every candidate tried:
  // nb_alpha_objective[method] = (alpha, objective) pairs.
  std::vector<double> nb_alpha;
  std::vector<std::vector<std::pair<double, double>>> nb_alpha_objective;
  // Per Naive Bayes method: trained on tf-idf vectors (else term counts).
  std::vector<bool> nb_tfidf;
  Decision decision = Decision::kOneOf;  // the model's decision mode
  int knn_k = kDefaultKnnK;              // chosen by cross-validation unless set
  int knn_similarity_power = 1;
  double knn_concentration = 0.0;  // kNN's term weights: idf x concentration^this
  double rocchio_gamma = 0.0;
  // C of the linear SVM and of logistic regression (0 = not fitted).
  double svm_c = 0.0;
  double logreg_c = 0.0;
  bool tuned = false;  // thresholds (and the above) tuned by cross-validation
  // add_to_model: the settings above, the thresholds and the calibrations
  // are the previous generation's, kept as cross-validation chose them
  // then; only the models were fitted again.
  bool settings_kept = false;
  // add_to_model without `retune`: why it cross-validated all the same
  // (the categories or the decision mode changed, ...); empty otherwise.
  std::string retune_reason;
  // Cross-validations this run ran (each fits every method on every fold:
  // most of a training's time): one per analysis compared, one for the
  // model; 0 when the settings were kept or not tuned.
  uint32_t cross_validations = 0;
  // Documents that cross-validation ran on: all, or a sample of a large
  // collection (TrainOptions::tuning_sample); 0 without tuning.
  uint64_t tuned_on_documents = 0;
  bool tuned_on_sample = false;  // fewer than the collection's documents
  // Of those, documents repeating an earlier one's terms: the objectives
  // are optimistic for new text (TunedSettings::copied_documents).
  uint32_t tuned_copied_documents = 0;
  int threshold_folds = 0;                  // folds of that cross-validation
  std::vector<KnnCandidate> knn_objective;  // every setting tried, with its objective
  std::vector<std::pair<double, double>> rocchio_gamma_objective;
  // Per method (indexed by Method): categories cross-validation could not
  // give a threshold; any-of and "other" never assign them.
  std::vector<std::vector<NeverAssigned>> never_assigned;
  uint32_t terms = 0;
  uint32_t selected_terms = 0;
  double analyze_seconds = 0, fit_seconds = 0, total_seconds = 0;
  std::vector<TrainPhase> phases;  // in the order they ran
  // Semi-supervised EM (train --unlabelled): documents read from those
  // inputs, and what EM did (em.iterations 0 = not run or not chosen).
  uint64_t unlabelled_read = 0;
  EmReport em;
};

// Documents whose labels are ignored, for semi-supervised EM on multinomial
// NB (see em.h). They are analyzed and mapped onto the labelled documents'
// vocabulary; they never enter the training collection.
struct UnlabelledInputs {
  std::vector<std::string> inputs;
  // Xapian databases whose documents are read as unlabelled (an
  // application's index: DatabaseInput::labelled false).
  std::vector<DatabaseInput> databases;
  EmOptions em;

  bool empty() const { return inputs.empty() && databases.empty(); }
};

// Called by fit_model() with each method's part as soon as it is fitted:
// the trainer writes it to the model file and drops its weights, so the
// parts never take memory all at once (0.2 GB each at a million documents).
using PartFitted = std::function<void(ModelPart, ModelState*)>;

// Settings cross-validated on a sample of the collection (tune_settings()
// of the corpus of the documents tuning_sample() chose), and its size.
struct SampleTuning {
  TunedSettings settings;
  uint64_t documents = 0;
  // The settings of the model a refit replaces (add_to_model), not
  // cross-validated on this collection; `documents` is then 0.
  bool kept = false;
};

// The decision mode of a model of `corpus` (its labels suffice): the
// options', or any-of if some document has several labels or none.
Decision model_decision(const TrainingCorpus& corpus, const TrainOptions& options);

// Fits every classifier from a corpus (no I/O), the linear methods last.
// Settings are cross-validated on the corpus, or on a sample of it
// (TrainOptions::tuning_sample), or taken from `tuned_on_sample`.
// `fit_linear` false leaves svm and logreg with their settings (C, and the
// calibration cross-validation chose) but no weights: cross-validation
// fits them itself, per C, and the trainer with fit_linear_models().
ModelState fit_model(const TrainingCorpus& corpus, const AnalyzerSettings& analyzer,
                     const TrainOptions& options, bool fit_linear = true,
                     const PartFitted& part_fitted = {},
                     const SampleTuning* tuned_on_sample = nullptr);

// Fits svm's and logreg's weights on `problem` (make_linear_problem() of
// `corpus`) at the settings fit_model() left in `model`. `corpus` gives
// only the labels here, so its postings may be elsewhere meanwhile.
void fit_linear_models(const LinearProblem& problem, const TrainingCorpus& corpus,
                       ModelState* model, const PartFitted& part_fitted = {});

// Trains a model directory from inputs (see read_documents). Documents
// without labels are skipped and counted. Throws InvalidArgumentError if no
// labelled document with terms remains. With `unlabelled` inputs (read with
// the same read options), multinomial NB is fitted by EM.
TrainReport train_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                        const TrainOptions& options, const ReadOptions& read_options,
                        const WarningCallback& on_warning, const UnlabelledInputs& unlabelled = {},
                        const TrainProgressCallback& on_progress = {});

// Adds (or replaces, by id) documents in an existing model's training
// collection and fits every classifier again, with the analyzer and options
// stored in the model; documents already there are not analyzed again.
// Unless `retune`, the model's settings (default method, k, gamma, alpha,
// C, features), thresholds and calibrations are kept and the classifiers
// are only refitted on the new collection, skipping the cross-validation
// that is most of a training's time; they are cross-validated again (and
// TrainReport::retune_reason says why) when they cannot be kept: the
// categories or the decision mode changed, the model was too small to tune,
// or its file predates some of them.
// The installed generation's journal (documents learned and forgotten since
// it was trained) is applied first, so the new generation holds them and
// starts without a journal; with no inputs, that is all it adds (a refit).
// Throws NotFoundError if `model_dir` holds no model, InvalidArgumentError
// if there is nothing to add (the model is then unchanged), ModelFormatError
// if the journal is damaged.
TrainReport add_to_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                         const ReadOptions& read_options, const WarningCallback& on_warning,
                         const TrainProgressCallback& on_progress = {}, bool retune = false);

}  // namespace autocat::internal
