// Fitting: every classifier of a model from a training corpus, at the
// settings cross-validation chose (or the ones a refit keeps), and EM's
// multinomial NB from unlabelled documents.
//
// Thread safety: free functions; fit_model()'s cross-validation runs its
// folds on every core, the linear fits use every core.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/document_reader.h"
#include "classify/corpus/training_collection.h"
#include "classify/methods/linear.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"
#include "classify/train/thresholds.h"
#include "classify/train/train_report.h"

namespace autocat::internal {

// Called by fit_model() with each method's part as soon as it is fitted:
// the trainer writes it to the model file and drops its weights, so the
// parts never take memory all at once.
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

// Throws InvalidArgumentError if a setting `options` gives (one not left
// unset for cross-validation) is out of range. fit_model() checks; training
// checks first, before reading any document.
void check_train_settings(const TrainOptions& options);

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
// `duals`, if given (TunedSettings::linear_duals of a cross-validation on
// these very documents), are the dual solutions each fit starts from.
// `packed`: the weights left packed, as the model file holds them, each
// category's waiting in a file in `spill_dir` if given (see
// for_each_linear_path_model).
void fit_linear_models(const LinearProblem& problem, const TrainingCorpus& corpus,
                       ModelState* model, const PartFitted& part_fitted = {},
                       const std::vector<std::vector<std::vector<float>>>* duals = nullptr,
                       bool packed = false, const std::string& spill_dir = {});

// Drops the weights of a part written to the model file, keeping its
// settings (alpha, C, whether on tf-idf) for the training report.
void drop_part_weights(ModelPart part, ModelState* model);

// Hands freed heap memory back to the system (glibc keeps what the
// cross-validation threads freed in their arenas).
void release_free_memory();

// Semi-supervised EM: reads `unlabelled` (labels ignored) onto the corpus'
// vocabulary and replaces the model's multinomial NB with EM's.
void fit_unlabelled(const UnlabelledInputs& unlabelled, const ReadOptions& read_options,
                    const Analyzer& analyzer, const TrainingCorpus& corpus, ModelState* model,
                    TrainReport* report, const WarningCallback& on_warning);

}  // namespace autocat::internal
