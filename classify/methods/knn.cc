// The kNN classifier: the neighbours' vote, over the base index or its
// live overlay.
#include "classify/methods/knn.h"

#include <utility>

#include "autocat/error.h"

namespace autocat::internal {

namespace {

// Throws unless a kNN classifier can be built with an index (`has_index`)
// and this similarity power.
void check_knn_classifier(bool has_index, int similarity_power) {
  if (!has_index) throw InvalidArgumentError("kNN classifier: no index");
  if (similarity_power != 1 && similarity_power != 2) {
    throw InvalidArgumentError("kNN classifier: similarity power must be 1 or 2");
  }
}

}  // namespace

KnnClassifier::KnnClassifier(std::shared_ptr<const KnnIndex> index, int similarity_power,
                             int default_k, KnnSearchMode default_search)
    : index_(std::move(index)),
      similarity_power_(similarity_power),
      default_k_(default_k),
      default_search_(default_search) {
  check_knn_classifier(index_ != nullptr, similarity_power_);
}

KnnClassifier::KnnClassifier(std::shared_ptr<const KnnLiveIndex> live, int similarity_power,
                             int default_k, KnnSearchMode default_search)
    : live_(std::move(live)),
      similarity_power_(similarity_power),
      default_k_(default_k),
      default_search_(default_search) {
  check_knn_classifier(live_ != nullptr, similarity_power_);
}

void KnnClassifier::score(const DocumentTerms& doc, const ClassifyOptions& options,
                          std::vector<double>* scores) const {
  const int k = options.k > 0 ? options.k : default_k_;
  const KnnSearch search = knn_kernel(options.knn_search.value_or(default_search_));
  if (live_) {
    live_->score(doc, k, options, similarity_power_, scores, search);
    return;
  }
  const std::vector<KnnIndex::Neighbour> neighbours =
      index_->neighbours(doc, k, options.knn_max_query_terms, options.knn_max_df_ratio, search);
  knn_vote(
      neighbours, similarity_power_, index_->num_categories(),
      [&](uint32_t d) { return index_->doc_categories(d); }, scores);
  index_->check_file_unchanged();
}

}  // namespace autocat::internal
