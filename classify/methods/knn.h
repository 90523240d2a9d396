// kNN through posting lists. The new document is a query: its k most
// similar training documents (cosine of tf-idf vectors, tf transformed as
// the model says (KnnTf), found by walking the query terms' postings) are
// its neighbours, and each
// neighbour votes for its categories with its similarity.
// The method's parts: its index (knn_index.h), built from the training
// collection or mapped from its file (knn_index_file.h); the search
// (knn_search.h); the live overlay of documents learned and forgotten
// since training (knn_live.h); the vote (knn_vote.h). This header is the
// classifier, and includes them all.
//
// Thread safety: KnnIndex is immutable after build; KnnClassifier::score()
// may be called from many threads, also while other threads learn into and
// forget from its KnnLiveIndex.
#pragma once

#include <memory>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/training_collection.h"
#include "classify/methods/classifier.h"
#include "classify/methods/knn_index.h"
#include "classify/methods/knn_index_file.h"
#include "classify/methods/knn_live.h"
#include "classify/methods/knn_vote.h"

namespace autocat::internal {

class KnnClassifier : public Classifier {
 public:
  // Each neighbour votes with similarity^similarity_power (1 or 2; chosen by
  // cross-validation at training time).
  // `default_k` applies when ClassifyOptions::k is 0.
  // `default_search` applies when ClassifyOptions::knn_search is unset.
  explicit KnnClassifier(std::shared_ptr<const KnnIndex> index, int similarity_power = 1,
                         int default_k = kDefaultKnnK,
                         KnnSearchMode default_search = KnnSearchMode::kExact);
  // Classifies over a live index (see KnnLiveIndex).
  KnnClassifier(std::shared_ptr<const KnnLiveIndex> live, int similarity_power, int default_k,
                KnnSearchMode default_search = KnnSearchMode::kExact);
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
  KnnSearchMode default_search_;
};

}  // namespace autocat::internal
