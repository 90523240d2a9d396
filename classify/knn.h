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
// KnnLiveIndex adds documents learned after training to a KnnIndex, and
// hides forgotten ones (Categorizer::learn / forget).
//
// Thread safety: KnnIndex is immutable after build; KnnClassifier::score()
// may be called from many threads, also while other threads learn into and
// forget from its KnnLiveIndex.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
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

// kNN's live view of a model: the trained KnnIndex (the base), plus the
// documents learned since, minus the documents forgotten since.
//
// A learned document is weighted as a training document is (sublinear tf
// times the base's idf, normalized over its terms with idf > 0), so its
// cosine to a query is exact against the trained weighting. What is
// approximate until the next refit (`autocat train --add`): idf, df and the
// other documents' norms stay as trained, and terms the model does not
// know are not seen. Forgotten base documents are tombstones: the base is
// asked for k + (number of tombstones) neighbours and they are filtered out,
// so a search costs more as tombstones accumulate. Approximate-mode options
// (knn_max_query_terms, knn_max_df_ratio) apply to the base only.
//
// Thread safety: learn() and forget() take an exclusive lock, the const
// methods a shared one.
class KnnLiveIndex {
 public:
  // `base_ids`: the id of each base document, by dense index, or empty (a
  // model fitted in memory: its training documents have no ids to forget).
  KnnLiveIndex(std::shared_ptr<const KnnIndex> base, std::vector<std::string> base_ids);

  const KnnIndex& base() const { return *base_; }
  // Adds a document, replacing any base or learned document with its id.
  // REQUIRES: every category < base().num_categories().
  void learn(const std::string& id, const DocumentTerms& doc,
             const std::vector<uint32_t>& categories);
  // Removes the document with this id; false if there is none.
  bool forget(const std::string& id);
  bool contains(const std::string& id) const;
  uint32_t learned_docs() const;    // learned documents present now
  uint32_t forgotten_docs() const;  // base documents forgotten (tombstones)
  // The k most similar documents present, most similar first (ties by
  // lower doc); `doc` >= base().num_docs() is learned document
  // doc - base().num_docs().
  std::vector<KnnIndex::Neighbour> neighbours(const DocumentTerms& query, int k,
                                              int max_query_terms = 0,
                                              double max_df_ratio = 1.0) const;
  // KnnClassifier::score over the documents present.
  void score(const DocumentTerms& doc, int k, const ClassifyOptions& options, int similarity_power,
             std::vector<double>* scores) const;

 private:
  struct Learned {
    std::vector<uint32_t> categories;
    bool present = true;
  };
  struct Posting {
    uint32_t slot;
    float weight;  // w(t,d)/|d|
  };
  std::vector<KnnIndex::Neighbour> neighbours_locked(const DocumentTerms& query, int k,
                                                     int max_query_terms,
                                                     double max_df_ratio) const;
  // Removes `id` wherever it is; false if absent. REQUIRES: exclusive lock.
  bool remove_locked(const std::string& id);

  std::shared_ptr<const KnnIndex> base_;
  std::unordered_map<std::string, uint32_t> base_ids_;  // id -> base document
  mutable std::shared_mutex mutex_;
  std::vector<uint8_t> base_forgotten_;  // per base document; sized on first forget
  uint32_t num_base_forgotten_ = 0;
  std::unordered_map<std::string, uint32_t> learned_ids_;  // id -> slot
  std::vector<Learned> learned_;                           // by slot
  uint32_t num_learned_present_ = 0;
  std::vector<std::vector<Posting>> postings_;  // by term; sized on first learn
};

class KnnClassifier : public Classifier {
 public:
  // Each neighbour votes with similarity^similarity_power (1 or 2; chosen by
  // cross-validation at training time).
  // `default_k` applies when ClassifyOptions::k is 0.
  explicit KnnClassifier(std::shared_ptr<const KnnIndex> index, int similarity_power = 1,
                         int default_k = kDefaultKnnK);
  // Classifies over a live index (see KnnLiveIndex).
  KnnClassifier(std::shared_ptr<const KnnLiveIndex> live, int similarity_power, int default_k);
  Method method() const override { return Method::kKnn; }
  // Score of c = (sum of votes of the k neighbours labelled c) / (sum of the
  // votes of all k neighbours).
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override;

 private:
  std::shared_ptr<const KnnIndex> index_;
  std::shared_ptr<const KnnLiveIndex> live_;  // null: the base index alone
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
