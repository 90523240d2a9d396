// Rocchio's tuner: gamma, the weight of the negative centroid.

#include <vector>

#include "classify/base/parallel.h"
#include "classify/corpus/category_sums.h"
#include "classify/methods/rocchio.h"
#include "classify/train/method_tuner.h"
#include "classify/train/tune_scores.h"

namespace autocat::internal {
namespace {

class RocchioTuner : public MethodTuner {
 public:
  explicit RocchioTuner(const TuneContext& context)
      : context_(context),
        corpus_(context.corpus),
        compact_(context.compact),
        gamma_candidates_(context.options.rocchio_gamma
                              ? std::vector<double>{*context.options.rocchio_gamma}
                              : rocchio_gamma_candidates()),
        lists_(gamma_candidates_.size(), ScoreLists(compact_ ? 0 : corpus_.num_docs())),
        top_(compact_ ? gamma_candidates_.size() : 0,
             std::vector<uint32_t>(corpus_.num_docs(), kNoCategory)) {}

  std::vector<Method> methods() const override { return {Method::kRocchio}; }
  std::string name() const override { return "rocchio"; }

  void fit_fold(const TuneFold& fold, const FoldStepDone& step_done) override {
    // One pass over the fold's postings serves every gamma.
    const CategorySums sums = fold_sums(fold);
    // Side by side on the threads other folds left idle.
    parallel_for(
        gamma_candidates_.size(),
        [&](size_t g) {
          if (!in_contention_[g]) return;
          score_held_out(fold, sums, g, [&](uint32_t d, const std::vector<double>& scores) {
            keep_scores(scores, compact_, compact_ ? &top_[g][d] : nullptr,
                        compact_ ? nullptr : &lists_[g][d]);
          });
        },
        1 + context_.idle_workers.load());
    step_done("rocchio");
  }

  void prune() override {
    if (!compact_) return;
    std::vector<const std::vector<uint32_t>*> tops;
    for (const std::vector<uint32_t>& top : top_) tops.push_back(&top);
    const std::vector<bool> in = candidates_in_contention(corpus_, context_.scored, tops);
    for (size_t g = 0; g < in.size(); ++g) {
      if (in[g]) continue;
      in_contention_[g] = 0;
      std::vector<uint32_t>().swap(top_[g]);
      ++pruned_;
    }
  }

  void choose(TunedSettings* tuned) override {
    double best = -1.0;
    for (size_t g = 0; g < gamma_candidates_.size(); ++g) {
      if (!in_contention_[g]) continue;
      std::vector<double> thresholds;
      double rare_cut_ratio = 0.0;
      int rare_variant = -1;
      if (!compact_) {
        thresholds =
            thresholds_from(corpus_, lists_[g], rare_cuts(), &rare_cut_ratio, &rare_variant);
      }
      const double value = compact_ ? top_accuracy(corpus_, top_[g])
                                    : objective(corpus_, lists_[g], thresholds, context_.decision);
      tuned->rocchio_gamma_objective.emplace_back(gamma_candidates_[g], value);
      if (value > best) {
        best = value;
        best_gamma_ = g;
        tuned->rocchio_gamma = gamma_candidates_[g];
        tuned->thresholds[static_cast<size_t>(Method::kRocchio)] = std::move(thresholds);
        if (rare_cuts()) {
          tuned->rare_cut_ratio[static_cast<size_t>(Method::kRocchio)] = rare_cut_ratio;
          tuned->rare_cut_variant[static_cast<size_t>(Method::kRocchio)] = rare_variant;
        }
      }
    }
    tuned->method_objective[static_cast<size_t>(Method::kRocchio)] = best;
    tuned->pruned_candidates += pruned_;
    if (compact_) {
      // The second pass keeps the winner's full lists only.
      top_.clear();
      lists_[best_gamma_].resize(corpus_.num_docs());
    }
  }

  bool refits_winner() const override { return compact_; }

  void refit_fold(const TuneFold& fold) override {
    score_held_out(fold, fold_sums(fold), best_gamma_,
                   [&](uint32_t d, const std::vector<double>& scores) {
                     keep_best(scores, &lists_[best_gamma_][d]);
                   });
  }

  void finish_refit(TunedSettings* tuned) override {
    tuned->thresholds[static_cast<size_t>(Method::kRocchio)] =
        thresholds_from(corpus_, lists_[best_gamma_]);
  }

  std::vector<float> member_scores(Method /*method*/, const TunedSettings& /*tuned*/) override {
    return score_matrix(corpus_, lists_[best_gamma_]);
  }

 private:
  bool rare_cuts() const { return takes_rare_cuts(Method::kRocchio, context_.decision); }

  // The fold's category sums of tf-idf vectors, as train_rocchio makes them.
  static CategorySums fold_sums(const TuneFold& fold) {
    return sum_categories(fold.training.corpus, TermAmount::kTfidf, {}, fold.idf);
  }

  // Rocchio with gamma candidate g fitted on the fold (from its `sums`),
  // each held-out document's scores handed to keep(d, scores).
  template <typename Keep>
  void score_held_out(const TuneFold& fold, const CategorySums& sums, size_t g,
                      const Keep& keep) const {
    std::vector<double> fold_scores(corpus_.num_categories());
    const RocchioModel centroids = rocchio_from_sums(sums, gamma_candidates_[g]);
    const RocchioClassifier rocchio_classifier(centroids, fold.idf);
    for (const auto& [d, doc] : fold.held_out) {
      rocchio_classifier.score(doc, classify_, &fold_scores);
      keep(d, fold_scores);
    }
  }

  const TuneContext& context_;
  const TrainingCorpus& corpus_;
  const bool compact_;
  const ClassifyOptions classify_;
  const std::vector<double> gamma_candidates_;
  // Out-of-fold best scores per gamma candidate (any-of, and one-of's
  // winner in the second pass), and one-of's top categories.
  std::vector<ScoreLists> lists_;
  std::vector<std::vector<uint32_t>> top_;
  std::vector<uint8_t> in_contention_ = std::vector<uint8_t>(gamma_candidates_.size(), 1);
  uint32_t pruned_ = 0;
  size_t best_gamma_ = 0;
};

}  // namespace

std::unique_ptr<MethodTuner> make_rocchio_tuner(const TuneContext& context) {
  return std::make_unique<RocchioTuner>(context);
}

}  // namespace autocat::internal
