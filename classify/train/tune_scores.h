// Out-of-fold scores as the tuners keep them (a few best per document),
// and what is read off them: per-category SCut thresholds and the
// cross-validated objective. Shared by every MethodTuner and the
// calibrations.
//
// Thread safety: free functions; keep_best() uses a thread-local scratch
// list, so fold threads may call it at once on different documents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/training_collection.h"

namespace autocat::internal {

// The best scores of each document: keeping a few per document (not all K)
// bounds memory by documents x kKeptScores, whatever the number of
// categories. A cut never goes below a score left out (thresholds_from), so
// leaving scores out can only make cuts stricter, never let unseen
// documents through.
inline constexpr size_t kKeptScores = 64;
// Any-of, Naive Bayes: its many candidates (features x alphas) are compared
// on this many best scores per document, and the winners' full lists are
// made in a second pass over the folds (a quarter of the memory; on
// Reuters the same winners as with full lists).
inline constexpr size_t kComparedScores = 16;

// A document with no top category (compact one-of lists).
inline constexpr uint32_t kNoCategory = std::numeric_limits<uint32_t>::max();

// 12 bytes, not 16: the lists are most of any-of cross-validation's
// memory, and a double needs no 8-byte alignment to be read on the
// targets built for.
struct __attribute__((packed, aligned(4))) ScoredCategory {
  uint32_t category;
  double score;
};
static_assert(sizeof(ScoredCategory) == 12);
// A document's best scores, and the largest score left out: a category
// missing from `best` scored at most `dropped` there.
struct DocScores {
  std::vector<ScoredCategory> best;
  double dropped = 0.0;
};
using ScoreLists = std::vector<DocScores>;  // per training document

// Keeps the `max_kept` best positive `scores` in *kept_scores.
void keep_best(const std::vector<double>& scores, DocScores* kept_scores,
               size_t max_kept = kKeptScores);

// A held-out document's scores: keep_best() into *lists, or with `top_only`
// (one-of's compact first pass) only its top category into *top, as
// keep_best() would list it first; otherwise the `max_kept` best.
void keep_scores(const std::vector<double>& fold_scores, bool top_only, uint32_t* top,
                 DocScores* lists, size_t max_kept = kKeptScores);

bool has_label(const TrainingCorpus& corpus, uint32_t doc, uint32_t category);

// Per-category SCut thresholds from out-of-fold scores; categories with too
// few documents get the median cut of the others.
// With `rare_cuts` (methods whose held_out_cuts_transfer, any-of decisions),
// categories of 2-4 documents may instead get proportional cuts of their
// own held-out scores, when the folds show those raise their F1 without
// costing micro-F1 (choose_rare_cuts in tune_scores.cc).
// `rare_cut_ratio`, if given, receives the ratio chosen (0: the borrowed
// cuts kept).
// With `rare_cuts`, the folds also choose among variants of these cuts
// (`rare_variant` receives it; -1 without rare_cuts): kRareCutsStandard
// as above; kRareCutsOneDocument, categories of one training document
// also cut at the ratio chosen; kRareCutsLooserFloor, a cut of its own for
// every category of 5 or more documents whose out-of-fold F1 reaches 0.2
// (not 0.3); kRareCutsBoth. A variant replaces the standard cuts only if
// its out-of-fold macro-F1 exceeds theirs by more than
// kRareCutMicroTolerance and its micro-F1 is at most that much lower.
inline constexpr int kRareCutsStandard = 0;
inline constexpr int kRareCutsOneDocument = 1;
inline constexpr int kRareCutsLooserFloor = 2;
inline constexpr int kRareCutsBoth = 3;
// The least out-of-fold F1 of a category's own cut under `variant`:
// kMinUsefulF1, or kLooserMinUsefulF1 in the looser-floor variants.
inline constexpr double kLooserMinUsefulF1 = 0.2;
double min_useful_f1(int variant);
// "standard", "one-document", "looser-floor", "one-document+looser-floor";
// "none" for -1.
const char* rare_cut_variant_name(int variant);
std::vector<double> thresholds_from(const TrainingCorpus& corpus, const ScoreLists& lists,
                                    bool rare_cuts = false, double* rare_cut_ratio = nullptr,
                                    int* rare_variant = nullptr);
// Whether `method`'s thresholds_from takes rare_cuts under `decision`.
bool takes_rare_cuts(Method method, Decision decision);

// How well out-of-fold decisions match the labels: micro-F1 of any-of
// decisions with `thresholds`, or the accuracy of one-of decisions.
double objective(const TrainingCorpus& corpus, const ScoreLists& lists,
                 const std::vector<double>& thresholds, Decision decision);

// The accuracy of one-of decisions from each document's top category, as
// objective() counts it.
double top_accuracy(const TrainingCorpus& corpus, const std::vector<uint32_t>& top);

// Successive halving for one-of decisions: after the first folds, the
// candidates (of one method) whose top categories are `tops` keep only
// those not clearly worse than the best on the documents scored so far.
// "Clearly worse": McNemar's test on the documents exactly one of the two
// gets right, z >= kPruneZ (one-sided p < 0.0014), so a candidate is
// dropped only where the remaining folds would have to reverse a
// difference that large. Entries without tops (empty) stay as they are;
// returns whether each candidate is still in.
inline constexpr double kPruneZ = 3.0;
std::vector<bool> candidates_in_contention(const TrainingCorpus& corpus,
                                           const std::vector<uint8_t>& scored,
                                           const std::vector<const std::vector<uint32_t>*>& tops);

// Documents x categories from kept lists (a category left out of a list
// scored little: 0).
std::vector<float> score_matrix(const TrainingCorpus& corpus, const ScoreLists& lists);

}  // namespace autocat::internal
