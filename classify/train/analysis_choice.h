// The analysis of short texts (TrainOptions::choose_short_text_analysis):
// the kept texts are cross-validated under the given analysis and under
// bigrams, English stemming or both, and the best one is kept when it
// beats the given one clearly.
//
// Thread safety: one choice at a time per model directory (it writes the
// new generation's training collection).
#pragma once

#include <string>

#include "autocat/options.h"
#include "classify/text/analyzer.h"
#include "classify/train/fit.h"
#include "classify/train/ingest.h"
#include "classify/train/phase_tracker.h"
#include "classify/train/train_report.h"

namespace autocat::internal {

struct AnalysisChoice {
  AnalyzerSettings settings;
  SampleTuning tuning;  // the chosen analysis' cross-validation
};

// Cross-validates the kept texts under the given analysis (its collection
// is at `training_db` already) and under the candidates with bigrams,
// English stemming or both; leaves the winner's collection at
// `training_db`.
AnalysisChoice choose_analysis(const KeptTexts& kept, const AnalyzerSettings& given,
                               const TrainOptions& options, const std::string& training_db,
                               TrainReport* report, PhaseTracker* phases);

}  // namespace autocat::internal
