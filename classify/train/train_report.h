// What a training run reports: its progress as it goes (phases) and, at
// the end, what it read, chose and fitted (TrainReport).
//
// Thread safety: plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/document_reader.h"
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
  // Not empty: a line to show once rather than progress (the model's
  // expected size, said as the fit phase begins, before it is written).
  std::string note;
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
  // The model files' size as estimated before they were written
  // (estimate_model_size) and as written.
  uint64_t expected_model_file_bytes = 0;
  uint64_t expected_knn_index_bytes = 0;
  uint64_t model_file_bytes = 0;
  uint64_t knn_index_bytes = 0;
  uint64_t added = 0;  // documents this run added (or replaced, by id)
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
  // Texts the analyses were compared on when they were a uniform sample of
  // the collection (0: all of them).
  uint64_t analysis_sample = 0;
  // Short texts whose analyses were not compared: why (empty otherwise).
  std::string analysis_not_compared;
  // The svm C the analyses were compared at: the one the given analysis's
  // cross-validation chose, or TrainOptions::svm_c (0 when no analysis was
  // compared).
  double analysis_svm_c = 0;
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
  double knn_concentration = 0.0;    // kNN's term weights: idf x concentration^this
  KnnTf knn_tf = KnnTf::kSublinear;  // kNN's tf transform
  // The kNN search cross-validation used and classification defaults to.
  KnnSearchMode knn_search = KnnSearchMode::kExact;
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
  // Candidate settings dropped after the first folds as unable to win
  // (TunedSettings::pruned_candidates).
  uint32_t tuned_pruned_candidates = 0;
  // Categories of 2-4 training documents (too few for cuts of their own
  // by F1), and per Method the ratio of the proportional cuts
  // cross-validation gave them (TunedSettings::rare_cut_ratio: 0 = the
  // others' median cut, -1 = not tried); empty when not tuned here.
  uint32_t rare_categories = 0;
  std::vector<double> rare_cut_ratio;
  // Per Method: the variant of those cuts cross-validation chose
  // (TunedSettings::rare_cut_variant; -1 = not tried).
  std::vector<int> rare_cut_variant;
  // kNN's search cost at this size (knn_postings_per_token() of the
  // collection), the limit it was held to, and whether cross-validation
  // found it within: if not, combo was stacked without kNN and the default
  // chosen among the others.
  double knn_postings_per_token = 0;
  double knn_cost_limit = 0;
  bool knn_keeps_up = true;
  int threshold_folds = 0;  // folds of that cross-validation
  // The methods cross-validated (TrainOptions::methods; empty = every one),
  // the time budget (0 = none), and each method family's run of that
  // cross-validation: folds run, time, used or skipped and why.
  std::vector<Method> methods;
  double time_budget = 0;
  std::vector<TuneRun> tune_runs;
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

}  // namespace autocat::internal
