// kNN's live overlay: documents learned and forgotten since training,
// over the trained KnnIndex (Categorizer::learn / forget).
//
// Thread safety: KnnLiveIndex's learn() and forget() take an exclusive
// lock, its const methods a shared one, so searches may run while other
// threads learn and forget.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/training_collection.h"
#include "classify/methods/knn_index.h"

namespace autocat::internal {

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
  // The same with the ids read on the first learn(), forget() or
  // contains() (classification alone never reads them); if `load_base_ids`
  // throws, that call throws and the next one tries again.
  using BaseIdLoader = std::function<std::vector<std::string>()>;
  KnnLiveIndex(std::shared_ptr<const KnnIndex> base, BaseIdLoader load_base_ids);

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
  // doc - base().num_docs(). `search` searches the base; the learned
  // documents' own postings are walked whole, so every learned document
  // sharing a term with the query is a candidate and carries its exact
  // cosine, whichever search runs on the base.
  std::vector<KnnIndex::Neighbour> neighbours(const DocumentTerms& query, int k,
                                              int max_query_terms = 0, double max_df_ratio = 1.0,
                                              KnnSearch search = KnnSearch::kExhaustive) const;
  // KnnClassifier::score over the documents present.
  void score(const DocumentTerms& doc, int k, const ClassifyOptions& options, int similarity_power,
             std::vector<double>* scores, KnnSearch search = KnnSearch::kExhaustive) const;

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
                                                     int max_query_terms, double max_df_ratio,
                                                     KnnSearch search) const;
  // Removes `id` wherever it is; false if absent. REQUIRES: exclusive lock.
  bool remove_locked(const std::string& id);
  // Reads the base ids if a loader was given and they are not read yet.
  void ensure_base_ids() const;
  void set_base_ids(std::vector<std::string> base_ids) const;

  std::shared_ptr<const KnnIndex> base_;
  mutable BaseIdLoader load_base_ids_;
  mutable std::once_flag base_ids_once_;
  mutable std::unordered_map<std::string, uint32_t> base_ids_;  // id -> base document
  mutable std::shared_mutex mutex_;
  std::vector<uint8_t> base_forgotten_;  // per base document; sized on first forget
  uint32_t num_base_forgotten_ = 0;
  std::unordered_map<std::string, uint32_t> learned_ids_;  // id -> slot
  std::vector<Learned> learned_;                           // by slot
  uint32_t num_learned_present_ = 0;
  std::vector<std::vector<Posting>> postings_;  // by term; sized on first learn
};

}  // namespace autocat::internal
