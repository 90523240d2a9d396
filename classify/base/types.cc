// Names of the vocabulary enums declared in autocat/types.h and options.h.
#include "autocat/types.h"

#include "autocat/options.h"

namespace autocat {

const std::vector<Method>& all_methods() {
  static const std::vector<Method> methods = {Method::kKnn,
                                              Method::kRocchio,
                                              Method::kNaiveBayes,
                                              Method::kBernoulliNaiveBayes,
                                              Method::kComplementNaiveBayes,
                                              Method::kSvm,
                                              Method::kLogreg,
                                              Method::kCombo};
  return methods;
}

std::string method_name(Method method) {
  switch (method) {
    case Method::kKnn:
      return "knn";
    case Method::kRocchio:
      return "rocchio";
    case Method::kNaiveBayes:
      return "nb";
    case Method::kBernoulliNaiveBayes:
      return "bnb";
    case Method::kComplementNaiveBayes:
      return "cnb";
    case Method::kSvm:
      return "svm";
    case Method::kLogreg:
      return "logreg";
    case Method::kCombo:
      return "combo";
  }
  return "unknown";
}

std::optional<Method> parse_method(const std::string& name) {
  for (Method method : all_methods()) {
    if (method_name(method) == name) return method;
  }
  return std::nullopt;
}

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

}  // namespace autocat
