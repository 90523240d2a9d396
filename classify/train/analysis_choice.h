// The analysis of short texts (TrainOptions::choose_short_text_analysis):
// the kept texts (all, or a uniform sample of a large collection) are
// cross-validated, by svm alone (TuneScope::kSvm), under the given analysis
// (over svm's C candidates) and, at the C it chose, under bigrams, English
// stemming or both, and without the stopword list; the best one is kept
// when it beats the given one clearly. Every method is cross-validated
// afterwards under the analysis chosen, as without a choice.
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
  // The kept texts were a sample and another analysis won: the collection
  // at `training_db` is still the given analysis', to be read again.
  bool read_again = false;
};

// Cross-validates the kept texts under the given analysis (whose whole
// collection is at `training_db` already, or held in `held`) and under the
// candidates; leaves the winner's collection at `training_db` unless the
// texts were a sample and another analysis won (AnalysisChoice::
// read_again: `held` is left as it was). Documents held under a given
// analysis that stays are written.
AnalysisChoice choose_analysis(const KeptTexts& kept, const AnalyzerSettings& given,
                               const TrainOptions& options, const std::string& training_db,
                               TrainReport* report, PhaseTracker* phases, HeldDocuments* held);

}  // namespace autocat::internal
