#include "classify/decide/decision.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace autocat::internal {
namespace {

std::string score_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

// The category with the most training documents (one-of's choice
// without evidence).
uint32_t most_frequent_category(const ModelState& model) {
  const auto& counts = model.category_doc_counts;
  // Ties go to the first name, as ranked() orders equal scores.
  return static_cast<uint32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
}

}  // namespace

DecisionTrace decide_categories(const ModelState& model, const DecisionRule& rule,
                                const std::vector<double>& scores, const ClassifyOptions& options,
                                bool explain) {
  DecisionTrace trace;
  trace.method = rule.method;
  trace.mode = rule.mode;
  trace.other = trace.mode == Decision::kOneOf && rule.other;
  trace.min_score = options.min_score;
  const auto slot = static_cast<size_t>(trace.method);
  const bool uses_thresholds = trace.mode == Decision::kAnyOf || trace.other;
  trace.tuned = uses_thresholds && options.tuned_thresholds && slot < model.thresholds.size() &&
                !model.thresholds[slot].empty();
  const size_t limit =
      trace.mode == Decision::kOneOf ? 1 : static_cast<size_t>(std::max(options.max_categories, 1));
  const bool radius = trace.method == Method::kRocchio;

  // Category indexes best score first; ties keep name order, as ranked() does.
  std::vector<uint32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
  bool capped = false;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t c = order[i];
    const double score = scores[c];
    // Without a trace to fill, stop once nothing more can be assigned.
    if (!explain && (score <= 0.0 || trace.assigned.size() == limit)) break;
    double threshold = options.min_score;
    if (trace.tuned) threshold = std::max(threshold, model.thresholds[slot][c]);
    bool passes = score > 0.0 && score >= threshold;
    if (!uses_thresholds && i > 0) passes = false;  // plain one-of: the best or nothing
    const bool assigned = passes && trace.assigned.size() < limit;
    if (assigned) trace.assigned.push_back(Category{model.categories[c], score});
    capped = capped || (passes && !assigned);
    if (explain && trace.candidates.size() < std::max<size_t>(5, trace.assigned.size())) {
      trace.candidates.push_back({model.categories[c], score, threshold, assigned});
    }
  }
  // Plain one-of promises a category for every document: with no positive
  // score, the best score if the scores tell categories apart at all,
  // else (no known term, all scores equal) the most frequent training
  // category.
  enum class Fallback { kNone, kBestScore, kPrior } fallback = Fallback::kNone;
  if (trace.mode == Decision::kOneOf && !trace.other && options.min_score <= 0.0 &&
      trace.assigned.empty() && !order.empty()) {
    uint32_t chosen = order.front();
    fallback = Fallback::kBestScore;
    if (!(scores[order.front()] > scores[order.back()])) {
      fallback = Fallback::kPrior;
      chosen = most_frequent_category(model);
    }
    trace.assigned.push_back(Category{model.categories[chosen], scores[chosen]});
    if (explain) {
      bool listed = false;
      for (auto& candidate : trace.candidates) {
        if (candidate.name == model.categories[chosen]) candidate.assigned = listed = true;
      }
      if (!listed) {
        trace.candidates.insert(trace.candidates.begin(),
                                {model.categories[chosen], scores[chosen], 0.0, true});
      }
    }
  }
  if (!explain) return trace;
  if (fallback == Fallback::kPrior) {
    trace.reason = "no evidence (no known term, or every score " +
                   score_text(scores[order.front()]) +
                   "): the most frequent training category, as one-of assigns one";
    return trace;
  }
  if (fallback == Fallback::kBestScore) {
    trace.reason = "best score (none above 0; one-of assigns one)";
    return trace;
  }
  const DecisionTrace::Candidate* best_rejected = nullptr;
  for (const auto& candidate : trace.candidates) {
    if (!candidate.assigned) {
      best_rejected = &candidate;
      break;
    }
  }

  const std::string what_threshold =
      trace.tuned ? (radius ? "its radius" : "its threshold") : "the minimum score";
  if (order.empty() || scores[order.front()] <= 0.0) {
    trace.reason = "no category scored above 0 (no evidence)";
  } else if (!trace.assigned.empty()) {
    if (trace.mode == Decision::kAnyOf) {
      const bool one = trace.assigned.size() == 1;
      const std::string own = one ? "its" : "their";
      trace.reason = std::to_string(trace.assigned.size()) +
                     (one ? " category reached " : " categories reached ") +
                     (trace.tuned ? own + (radius ? " radius" : " threshold") : what_threshold);
      if (capped) trace.reason += "; capped at " + std::to_string(limit);
    } else if (trace.other && trace.assigned.front().name != trace.candidates.front().name) {
      trace.reason = "best-scoring category within " + what_threshold + "; " +
                     trace.candidates.front().name + " scored higher but not enough";
    } else {
      trace.reason = trace.other ? "best score, within " + what_threshold : "best score";
    }
  } else {
    const std::string outcome = trace.other ? "other" : "none";
    std::string best;
    if (best_rejected) {
      const bool never = best_rejected->threshold >= kNeverAssign;
      best = "; the best, " + best_rejected->name + ", scored " + score_text(best_rejected->score) +
             (never ? " but too few training examples calibrate it"
                    : " < " + score_text(best_rejected->threshold));
    }
    if (trace.mode == Decision::kOneOf && !trace.other) {
      trace.reason = "none: the best category is under the minimum score" + best;
    } else {
      trace.reason = outcome + ": no category reached " + what_threshold + best;
    }
  }
  return trace;
}

}  // namespace autocat::internal
