#include "classify/train/cross_validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>

#include "autocat/error.h"
#include "classify/decide/categorizer.h"
#include "classify/train/trainer.h"

namespace autocat::internal {
namespace {

// Any-of when some document has several labels or none, as fit_model()
// detects it for a whole collection: every fold must decide alike, whatever
// its share of such documents.
Decision detected_decision(const TrainingCorpus& corpus) {
  for (const std::vector<uint32_t>& labels : corpus.doc_categories) {
    if (labels.size() != 1) return Decision::kAnyOf;
  }
  return Decision::kOneOf;
}

bool has_unlabelled(const TrainingCorpus& corpus) {
  return std::any_of(corpus.doc_categories.begin(), corpus.doc_categories.end(),
                     [](const std::vector<uint32_t>& labels) { return labels.empty(); });
}

}  // namespace

CrossValidationResult cross_validate(const TrainingCorpus& corpus, const AnalyzerSettings& analyzer,
                                     const TrainOptions& train,
                                     const CrossValidationOptions& options,
                                     const std::function<void(uint64_t)>& on_progress) {
  if (options.methods.empty()) throw InvalidArgumentError("cross-validation: no method given");
  CrossValidationResult result;
  result.folds = options.folds;
  result.seed = options.seed;
  const std::vector<uint32_t> copy_of = copy_groups(corpus);
  result.fold_of = stratified_folds(corpus, options.folds, options.seed, copy_of);
  result.fold_documents.assign(options.folds, 0);
  for (uint32_t fold : result.fold_of) ++result.fold_documents[fold];
  result.copied_documents = count_copies(copy_of);

  // Fix what each fold would otherwise detect from its own share of the data.
  TrainOptions fold_train = train;
  fold_train.decision =
      options.classify.decision.value_or(train.decision.value_or(detected_decision(corpus)));
  ClassifyOptions classify = options.classify;
  classify.decision = fold_train.decision;
  if (!classify.other) classify.other = has_unlabelled(corpus);
  result.decision = *classify.decision;
  result.count_unlabelled = options.count_unlabelled.value_or(result.decision == Decision::kAnyOf);

  for (Method method : options.methods) {
    MethodFolds folds;
    folds.method = method;
    folds.pooled = Evaluation(corpus.categories);
    result.methods.push_back(std::move(folds));
  }

  const std::vector<DocumentTerms> documents = corpus_documents(corpus);
  uint64_t evaluated = 0;
  for (uint32_t fold = 0; fold < options.folds; ++fold) {
    std::vector<uint8_t> keep(corpus.num_docs());
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) keep[d] = result.fold_of[d] != fold;
    FoldCorpus training = fold_corpus(corpus, keep);
    ModelState model = fit_model(training.corpus, analyzer, fold_train);
    const Categorizer categorizer(
        std::move(model), std::make_shared<const TrainingCorpus>(std::move(training.corpus)));

    for (MethodFolds& folds : result.methods) {
      folds.folds.emplace_back(corpus.categories);
      if (gives_probabilities(folds.method)) folds.fold_log_loss.emplace_back();
    }
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (keep[d]) continue;
      const std::vector<uint32_t>& truth = corpus.doc_categories[d];
      if (truth.empty() && !result.count_unlabelled) {
        ++result.unlabelled_skipped;
        continue;
      }
      if (truth.empty()) ++result.unlabelled_counted;
      const DocumentTerms doc = fold_document(documents[d], training.fold_term);
      for (MethodFolds& folds : result.methods) {
        ClassifyOptions method_options = classify;
        method_options.method = folds.method;
        const std::vector<double> scores = categorizer.scores(doc, method_options);
        std::vector<uint32_t> assigned;
        for (const Category& category : categorizer.decide(scores, method_options)) {
          assigned.push_back(static_cast<uint32_t>(categorizer.category_index(category.name)));
        }
        folds.folds.back().add(truth, assigned);
        folds.pooled.add(truth, assigned);
        if (gives_probabilities(folds.method) && truth.size() == 1) {
          folds.fold_log_loss.back().add(scores, truth.front());
          folds.pooled_log_loss.add(scores, truth.front());
        }
      }
      ++evaluated;
      if (on_progress && evaluated % 256 == 0) on_progress(evaluated);
    }
  }
  if (on_progress) on_progress(evaluated);
  return result;
}

}  // namespace autocat::internal
