// Names of the vocabulary enums declared in options.h (Method's are in
// method_traits.cc).
#include "autocat/types.h"

#include "autocat/options.h"

namespace autocat {

std::string feature_selection_name(FeatureSelection selection) {
  switch (selection) {
    case FeatureSelection::kNone:
      return "none";
    case FeatureSelection::kMutualInformation:
      return "mi";
    case FeatureSelection::kChiSquare:
      return "chi2";
    case FeatureSelection::kDocumentFrequency:
      return "df";
    case FeatureSelection::kKlDivergence:
      return "kl";
  }
  return "unknown";
}

std::optional<FeatureSelection> parse_feature_selection(const std::string& name) {
  for (FeatureSelection selection :
       {FeatureSelection::kNone, FeatureSelection::kMutualInformation, FeatureSelection::kChiSquare,
        FeatureSelection::kDocumentFrequency, FeatureSelection::kKlDivergence}) {
    if (feature_selection_name(selection) == name) return selection;
  }
  return std::nullopt;
}

std::string decision_name(Decision decision) {
  return decision == Decision::kAnyOf ? "any-of" : "one-of";
}

std::optional<Decision> parse_decision(const std::string& name) {
  if (name == "one-of") return Decision::kOneOf;
  if (name == "any-of") return Decision::kAnyOf;
  return std::nullopt;
}

std::string knn_search_name(KnnSearchMode mode) {
  return mode == KnnSearchMode::kTwoStep ? "two-step" : "exact";
}

std::optional<KnnSearchMode> parse_knn_search(const std::string& name) {
  if (name == "exact") return KnnSearchMode::kExact;
  if (name == "two-step") return KnnSearchMode::kTwoStep;
  return std::nullopt;
}

}  // namespace autocat
