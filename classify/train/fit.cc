#include "classify/train/fit.h"

#include <unicode/uversion.h>

#include <algorithm>
#include <cmath>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>  // malloc_trim
#endif

#include "autocat/error.h"
#include "classify/corpus/feature_selection.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/knn.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"

namespace autocat::internal {

void check_train_settings(const TrainOptions& options) {
  const auto positive = [](const std::optional<double>& value) {
    return !value || (std::isfinite(*value) && *value > 0);
  };
  if (!positive(options.nb_alpha)) {
    throw InvalidArgumentError("--alpha must be greater than 0 (unset: cross-validate)");
  }
  if (!positive(options.svm_c) || !positive(options.logreg_c)) {
    throw InvalidArgumentError("C of svm / logreg must be greater than 0 (unset: cross-validate)");
  }
  if (options.knn_concentration &&
      !(*options.knn_concentration >= 0 && *options.knn_concentration <= 4)) {
    throw InvalidArgumentError("kNN concentration must be between 0 and 4 (unset: cross-validate)");
  }
  if (options.knn_similarity_power && *options.knn_similarity_power != 1 &&
      *options.knn_similarity_power != 2) {
    throw InvalidArgumentError("kNN similarity power must be 1 or 2 (unset: cross-validate)");
  }
  if (!(std::isfinite(options.knn_cost_limit) && options.knn_cost_limit >= 0)) {
    throw InvalidArgumentError("kNN cost limit must be 0 (none) or more");
  }
  check_methods(options);
  if (options.time_budget < 0 || !std::isfinite(options.time_budget)) {
    throw InvalidArgumentError("time budget must be 0 (none) or more seconds");
  }
  if (options.knn_k && *options.knn_k < 1) {
    throw InvalidArgumentError("kNN k must be at least 1 (unset: cross-validate)");
  }
  if (options.rocchio_gamma &&
      !(*options.rocchio_gamma >= 0 && std::isfinite(*options.rocchio_gamma))) {
    throw InvalidArgumentError("Rocchio gamma must be 0 or more (unset: cross-validate)");
  }
}

Decision model_decision(const TrainingCorpus& corpus, const TrainOptions& options) {
  bool multi_label = false;
  for (const std::vector<uint32_t>& labels : corpus.doc_categories) {
    multi_label = multi_label || labels.size() != 1;
  }
  return options.decision.value_or(multi_label ? Decision::kAnyOf : Decision::kOneOf);
}

ModelState fit_model(const TrainingCorpus& corpus, const AnalyzerSettings& analyzer,
                     const TrainOptions& options, bool fit_linear, const PartFitted& part_fitted,
                     const SampleTuning* tuned_on_sample) {
  check_train_settings(options);
  ModelState model;
  model.analyzer = analyzer;
  model.training = options;
  model.categories = corpus.categories;
  model.category_doc_counts = corpus.category_doc_counts();
  model.num_docs = corpus.num_docs();
  model.num_postings = corpus.posting_doc.size();
  model.df = corpus.df;
  model.icu_version = U_ICU_VERSION;
  for (const std::vector<uint32_t>& labels : corpus.doc_categories) {
    model.has_unlabelled = model.has_unlabelled || labels.empty();
  }
  model.decision = model_decision(corpus, options);

  model.selected = selected_features(corpus, options);
  // Cross-validation first: it may choose Rocchio's gamma and kNN's k. A
  // large collection is cross-validated on a sample (TrainOptions::
  // tuning_sample): the settings change little past some tens of thousands
  // of documents, while the cost grows with them.
  TunedSettings tuned;
  if (tuned_on_sample) {
    tuned = tuned_on_sample->settings;
    model.tuned_on_documents = tuned_on_sample->documents;
  } else if (options.tune_thresholds && options.tuning_sample > 0 &&
             corpus.num_docs() > static_cast<uint32_t>(options.tuning_sample)) {
    const FoldCorpus sample = fold_corpus(
        corpus, tuning_sample(corpus, static_cast<uint32_t>(options.tuning_sample), /*seed=*/1));
    model.tuned_on_documents = sample.corpus.num_docs();
    tuned = tune_settings(sample.corpus, options, model.decision, {}, TuneScope::kEveryMethod,
                          corpus.num_docs());
  } else {
    model.tuned_on_documents = options.tune_thresholds ? corpus.num_docs() : 0;
    tuned = tune_settings(corpus, options, model.decision);
  }
  model.tuned_copied_documents = tuned.copied_documents;
  model.tuned_pruned_candidates = tuned.pruned_candidates;
  model.thresholds = std::move(tuned.thresholds);
  model.knn_k = tuned.knn_k;
  model.knn_similarity_power = tuned.knn_similarity_power;
  model.rocchio_gamma = tuned.rocchio_gamma;
  model.knn_objective = std::move(tuned.knn_objective);
  model.calibration = std::move(tuned.calibration);
  model.combo = std::move(tuned.combo);
  model.rocchio_gamma_objective = std::move(tuned.rocchio_gamma_objective);
  model.nb_alpha_objective = std::move(tuned.nb_alpha_objective);
  model.method_objective = std::move(tuned.method_objective);
  model.rare_cut_ratio = std::move(tuned.rare_cut_ratio);
  model.rare_cut_variant = std::move(tuned.rare_cut_variant);
  // The whole collection's figure (a sample's was scaled to it for the
  // decision; kept settings carry none).
  model.knn_postings_per_token = knn_postings_per_token(corpus, 0);
  model.knn_keeps_up = tuned.knn_keeps_up;
  if (options.choose_default_method && model.thresholds.empty() &&
      (!options.methods.empty() || options.time_budget > 0)) {
    model.training.default_method = untuned_default_method(options);
  }
  if (options.choose_default_method && !model.thresholds.empty()) {
    // The best objective (-1 = not tuned, never chosen); ties keep the
    // earlier method in all_methods() order. kNN too slow for indexing at
    // this size is not chosen.
    double best = -1;
    for (size_t m = 0; m < model.method_objective.size() && m < all_methods().size(); ++m) {
      if (!model.knn_keeps_up && all_methods()[m] == Method::kKnn) continue;
      if (model.method_objective[m] > best) {
        best = model.method_objective[m];
        model.training.default_method = all_methods()[m];
      }
    }
  }

  const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
  model.knn_concentration = tuned.knn_concentration;
  model.knn_tf = tuned.knn_tf;
  model.knn_search = knn_training_search(options);
  if (model.knn_concentration > 0) {
    model.knn_term_weight = knn_term_weights(corpus, idf, model.knn_concentration);
  }
  model.svm_c_objective = std::move(tuned.svm_c_objective);
  model.logreg_c_objective = std::move(tuned.logreg_c_objective);
  // The linear models' settings; fit_linear_models() fits their weights.
  model.svm.c = tuned.svm_c;
  if (tuned.svm_slope.size() == corpus.num_categories()) {
    model.svm.slope = std::move(tuned.svm_slope);
    model.svm.intercept = std::move(tuned.svm_intercept);
  }
  model.logreg.c = tuned.logreg_c;
  const auto fitted = [&](ModelPart part) {
    if (part_fitted) part_fitted(part, &model);
  };
  model.rocchio = train_rocchio(corpus, idf, model.rocchio_gamma);
  fitted(ModelPart::kRocchio);
  const std::vector<float> no_idf;
  model.multinomial_nb = train_multinomial_nb(corpus, model.selected, tuned.nb_alpha.at(0),
                                              tuned.nb_tfidf.at(0) ? idf : no_idf);
  fitted(ModelPart::kMultinomialNb);
  model.bernoulli_nb = train_bernoulli_nb(corpus, model.selected, tuned.nb_alpha.at(1));
  fitted(ModelPart::kBernoulliNb);
  model.complement_nb = train_complement_nb(corpus, model.selected, tuned.nb_alpha.at(2),
                                            tuned.nb_tfidf.at(2) ? idf : no_idf);
  fitted(ModelPart::kComplementNb);
  // Copied after the fits above, whose sums and rows are the training's
  // largest memory: at millions of terms the strings are a few hundred MB.
  model.terms = corpus.terms;
  if (fit_linear) {
    // The duals of a cross-validation on these documents (not a sample's).
    const bool same_documents = !tuned_on_sample && model.tuned_on_documents == corpus.num_docs();
    fit_linear_models(make_linear_problem(corpus, idf), corpus, &model, part_fitted,
                      same_documents ? &tuned.linear_duals : nullptr);
  }
  return model;
}

void fit_linear_models(const LinearProblem& problem, const TrainingCorpus& corpus,
                       ModelState* model, const PartFitted& part_fitted,
                       const std::vector<std::vector<std::vector<float>>>* duals, bool packed,
                       const std::string& spill_dir) {
  const auto fit = [&](LinearLoss loss, LinearModel* linear, ModelPart part) {
    const size_t slot = loss == LinearLoss::kSquaredHinge ? 0 : 1;
    LinearPathDuals start;
    if (duals && slot < duals->size()) {
      const std::vector<std::vector<float>>& given = (*duals)[slot];
      const bool fits = given.size() == corpus.num_categories() &&
                        std::all_of(given.begin(), given.end(), [&](const std::vector<float>& d) {
                          return d.size() == problem.num_rows();
                        });
      if (fits) start.push_back(given);
    }
    // Every core: this is the longest fit at scale (cross-validation runs
    // its folds in parallel instead).
    LinearModel fitted;
    for_each_linear_path_model(
        problem, corpus, loss, {linear->c}, std::thread::hardware_concurrency(),
        [&](size_t, LinearModel&& model_at_c) { fitted = std::move(model_at_c); },
        start.empty() ? nullptr : &start, nullptr, 0.1, packed, spill_dir);
    if (linear->slope.size() == corpus.num_categories()) {  // calibrated by cross-validation
      fitted.slope = std::move(linear->slope);
      fitted.intercept = std::move(linear->intercept);
    }
    *linear = std::move(fitted);
    if (part_fitted) part_fitted(part, model);
  };
  fit(LinearLoss::kSquaredHinge, &model->svm, ModelPart::kSvm);
  fit(LinearLoss::kLogistic, &model->logreg, ModelPart::kLogreg);
}

// Hands freed heap memory back to the system. glibc keeps what the
// cross-validation threads freed in their arenas; without this, the 1M
// training's RSS stayed about 1 GB above what it used.
void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// Drops the weights of a part written to the model file, keeping its
// settings (alpha, C, whether on tf-idf) for the training report.
void drop_part_weights(ModelPart part, ModelState* model) {
  switch (part) {
    case ModelPart::kRocchio:
      model->rocchio = RocchioModel();
      return;
    case ModelPart::kMultinomialNb:
      model->multinomial_nb.weight_rows.reset();
      return std::vector<float>().swap(model->multinomial_nb.term_weight);
    case ModelPart::kBernoulliNb:
      model->bernoulli_nb.weight_rows.reset();
      return std::vector<float>().swap(model->bernoulli_nb.term_weight);
    case ModelPart::kComplementNb:
      model->complement_nb.weight_rows.reset();
      return std::vector<float>().swap(model->complement_nb.term_weight);
    case ModelPart::kSvm:
    case ModelPart::kLogreg: {
      LinearModel& linear = part == ModelPart::kSvm ? model->svm : model->logreg;
      LinearModel settings;
      settings.c = linear.c;
      linear = std::move(settings);
      return;
    }
  }
}

void fit_unlabelled(const UnlabelledInputs& unlabelled, const ReadOptions& read_options,
                    const Analyzer& analyzer, const TrainingCorpus& corpus, ModelState* model,
                    TrainReport* report, const WarningCallback& on_warning) {
  const Vocabulary vocabulary(corpus.terms);
  std::vector<DocumentTerms> docs;
  std::vector<Token> tokens;
  ReadOptions unlabelled_options = read_options;
  unlabelled_options.databases = unlabelled.databases;  // not the labelled ones, read already
  read_documents(
      unlabelled.inputs, unlabelled_options,
      [&](InputDocument&& doc) {
        ++report->unlabelled_read;
        tokens.clear();
        analyzer.analyze(doc.text, &tokens);
        docs.push_back(make_document_terms(vocabulary, tokens));
      },
      on_warning);
  EmResult em = train_multinomial_nb_em(corpus, docs, model->selected, model->multinomial_nb.alpha,
                                        unlabelled.em);
  model->multinomial_nb = std::move(em.model);
  model->em = em.report;
  report->em = std::move(em.report);
}

}  // namespace autocat::internal
