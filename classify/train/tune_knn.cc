// kNN's tuner: the term weighting (tf transform and class concentration), k
// and vote power, all read off one neighbour list per document and
// weighting.

#include <algorithm>
#include <vector>

#include "classify/base/parallel.h"
#include "classify/methods/knn.h"
#include "classify/train/method_tuner.h"
#include "classify/train/tune_scores.h"

namespace autocat::internal {
namespace {

// kNN's vote shares at every k of `ks` (increasing) from a neighbour list
// (nearest first), in one pass: the votes of the k nearest are those of the
// previous k plus the next neighbours', added in the same order, so each
// k's shares are the same floats as when counted alone. `use(i, scores)`
// receives ks[i]'s. With one k, `sums` may be `scores`.
template <typename Use>
void knn_votes_at_every_k(const TrainingCorpus& corpus,
                          const std::vector<KnnIndex::Neighbour>& neighbours,
                          const std::vector<int>& ks, int power, std::vector<double>* sums,
                          std::vector<double>* scores, const Use& use) {
  std::fill(sums->begin(), sums->end(), 0.0);
  double total = 0.0;
  size_t counted = 0;
  for (size_t i = 0; i < ks.size(); ++i) {
    const size_t k = std::min(static_cast<size_t>(ks[i]), neighbours.size());
    for (; counted < k; ++counted) {
      const double w = knn_vote_weight(neighbours[counted].similarity, power);
      total += w;
      for (uint32_t c : corpus.doc_categories[neighbours[counted].doc]) (*sums)[c] += w;
    }
    if (scores != sums) *scores = *sums;
    if (total > 0.0) {
      for (double& score : *scores) score = std::min(1.0, score / total);
    }
    use(i, *scores);
  }
}

// kNN's vote shares from the k nearest of a neighbour list (nearest first).
void knn_vote(const TrainingCorpus& corpus, const std::vector<KnnIndex::Neighbour>& neighbours,
              size_t k, int power, std::vector<double>* scores) {
  knn_votes_at_every_k(corpus, neighbours, {static_cast<int>(k)}, power, scores, scores,
                       [](size_t, const std::vector<double>&) {});
}

// A term weighting to try: tf transform and concentration exponent.
struct KnnWeighting {
  KnnTf tf;
  double concentration;
};

// Every tf transform with every concentration (unless the options fix it).
std::vector<KnnWeighting> weighting_candidates(const TrainOptions& options) {
  const std::vector<double> concentrations = options.knn_concentration
                                                 ? std::vector<double>{*options.knn_concentration}
                                                 : knn_concentration_candidates();
  std::vector<KnnWeighting> weightings;
  for (KnnTf tf : knn_tf_candidates()) {
    for (double concentration : concentrations) weightings.push_back({tf, concentration});
  }
  return weightings;
}

class KnnTuner : public MethodTuner {
 public:
  explicit KnnTuner(const TuneContext& context)
      : context_(context),
        corpus_(context.corpus),
        k_candidates_(context.options.knn_k ? std::vector<int>{*context.options.knn_k}
                                            : knn_k_candidates()),
        weightings_(weighting_candidates(context.options)),
        max_k_(*std::max_element(k_candidates_.begin(), k_candidates_.end())),
        neighbours_by_weighting_(weightings_.size(),
                                 std::vector<std::vector<KnnIndex::Neighbour>>(corpus_.num_docs())),
        in_contention_(weightings_.size(), 1) {}

  std::vector<Method> methods() const override { return {Method::kKnn}; }
  std::string name() const override { return "knn"; }

  // One index per term weighting, built and searched in turn (side by
  // side on the threads other folds left idle); the neighbours are kept as
  // documents of the full corpus.
  void fit_fold(const TuneFold& fold, const FoldStepDone& step_done) override {
    const TrainingCorpus& fitted_on = fold.training.corpus;
    parallel_for(
        weightings_.size(),
        [&](size_t b) {
          if (!in_contention_[b]) return;
          KnnIndex knn(fitted_on,
                       knn_term_weights(fitted_on, fold.idf, weightings_[b].concentration),
                       weightings_[b].tf);
          // The search the model will classify with, so that k and the
          // thresholds are chosen for its neighbours.
          const KnnSearchMode search = knn_training_search(context_.options);
          if (search == KnnSearchMode::kTwoStep) knn.build_two_step();
          for (const auto& [d, doc] : fold.held_out) {
            std::vector<KnnIndex::Neighbour>& found = neighbours_by_weighting_[b][d];
            found = knn.neighbours(doc, max_k_, 0, 1.0, knn_kernel(search));
            for (KnnIndex::Neighbour& neighbour : found)
              neighbour.doc = fold.original[neighbour.doc];
          }
        },
        1 + context_.idle_workers.load());
    step_done("knn");
  }

  // One-of, after the first folds: a term weighting stays while one of
  // its (k, vote power) settings is not clearly behind the best setting of
  // any weighting. The others are neither searched on the later folds nor
  // held (their neighbour lists are most of cross-validation's memory).
  void prune() override {
    if (!context_.compact || weightings_.size() < 2) return;
    const std::vector<Setting> grid = settings_grid();
    const std::vector<std::vector<uint32_t>> tops = grid_tops(grid);
    std::vector<const std::vector<uint32_t>*> pointers;
    for (const std::vector<uint32_t>& top : tops) pointers.push_back(&top);
    const std::vector<bool> in = candidates_in_contention(corpus_, context_.scored, pointers);
    std::vector<uint8_t> keep(weightings_.size(), 0);
    for (size_t i = 0; i < grid.size(); ++i) keep[grid[i].weighting] |= in[i] ? 1 : 0;
    for (size_t b = 0; b < keep.size(); ++b) {
      if (keep[b]) continue;
      in_contention_[b] = 0;
      std::vector<std::vector<KnnIndex::Neighbour>>().swap(neighbours_by_weighting_[b]);
      ++pruned_;
    }
  }

  // Every candidate (k, vote power) from the same neighbour lists; ties
  // keep the earlier (smaller, faster) candidate.
  void choose(TunedSettings* tuned) override {
    const TrainOptions& options = context_.options;
    double best = -1.0;
    size_t best_weighting = 0;
    // One candidate's out-of-fold objective and thresholds.
    struct Tried {
      double value = -1.0;
      std::vector<double> thresholds;
      double rare_cut_ratio = 0.0;
      int rare_variant = -1;
    };
    const bool rare_cuts = takes_rare_cuts(Method::kKnn, context_.decision);
    const auto evaluate = [&](size_t b, int k, int power) {
      const ScoreLists lists = vote_lists(b, k, power);
      Tried tried;
      // One-of compares top categories alone: only the winner's thresholds
      // are needed (made below).
      if (!context_.compact) {
        tried.thresholds =
            thresholds_from(corpus_, lists, rare_cuts, &tried.rare_cut_ratio, &tried.rare_variant);
      }
      tried.value = objective(corpus_, lists, tried.thresholds, context_.decision);
      return tried;
    };
    const auto consider = [&](size_t b, int k, int power, Tried&& tried) {
      tuned->knn_objective.push_back(
          {k, power, tried.value, weightings_[b].concentration, weightings_[b].tf});
      if (tried.value > best) {
        best = tried.value;
        best_weighting = b;
        tuned->knn_k = k;
        tuned->knn_similarity_power = power;
        tuned->knn_concentration = weightings_[b].concentration;
        tuned->knn_tf = weightings_[b].tf;
        tuned->thresholds[static_cast<size_t>(Method::kKnn)] = std::move(tried.thresholds);
        if (rare_cuts) {
          tuned->rare_cut_ratio[static_cast<size_t>(Method::kKnn)] = tried.rare_cut_ratio;
          tuned->rare_cut_variant[static_cast<size_t>(Method::kKnn)] = tried.rare_variant;
        }
      }
    };
    const std::vector<Setting> grid = settings_grid();
    // The settings on every core (one-of: each run of k's from one pass),
    // then the best taken in grid order (ties keep the earlier, as one
    // after another would).
    std::vector<Tried> tried(grid.size());
    if (context_.compact) {
      // One-of's objective is the top categories' accuracy.
      const std::vector<std::vector<uint32_t>> tops = grid_tops(grid);
      for (size_t i = 0; i < grid.size(); ++i) tried[i].value = top_accuracy(corpus_, tops[i]);
    } else {
      parallel_for(grid.size(), [&](size_t i) {
        tried[i] = evaluate(grid[i].weighting, grid[i].k, grid[i].power);
      });
    }
    for (size_t i = 0; i < grid.size(); ++i) {
      consider(grid[i].weighting, grid[i].k, grid[i].power, std::move(tried[i]));
    }
    const auto try_knn = [&](size_t b, int k, int power) {
      consider(b, k, power, evaluate(b, k, power));
    };
    // An optimum at the grid's low edge may lie below it: halve k while it
    // does (the neighbour lists already hold those). Extending the high edge
    // would need longer lists from every fold; it is reported instead.
    int edge = *std::min_element(k_candidates_.begin(), k_candidates_.end());
    while (!options.knn_k && tuned->knn_k == edge && edge > 1) {
      edge /= 2;
      try_knn(best_weighting, edge, tuned->knn_similarity_power);
    }
    if (context_.compact) {
      // The winner's thresholds, from its lists made again.
      tuned->thresholds[static_cast<size_t>(Method::kKnn)] = thresholds_from(
          corpus_, vote_lists(best_weighting, tuned->knn_k, tuned->knn_similarity_power));
    }
    // The chosen weighting's lists feed combo; the others are dropped.
    neighbours_ = std::move(neighbours_by_weighting_[best_weighting]);
    neighbours_by_weighting_.clear();
    neighbours_by_weighting_.shrink_to_fit();
    tuned->method_objective[static_cast<size_t>(Method::kKnn)] = best;
    tuned->pruned_candidates += pruned_;
  }

  std::vector<float> member_scores(Method /*method*/, const TunedSettings& tuned) override {
    const uint32_t num_categories = corpus_.num_categories();
    std::vector<double> scores(num_categories);
    std::vector<float> matrix(size_t(corpus_.num_docs()) * num_categories, 0.0f);
    for (uint32_t d = 0; d < corpus_.num_docs(); ++d) {
      if (neighbours_[d].empty()) continue;
      knn_vote(corpus_, neighbours_[d], static_cast<size_t>(tuned.knn_k),
               tuned.knn_similarity_power, &scores);
      std::copy(scores.begin(), scores.end(), matrix.begin() + ptrdiff_t(d) * num_categories);
    }
    return matrix;
  }

 private:
  // Every document's out-of-fold vote with weighting b's neighbours.
  ScoreLists vote_lists(size_t b, int k, int power) const {
    const auto& neighbours = neighbours_by_weighting_[b];
    ScoreLists lists(corpus_.num_docs());
    std::vector<double> scores(corpus_.num_categories());
    for (uint32_t d = 0; d < corpus_.num_docs(); ++d) {
      if (neighbours[d].empty()) continue;
      knn_vote(corpus_, neighbours[d], static_cast<size_t>(k), power, &scores);
      keep_best(scores, &lists[d]);
    }
    return lists;
  }

  struct Setting {
    size_t weighting;
    int power, k;
  };
  // The (weighting, vote power, k) settings of the weightings still in
  // contention, in the order ties are broken: runs of every k candidate
  // (increasing) at one weighting and power.
  std::vector<Setting> settings_grid() const {
    const std::vector<int> power_candidates =
        context_.options.knn_similarity_power
            ? std::vector<int>{*context_.options.knn_similarity_power}
            : std::vector<int>{1, 2};
    std::vector<Setting> grid;
    for (size_t b = 0; b < weightings_.size(); ++b) {
      if (!in_contention_[b]) continue;
      for (int power : power_candidates) {
        for (int k : k_candidates_) grid.push_back({b, power, k});
      }
    }
    return grid;
  }

  // Each grid setting's top category per document scored so far (else
  // kNoCategory): a run's k's from one pass over each neighbour list, the
  // runs on every core.
  std::vector<std::vector<uint32_t>> grid_tops(const std::vector<Setting>& grid) const {
    std::vector<std::vector<uint32_t>> tops(grid.size());
    parallel_for(grid.size() / k_candidates_.size(), [&](size_t run) {
      const size_t first = run * k_candidates_.size();
      const auto& neighbours = neighbours_by_weighting_[grid[first].weighting];
      std::vector<double> sums(corpus_.num_categories()), scores(corpus_.num_categories());
      for (size_t i = first; i < first + k_candidates_.size(); ++i) {
        tops[i].assign(corpus_.num_docs(), kNoCategory);
      }
      for (uint32_t d = 0; d < corpus_.num_docs(); ++d) {
        if (!context_.scored[d] || neighbours[d].empty()) continue;
        knn_votes_at_every_k(corpus_, neighbours[d], k_candidates_, grid[first].power, &sums,
                             &scores, [&](size_t i, const std::vector<double>& votes) {
                               keep_scores(votes, /*top_only=*/true, &tops[first + i][d], nullptr);
                             });
      }
    });
    return tops;
  }

  const TuneContext& context_;
  const TrainingCorpus& corpus_;
  const std::vector<int> k_candidates_;  // increasing
  const std::vector<KnnWeighting> weightings_;
  const int max_k_;
  // Out-of-fold neighbours of every training document, per weighting
  // candidate; after choose(), the chosen one's alone.
  std::vector<std::vector<std::vector<KnnIndex::Neighbour>>> neighbours_by_weighting_;
  std::vector<uint8_t> in_contention_;  // per weighting: not pruned
  uint32_t pruned_ = 0;
  std::vector<std::vector<KnnIndex::Neighbour>> neighbours_;
};

}  // namespace

std::unique_ptr<MethodTuner> make_knn_tuner(const TuneContext& context) {
  return std::make_unique<KnnTuner>(context);
}

}  // namespace autocat::internal
