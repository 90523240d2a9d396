// Rocchio: one centroid per category, the mean of its training documents'
// L2-normalized sublinear tf-idf vectors (optionally minus gamma times the
// mean of the other categories' centroids, negatives clipped), itself
// L2-normalized. Score = cosine of the document to each centroid.
//
// Thread safety: RocchioModel is data; RocchioClassifier::score() is const
// and may be called from many threads.
#pragma once

#include <boost/serialization/vector.hpp>
#include <cstdint>
#include <vector>

#include "classify/corpus/category_sums.h"
#include "classify/corpus/training_collection.h"
#include "classify/methods/classifier.h"

namespace autocat::internal {

// Centroids stored term-major and sparse: for term t, the entries
// [term_start[t], term_start[t+1]) give (category, weight).
struct RocchioModel {
  std::vector<uint64_t> term_start;
  std::vector<uint32_t> entry_category;
  std::vector<float> entry_weight;
  uint32_t num_categories = 0;

  template <class Archive>
  void serialize(Archive& ar, const unsigned int /*version*/) {
    ar& term_start& entry_category& entry_weight& num_categories;
  }
};

// REQUIRES: idf.size() == corpus.num_terms() (0 for unselected terms).
RocchioModel train_rocchio(const TrainingCorpus& corpus, const std::vector<float>& idf,
                           double gamma);
// The same from the sums of the documents' tf-idf vectors
// (sum_categories(corpus, TermAmount::kTfidf, {}, idf)): train_rocchio is
// this over those sums.
RocchioModel rocchio_from_sums(const CategorySums& sums, double gamma);

class RocchioClassifier : public Classifier {
 public:
  // Keeps references: `model` and `idf` must outlive the classifier.
  RocchioClassifier(const RocchioModel& model, const std::vector<float>& idf);
  Method method() const override { return Method::kRocchio; }
  // Cosine to each centroid, clipped to [0, 1].
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override;

 private:
  const RocchioModel& model_;
  const std::vector<float>& idf_;
};

}  // namespace autocat::internal
