// The decision: which categories a document's scores assign under the
// decision mode (one-of, any-of, "other"), the per-category tuned
// thresholds (Rocchio's radii) and the minimum score, and, when asked, why
// (DecisionTrace: the leading candidates, the threshold each had to reach,
// a one-line reason).
//
// Thread safety: free functions over immutable data.
#pragma once

#include <string>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"
#include "classify/model/model_io.h"

namespace autocat::internal {

// Why a decision came out as it did.
struct DecisionTrace {
  Method method = Method::kKnn;
  Decision mode = Decision::kOneOf;
  bool other = false;  // one-of choosing among categories that reach their thresholds
  bool tuned = false;  // per-category tuned thresholds applied
  double min_score = 0;
  struct Candidate {
    std::string name;
    double score = 0;
    double threshold = 0;  // the score it had to reach (>= kNeverAssign: never assigned)
    bool assigned = false;
  };
  std::vector<Candidate> candidates;  // best scores first: every assigned one, at least 5
  std::vector<Category> assigned;
  std::string reason;  // one line, e.g. "other: no category reached its threshold; ..."
  // Rule categories that fired (classify/decide/rules.h), in file order.
  struct FiredRule {
    std::string source;  // "FILE:LINE"
    std::string category;
    std::string mode;  // "assign", "veto", "evidence:+0.3"
    std::string query;
  };
  std::vector<FiredRule> rules;
};

// How a decision is made: options resolved against the model
// (Categorizer::method(), decision_mode(), other_enabled()).
struct DecisionRule {
  Method method = Method::kKnn;
  Decision mode = Decision::kOneOf;
  bool other = false;  // one-of: "other" when no category reaches its threshold
};

// The categories `scores` (indexed like model.categories) assign under
// `rule` and `options` (min_score, tuned_thresholds, max_categories), with
// the thresholds, categories and category counts of `model` (its core
// suffices). With `explain`, also the candidates and the reason.
DecisionTrace decide_categories(const ModelState& model, const DecisionRule& rule,
                                const std::vector<double>& scores, const ClassifyOptions& options,
                                bool explain);

}  // namespace autocat::internal
