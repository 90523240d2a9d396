// Per-category decision thresholds for any-of (multi-label) decisions, tuned
// on held-out training data (Yang's SCut): every fifth training document is
// held out, every classifier is fitted on the rest, and each category gets
// the score threshold that maximizes its F1 on the held-out documents.
//
// Thread safety: free functions over immutable data.
#pragma once

#include <cstdint>
#include <vector>

#include "autocat/options.h"
#include "classify/analyzer.h"
#include "classify/training_collection.h"

namespace autocat::internal {

// The corpus restricted to the documents with keep[d] != 0, renumbered
// densely. Terms keep their ids (df may become 0) so documents of the full
// corpus can be scored by classifiers fitted on the subset.
TrainingCorpus subset_corpus(const TrainingCorpus& corpus, const std::vector<uint8_t>& keep);

// The terms of training document `doc`, as a classifier sees a new document.
std::vector<DocumentTerms> corpus_documents(const TrainingCorpus& corpus);

// The F1-maximizing threshold of one category: `scores` of held-out
// documents, `positive` whether each is labelled with the category. Returns
// the midpoint between the lowest accepted and the highest rejected score.
// When no positive document is held out, or the best F1 is below `min_f1`,
// returns kNeverAssign (Yang's SCut.fbr, taken to its safe end): a category
// the held-out data cannot calibrate is not assigned by any-of decisions.
// "Just above the best held-out score" is no safe cut: posteriors of Naive
// Bayes span hundreds of orders of magnitude, so any test document clears it.
inline constexpr double kNeverAssign = 2.0;  // scores are at most 1
double best_f1_threshold(const std::vector<double>& scores, const std::vector<uint8_t>& positive,
                         double min_f1);

// Thresholds[method][category] for every Method, tuned as described above
// with `classify` options (kNN's k). Empty if the corpus has fewer than 10
// documents (too few to hold any out).
std::vector<std::vector<double>> tune_thresholds(const TrainingCorpus& corpus,
                                                 const AnalyzerSettings& analyzer,
                                                 const TrainOptions& options,
                                                 const ClassifyOptions& classify);

}  // namespace autocat::internal
