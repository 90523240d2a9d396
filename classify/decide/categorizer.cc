#include "classify/decide/categorizer.h"

#include <algorithm>

#include "autocat/error.h"
#include "classify/methods/calibration.h"
#include "classify/metrics/evaluation.h"

namespace autocat::internal {

const Classifier& Categorizer::classifier(Method method) const {
  if (method == Method::kKnn) {
    knn_index();
    return *knn_.classifier;
  }
  const auto slot = static_cast<size_t>(method);
  if (slot >= classifiers_.size() || !classifiers_[slot]) {
    throw InvalidArgumentError("unknown classification method");
  }
  return *classifiers_[slot];
}

bool Categorizer::gives_probabilities(Method method) const {
  const auto slot = static_cast<size_t>(method);
  const bool calibrated = slot < model_.calibration.size() && !model_.calibration[slot].empty();
  return calibrated || (method == Method::kCombo && !model_.combo.empty()) ||
         internal::gives_probabilities(method);
}

int64_t Categorizer::category_index(const std::string& name) const {
  const auto& names = model_.categories;
  const auto it = std::lower_bound(names.begin(), names.end(), name);
  return it != names.end() && *it == name ? it - names.begin() : -1;
}

DocumentTerms Categorizer::document_terms(const std::vector<Token>& tokens) const {
  return make_document_terms(vocabulary_, tokens);
}

std::vector<double> Categorizer::scores(const DocumentTerms& doc,
                                        const ClassifyOptions& options) const {
  if (options.k < 0) throw InvalidArgumentError("k must be at least 1 (or 0: the model's k)");
  std::vector<double> result(model_.categories.size(), 0.0);
  // No known term means no evidence: every method says so with all zeros
  // rather than, say, Naive Bayes falling back to the priors.
  if (doc.terms.empty()) return result;
  const Method chosen = method(options);
  if (chosen == Method::kCombo) fit_live_members();
  classifier(chosen).score(doc, options, &result);
  // combo's scores are calibrated already; the others are mapped here, so
  // a score means a probability whatever the method (when the model has
  // calibrations: trained with tuning, format version 4 or later).
  const auto slot = static_cast<size_t>(chosen);
  if (chosen != Method::kCombo && slot < model_.calibration.size()) {
    apply_calibration(model_.calibration[slot], decision_mode(options), &result);
  }
  return result;
}

std::vector<Category> Categorizer::ranked(const std::vector<double>& scores) const {
  std::vector<Category> result;
  result.reserve(scores.size());
  for (size_t c = 0; c < scores.size(); ++c) {
    result.push_back(Category{model_.categories[c], scores[c]});
  }
  std::stable_sort(result.begin(), result.end(),
                   [](const Category& a, const Category& b) { return a.score > b.score; });
  return result;
}

Decision Categorizer::decision_mode(const ClassifyOptions& options) const {
  return options.decision.value_or(model_.decision);
}

bool Categorizer::other_enabled(const ClassifyOptions& options) const {
  return options.other.value_or(model_.has_unlabelled);
}

Method Categorizer::method(const ClassifyOptions& options) const {
  return options.method.value_or(default_method());
}

std::vector<Category> Categorizer::decide(const std::vector<double>& scores,
                                          const ClassifyOptions& options) const {
  return decide_with(scores, options, /*explain=*/false).assigned;
}

DecisionTrace Categorizer::explain_decision(const std::vector<double>& scores,
                                            const ClassifyOptions& options) const {
  return decide_with(scores, options, /*explain=*/true);
}

DecisionTrace Categorizer::decide_with(const std::vector<double>& scores,
                                       const ClassifyOptions& options, bool explain) const {
  return decide_categories(model_,
                           {method(options), decision_mode(options), other_enabled(options)},
                           scores, options, explain);
}

std::vector<Category> Categorizer::classify(std::string_view text,
                                            const ClassifyOptions& options) const {
  const DocumentTerms doc = document_terms(analyzer_->analyze(text));
  return decide(scores(doc, options), options);
}

}  // namespace autocat::internal
