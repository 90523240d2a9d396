#include "classify/categorizer.h"

#include <algorithm>
#include <filesystem>

#include "autocat/error.h"
#include "classify/naive_bayes.h"
#include "classify/rocchio.h"
#include "classify/weighting.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

std::string train_hint(const std::string& model_dir) {
  return "train one with: autocat train --model " + model_dir + " INPUT...";
}

}  // namespace

Categorizer::Categorizer(const std::string& model_dir) : model_dir_(model_dir) {
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) {
    throw NotFoundError(model_dir + ": no such model directory; " + train_hint(model_dir));
  }
  const fs::path model_file = fs::path(model_dir) / kModelFileName;
  if (!fs::exists(model_file, ec)) {
    throw NotFoundError(model_dir + ": no model here (" + kModelFileName + " missing); " +
                        train_hint(model_dir));
  }
  model_ = read_model_file(model_file.string());
  build_classifiers();
}

Categorizer::Categorizer(ModelState model, std::shared_ptr<const TrainingCorpus> corpus)
    : model_(std::move(model)), corpus_(std::move(corpus)) {
  if (!corpus_ || corpus_->num_docs() != model_.num_docs || corpus_->terms != model_.terms) {
    throw InvalidArgumentError("in-memory categorizer: the corpus is not the model's");
  }
  build_classifiers();
}

void Categorizer::build_classifiers() {
  analyzer_ = std::make_unique<Analyzer>(model_.analyzer);
  vocabulary_ = Vocabulary(model_.terms);
  idf_ = compute_idf(model_.df, model_.num_docs, model_.selected);

  classifiers_.resize(all_methods().size());
  classifiers_[static_cast<size_t>(Method::kRocchio)] =
      std::make_unique<RocchioClassifier>(model_.rocchio, idf_);
  classifiers_[static_cast<size_t>(Method::kNaiveBayes)] =
      std::make_unique<NaiveBayesClassifier>(model_.multinomial_nb);
  classifiers_[static_cast<size_t>(Method::kBernoulliNaiveBayes)] =
      std::make_unique<NaiveBayesClassifier>(model_.bernoulli_nb);
  classifiers_[static_cast<size_t>(Method::kComplementNaiveBayes)] =
      std::make_unique<NaiveBayesClassifier>(model_.complement_nb);
}

Categorizer::~Categorizer() = default;

const KnnIndex& Categorizer::knn_index() const {
  // If building throws, call_once lets the next caller try again.
  std::call_once(knn_once_, [this] {
    if (corpus_) {
      auto index = std::make_shared<const KnnIndex>(*corpus_, idf_);
      knn_classifier_ = std::make_unique<KnnClassifier>(index);
      knn_index_ = std::move(index);
      return;
    }
    const std::string path = (fs::path(model_dir_) / kTrainingDbName).string();
    Xapian::Database db;
    try {
      db = Xapian::Database(path);
    } catch (const Xapian::DatabaseOpeningError& e) {
      throw NotFoundError(path + ": cannot open the training database (" + e.get_msg() + "); " +
                          train_hint(model_dir_));
    }
    TrainingCorpus corpus = load_training_corpus(db);
    if (corpus.num_docs() != model_.num_docs || corpus.posting_doc.size() != model_.num_postings ||
        corpus.terms != model_.terms || corpus.categories != model_.categories) {
      throw ModelFormatError(path +
                             ": the training database has changed since the model was trained; "
                             "run autocat train again");
    }
    auto index = std::make_shared<const KnnIndex>(corpus, idf_);
    knn_classifier_ = std::make_unique<KnnClassifier>(index);
    knn_index_ = std::move(index);
  });
  return *knn_index_;
}

const Classifier& Categorizer::classifier(Method method) const {
  if (method == Method::kKnn) {
    knn_index();
    return *knn_classifier_;
  }
  const auto slot = static_cast<size_t>(method);
  if (slot >= classifiers_.size() || !classifiers_[slot]) {
    throw InvalidArgumentError("unknown classification method");
  }
  return *classifiers_[slot];
}

int64_t Categorizer::category_index(const std::string& name) const {
  const auto& names = model_.categories;
  const auto it = std::lower_bound(names.begin(), names.end(), name);
  return it != names.end() && *it == name ? it - names.begin() : -1;
}

DocumentTerms Categorizer::document_terms(const std::vector<Token>& tokens) const {
  return make_document_terms(vocabulary_, tokens);
}

std::vector<double> Categorizer::scores(const DocumentTerms& doc,
                                        const ClassifyOptions& options) const {
  if (options.k < 1) throw InvalidArgumentError("k must be at least 1");
  std::vector<double> result(model_.categories.size(), 0.0);
  // No known term means no evidence: every method says so with all zeros
  // rather than, say, Naive Bayes falling back to the priors.
  if (doc.terms.empty()) return result;
  classifier(options.method.value_or(default_method())).score(doc, options, &result);
  return result;
}

std::vector<Category> Categorizer::ranked(const std::vector<double>& scores) const {
  std::vector<Category> result;
  result.reserve(scores.size());
  for (size_t c = 0; c < scores.size(); ++c) {
    result.push_back(Category{model_.categories[c], scores[c]});
  }
  std::stable_sort(result.begin(), result.end(),
                   [](const Category& a, const Category& b) { return a.score > b.score; });
  return result;
}

std::vector<Category> Categorizer::decide(const std::vector<double>& scores,
                                          const ClassifyOptions& options) const {
  std::vector<Category> all = ranked(scores);
  std::vector<Category> chosen;
  if (options.decision == Decision::kOneOf) {
    if (!all.empty() && all[0].score > 0.0 && all[0].score >= options.min_score) {
      chosen.push_back(all[0]);
    }
    return chosen;
  }
  const auto limit = static_cast<size_t>(std::max(options.max_categories, 1));
  const auto method = static_cast<size_t>(options.method.value_or(default_method()));
  const bool tuned = options.tuned_thresholds && method < model_.thresholds.size() &&
                     !model_.thresholds[method].empty();
  for (const Category& category : all) {
    if (chosen.size() >= limit) break;
    if (category.score <= 0.0) break;
    double threshold = options.min_score;
    if (tuned) {
      threshold = model_.thresholds[method][static_cast<size_t>(category_index(category.name))];
    }
    if (category.score >= threshold) chosen.push_back(category);
  }
  return chosen;
}

std::vector<Category> Categorizer::classify(std::string_view text,
                                            const ClassifyOptions& options) const {
  const DocumentTerms doc = document_terms(analyzer_->analyze(text));
  return decide(scores(doc, options), options);
}

}  // namespace autocat::internal
