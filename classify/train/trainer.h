// Training: reads labelled documents (ingest.h), writes the training
// collection, may choose the analysis of short texts (analysis_choice.h),
// fits every classifier from its posting lists (fit.h), writes the model
// file and installs the new generation of the model directory.
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
#include "classify/train/fit.h"
#include "classify/train/thresholds.h"
#include "classify/train/train_report.h"

namespace autocat::internal {

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
