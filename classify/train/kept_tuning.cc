#include "classify/train/kept_tuning.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "classify/corpus/training_collection.h"

namespace autocat::internal {

// The settings, thresholds and calibrations `model` (the core `file`
// opened) was trained with, as fit_model() takes them from
// cross-validation, for a refit on the collection at `training_db` that
// keeps them. Returns nullopt if there is nothing to keep (no tuning) or, with the
// reason in `reason`, if they do not fit the new collection.
std::optional<SampleTuning> kept_tuning(const ModelFile& file, ModelState* model,
                                        const std::string& training_db, std::string* reason) {
  const TrainOptions& options = model->training;
  if (!options.tune_thresholds) return std::nullopt;  // defaults: nothing cross-validated
  if (model->thresholds.empty()) {
    *reason = "the model had too few documents to cross-validate";
    return std::nullopt;
  }
  {
    const TrainingCorpus labels = load_training_labels(Xapian::Database(training_db));
    if (labels.categories != model->categories) {
      std::vector<std::string> added, removed;
      std::set_difference(labels.categories.begin(), labels.categories.end(),
                          model->categories.begin(), model->categories.end(),
                          std::back_inserter(added));
      std::set_difference(model->categories.begin(), model->categories.end(),
                          labels.categories.begin(), labels.categories.end(),
                          std::back_inserter(removed));
      *reason = "the categories changed:";
      if (!added.empty())
        *reason += " " + std::to_string(added.size()) + " new (" + added[0] +
                   (added.size() > 1 ? ", ...)" : ")");
      if (!removed.empty())
        *reason += " " + std::to_string(removed.size()) + " without documents (" + removed[0] +
                   (removed.size() > 1 ? ", ...)" : ")");
      return std::nullopt;
    }
    const Decision decision = model_decision(labels, options);
    if (decision != model->decision) {
      *reason = std::string("the decision mode changed to ") +
                (decision == Decision::kAnyOf ? "any-of (a document has several labels or none)"
                                              : "one-of");
      return std::nullopt;
    }
  }
  // Files older than the calibrations lack settings a model of today needs.
  if (model->calibration.empty() || model->method_objective.empty()) {
    *reason = "the model file predates some of today's settings";
    return std::nullopt;
  }
  if (!model->knn_relevance_frequency && model->knn_concentration > 0) {
    *reason = "the model's kNN term weights (class concentration) predate relevance frequency";
    return std::nullopt;
  }
  SampleTuning kept;
  kept.kept = true;
  TunedSettings& tuned = kept.settings;
  // Each part is decoded for its settings and dropped again (its weights
  // are refitted), so that no two are in memory at once.
  for (const ModelPart part :
       {ModelPart::kMultinomialNb, ModelPart::kBernoulliNb, ModelPart::kComplementNb}) {
    file.load(part, model);
    NaiveBayesModel& nb = part == ModelPart::kMultinomialNb ? model->multinomial_nb
                          : part == ModelPart::kBernoulliNb ? model->bernoulli_nb
                                                            : model->complement_nb;
    tuned.nb_alpha.push_back(nb.alpha);
    tuned.nb_tfidf.push_back(nb.tfidf());
    nb = NaiveBayesModel();
  }
  file.load(ModelPart::kSvm, model);
  tuned.svm_c = model->svm.c;
  tuned.svm_slope = std::move(model->svm.slope);
  tuned.svm_intercept = std::move(model->svm.intercept);
  model->svm = LinearModel();
  file.load(ModelPart::kLogreg, model);
  tuned.logreg_c = model->logreg.c;
  model->logreg = LinearModel();
  if (!(tuned.svm_c > 0) || !(tuned.logreg_c > 0)) {
    *reason = "the model file predates the linear models";
    return std::nullopt;
  }
  tuned.thresholds = model->thresholds;
  tuned.knn_k = model->knn_k;
  tuned.knn_similarity_power = model->knn_similarity_power;
  tuned.knn_concentration = model->knn_concentration;
  tuned.knn_tf = model->knn_tf;
  tuned.rocchio_gamma = model->rocchio_gamma;
  tuned.knn_objective = model->knn_objective;
  tuned.rocchio_gamma_objective = model->rocchio_gamma_objective;
  tuned.svm_c_objective = model->svm_c_objective;
  tuned.logreg_c_objective = model->logreg_c_objective;
  tuned.nb_alpha_objective = model->nb_alpha_objective;
  tuned.method_objective = model->method_objective;
  tuned.calibration = model->calibration;
  tuned.combo = model->combo;
  // kNN left out of the stack for its cost stays out of the default too.
  const std::vector<int32_t>& members = tuned.combo.members;
  tuned.knn_keeps_up =
      tuned.combo.empty() || std::find(members.begin(), members.end(),
                                       static_cast<int32_t>(Method::kKnn)) != members.end();
  return kept;
}

}  // namespace autocat::internal
