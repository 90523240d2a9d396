// The linear methods' tuner: svm's and logreg's C, each on the same
// problem per fold, and svm's Platt sigmoids at the C chosen.

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "classify/base/method_traits.h"
#include "classify/base/parallel.h"
#include "classify/corpus/feature_selection.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/calibration.h"
#include "classify/methods/linear.h"
#include "classify/train/method_tuner.h"
#include "classify/train/tune_scores.h"

namespace autocat::internal {
namespace {

class LinearTuner : public MethodTuner {
 public:
  LinearTuner(const TuneContext& context, const std::vector<Method>& methods)
      : context_(context), corpus_(context.corpus), methods_(methods) {
    const size_t cells = size_t(corpus_.num_docs()) * corpus_.num_categories();
    for (Method method : methods_) {
      const std::optional<double>& fixed =
          method == Method::kSvm ? context.options.svm_c : context.options.logreg_c;
      c_candidates_.push_back(fixed ? std::vector<double>{*fixed} : linear_c_candidates(method));
    }
    values_.resize(methods_.size());
    in_contention_.resize(methods_.size());
    for (size_t m = 0; m < methods_.size(); ++m) {
      in_contention_[m].assign(c_candidates_[m].size(), 1);
      values_[m].assign(c_candidates_[m].size(), std::vector<float>(cells, 0.0f));
    }
    chosen_.resize(methods_.size());
  }

  std::vector<Method> methods() const override { return methods_; }
  std::string name() const override { return "linear"; }
  uint64_t steps_per_fold() const override { return methods_.size(); }

  // The whole collection's path, on every core: each fold's fit at a C
  // starts from its solution there, restricted to the fold's documents,
  // which is most of the way to the fold's own (Chu, Lin et al.'s warm
  // start across folds).
  void before_folds() override {
    const std::vector<uint8_t> selected = selected_features(corpus_, context_.options);
    const std::vector<float> idf = compute_idf(corpus_.df, corpus_.num_docs(), selected);
    const LinearProblem problem = make_linear_problem(corpus_, idf);
    whole_duals_.resize(methods_.size());
    for (size_t m = 0; m < methods_.size(); ++m) {
      for_each_linear_path_model(
          problem, corpus_, loss(m), c_candidates_[m], std::thread::hardware_concurrency(),
          [](size_t, LinearModel&&) {}, nullptr, &whole_duals_[m]);
    }
  }

  // Each C's model scores the held-out documents as soon as it is fitted
  // and is dropped (each is terms x categories).
  void fit_fold(const TuneFold& fold, const FoldStepDone& step_done) override {
    const uint32_t num_categories = corpus_.num_categories();
    const TrainingCorpus& fitted_on = fold.training.corpus;
    std::vector<double> fold_scores(num_categories);
    const LinearProblem problem = make_linear_problem(fitted_on, fold.idf);
    for (size_t m = 0; m < methods_.size(); ++m) {
      // The C candidates still in contention, each from the whole
      // collection's solution there.
      std::vector<size_t> candidate;
      std::vector<double> cs;
      LinearPathDuals start;
      for (size_t k = 0; k < c_candidates_[m].size(); ++k) {
        if (!in_contention_[m][k]) continue;
        candidate.push_back(k);
        cs.push_back(c_candidates_[m][k]);
        std::vector<std::vector<float>>& rows_of = start.emplace_back(num_categories);
        for (uint32_t c = 0; c < num_categories; ++c) {
          const std::vector<float>& whole = whole_duals_[m][k][c];
          std::vector<float>& rows = rows_of[c];
          rows.reserve(fold.original.size());
          for (uint32_t d : fold.original) rows.push_back(whole[d]);
        }
      }
      for_each_linear_path_model(
          problem, fitted_on, loss(m), cs, 1 + context_.idle_workers.load(),
          [&](size_t i, LinearModel&& linear) {
            std::vector<float>& values = values_[m][candidate[i]];
            for (const auto& [d, doc] : fold.held_out) {
              linear_decision_values(linear, fold.idf, doc, &fold_scores);
              std::copy(fold_scores.begin(), fold_scores.end(),
                        values.begin() + ptrdiff_t(d) * num_categories);
            }
          },
          &start, nullptr, kFoldTolerances[slot(m)]);
      step_done(method_name(methods_[m]));
    }
  }

  // Each C judged on the documents scored so far, by the top category of
  // its probabilities as choose() computes them.
  void prune() override {
    if (!context_.compact) return;
    const uint32_t num_categories = corpus_.num_categories();
    for (size_t m = 0; m < methods_.size(); ++m) {
      const size_t count = c_candidates_[m].size();
      if (count < 2) continue;
      std::vector<std::vector<uint32_t>> tops(count);
      parallel_for(count, [&](size_t k) {
        const Candidate judged = judge(values_[m][k], methods_[m]);
        tops[k].assign(corpus_.num_docs(), kNoCategory);
        for (uint32_t d = 0; d < corpus_.num_docs(); ++d) {
          if (!context_.scored[d]) continue;
          const auto row = judged.probabilities.begin() + ptrdiff_t(d) * num_categories;
          tops[k][d] = static_cast<uint32_t>(std::max_element(row, row + num_categories) - row);
        }
      });
      std::vector<const std::vector<uint32_t>*> pointers;
      for (const std::vector<uint32_t>& top : tops) pointers.push_back(&top);
      const std::vector<bool> in = candidates_in_contention(corpus_, context_.scored, pointers);
      for (size_t k = 0; k < count; ++k) {
        if (in[k]) continue;
        in_contention_[m][k] = 0;
        std::vector<float>().swap(values_[m][k]);
        ++pruned_;
      }
    }
  }

  // Per C, out-of-fold probabilities as the classifier would give them
  // (svm through a Platt sigmoid fitted on these decision values), then
  // thresholds and the objective as for the other methods.
  void choose(TunedSettings* tuned) override {
    for (size_t m = 0; m < methods_.size(); ++m) {
      const bool platt = methods_[m] == Method::kSvm;
      // The candidates are independent: each is judged on a thread of its
      // own, then the best taken in candidate order (the same choice).
      std::vector<Candidate> judged(c_candidates_[m].size());
      parallel_for(judged.size(), [&](size_t k) {
        if (in_contention_[m][k]) judged[k] = judge(values_[m][k], methods_[m]);
      });
      double best = -1.0;
      size_t best_k = 0;
      for (size_t k = 0; k < judged.size(); ++k) {
        if (!in_contention_[m][k]) continue;
        Candidate& candidate = judged[k];
        const double c_value = c_candidates_[m][k];
        (platt ? tuned->svm_c_objective : tuned->logreg_c_objective)
            .emplace_back(c_value, candidate.value);
        if (candidate.value > best) {
          best = candidate.value;
          best_k = k;
          (platt ? tuned->svm_c : tuned->logreg_c) = c_value;
          tuned->thresholds[static_cast<size_t>(methods_[m])] = std::move(candidate.thresholds);
          if (takes_rare_cuts(methods_[m], context_.decision)) {
            tuned->rare_cut_ratio[static_cast<size_t>(methods_[m])] = candidate.rare_cut_ratio;
            tuned->rare_cut_variant[static_cast<size_t>(methods_[m])] = candidate.rare_variant;
          }
          chosen_[m] = std::move(candidate.probabilities);
          if (platt) {
            tuned->svm_slope = candidate.calibration.slope;
            tuned->svm_intercept = candidate.calibration.intercept;
          }
        }
      }
      tuned->method_objective[static_cast<size_t>(methods_[m])] = best;
      // By family slot (svm 0, logreg 1), as fit_linear_models() reads them.
      tuned->linear_duals.resize(std::max(tuned->linear_duals.size(), slot(m) + 1));
      tuned->linear_duals[slot(m)] = std::move(whole_duals_[m][best_k]);
      LinearPathDuals().swap(whole_duals_[m]);
      // The winner's probabilities are kept (chosen_); the values are not
      // needed again.
      std::vector<std::vector<float>>().swap(values_[m]);
    }
    tuned->pruned_candidates += pruned_;
  }

  std::vector<float> member_scores(Method method, const TunedSettings& /*tuned*/) override {
    const size_t m =
        static_cast<size_t>(std::find(methods_.begin(), methods_.end(), method) - methods_.begin());
    return std::move(chosen_.at(m));
  }

 private:
  // One C's out-of-fold decision values judged: their sigmoids (svm), the
  // probabilities, thresholds and objective.
  struct Candidate {
    LinearModel calibration;  // only the sigmoids
    std::vector<float> probabilities;
    std::vector<double> thresholds;
    double rare_cut_ratio = 0.0;
    int rare_variant = -1;
    double value = -1.0;
  };
  Candidate judge(const std::vector<float>& values, Method method) const {
    const bool platt = method == Method::kSvm;
    const uint32_t num_categories = corpus_.num_categories();
    const std::vector<uint8_t>& scored = context_.scored;
    Candidate result;
    LinearModel& calibration = result.calibration;
    calibration.slope.assign(num_categories, 1.0f);
    calibration.intercept.assign(num_categories, 0.0f);
    if (platt) {
      std::vector<double> f;
      std::vector<uint8_t> positive;
      for (uint32_t c = 0; c < num_categories; ++c) {
        f.clear();
        positive.clear();
        for (uint32_t d = 0; d < corpus_.num_docs(); ++d) {
          if (!scored[d]) continue;
          f.push_back(values[size_t(d) * num_categories + c]);
          positive.push_back(has_label(corpus_, d, c) ? 1 : 0);
        }
        const Sigmoid sigmoid = fit_platt(f, positive);
        calibration.slope[c] = static_cast<float>(sigmoid.slope);
        calibration.intercept[c] = static_cast<float>(sigmoid.intercept);
      }
    }
    std::vector<double> scores(num_categories);
    ScoreLists linear_lists(corpus_.num_docs());
    result.probabilities.assign(values.size(), 0.0f);
    for (uint32_t d = 0; d < corpus_.num_docs(); ++d) {
      if (!scored[d]) continue;
      scores.assign(values.begin() + ptrdiff_t(d) * num_categories,
                    values.begin() + ptrdiff_t(d + 1) * num_categories);
      linear_probabilities(calibration, context_.decision, &scores);
      keep_best(scores, &linear_lists[d]);
      std::copy(scores.begin(), scores.end(),
                result.probabilities.begin() + ptrdiff_t(d) * num_categories);
    }
    result.thresholds =
        thresholds_from(corpus_, linear_lists, takes_rare_cuts(method, context_.decision),
                        &result.rare_cut_ratio, &result.rare_variant);
    result.value = objective(corpus_, linear_lists, result.thresholds, context_.decision);
    return result;
  }

  // methods_[m]'s place in its family (svm 0, logreg 1) and loss.
  size_t slot(size_t m) const {
    return static_cast<size_t>(method_traits(methods_[m]).family_slot);
  }
  LinearLoss loss(size_t m) const {
    return methods_[m] == Method::kSvm ? LinearLoss::kSquaredHinge : LinearLoss::kLogistic;
  }
  // A fold's models only score its held-out documents and are dropped, so
  // logreg's, whose solver has no shrinking and converges slowest, stop at
  // a tolerance 3 times looser than the kept models' (liblinear's 0.1).
  // svm's stay at 0.1: at 0.3 its C candidates' out-of-fold objectives
  // moved by up to 0.0003, enough to flip a near tie on the Subject lines.
  static constexpr double kFoldTolerances[] = {0.1, 0.3};
  const TuneContext& context_;
  const TrainingCorpus& corpus_;
  // svm first when both.
  const std::vector<Method> methods_;
  // The whole collection's dual solutions, [method][C candidate][category][doc].
  std::vector<LinearPathDuals> whole_duals_;
  std::vector<std::vector<double>> c_candidates_;  // per method
  // Out-of-fold decision values, [method][C candidate][doc * categories + c].
  std::vector<std::vector<std::vector<float>>> values_;
  std::vector<std::vector<uint8_t>> in_contention_;  // [method][C candidate]: not pruned
  uint32_t pruned_ = 0;
  // The out-of-fold probabilities at the C chosen, per method.
  std::vector<std::vector<float>> chosen_;
};

}  // namespace

std::unique_ptr<MethodTuner> make_linear_tuner(const TuneContext& context,
                                               const std::vector<Method>& methods) {
  return std::make_unique<LinearTuner>(context, methods);
}

}  // namespace autocat::internal
