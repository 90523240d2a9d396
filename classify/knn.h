// kNN through posting lists. The new document is a query: for each of its
// terms, walk that term's postings over the training collection and
// accumulate w(t,q)·w(t,d) per training document; keep the top k in a heap;
// each neighbour votes for its categories with its similarity.
// Default: exact cosine of sublinear tf-idf vectors (training norms
// precomputed, postings pre-divided by them), walking every posting.
// KnnSearch::kMaxScore finds the same neighbours with bit-identical
// similarities while skipping postings; on 20 Newsgroups it was not faster
// (the dense accumulator fits in cache), so it is not the default yet.
// Approximate mode (ClassifyOptions knn_max_query_terms / knn_max_df_ratio)
// walks fewer query terms.
//
// Thread safety: KnnIndex is immutable after build; KnnClassifier::score()
// may be called from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "classify/classifier.h"
#include "classify/training_collection.h"

namespace autocat::internal {

// Compact in-memory copy of the training postings: per term, the documents
// containing it with w(t,d)/|d| as float.
// How KnnIndex::neighbours finds the top k. Both give the same neighbours
// with the same similarities; kExhaustive is the reference the tests
// compare against, and the default.
enum class KnnSearch {
  kMaxScore,    // skips documents whose upper bound cannot reach the top k
  kExhaustive,  // accumulates every posting of every query term
};

// What one KnnIndex::neighbours call walked (for tests and benchmarks).
struct KnnSearchStats {
  uint32_t query_terms = 0;   // terms with postings, after approximate-mode cuts
  uint32_t terms_walked = 0;  // whose every posting was accumulated
  uint64_t postings_walked = 0;
  uint32_t candidates = 0;  // documents looked up in the other terms' lists
};

class KnnIndex {
 public:
  // REQUIRES: idf.size() == corpus.num_terms(); terms with idf 0 get no postings.
  KnnIndex(const TrainingCorpus& corpus, const std::vector<float>& idf);

  uint32_t num_docs() const { return num_docs_; }
  uint32_t num_categories() const { return num_categories_; }
  uint64_t num_postings() const { return posting_doc_.size(); }
  const std::vector<float>& idf() const { return idf_; }
  // Bytes held by the in-memory postings.
  size_t memory_bytes() const;

  struct Neighbour {
    uint32_t doc;      // dense training document index
    float similarity;  // cosine
  };
  // The k most similar training documents, most similar first; ties broken
  // by lower doc index. Similarities are float sums accumulated in one fixed
  // order (query terms by decreasing upper bound, then term id), whatever
  // `search` is.
  std::vector<Neighbour> neighbours(const DocumentTerms& query, int k, int max_query_terms = 0,
                                    double max_df_ratio = 1.0,
                                    KnnSearch search = KnnSearch::kExhaustive,
                                    KnnSearchStats* stats = nullptr) const;
  // The categories of training document `doc` (a range of category indexes).
  struct CategoryRange {
    const uint32_t* first;
    const uint32_t* last;
    const uint32_t* begin() const { return first; }
    const uint32_t* end() const { return last; }
    std::vector<uint32_t> to_vector() const { return std::vector<uint32_t>(first, last); }
  };
  CategoryRange doc_categories(uint32_t doc) const {
    const uint32_t* base = doc_category_.data();
    return {base + doc_category_start_[doc], base + doc_category_start_[doc + 1]};
  }

 private:
  uint32_t num_docs_ = 0;
  uint32_t num_categories_ = 0;
  std::vector<float> idf_;
  std::vector<uint32_t> df_;
  std::vector<uint64_t> postings_start_;
  std::vector<uint32_t> posting_doc_;
  std::vector<float> posting_weight_;
  // Per term, the largest posting weight: the max-score upper bounds.
  std::vector<float> max_weight_;
  // Whether every term's postings are in increasing document order (the
  // max-score search looks documents up in them; without it, it falls back
  // to the exhaustive walk).
  bool postings_sorted_ = true;
  // Labels of every training document, flat (CSR): voting over hundreds of
  // neighbours reads them from two small arrays instead of chasing one
  // heap allocation per neighbour.
  std::vector<uint32_t> doc_category_start_;
  std::vector<uint32_t> doc_category_;
};

class KnnClassifier : public Classifier {
 public:
  // Each neighbour votes with similarity^similarity_power (1 or 2; chosen by
  // cross-validation at training time).
  // `default_k` applies when ClassifyOptions::k is 0.
  explicit KnnClassifier(std::shared_ptr<const KnnIndex> index, int similarity_power = 1,
                         int default_k = kDefaultKnnK);
  Method method() const override { return Method::kKnn; }
  // Score of c = (sum of votes of the k neighbours labelled c) / (sum of the
  // votes of all k neighbours).
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override;

 private:
  std::shared_ptr<const KnnIndex> index_;
  int similarity_power_;
  int default_k_;
};

// A neighbour's vote: its similarity raised to `power` (1 or 2). Squaring
// lets the nearest neighbours outvote a long tail of weak ones at large k.
inline double knn_vote_weight(float similarity, int power) {
  const double s = similarity;
  return power == 2 ? s * s : s;
}

}  // namespace autocat::internal
