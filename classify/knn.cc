// kNN through compact in-memory posting lists.
//
// Each posting holds w(t,d)/|d|, so the similarity of a query q to a
// training document d is the sum over the query's terms of q_t times the
// posting weight: one multiply-add per posting into a dense float
// accumulator indexed by document. Per-thread scratch memory (the
// accumulator, the query, the top-k heap) is reused across calls, so a call
// allocates only its result.
#include "classify/knn.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "autocat/error.h"
#include "classify/weighting.h"

namespace autocat::internal {

namespace {

using Neighbour = KnnIndex::Neighbour;

struct QueryTerm {
  TermId term;
  double weight;  // (1 + ln count) * idf, then divided by the query norm
};

// Reused by every call on one thread. Invariant between calls: every entry
// of `accumulator` is zero.
struct Scratch {
  std::vector<QueryTerm> query;
  std::vector<float> accumulator;
  std::vector<uint32_t> touched;
  std::vector<Neighbour> heap;
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Ranking order of neighbours: higher similarity first, then lower doc.
inline bool better(const Neighbour& a, const Neighbour& b) {
  return a.similarity > b.similarity || (a.similarity == b.similarity && a.doc < b.doc);
}

// The best `keep` neighbours offered so far, in a heap whose front is the
// worst one kept. Most candidates fall below it and are rejected by the
// first comparison.
class TopK {
 public:
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

}  // namespace

KnnIndex::KnnIndex(const TrainingCorpus& corpus, const std::vector<float>& idf)
    : num_docs_(corpus.num_docs()),
      num_categories_(corpus.num_categories()),
      idf_(idf),
      df_(corpus.df) {
  const uint32_t num_terms = corpus.num_terms();
  if (idf.size() != num_terms) {
    throw InvalidArgumentError("kNN index: " + std::to_string(idf.size()) + " idf values for " +
                               std::to_string(num_terms) + " terms");
  }
  doc_category_start_.reserve(size_t(num_docs_) + 1);
  doc_category_start_.push_back(0);
  for (uint32_t d = 0; d < num_docs_; ++d) {
    if (d < corpus.doc_categories.size()) {
      const auto& labels = corpus.doc_categories[d];
      doc_category_.insert(doc_category_.end(), labels.begin(), labels.end());
    }
    doc_category_start_.push_back(static_cast<uint32_t>(doc_category_.size()));
  }

  // Squared L2 norm of every document's tf-idf vector over the terms with idf > 0.
  std::vector<double> norm2(num_docs_, 0.0);
  uint64_t kept = 0;
  for (TermId t = 0; t < num_terms; ++t) {
    if (!(idf_[t] > 0.0f)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t wdf = corpus.posting_wdf[p];
      if (wdf == 0) continue;
      const double w = sublinear_tf(wdf) * idf_[t];
      norm2[corpus.posting_doc[p]] += w * w;
      ++kept;
    }
  }
  std::vector<double> inverse_norm(num_docs_, 0.0);
  for (uint32_t d = 0; d < num_docs_; ++d) {
    if (norm2[d] > 0.0) inverse_norm[d] = 1.0 / std::sqrt(norm2[d]);
  }

  // Every posting with a positive weight belongs to a document of positive
  // norm, so `kept` postings remain.
  postings_start_.assign(size_t(num_terms) + 1, 0);
  posting_doc_.reserve(kept);
  posting_weight_.reserve(kept);
  for (TermId t = 0; t < num_terms; ++t) {
    postings_start_[t] = posting_doc_.size();
    if (!(idf_[t] > 0.0f)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t wdf = corpus.posting_wdf[p];
      if (wdf == 0) continue;
      const uint32_t doc = corpus.posting_doc[p];
      posting_doc_.push_back(doc);
      posting_weight_.push_back(
          static_cast<float>(sublinear_tf(wdf) * idf_[t] * inverse_norm[doc]));
    }
  }
  postings_start_[num_terms] = posting_doc_.size();
}

size_t KnnIndex::memory_bytes() const {
  size_t bytes =
      posting_doc_.capacity() * sizeof(uint32_t) + posting_weight_.capacity() * sizeof(float) +
      postings_start_.capacity() * sizeof(uint64_t) + idf_.capacity() * sizeof(float) +
      df_.capacity() * sizeof(uint32_t) + doc_category_start_.capacity() * sizeof(uint32_t) +
      doc_category_.capacity() * sizeof(uint32_t);
  return bytes;
}

std::vector<KnnIndex::Neighbour> KnnIndex::neighbours(const DocumentTerms& query, int k,
                                                      int max_query_terms,
                                                      double max_df_ratio) const {
  if (k <= 0 || num_docs_ == 0) return {};
  Scratch& scratch = thread_scratch();

  // Query weights, normalized over every known term with idf > 0 (also in
  // pruned mode, so that similarities stay comparable cosines).
  std::vector<QueryTerm>& terms = scratch.query;
  terms.clear();
  double norm2 = 0.0;
  for (const TermCount& tc : query.terms) {
    if (tc.term >= idf_.size() || tc.count == 0) continue;
    const float idf = idf_[tc.term];
    if (!(idf > 0.0f)) continue;
    const double w = (tc.count == 1 ? 1.0 : sublinear_tf(tc.count)) * idf;
    norm2 += w * w;
    terms.push_back({tc.term, w});
  }
  if (terms.empty()) return {};
  const double inverse_norm = 1.0 / std::sqrt(norm2);
  for (QueryTerm& term : terms) term.weight *= inverse_norm;

  // Pruned mode: drop very common terms first, then keep the heaviest.
  if (max_df_ratio < 1.0) {
    const double max_df = max_df_ratio * num_docs_;
    terms.erase(std::remove_if(terms.begin(), terms.end(),
                               [&](const QueryTerm& term) { return df_[term.term] > max_df; }),
                terms.end());
  }
  if (max_query_terms > 0 && terms.size() > size_t(max_query_terms)) {
    auto heavier = [](const QueryTerm& a, const QueryTerm& b) {
      return a.weight > b.weight || (a.weight == b.weight && a.term < b.term);
    };
    std::nth_element(terms.begin(), terms.begin() + max_query_terms, terms.end(), heavier);
    terms.resize(size_t(max_query_terms));
    // Walk the postings in storage order.
    std::sort(terms.begin(), terms.end(),
              [](const QueryTerm& a, const QueryTerm& b) { return a.term < b.term; });
  }

  uint64_t total_postings = 0;
  for (const QueryTerm& term : terms) {
    total_postings += postings_start_[term.term + 1] - postings_start_[term.term];
  }
  if (total_postings == 0) return {};

  // Allocate everything before touching the accumulator, so that nothing
  // can throw while it holds non-zero entries.
  if (scratch.accumulator.size() < num_docs_) scratch.accumulator.resize(num_docs_, 0.0f);
  TopK top(&scratch.heap, std::min<size_t>(size_t(k), num_docs_));
  // Short postings walks record the documents they touch; long ones (the
  // usual case) are cheaper to follow with one scan over all documents.
  const bool track = total_postings < num_docs_ / 2;
  if (track && scratch.touched.size() < total_postings) scratch.touched.resize(total_postings);

  float* const acc = scratch.accumulator.data();
  uint32_t* const touched = scratch.touched.data();
  size_t num_touched = 0;
  for (const QueryTerm& term : terms) {
    const uint64_t begin = postings_start_[term.term];
    const uint64_t end = postings_start_[term.term + 1];
    const uint32_t* const doc = posting_doc_.data() + begin;
    const float* const weight = posting_weight_.data() + begin;
    const size_t n = size_t(end - begin);
    const float q = static_cast<float>(term.weight);
    if (track) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t d = doc[i];
        touched[num_touched] = d;
        num_touched += acc[d] == 0.0f;
        acc[d] += q * weight[i];
      }
    } else {
      // Unrolled: four independent updates per step.
      size_t i = 0;
      for (; i + 4 <= n; i += 4) {
        const float w0 = q * weight[i], w1 = q * weight[i + 1], w2 = q * weight[i + 2],
                    w3 = q * weight[i + 3];
        acc[doc[i]] += w0;
        acc[doc[i + 1]] += w1;
        acc[doc[i + 2]] += w2;
        acc[doc[i + 3]] += w3;
      }
      for (; i < n; ++i) acc[doc[i]] += q * weight[i];
    }
  }

  // Select the top k and restore the all-zero accumulator. A document
  // recorded twice (only if an addition left it at zero) is read as zero
  // the second time and skipped.
  if (track) {
    for (size_t i = 0; i < num_touched; ++i) {
      const uint32_t d = touched[i];
      top.offer(d, acc[d]);
      acc[d] = 0.0f;
    }
  } else {
    for (uint32_t d = 0; d < num_docs_; ++d) top.offer(d, acc[d]);
    std::fill(acc, acc + num_docs_, 0.0f);
  }
  return top.sorted();
}

KnnClassifier::KnnClassifier(std::shared_ptr<const KnnIndex> index, int similarity_power,
                             int default_k)
    : index_(std::move(index)), similarity_power_(similarity_power), default_k_(default_k) {
  if (!index_) throw InvalidArgumentError("kNN classifier: no index");
  if (similarity_power_ != 1 && similarity_power_ != 2) {
    throw InvalidArgumentError("kNN classifier: similarity power must be 1 or 2");
  }
}

void KnnClassifier::score(const DocumentTerms& doc, const ClassifyOptions& options,
                          std::vector<double>* scores) const {
  const uint32_t num_categories = index_->num_categories();
  scores->assign(num_categories, 0.0);
  const std::vector<KnnIndex::Neighbour> neighbours =
      index_->neighbours(doc, options.k > 0 ? options.k : default_k_, options.knn_max_query_terms,
                         options.knn_max_df_ratio);
  double total = 0.0;
  for (const KnnIndex::Neighbour& neighbour : neighbours) {
    const double vote = knn_vote_weight(neighbour.similarity, similarity_power_);
    total += vote;
    for (uint32_t category : index_->doc_categories(neighbour.doc)) {
      if (category < num_categories) (*scores)[category] += vote;
    }
  }
  if (!(total > 0.0)) return;
  for (double& score : *scores) score = std::min(1.0, score / total);
}

}  // namespace autocat::internal
