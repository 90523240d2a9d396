// Stratified k-fold cross-validation over a training corpus: the documents
// are dealt into K folds, and for each fold every classifier is fitted on the
// other K-1 folds exactly as `autocat train` would fit a model on those
// documents alone (same options, a vocabulary of the terms they contain),
// then the held-out fold is categorized and evaluated, with every requested
// method on the same folds.
//
// Thread safety: free functions over immutable data; cross_validate() runs
// its folds one after another (each fold's fit_model() cross-validates its
// own settings on every core).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"
#include "classify/analyzer.h"
#include "classify/evaluation.h"
#include "classify/training_collection.h"

namespace autocat::internal {

struct CrossValidationOptions {
  uint32_t folds = 5;  // K, at least 2
  uint32_t seed = 1;   // the same seed deals the same folds, on any platform
  // Methods evaluated, each on the same folds and fitted models.
  std::vector<Method> methods = {Method::kKnn};
  // kNN's k and the decision options; `method` is ignored (see methods).
  ClassifyOptions classify;
  // Documents without labels (kept with TrainOptions::keep_unlabelled) count
  // as "no category" documents, or are skipped. Unset: counted when the
  // decision mode is any-of, skipped for one-of.
  std::optional<bool> count_unlabelled;
};

// The results of one method.
struct MethodFolds {
  Method method = Method::kKnn;
  std::vector<Evaluation> folds;       // one per fold, over its held-out documents
  std::vector<LogLoss> fold_log_loss;  // one per fold; empty unless gives_probabilities()
  Evaluation pooled{std::vector<std::string>()};  // every held-out document of every fold
  LogLoss pooled_log_loss;
};

struct CrossValidationResult {
  uint32_t folds = 0, seed = 0;
  Decision decision = Decision::kOneOf;  // the mode every fold decided with
  bool count_unlabelled = false;
  std::vector<uint32_t> fold_of;         // the fold of each corpus document
  std::vector<uint32_t> fold_documents;  // documents held out in each fold
  // Documents with the same terms and counts as an earlier one, held out in
  // its fold (stratified_folds).
  uint32_t copied_documents = 0;
  uint64_t unlabelled_counted = 0, unlabelled_skipped = 0;
  std::vector<MethodFolds> methods;  // in the order of CrossValidationOptions::methods
};

// The fold (0..folds-1) of each corpus document, stratified: documents are
// grouped by their rarest label (the one with the fewest documents; ties go
// to the first category; unlabelled documents form one more group), each
// group is shuffled with std::mt19937 seeded with `seed` (a Fisher-Yates
// shuffle with its own unbiased draw, not std::shuffle, whose result the
// standard leaves to the library), and the groups are dealt round-robin
// with one running counter. So, copies aside, each fold holds, of every
// group, within one document of the same number, and fold sizes differ by at
// most one.
// Throws InvalidArgumentError if folds < 2 or a category has fewer
// documents than folds (naming the category and its count).
// Copies of one document (the same terms with the same counts: a reply's
// subject line, a re-sent news item) are then moved to the fold of the
// first one dealt, so that no copy is scored by a model trained on another.
std::vector<uint32_t> stratified_folds(const TrainingCorpus& corpus, uint32_t folds, uint32_t seed);
// The same with the corpus's copy_groups() already at hand.
std::vector<uint32_t> stratified_folds(const TrainingCorpus& corpus, uint32_t folds, uint32_t seed,
                                       const std::vector<uint32_t>& copy_of);

// For each document, the lowest-numbered document with the same terms and
// counts (itself if it has no copy; documents without terms are never
// copies). Found by a 64-bit hash of each document's term list: documents
// that differ but share a hash are taken for copies, which can only put
// them in one fold.
std::vector<uint32_t> copy_groups(const TrainingCorpus& corpus);
// The documents of copy_groups() `copy_of` that copy an earlier one.
uint32_t count_copies(const std::vector<uint32_t>& copy_of);

// A stratified sample of at most about `max_docs` documents on which
// training cross-validates its settings when the collection is larger
// (TrainOptions::tuning_sample): keep[d] != 0 for a sampled document. The
// documents are grouped as in stratified_folds() and each group keeps the
// same share of its documents, rounded up, but at least the whole group or
// kMinTuningSampleGroup of it, whichever is smaller, so that a rare
// category keeps enough documents to tune its threshold (the sample may
// exceed max_docs by that much). Deterministic for a seed, as above.
inline constexpr uint32_t kMinTuningSampleGroup = 50;
std::vector<uint8_t> tuning_sample(const TrainingCorpus& corpus, uint32_t max_docs, uint32_t seed);

// The training documents of a fold: the documents with keep[d] != 0 and only
// the terms they contain, renumbered densely in the same (sorted) order, as
// load_training_corpus() would read them from a collection of those
// documents alone. `fold_term[t]` is the fold's id of corpus term t, or -1.
struct FoldCorpus {
  TrainingCorpus corpus;
  std::vector<int64_t> fold_term;
};
FoldCorpus fold_corpus(const TrainingCorpus& corpus, const std::vector<uint8_t>& keep);

// A corpus document as a model fitted on the fold sees it: its terms in the
// fold's ids; terms the fold lacks are unknown (still counted in
// total_tokens, as for any new document).
DocumentTerms fold_document(const DocumentTerms& doc, const std::vector<int64_t>& fold_term);

// Runs the cross-validation. `train` are the training options of every fold
// fit (threshold tuning included); `analyzer` the settings the corpus was
// analyzed with. `on_progress`, if set, is called with the number of
// held-out documents evaluated so far. Throws as stratified_folds().
CrossValidationResult cross_validate(const TrainingCorpus& corpus, const AnalyzerSettings& analyzer,
                                     const TrainOptions& train,
                                     const CrossValidationOptions& options,
                                     const std::function<void(uint64_t)>& on_progress = {});

struct MeanStd {
  double mean = 0;
  double std = 0;  // sample standard deviation (n - 1); 0 for fewer than 2 values
};
MeanStd mean_and_std(const std::vector<double>& values);

}  // namespace autocat::internal
