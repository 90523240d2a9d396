// Folds and samples of a training corpus: how cross-validation deals the
// documents, the sample training tunes its settings on, and a fold's corpus
// as a model fitted on it alone would see it.
//
// Thread safety: free functions over immutable data.
#pragma once

#include <cstdint>
#include <vector>

#include "classify/corpus/training_collection.h"

namespace autocat::internal {

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

// Fold of each of `num_docs` documents for k-fold cross-validation:
// round-robin in document order (documents are in collection order, which
// spreads every category over the folds).
std::vector<uint32_t> round_robin_folds(uint32_t num_docs, uint32_t folds);

struct MeanStd {
  double mean = 0;
  double std = 0;  // sample standard deviation (n - 1); 0 for fewer than 2 values
};
MeanStd mean_and_std(const std::vector<double>& values);

}  // namespace autocat::internal
