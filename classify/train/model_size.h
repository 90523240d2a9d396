// The size of the model files training is about to write, estimated from
// the collection before the first byte is written, and the check that the
// target filesystem has room for them.
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>

#include "classify/corpus/training_collection.h"

namespace autocat::internal {

struct ModelSizeEstimate {
  uint64_t model_file = 0;  // model.autocat
  uint64_t knn_index = 0;   // knn.index
  // Written and removed while fitting (the postings, the linear weights
  // and the term strings spilled to disk beside the model).
  uint64_t scratch = 0;
  uint64_t total() const { return model_file + knn_index; }
};

// What training `corpus` writes: model.autocat from the vocabulary and the
// (term, category) pairs of its postings (the sparse Naive Bayes and
// Rocchio weights), with the linear methods' weights counted as dense rows
// (at most that); knn.index exactly from its layout, with the two-step
// arrays of `prune_length` postings per term unless it is 0.
ModelSizeEstimate estimate_model_size(const TrainingCorpus& corpus, uint32_t prune_length);

// "1.9 GB", "820 MB", "12 kB" (decimal units).
std::string format_bytes(uint64_t bytes);

// Throws IOError, one line naming `dir`, if its filesystem has less free
// space than the estimate's total and scratch bytes need; does nothing if
// the free space cannot be read.
void check_free_space(const std::string& dir, const ModelSizeEstimate& estimate);

}  // namespace autocat::internal
