// kNN's search: KnnIndex::neighbours (knn_search.cc) treats the new
// document as a query: for each of its terms, it walks that term's
// postings over the training collection and accumulates w(t,q)·w(t,d) per
// training document, then keeps the top k.
// Default (KnnSearch::kExhaustive): exact cosine of sublinear tf-idf
// vectors over every query term; the terms in a quarter or more of the
// training documents are added as dense columns, the rest posting by
// posting, and the top k is selected from the documents above a sampled
// threshold, faster than the plain posting walk with a heap.
// KnnSearch::kMaxScore finds the same neighbours with bit-identical
// similarities while skipping postings; where the accumulator fits in cache
// it is slower, so it is not the default (BENCHMARKS.md, "kNN search and scale").
// Approximate mode (ClassifyOptions knn_max_query_terms / knn_max_df_ratio)
// walks fewer query terms.
//
// This header holds what the live overlay (knn_live.cc) shares with the
// kernels: the ranking order of neighbours and the top-k heap.
//
// Thread safety: the kernels keep their scratch memory per thread, so
// KnnIndex::neighbours may run on many threads at once; a TopK belongs to
// one call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "classify/methods/knn_index.h"

namespace autocat::internal {

// Ranking order of neighbours: higher similarity first, then lower doc.
inline bool better(const KnnIndex::Neighbour& a, const KnnIndex::Neighbour& b) {
  return a.similarity > b.similarity || (a.similarity == b.similarity && a.doc < b.doc);
}

// The best `keep` neighbours offered so far, in a heap whose front is the
// worst one kept. Most candidates fall below it and are rejected by the
// first comparison.
class TopK {
 public:
  using Neighbour = KnnIndex::Neighbour;

  // Reuses `heap` (cleared) as storage.
  TopK(std::vector<Neighbour>* heap, size_t keep) : heap_(*heap), keep_(keep) {
    heap_.clear();
    heap_.reserve(keep);
  }

  void offer(uint32_t doc, float similarity) {
    if (!(similarity > 0.0f) || similarity < floor_) return;
    const Neighbour candidate{doc, similarity};
    // A functor, not a function pointer: the comparisons inline, which
    // matters at large k where many candidates enter the heap.
    const auto order = [](const Neighbour& a, const Neighbour& b) { return better(a, b); };
    if (heap_.size() < keep_) {
      heap_.push_back(candidate);
      std::push_heap(heap_.begin(), heap_.end(), order);
    } else if (better(candidate, heap_.front())) {
      replace_worst(candidate);
    } else {
      return;
    }
    if (heap_.size() == keep_) floor_ = heap_.front().similarity;
  }

  // The kept neighbours, most similar first.
  std::vector<Neighbour> sorted() {
    std::sort(heap_.begin(), heap_.end(),
              [](const Neighbour& a, const Neighbour& b) { return better(a, b); });
    return std::vector<Neighbour>(heap_.begin(), heap_.end());
  }

 private:
  // Puts `candidate` in place of the worst kept neighbour (the front) and
  // restores the heap with one sift-down (pop_heap + push_heap take two).
  void replace_worst(const Neighbour& candidate) {
    const size_t size = heap_.size();
    size_t hole = 0;
    for (;;) {
      const size_t left = 2 * hole + 1;
      if (left >= size) break;
      // The worse child moves up: the front stays the worst kept.
      size_t child = left;
      if (left + 1 < size && better(heap_[left], heap_[left + 1])) child = left + 1;
      if (!better(candidate, heap_[child])) break;
      heap_[hole] = heap_[child];
      hole = child;
    }
    heap_[hole] = candidate;
  }

  std::vector<Neighbour>& heap_;
  const size_t keep_;
  float floor_ = 0.0f;  // similarity of the worst kept neighbour once full
};

}  // namespace autocat::internal
