// tune_settings(): deals the folds, runs every MethodTuner on each (the
// folds on every core), lets each choose its setting, then fits the
// calibrations and combo on the chosen settings' out-of-fold scores.

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "classify/corpus/feature_selection.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/combo.h"
#include "classify/train/method_tuner.h"
#include "classify/train/thresholds.h"

namespace autocat::internal {

double knn_postings_per_token(const TrainingCorpus& corpus, uint64_t model_documents) {
  double squared_df = 0, tokens = 0;
  for (uint32_t df : corpus.df) squared_df += double(df) * df;
  for (uint32_t length : corpus.doc_length) tokens += length;
  if (tokens == 0) return 0;
  const double scale =
      model_documents > corpus.num_docs() ? double(model_documents) / corpus.num_docs() : 1.0;
  return squared_df / tokens * scale;
}

TunedSettings tune_settings(const TrainingCorpus& corpus, const TrainOptions& options,
                            Decision decision, const TuneProgressCallback& on_progress,
                            TuneScope scope, uint64_t model_documents) {
  TunedSettings tuned;
  tuned.knn_postings_per_token = knn_postings_per_token(corpus, model_documents);
  tuned.knn_keeps_up =
      options.knn_cost_limit <= 0 || tuned.knn_postings_per_token <= options.knn_cost_limit;
  // Without cross-validation, unset settings take these defaults.
  tuned.knn_k = options.knn_k.value_or(kDefaultKnnK);
  tuned.knn_similarity_power = options.knn_similarity_power.value_or(1);
  tuned.knn_concentration = options.knn_concentration.value_or(0.0);
  tuned.rocchio_gamma = options.rocchio_gamma.value_or(0.0);
  tuned.svm_c = options.svm_c.value_or(1.0);
  tuned.logreg_c = options.logreg_c.value_or(1.0);
  const std::vector<Method>& nb_methods = naive_bayes_methods();
  tuned.nb_alpha.assign(nb_methods.size(), options.nb_alpha.value_or(1.0));
  tuned.nb_alpha_objective.resize(nb_methods.size());
  tuned.nb_tfidf.assign(nb_methods.size(), false);  // counts unless cross-validation prefers tf-idf
  // -1 = no objective (not tuned); combo's is cross-fitted (fit_calibrations).
  tuned.method_objective.assign(all_methods().size(), -1.0);
  const auto num_folds = static_cast<uint32_t>(std::max(options.threshold_folds, 2));
  if (!options.tune_thresholds || corpus.num_docs() < 2 * num_folds) return tuned;

  const std::vector<uint32_t> fold = round_robin_folds(corpus.num_docs(), num_folds);
  const std::vector<DocumentTerms> docs = corpus_documents(corpus);
  tuned.copied_documents = count_copies(copy_groups(corpus));

  std::vector<uint8_t> scored(corpus.num_docs(), 0);  // held out with a term its fold knows
  // Threads of on_every_fold() left without a fold: the last folds' linear
  // fits use them (each category is solved alike on any thread).
  std::atomic<unsigned> idle_workers{0};
  const TuneContext context{corpus, options,     decision, decision == Decision::kOneOf,
                            scored, idle_workers};
  // In the order each fold starts them: the longest first, so that the
  // folds' last tasks are short ones (fit_folds).
  const bool every_method = scope == TuneScope::kEveryMethod;
  std::vector<std::unique_ptr<MethodTuner>> tuners;
  tuners.push_back(make_linear_tuner(context, /*svm_only=*/!every_method));
  if (every_method) tuners.push_back(make_knn_tuner(context));
  if (every_method) tuners.push_back(make_naive_bayes_tuner(context));
  if (every_method) tuners.push_back(make_rocchio_tuner(context));

  // Progress: each fold's kinds of fit, its second pass (one-of), then the
  // calibrations.
  uint64_t steps_per_fold = 0;
  std::string refit_names;  // "rocchio and naive bayes"
  for (const auto& tuner : tuners) {
    steps_per_fold += tuner->steps_per_fold();
    if (!tuner->refits_winner()) continue;
    refit_names += (refit_names.empty() ? "" : " and ") + tuner->name();
  }
  const uint64_t total_steps =
      uint64_t{num_folds} * (steps_per_fold + (refit_names.empty() ? 0 : 1)) +
      (every_method ? 1 : 0);
  uint64_t steps_done = 0;
  std::mutex progress_mutex;
  const auto step_done = [&](const std::string& step) {
    if (!on_progress) return;
    const std::lock_guard<std::mutex> lock(progress_mutex);
    on_progress(++steps_done, total_steps, step);
  };
  TrainOptions fold_options = options;
  fold_options.tune_thresholds = false;
  fold_options.rocchio_gamma = 0.0;
  fold_options.nb_alpha = 1.0;  // Naive Bayes is fitted per alpha by its tuner
  const auto prepare_fold = [&](uint32_t f) {
    TuneFold prepared;
    std::vector<uint8_t> keep(corpus.num_docs());
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      keep[d] = fold[d] != f;
      if (keep[d]) prepared.original.push_back(d);
    }
    // The fold's own vocabulary, as `autocat train` on these documents would
    // read it (Naive Bayes smoothing depends on the vocabulary size).
    prepared.training = fold_corpus(corpus, keep);
    const TrainingCorpus& fitted_on = prepared.training.corpus;
    // What fit_model() would select; the fold's models are fitted by the
    // tuners, one setting at a time.
    prepared.selected = selected_features(fitted_on, fold_options);
    prepared.idf = compute_idf(fitted_on.df, fitted_on.num_docs(), prepared.selected);
    prepared.wanted.assign(fitted_on.num_terms(), 0);
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (keep[d] || docs[d].terms.empty()) continue;
      DocumentTerms doc = fold_document(docs[d], prepared.training.fold_term);
      if (doc.terms.empty()) continue;  // no term the fold knows: no evidence
      for (const TermCount& term : doc.terms) prepared.wanted[term.term] = 1;
      prepared.held_out.emplace_back(d, std::move(doc));
    }
    return prepared;
  };
  const auto of_fold = [&](uint32_t f) {
    return ", fold " + std::to_string(f + 1) + " of " + std::to_string(num_folds);
  };
  // run(item) for every item of [first, end) (folds, or fit_folds' tasks)
  // on every core: folds are independent and write disjoint documents'
  // entries; training is otherwise single-threaded.
  const auto on_folds = [&](uint32_t first, uint32_t end,
                            const std::function<void(uint32_t)>& run) {
    std::atomic<uint32_t> next_item{first};
    idle_workers = 0;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto worker = [&] {
      for (uint32_t item; (item = next_item++) < end;) {
        try {
          run(item);
        } catch (...) {
          const std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      }
      ++idle_workers;
    };
    const unsigned threads =
        std::max(1u, std::min(std::thread::hardware_concurrency(), end - first));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& thread : pool) thread.join();
    if (failure) std::rethrow_exception(failure);
  };
  const auto on_every_fold = [&](const std::function<void(uint32_t)>& run) {
    on_folds(0, num_folds, run);
  };
  for (const auto& tuner : tuners) tuner->before_folds();
  // Every tuner's fit on folds [first, end), on every core. Each (fold,
  // tuner) pair is a task, taken fold by fold, so that no core waits while
  // another fits a fold's last tuners alone (whole folds would leave the
  // fifth of 5 folds on 2 cores to one core). A fold is prepared by the
  // first of its tasks to start and dropped when its last ends, so about
  // one fold per core is held at once.
  const auto fit_folds = [&](uint32_t first, uint32_t end) {
    struct FoldWork {
      std::mutex mutex;
      std::shared_ptr<const TuneFold> prepared;
      size_t tasks_left = 0;
    };
    std::vector<FoldWork> work(end - first);
    for (FoldWork& fold_work : work) fold_work.tasks_left = tuners.size();
    const auto run_task = [&](uint32_t task) {
      const uint32_t f = first + task / static_cast<uint32_t>(tuners.size());
      MethodTuner& tuner = *tuners[task % tuners.size()];
      FoldWork& fold_work = work[f - first];
      std::shared_ptr<const TuneFold> prepared;
      {
        const std::lock_guard<std::mutex> lock(fold_work.mutex);
        if (!fold_work.prepared) {
          auto fresh = std::make_shared<TuneFold>(prepare_fold(f));
          for (const auto& entry : fresh->held_out) scored[entry.first] = 1;
          fold_work.prepared = std::move(fresh);
        }
        prepared = fold_work.prepared;
      }
      const std::string fold_name = of_fold(f);
      tuner.fit_fold(*prepared, [&](const std::string& step) { step_done(step + fold_name); });
      const std::lock_guard<std::mutex> lock(fold_work.mutex);
      if (--fold_work.tasks_left == 0) fold_work.prepared.reset();
    };
    on_folds(0, (end - first) * static_cast<uint32_t>(tuners.size()), run_task);
  };
  // One-of: successive halving. The first folds (one per core) fit every
  // candidate; those that cannot win are dropped before the others.
  const uint32_t first_round =
      context.compact ? std::min(num_folds - 1, std::max(2u, std::thread::hardware_concurrency()))
                      : num_folds;
  fit_folds(0, first_round);
  if (first_round < num_folds) {
    for (const auto& tuner : tuners) tuner->prune();
    fit_folds(first_round, num_folds);
  }

  tuned.thresholds.resize(all_methods().size());
  tuned.rare_cut_ratio.assign(all_methods().size(), -1.0);
  for (const auto& tuner : tuners) tuner->choose(&tuned);
  if (!refit_names.empty()) {
    // The winners' full lists, fitted again on every fold exactly as in
    // the first pass, and their thresholds from them.
    on_every_fold([&](uint32_t f) {
      const TuneFold prepared = prepare_fold(f);
      for (const auto& tuner : tuners) {
        if (tuner->refits_winner()) tuner->refit_fold(prepared);
      }
      step_done(refit_names + " winners" + of_fold(f));
    });
    for (const auto& tuner : tuners) {
      if (tuner->refits_winner()) tuner->finish_refit(&tuned);
    }
  }
  if (!every_method) return tuned;
  // Every member's out-of-fold scores at the settings chosen, as its
  // classifier gives them, documents x categories.
  std::vector<std::vector<float>> member_scores(combo_members().size());
  for (size_t m = 0; m < combo_members().size(); ++m) {
    for (const auto& tuner : tuners) {
      const std::vector<Method> methods = tuner->methods();
      if (std::find(methods.begin(), methods.end(), combo_members()[m]) == methods.end()) continue;
      member_scores[m] = tuner->member_scores(combo_members()[m], tuned);
    }
  }
  fit_calibrations(corpus, scored, decision, member_scores, &tuned);
  step_done("calibrations");
  return tuned;
}

}  // namespace autocat::internal
