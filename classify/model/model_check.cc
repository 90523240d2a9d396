// Checks of a decoded model (what model_check.h lists).
#include "classify/model/model_check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "autocat/error.h"
#include "classify/base/method_traits.h"
#include "classify/model/model_file.h"

namespace autocat::internal {

bool linear_model_consistent(const LinearModel& model, size_t terms, size_t categories) {
  if (model.packed_rows) {
    // The rows were checked (and their weights found finite) when indexed.
    return model.term_start.empty() && model.entry_weight.empty() &&
           model.num_categories == categories && model.packed_rows->num_categories == categories &&
           model.packed_rows->num_terms() == terms && model.bias.size() == categories &&
           model.slope.size() == categories && model.intercept.size() == categories;
  }
  if (model.term_start.empty()) {
    return model.entry_category.empty() && model.entry_weight.empty() && model.bias.empty();
  }
  if (model.num_categories != categories || model.term_start.size() != terms + 1 ||
      model.term_start.front() != 0 || model.entry_category.size() != model.entry_weight.size() ||
      model.term_start.back() != model.entry_weight.size() || model.bias.size() != categories ||
      model.slope.size() != categories || model.intercept.size() != categories ||
      !std::is_sorted(model.term_start.begin(), model.term_start.end())) {
    return false;
  }
  return std::all_of(model.entry_category.begin(), model.entry_category.end(),
                     [&](uint32_t c) { return c < categories; });
}

namespace {

// Reports the first problem of a decoded model. Messages are built only on
// failure: the loops below run over millions of weights.
class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  void require(bool ok, const char* what) const {
    if (!ok) fail(what);
  }
  void require(bool ok, const std::string& what) const {
    if (!ok) fail(what);
  }

  template <class Number>
  void require_not_nan(const std::vector<Number>& values, const std::string& what) const {
    const bool ok =
        std::none_of(values.begin(), values.end(), [](Number v) { return std::isnan(v); });
    if (!ok) fail(what + " holds NaN");
  }
  template <class Number>
  void require_finite(const std::vector<Number>& values, const std::string& what) const {
    const bool ok =
        std::all_of(values.begin(), values.end(), [](Number v) { return std::isfinite(v); });
    if (!ok) fail(what + " holds a non-finite number");
  }
  template <class Value>
  void require_all_at_most(const std::vector<Value>& values, Value limit, const char* what) const {
    const bool ok = std::all_of(values.begin(), values.end(), [&](Value v) { return v <= limit; });
    if (!ok) fail(what);
  }

  void require_sorted_unique(const std::vector<std::string>& names, const std::string& what) const {
    const bool ok =
        std::adjacent_find(names.begin(), names.end(),
                           [](const auto& a, const auto& b) { return !(a < b); }) == names.end();
    if (!ok) fail(what + " are not sorted and unique");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    refuse_model_file(path_, "model file is inconsistent (" + what + ")");
  }

  const std::string& path_;
};

bool valid_method(Method method) {
  const auto value = static_cast<size_t>(method);
  return value < all_methods().size();
}

bool valid_decision(Decision decision) {
  return decision == Decision::kOneOf || decision == Decision::kAnyOf;
}

void check_analyzer(const Checker& check, const std::string& path,
                    const AnalyzerSettings& settings) {
  check.require_sorted_unique(settings.stopwords, "stopwords");
  check.require(settings.max_term_bytes >= 1, "max_term_bytes below 1");
  try {
    Analyzer analyzer(settings);  // validates the stemmer language
  } catch (const InvalidArgumentError& e) {
    refuse_model_file(path,
                      std::string("model file has invalid analyzer settings (") + e.what() + ")");
  }
}

}  // namespace

void check_model_core(const std::string& path, const ModelState& m) {
  const Checker check(path);
  const size_t terms = m.terms.size(), cats = m.categories.size();
  check_analyzer(check, path, m.analyzer);

  const TrainOptions& t = m.training;
  check.require(valid_method(t.default_method), "default method out of range");
  check.require(!t.decision || valid_decision(*t.decision), "training decision out of range");
  // Unset settings were cross-validated; files older than TrainOptions
  // version 6 load with their "cross-validate" values (0 or negative) unset.
  check.require(!t.nb_alpha || (std::isfinite(*t.nb_alpha) && *t.nb_alpha > 0),
                "nb_alpha negative");
  check.require(!t.rocchio_gamma || !std::isnan(*t.rocchio_gamma), "training rocchio_gamma is NaN");
  check.require((!t.knn_k || *t.knn_k >= 1) &&
                    (!t.knn_similarity_power ||
                     (*t.knn_similarity_power >= 1 && *t.knn_similarity_power <= 2)),
                "training kNN settings out of range");
  check.require(static_cast<int>(t.feature_selection) >= 0 &&
                    t.feature_selection <= FeatureSelection::kKlDivergence,
                "feature selection out of range");
  check.require(t.analyzer.max_term_bytes >= 1, "training max_term_bytes below 1");
  check.require(
      t.num_features >= 0 && t.threshold_folds >= 0 && t.commit_batch >= 0 && t.tuning_sample >= 0,
      "negative training counts");
  check.require(std::isfinite(t.knn_cost_limit) && t.knn_cost_limit >= 0,
                "kNN cost limit out of range");

  check.require(cats > 0, "no categories");
  check.require_sorted_unique(m.categories, "categories");
  check.require(m.category_doc_counts.size() == cats, "category document counts");
  check.require_all_at_most(m.category_doc_counts, m.num_docs,
                            "a category holds more documents than the model");
  check.require_sorted_unique(m.terms, "terms");
  check.require(m.df.size() == terms, "document frequencies");
  check.require_all_at_most(m.df, m.num_docs,
                            "a term occurs in more documents than the model holds");
  check.require(m.selected.empty() || m.selected.size() == terms, "selected terms");
  check.require_all_at_most(m.selected, uint8_t{1}, "selected terms are not 0 or 1");

  check.require(valid_decision(m.decision), "decision out of range");
  check.require(m.knn_k >= 1, "kNN k below 1");
  check.require(m.knn_similarity_power == 1 || m.knn_similarity_power == 2,
                "kNN similarity power not 1 or 2");
  check.require(std::isfinite(m.rocchio_gamma) && m.rocchio_gamma >= 0,
                "Rocchio gamma negative or not finite");
  check.require(static_cast<uint8_t>(m.knn_tf) < kNumKnnTf, "kNN tf transform out of range");
  check.require(m.knn_search == KnnSearchMode::kExact || m.knn_search == KnnSearchMode::kTwoStep,
                "kNN search out of range");
  check.require(std::isfinite(m.knn_concentration) && m.knn_concentration >= 0,
                "kNN concentration negative or not finite");
  check.require(m.knn_term_weight.empty() == !(m.knn_concentration > 0) &&
                    (m.knn_term_weight.empty() || m.knn_term_weight.size() == terms),
                "kNN term weights");
  check.require_finite(m.knn_term_weight, "kNN term weights");
  check.require(std::all_of(m.knn_term_weight.begin(), m.knn_term_weight.end(),
                            [](float w) { return w >= 0.0f; }),
                "kNN term weights negative");
  for (const KnnCandidate& candidate : m.knn_objective) {
    check.require(candidate.k >= 1 && !std::isnan(candidate.objective) &&
                      std::isfinite(candidate.concentration) &&
                      static_cast<uint8_t>(candidate.tf) < kNumKnnTf,
                  "kNN cross-validation results");
  }
  for (const auto& [gamma, objective] : m.rocchio_gamma_objective) {
    check.require(!std::isnan(gamma) && !std::isnan(objective), "Rocchio cross-validation results");
  }

  check.require(m.thresholds.empty() || m.thresholds.size() == all_methods().size(),
                "thresholds per method");
  for (const auto& per_category : m.thresholds) {
    // Empty: that method untuned (added after the file was written).
    check.require(per_category.empty() || per_category.size() == cats, "thresholds per category");
    check.require_not_nan(per_category, "thresholds");
  }

  check.require(m.calibration.empty() || m.calibration.size() == all_methods().size(),
                "calibration per method");
  for (const Calibration& calibration : m.calibration) {
    check.require(calibration.empty() ||
                      (calibration.slope.size() == cats && calibration.intercept.size() == cats),
                  "calibration per category");
    check.require_finite(calibration.slope, "calibration");
    check.require_finite(calibration.intercept, "calibration");
    check.require(
        std::isfinite(calibration.shared_slope) && std::isfinite(calibration.shared_intercept),
        "shared calibration");
  }
  const ComboModel& combo = m.combo;
  if (!combo.empty()) {
    check.require(m.calibration.size() == all_methods().size(), "combo without calibration");
    for (int32_t member : combo.members) {
      const MethodTraits* traits = find_method_traits(static_cast<Method>(member));
      check.require(traits != nullptr && traits->combo_member &&
                        !m.calibration[static_cast<size_t>(member)].empty(),
                    "combo member");
    }
    check.require(combo.num_categories == cats && combo.weights.size() == cats * combo.stride(),
                  "combo weights per category");
    check.require_finite(combo.weights, "combo weights");
  }
}

namespace {

void check_rocchio(const Checker& check, const RocchioModel& r, size_t terms, size_t cats) {
  check.require(r.num_categories == cats, "Rocchio centroid count differs from category count");
  check.require(r.term_start.size() == terms + 1 && r.term_start.front() == 0 &&
                    std::is_sorted(r.term_start.begin(), r.term_start.end()) &&
                    r.term_start.back() == r.entry_category.size() &&
                    r.entry_category.size() == r.entry_weight.size(),
                "Rocchio centroid entries");
  check.require_all_at_most(r.entry_category, static_cast<uint32_t>(cats - 1),
                            "Rocchio category index out of range");
  check.require_finite(r.entry_weight, "Rocchio centroids");
}

void check_nb(const Checker& check, const NaiveBayesModel& nb, Method method, size_t terms,
              size_t cats) {
  const std::string name = method_name(method);
  check.require(nb.variant == static_cast<int>(method), name + " variant");
  check.require(std::isfinite(nb.alpha) && nb.alpha > 0, name + " alpha not positive");
  const NbWeightRows* rows = nb.weight_rows.get();
  check.require(nb.num_categories == cats && nb.log_prior.size() == cats &&
                    (rows != nullptr ? rows->num_terms == terms && rows->num_categories == cats &&
                                           nb.term_weight.empty()
                                     : nb.term_weight.size() == terms * cats) &&
                    nb.class_constant.size() == cats,
                name + " sizes differ from the category and term counts");
  check.require_not_nan(nb.log_prior, name + " priors");
  check.require_not_nan(nb.term_weight, name + " weights");
  if (rows != nullptr) {
    // What the rows expand to: a NaN or infinite log would make NaN weights.
    check.require_not_nan(rows->column_default, name + " weights");
    check.require_not_nan(rows->entry_weight, name + " weights");
    check.require_finite(rows->row_log, name + " weights");
    check.require_finite(rows->column_log, name + " weights");
  }
  check.require_not_nan(nb.class_constant, name + " constants");
  check.require(
      nb.idf.empty() || (nb.idf.size() == terms && method != Method::kBernoulliNaiveBayes),
      name + " idf values");
  check.require_finite(nb.idf, name + " idf values");
}

void check_linear(const Checker& check, const LinearModel& linear, Method method, size_t terms,
                  size_t cats) {
  const std::string name = method_name(method);
  check.require(linear_model_consistent(linear, terms, cats), name + " weights");
  for (const std::vector<float>* values :
       {&linear.entry_weight, &linear.bias, &linear.slope, &linear.intercept}) {
    check.require_finite(*values, "linear model weights");
  }
}

}  // namespace

void check_part_model(const std::string& path, const RocchioModel& model, ModelPart /*part*/,
                      size_t terms, size_t cats) {
  check_rocchio(Checker(path), model, terms, cats);
}
void check_part_model(const std::string& path, const NaiveBayesModel& model, ModelPart part,
                      size_t terms, size_t cats) {
  check_nb(Checker(path), model, Method(static_cast<uint32_t>(part) + 1), terms, cats);
}
void check_part_model(const std::string& path, const LinearModel& model, ModelPart part,
                      size_t terms, size_t cats) {
  check_linear(Checker(path), model, Method(static_cast<uint32_t>(part) + 1), terms, cats);
}

void check_model_part(const std::string& path, const ModelState& m, ModelPart part) {
  const Checker check(path);
  const size_t terms = m.terms.size(), cats = m.categories.size();
  switch (part) {
    case ModelPart::kRocchio:
      return check_rocchio(check, m.rocchio, terms, cats);
    case ModelPart::kMultinomialNb:
      return check_nb(check, m.multinomial_nb, Method::kNaiveBayes, terms, cats);
    case ModelPart::kBernoulliNb:
      return check_nb(check, m.bernoulli_nb, Method::kBernoulliNaiveBayes, terms, cats);
    case ModelPart::kComplementNb:
      return check_nb(check, m.complement_nb, Method::kComplementNaiveBayes, terms, cats);
    case ModelPart::kSvm:
      return check_linear(check, m.svm, Method::kSvm, terms, cats);
    case ModelPart::kLogreg:
      return check_linear(check, m.logreg, Method::kLogreg, terms, cats);
  }
}

void check_model_state(const std::string& path, const ModelState& m) {
  check_model_core(path, m);
  for (size_t p = 0; p < kNumModelParts; ++p) check_model_part(path, m, ModelPart(p));
}

void check_model_analyzer(const std::string& path, const AnalyzerSettings& settings) {
  check_analyzer(Checker(path), path, settings);
}

}  // namespace autocat::internal
