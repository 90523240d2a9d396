// tune_settings(): deals the folds, runs every MethodTuner on each (the
// folds on every core), lets each choose its setting, then fits the
// calibrations and combo on the chosen settings' out-of-fold scores.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "classify/base/method_traits.h"
#include "classify/corpus/feature_selection.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/combo.h"
#include "classify/train/fit.h"
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

bool method_selected(const TrainOptions& options, Method method) {
  return options.methods.empty() ||
         std::find(options.methods.begin(), options.methods.end(), method) != options.methods.end();
}

Method untuned_default_method(const TrainOptions& options) {
  if (options.methods.empty()) return options.time_budget > 0 ? Method::kSvm : Method::kKnn;
  for (Method method : {Method::kSvm, Method::kKnn}) {
    if (method_selected(options, method)) return method;
  }
  for (Method method : options.methods) {
    if (method != Method::kCombo) return method;
  }
  return Method::kSvm;
}

void check_methods(const TrainOptions& options) {
  if (!method_selected(options, Method::kCombo) || options.methods.empty()) return;
  const auto members = std::count_if(options.methods.begin(), options.methods.end(),
                                     [](Method method) { return method != Method::kCombo; });
  if (members < 2) {
    throw InvalidArgumentError(
        "methods: combo stacks the other methods named and needs at least two of them "
        "(e.g. svm,cnb,combo)");
  }
}

namespace {

// svm's C under a time budget (TrainOptions::time_budget).
constexpr double kBudgetSvmC = 1.0;
// One svm fold at one C takes about this share of the time reading and
// loading the same documents took (20 Newsgroups: 1.4 s against 4.8 s,
// on a loaded machine; 1.0 s against 4.2 s over all five folds): the
// estimate before any fold has run.
constexpr double kUnitPerReadingSecond = 0.25;

// A method family's cross-validation time relative to svm's at one C (the
// first family under a budget), all folds and passes included, as measured
// on 20 Newsgroups (BENCHMARKS.md, "Training fewer methods"): the estimate of
// a family's folds before its first has run. Any-of: Naive Bayes keeps
// every candidate's score lists (Reuters-21578: 2.6).
double family_cost(Method method, Decision decision) {
  switch (method_traits(method).family) {
    case MethodFamily::kRocchio:
      return 0.5;
    case MethodFamily::kNaiveBayes:
      return decision == Decision::kAnyOf ? 3.0 : 1.5;
    case MethodFamily::kLinear:
      return method == Method::kSvm ? 1.0 : 2.5;
    default:
      return 2.5;
  }
}

// The estimated time of what follows cross-validation under a time
// budget (the calibrations and combo, the final fit of every method, kNN's
// index and the model file) in units of one svm fold at one C: on 20
// Newsgroups the final fits took 1.2 to 1.9 such units (the more with
// logreg not cross-validated, whose fit then starts from zero).
double final_fit_seconds(double unit_seconds) { return 2.0 * unit_seconds; }

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", seconds);
  return text;
}

}  // namespace

TunedSettings tune_settings(const TrainingCorpus& corpus, const TrainOptions& options,
                            Decision decision, const TuneProgressCallback& on_progress,
                            TuneScope scope, uint64_t model_documents,
                            std::optional<std::chrono::steady_clock::time_point> deadline) {
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
  const bool budgeted = deadline.has_value() && options.time_budget > 0;
  // Under a time budget svm is cross-validated at its usual winner alone,
  // C = 1 (the cheap candidate: the whole collection's path at three C's
  // is most of svm's cross-validation time).
  TrainOptions tune_options = options;
  if (budgeted && !tune_options.svm_c) tune_options.svm_c = kBudgetSvmC;
  const TuneContext context{corpus, tune_options, decision, decision == Decision::kOneOf,
                            scored, idle_workers};
  const bool every_method = scope == TuneScope::kEveryMethod;
  const auto selected = [&](Method method) {
    // The analyses are judged by svm whatever methods the model tunes.
    return every_method ? method_selected(options, method) : method == Method::kSvm;
  };
  std::vector<Method> linear_methods, nb_methods_wanted;
  for (Method method : methods_of(MethodFamily::kLinear)) {
    if (selected(method)) linear_methods.push_back(method);
  }
  for (Method method : nb_methods) {
    if (selected(method)) nb_methods_wanted.push_back(method);
  }
  std::vector<std::unique_ptr<MethodTuner>> tuners;
  if (budgeted) {
    // svm at one C first (the best single method on every collection
    // measured, at about Rocchio's cost), then the others cheapest first
    // (BENCHMARKS.md, "Training fewer methods"); each family runs all its
    // folds before the next starts, so the ones that fit are complete.
    if (selected(Method::kSvm)) tuners.push_back(make_linear_tuner(context, {Method::kSvm}));
    if (selected(Method::kRocchio)) tuners.push_back(make_rocchio_tuner(context));
    if (!nb_methods_wanted.empty()) {
      tuners.push_back(make_naive_bayes_tuner(context, nb_methods_wanted));
    }
    if (selected(Method::kLogreg)) tuners.push_back(make_linear_tuner(context, {Method::kLogreg}));
    if (selected(Method::kKnn)) tuners.push_back(make_knn_tuner(context));
  } else {
    // In the order each fold starts them: the longest first, so that the
    // folds' last tasks are short ones (fit_folds).
    if (!linear_methods.empty()) tuners.push_back(make_linear_tuner(context, linear_methods));
    if (selected(Method::kKnn)) tuners.push_back(make_knn_tuner(context));
    if (!nb_methods_wanted.empty()) {
      tuners.push_back(make_naive_bayes_tuner(context, nb_methods_wanted));
    }
    if (selected(Method::kRocchio)) tuners.push_back(make_rocchio_tuner(context));
  }
  if (tuners.empty()) return tuned;
  // Each tuner's fits' time, summed over the threads that ran them.
  std::vector<std::atomic<int64_t>> tuner_nanoseconds(tuners.size());
  for (auto& nanoseconds : tuner_nanoseconds) nanoseconds = 0;
  const auto timed = [&](size_t t, const std::function<void()>& run) {
    const auto start = std::chrono::steady_clock::now();
    run();
    tuner_nanoseconds[t] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  };
  const auto tuner_seconds = [&](size_t t) { return double(tuner_nanoseconds[t].load()) * 1e-9; };

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
  // One-of: successive halving. The first folds (one per core) fit every
  // candidate; those that cannot win are dropped before the others.
  const uint32_t first_round =
      context.compact ? std::min(num_folds - 1, std::max(2u, std::thread::hardware_concurrency()))
                      : num_folds;
  std::vector<TuneRun> runs(tuners.size());
  for (size_t t = 0; t < tuners.size(); ++t) {
    runs[t].methods = tuners[t]->methods();
    runs[t].folds = num_folds;
  }
  tuned.thresholds.resize(all_methods().size());
  tuned.rare_cut_ratio.assign(all_methods().size(), -1.0);
  tuned.rare_cut_variant.assign(all_methods().size(), -1);
  // Any-of keeps each candidate's full lists until its family chooses:
  // one family at a time bounds memory by the largest family's lists (on
  // Reuters: kNN's neighbours, Naive Bayes' or the linear methods' values)
  // instead of their sum. One-of's compact lists are small: its families
  // share the folds, fold by fold, which keeps every core busy.
  const bool family_at_a_time = budgeted || !context.compact;
  if (!family_at_a_time) {
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
        const size_t t = task % tuners.size();
        MethodTuner& tuner = *tuners[t];
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
        timed(t, [&] {
          tuner.fit_fold(*prepared, [&](const std::string& step) { step_done(step + fold_name); });
        });
        const std::lock_guard<std::mutex> lock(fold_work.mutex);
        if (--fold_work.tasks_left == 0) fold_work.prepared.reset();
      };
      on_folds(0, (end - first) * static_cast<uint32_t>(tuners.size()), run_task);
    };
    fit_folds(0, first_round);
    if (first_round < num_folds) {
      for (const auto& tuner : tuners) tuner->prune();
      fit_folds(first_round, num_folds);
    }
    for (size_t t = 0; t < tuners.size(); ++t) {
      runs[t].folds_run = num_folds;
      runs[t].used = true;
      tuners[t]->choose(&tuned);
    }
    if (!refit_names.empty()) {
      // The winners' full lists, fitted again on every fold exactly as in
      // the first pass, and their thresholds from them.
      on_every_fold([&](uint32_t f) {
        const TuneFold prepared = prepare_fold(f);
        for (size_t t = 0; t < tuners.size(); ++t) {
          if (tuners[t]->refits_winner()) timed(t, [&] { tuners[t]->refit_fold(prepared); });
        }
        step_done(refit_names + " winners" + of_fold(f));
      });
      for (const auto& tuner : tuners) {
        if (tuner->refits_winner()) tuner->finish_refit(&tuned);
      }
    }
  } else {
    // One family at a time, each on every fold, the folds prepared once
    // and kept; a family chooses (and refits its winner) before the next
    // starts. Anytime (budgeted): cheapest first, a round of folds at a
    // time, one per core. A family's first round starts only if its
    // estimated time fits, the next rounds only if their time projected
    // from the rounds before does; the final fit's estimate is held back
    // throughout.
    std::vector<std::shared_ptr<const TuneFold>> prepared(num_folds);
    std::vector<std::mutex> preparing(num_folds);
    const auto fold_at = [&](uint32_t f) {
      const std::lock_guard<std::mutex> lock(preparing[f]);
      if (!prepared[f]) {
        auto fresh = std::make_shared<TuneFold>(prepare_fold(f));
        for (const auto& entry : fresh->held_out) scored[entry.first] = 1;
        prepared[f] = std::move(fresh);
      }
      return prepared[f];
    };
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const auto seconds_left = [&] {
      if (!budgeted) return std::numeric_limits<double>::infinity();
      return std::chrono::duration<double>(*deadline - std::chrono::steady_clock::now()).count();
    };
    // One fold's time of svm at one C, measured or estimated from the
    // first family run: the unit of the estimates. Before any, a prior from
    // the time training took so far (reading and loading the documents),
    // scaled to the documents cross-validated when they are a sample.
    const double elapsed = budgeted ? options.time_budget - seconds_left() : 0.0;
    double unit_seconds = kUnitPerReadingSecond * std::max(0.0, elapsed) * corpus.num_docs() /
                          double(std::max<uint64_t>(model_documents, corpus.num_docs()));
    size_t first_run = tuners.size();  // the family the unit was measured on
    const auto reserve = [&] { return final_fit_seconds(unit_seconds); };
    for (size_t t = 0; t < tuners.size(); ++t) {
      MethodTuner& tuner = *tuners[t];
      TuneRun& run = runs[t];
      const double relative = family_cost(tuner.methods().front(), decision);
      // Its folds' wall time (they run a round per core at a time).
      const auto wall = [&](double fold_seconds, uint32_t folds) {
        return fold_seconds * folds / std::min(cores, folds);
      };
      const uint32_t all_folds = num_folds + (tuner.refits_winner() ? num_folds : 0);
      // family_cost() counts every pass over the folds.
      const double estimate = wall(unit_seconds * relative, num_folds);
      if (estimate > seconds_left() - reserve()) {
        run.reason = "skipped: its " + std::to_string(num_folds) + " folds would take about " +
                     seconds_text(estimate) + " s, past the time budget";
        continue;
      }
      if (seconds_left() - reserve() <= 0) {
        run.reason = "skipped: the time budget was spent before its first fold";
        continue;
      }
      timed(t, [&] { tuner.before_folds(); });
      // The work done once (svm's whole-collection path) is no fold's.
      const double before_seconds = tuner_seconds(t);
      bool stopped = false;
      for (uint32_t f = 0; f < num_folds;) {
        if (f == first_round) tuner.prune();
        if (f > 0) {
          const double projected = wall((tuner_seconds(t) - before_seconds) / f, all_folds - f);
          if (projected > seconds_left() - reserve()) {
            run.reason = "stopped after " + std::to_string(f) + " of " + std::to_string(num_folds) +
                         " folds: the rest would take about " + seconds_text(projected) +
                         " s more, past the time budget with the final fit's " +
                         seconds_text(reserve()) + " s held back";
            stopped = true;
            break;
          }
        }
        const uint32_t end = std::min({num_folds, budgeted ? f + cores : num_folds,
                                       f < first_round ? first_round : num_folds});
        on_folds(f, end, [&](uint32_t g) {
          const std::shared_ptr<const TuneFold> fold_data = fold_at(g);
          const std::string fold_name = of_fold(g);
          timed(t, [&] {
            tuner.fit_fold(*fold_data,
                           [&](const std::string& step) { step_done(step + fold_name); });
          });
        });
        run.folds_run = f = end;
        if (first_run == tuners.size()) {
          unit_seconds = tuner_seconds(t) / f / relative;
          first_run = t;
        }
      }
      if (stopped) {
        // Its candidates' scores cover only some documents: dropped, and
        // its methods stay untuned.
        tuners[t].reset();
        continue;
      }
      run.used = true;
      // The unit from the first family's whole run: its first round also
      // held the work done once before the folds.
      if (t == first_run) unit_seconds = tuner_seconds(t) / num_folds / relative;
      tuner.choose(&tuned);
      if (tuner.refits_winner()) {
        on_every_fold([&](uint32_t f) {
          const std::shared_ptr<const TuneFold> fold_data = fold_at(f);
          timed(t, [&] { tuner.refit_fold(*fold_data); });
          step_done(tuner.name() + " winners" + of_fold(f));
        });
        tuner.finish_refit(&tuned);
      }
      // The losers' lists, freed, go back to the system before the next
      // family fills its own.
      release_free_memory();
    }
  }
  for (size_t t = 0; t < tuners.size(); ++t) runs[t].seconds = tuner_seconds(t);
  tuned.runs = std::move(runs);
  const bool any_used = std::any_of(tuned.runs.begin(), tuned.runs.end(),
                                    [](const TuneRun& run) { return run.used; });
  if (!any_used) {
    // Nothing cross-validated in the budget: an untuned model.
    tuned.thresholds.clear();
    tuned.rare_cut_ratio.clear();
    tuned.rare_cut_variant.clear();
    return tuned;
  }
  if (!every_method) return tuned;
  // Every member's out-of-fold scores at the settings chosen, as its
  // classifier gives them, documents x categories; empty for the members
  // not cross-validated.
  std::vector<std::vector<float>> member_scores(combo_members().size());
  for (size_t m = 0; m < combo_members().size(); ++m) {
    for (size_t t = 0; t < tuners.size(); ++t) {
      if (!tuners[t] || !tuned.runs[t].used) continue;
      const std::vector<Method> methods = tuners[t]->methods();
      if (std::find(methods.begin(), methods.end(), combo_members()[m]) == methods.end()) continue;
      member_scores[m] = tuners[t]->member_scores(combo_members()[m], tuned);
    }
  }
  tuners.clear();
  fit_calibrations(corpus, scored, decision, member_scores, &tuned,
                   method_selected(options, Method::kCombo));
  step_done("calibrations");
  return tuned;
}

}  // namespace autocat::internal
