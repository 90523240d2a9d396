// Categorizer: a loaded model directory. Analyzes text with the model's own
// analyzer settings and scores every category with any method. The model
// file is read at construction; kNN's in-memory postings are built from the
// training database the first time kNN is used.
//
// Thread safety: every const method may be called from many threads at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"
#include "classify/analyzer.h"
#include "classify/classifier.h"
#include "classify/knn.h"
#include "classify/model_io.h"

namespace autocat::internal {

class Categorizer {
 public:
  // Throws NotFoundError (missing/empty directory) or ModelFormatError.
  explicit Categorizer(const std::string& model_dir);
  // A model fitted in memory (cross-validation, threshold tuning): kNN's
  // postings come from `corpus`, the corpus `model` was fitted on.
  Categorizer(ModelState model, std::shared_ptr<const TrainingCorpus> corpus);
  ~Categorizer();

  const std::string& model_dir() const { return model_dir_; }
  const Analyzer& analyzer() const { return *analyzer_; }
  const ModelState& model() const { return model_; }
  const std::vector<std::string>& categories() const { return model_.categories; }
  Method default_method() const { return model_.training.default_method; }
  const Vocabulary& vocabulary() const { return vocabulary_; }
  // Index of `name` in categories(), or -1 if the model has no such category.
  int64_t category_index(const std::string& name) const;

  DocumentTerms document_terms(const std::vector<Token>& tokens) const;
  // Scores of every category, indexed like categories(). Builds the kNN index
  // on first use (throws if the training database is missing or changed).
  std::vector<double> scores(const DocumentTerms& doc, const ClassifyOptions& options) const;
  // Every category with its score, best first (ties by name).
  std::vector<Category> ranked(const std::vector<double>& scores) const;
  // The categories assigned by options.decision / min_score / max_categories.
  std::vector<Category> decide(const std::vector<double>& scores,
                               const ClassifyOptions& options) const;
  // Analyze + score + decide.
  std::vector<Category> classify(std::string_view text, const ClassifyOptions& options) const;

  // The classifier for a method (building kNN's index if needed).
  const Classifier& classifier(Method method) const;
  // Loads kNN's index now (e.g. before timing).
  const KnnIndex& knn_index() const;

 private:
  void build_classifiers();

  std::string model_dir_;  // empty for a model fitted in memory
  ModelState model_;
  std::shared_ptr<const TrainingCorpus> corpus_;  // in-memory models only
  std::unique_ptr<Analyzer> analyzer_;
  Vocabulary vocabulary_;
  std::vector<float> idf_;
  std::vector<std::unique_ptr<Classifier>> classifiers_;  // by Method; kNN built lazily
  mutable std::once_flag knn_once_;
  mutable std::shared_ptr<const KnnIndex> knn_index_;
  mutable std::unique_ptr<Classifier> knn_classifier_;
};

}  // namespace autocat::internal
