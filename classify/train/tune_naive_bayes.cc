// The Naive Bayes tuner: per method (nb, bnb, cnb), its features (term
// counts or tf-idf; bnb: presence) and alpha.

#include <algorithm>
#include <functional>
#include <vector>

#include "classify/base/parallel.h"
#include "classify/corpus/category_sums.h"
#include "classify/methods/naive_bayes.h"
#include "classify/train/method_tuner.h"
#include "classify/train/tune_scores.h"

namespace autocat::internal {
namespace {

class NaiveBayesTuner : public MethodTuner {
 public:
  NaiveBayesTuner(const TuneContext& context, const std::vector<Method>& methods)
      : context_(context),
        corpus_(context.corpus),
        compact_(context.compact),
        nb_methods_(naive_bayes_methods()),
        alpha_candidates_(context.options.nb_alpha ? std::vector<double>{*context.options.nb_alpha}
                                                   : nb_alpha_candidates()),
        num_alphas_(alpha_candidates_.size()),
        lists_(nb_methods_.size() * 2 * num_alphas_),
        top_(compact_ ? lists_.size() : 0),
        in_contention_(lists_.size(), true),
        best_(nb_methods_.size(), kNotTuned) {
    size_t candidates = 0;
    for (size_t m = 0; m < nb_methods_.size(); ++m) {
      // A method not asked for fits no candidate (its slots out of contention).
      wanted_.push_back(std::find(methods.begin(), methods.end(), nb_methods_[m]) != methods.end());
      for (size_t w = 0; w < feature_candidates(m); ++w) {
        for (size_t a = 0; a < num_alphas_; ++a) {
          if (!wanted_[m]) {
            in_contention_[slot(m, w, a)] = false;
          } else if (compact_) {
            top_[slot(m, w, a)].assign(corpus_.num_docs(), kNoCategory);
          } else {
            lists_[slot(m, w, a)].resize(corpus_.num_docs());
          }
          if (wanted_[m]) ++candidates;
        }
      }
    }
    // Any-of with more than one candidate per method: compared on short
    // lists, the winners refitted with full ones (kComparedScores).
    short_lists_ =
        !compact_ && candidates > size_t(std::count(wanted_.begin(), wanted_.end(), true));
  }

  std::vector<Method> methods() const override {
    std::vector<Method> tuned;
    for (size_t m = 0; m < nb_methods_.size(); ++m) {
      if (wanted_[m]) tuned.push_back(nb_methods_[m]);
    }
    return tuned;
  }
  std::string name() const override { return "naive bayes"; }

  void fit_fold(const TuneFold& fold, const FoldStepDone& step_done) override {
    fit(
        fold, [&](size_t s) { return bool(in_contention_[s]); }, compact_,
        short_lists_ ? kComparedScores : kKeptScores);
    step_done("naive bayes");
  }

  // Per method, among its features x alphas.
  void prune() override {
    if (!compact_) return;
    for (size_t m = 0; m < nb_methods_.size(); ++m) {
      if (!wanted_[m]) continue;
      std::vector<size_t> slots;
      std::vector<const std::vector<uint32_t>*> tops;
      for (size_t w = 0; w < feature_candidates(m); ++w) {
        for (size_t a = 0; a < num_alphas_; ++a) {
          slots.push_back(slot(m, w, a));
          tops.push_back(&top_[slots.back()]);
        }
      }
      const std::vector<bool> in = candidates_in_contention(corpus_, context_.scored, tops);
      for (size_t i = 0; i < slots.size(); ++i) {
        if (in[i]) continue;
        in_contention_[slots[i]] = false;
        std::vector<uint32_t>().swap(top_[slots[i]]);
        ++pruned_;
      }
    }
  }

  // Ties keep term counts and the smaller alpha. nb_alpha_objective reports
  // the alphas of the features chosen.
  void choose(TunedSettings* tuned) override {
    for (size_t m = 0; m < nb_methods_.size(); ++m) {
      if (!wanted_[m]) continue;
      double best = -1.0;
      std::vector<std::vector<std::pair<double, double>>> objectives(feature_candidates(m));
      for (size_t w = 0; w < feature_candidates(m); ++w) {
        for (size_t a = 0; a < num_alphas_; ++a) {
          const size_t s = slot(m, w, a);
          if (!in_contention_[s]) continue;
          std::vector<double> thresholds;
          if (!compact_) thresholds = thresholds_from(corpus_, lists_[s]);
          const double value = compact_
                                   ? top_accuracy(corpus_, top_[s])
                                   : objective(corpus_, lists_[s], thresholds, context_.decision);
          objectives[w].emplace_back(alpha_candidates_[a], value);
          if (value > best) {
            best = value;
            best_[m] = s;
            tuned->nb_alpha[m] = alpha_candidates_[a];
            tuned->nb_tfidf[m] = w == 1;
            tuned->thresholds[static_cast<size_t>(nb_methods_[m])] = std::move(thresholds);
          }
        }
      }
      tuned->nb_alpha_objective[m] = std::move(objectives[tuned->nb_tfidf[m] ? 1 : 0]);
      tuned->method_objective[static_cast<size_t>(nb_methods_[m])] = best;
    }
    tuned->pruned_candidates += pruned_;
    if (compact_ || short_lists_) {
      // The second pass keeps the winners' full lists only.
      top_.clear();
      for (ScoreLists& lists : lists_) ScoreLists().swap(lists);
      for (size_t s : best_) {
        if (s != kNotTuned) lists_[s].resize(corpus_.num_docs());
      }
    }
  }

  bool refits_winner() const override { return compact_ || short_lists_; }

  void refit_fold(const TuneFold& fold) override {
    fit(
        fold, [&](size_t s) { return std::find(best_.begin(), best_.end(), s) != best_.end(); },
        false, kKeptScores);
  }

  void finish_refit(TunedSettings* tuned) override {
    for (size_t m = 0; m < nb_methods_.size(); ++m) {
      if (!wanted_[m]) continue;
      const size_t method = static_cast<size_t>(nb_methods_[m]);
      tuned->thresholds[method] = thresholds_from(corpus_, lists_[best_[m]]);
      // The methods are compared with each other on full lists.
      if (short_lists_) {
        tuned->method_objective[method] =
            objective(corpus_, lists_[best_[m]], tuned->thresholds[method], context_.decision);
      }
    }
  }

  std::vector<float> member_scores(Method method, const TunedSettings& /*tuned*/) override {
    const size_t m = static_cast<size_t>(std::find(nb_methods_.begin(), nb_methods_.end(), method) -
                                         nb_methods_.begin());
    return score_matrix(corpus_, lists_[best_[m]]);
  }

 private:
  // [(method * 2 + features) * num_alphas + alpha candidate], features 0 =
  // term counts, 1 = tf-idf vectors (multinomial and complement only).
  size_t slot(size_t m, size_t features, size_t a) const {
    return (m * 2 + features) * num_alphas_ + a;
  }
  size_t feature_candidates(size_t m) const {
    return nb_methods_[m] == Method::kBernoulliNaiveBayes ? 1 : 2;
  }

  // Naive Bayes on a fold: the fold's category sums are made once per kind
  // of feature (counts, tf-idf, presence) and every alpha wanted is fitted
  // from them, exactly as train_*_nb would fit it; one sums array and one
  // model live at a time (each is terms x categories). `run(slot)` says
  // whether a candidate is fitted; `top_only` and `max_kept` as
  // keep_scores().
  void fit(const TuneFold& prepared, const std::function<bool(size_t)>& run, bool top_only,
           size_t max_kept) {
    const TrainingCorpus& fitted_on = prepared.training.corpus;
    const std::vector<float> no_idf;
    // The kinds of feature side by side on the threads other folds left idle.
    parallel_for(
        3,
        [&](size_t w) {
          std::vector<double> fold_scores(corpus_.num_categories());
          const bool presence = w == 2;
          bool needed = false;
          for (size_t m = 0; m < nb_methods_.size(); ++m) {
            if ((nb_methods_[m] == Method::kBernoulliNaiveBayes) != presence) continue;
            for (size_t a = 0; a < num_alphas_; ++a)
              needed = needed || run(slot(m, presence ? 0 : w, a));
          }
          if (!needed) return;
          const TermAmount amount =
              presence ? TermAmount::kPresence : (w == 1 ? TermAmount::kTfidf : TermAmount::kCount);
          const std::vector<float>& features_idf = w == 1 ? prepared.idf : no_idf;
          const CategorySums sums =
              sum_categories(fitted_on, amount, prepared.selected, features_idf);
          for (size_t m = 0; m < nb_methods_.size(); ++m) {
            const bool bernoulli = nb_methods_[m] == Method::kBernoulliNaiveBayes;
            if (bernoulli != presence) continue;
            for (size_t a = 0; a < num_alphas_; ++a) {
              const size_t s = slot(m, presence ? 0 : w, a);
              if (!run(s)) continue;
              const double alpha = alpha_candidates_[a];
              const std::vector<uint8_t>& wanted = prepared.wanted;
              const std::vector<uint8_t>& selected = prepared.selected;
              const NaiveBayesModel nb_model =
                  bernoulli ? bernoulli_nb_from_sums(sums, selected, alpha, wanted)
                  : nb_methods_[m] == Method::kNaiveBayes
                      ? multinomial_nb_from_sums(sums, selected, alpha, features_idf, wanted)
                      : complement_nb_from_sums(sums, selected, alpha, features_idf, wanted);
              const NaiveBayesClassifier nb_classifier(nb_model);
              for (const auto& [d, doc] : prepared.held_out) {
                nb_classifier.score(doc, classify_, &fold_scores);
                keep_scores(fold_scores, top_only, top_only ? &top_[s][d] : nullptr,
                            top_only ? nullptr : &lists_[s][d], max_kept);
              }
            }
          }
        },
        1 + context_.idle_workers.load());
  }

  const TuneContext& context_;
  const TrainingCorpus& corpus_;
  const bool compact_;
  bool short_lists_ = false;  // any-of: candidates compared on kComparedScores
  const ClassifyOptions classify_;
  const std::vector<Method>& nb_methods_;
  const std::vector<double> alpha_candidates_;
  const size_t num_alphas_;
  // Out-of-fold best scores per slot() (any-of, and one-of's winners in the
  // second pass), and one-of's top categories.
  std::vector<ScoreLists> lists_;
  std::vector<std::vector<uint32_t>> top_;
  std::vector<uint8_t> in_contention_;  // per slot(): not pruned
  uint32_t pruned_ = 0;
  // Per method: the slot chosen, kNotTuned for a method not asked for.
  static constexpr size_t kNotTuned = static_cast<size_t>(-1);
  std::vector<size_t> best_;
  std::vector<bool> wanted_;  // per method: asked for
};

}  // namespace

std::unique_ptr<MethodTuner> make_naive_bayes_tuner(const TuneContext& context,
                                                    const std::vector<Method>& methods) {
  return std::make_unique<NaiveBayesTuner>(context, methods);
}

}  // namespace autocat::internal
