// Opening a model directory: the Categorizer's constructors, its methods'
// classifiers, the parts of the model file decoded on first use and kNN's
// index, built (or mapped) on first use with the journal replayed.

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/io/filenames.h"
#include "classify/io/retry_once.h"
#include "classify/methods/combo.h"
#include "classify/methods/linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"

namespace autocat::internal {

namespace {

namespace fs = std::filesystem;

// Rocchio, a Naive Bayes method, svm or logreg: its live model once
// something was learned or forgotten, else the trained one.
class LiveOrTrainedClassifier : public Classifier {
 public:
  using LiveModelGetter = std::function<std::shared_ptr<const LiveModel>()>;
  LiveOrTrainedClassifier(std::unique_ptr<Classifier> trained, LiveModelGetter live)
      : trained_(std::move(trained)), live_(std::move(live)) {}
  Method method() const override { return trained_->method(); }
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override {
    // Holds the model while scoring with it: a learn meanwhile publishes a
    // new one and leaves this one intact.
    const std::shared_ptr<const LiveModel> live = live_();
    (live ? *live->classifier : *trained_).score(doc, options, scores);
  }

 private:
  std::unique_ptr<Classifier> trained_;
  LiveModelGetter live_;
};

// A classifier built on its first score() (after its method's part of the
// model file is decoded): opening a model decodes no method's state.
class LazyClassifier : public Classifier {
 public:
  using Build = std::function<std::unique_ptr<Classifier>()>;
  LazyClassifier(Method method, Build build) : method_(method), build_(std::move(build)) {}
  Method method() const override { return method_; }
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override {
    // If building throws (a damaged section), the next call tries again.
    once_.run([this] { built_ = build_(); });
    built_->score(doc, options, scores);
  }

 private:
  Method method_;
  Build build_;
  mutable RetryOnce once_;
  mutable std::unique_ptr<Classifier> built_;
};

}  // namespace

Categorizer::Categorizer(const std::string& model_dir) : model_dir_(model_dir) {
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) {
    throw NotFoundError(model_dir + ": no such model directory; " + train_hint(model_dir));
  }
  paths_ = resolve_model_dir(model_dir);
  if (!fs::exists(paths_.model_file, ec)) {
    throw NotFoundError(missing_model_reason(model_dir) + "; " + train_hint(model_dir));
  }
  // The linear weights are read where the file holds them: classifying
  // touches the rows of the document's terms only.
  file_ = std::make_unique<const ModelFile>(paths_.model_file, &model_, /*map_weights=*/true);
  // Read now, applied once kNN's index is built; a damaged journal fails
  // the open, so that nothing learned is silently dropped.
  JournalContents journal = read_journal(paths_.journal);
  journal_at_open_ = !journal.records.empty();
  knn_.replay = std::make_shared<const std::vector<JournalRecord>>(std::move(journal.records));
  live_.replay = knn_.replay;
  journal_end_ = journal.valid_bytes;
  journal_bytes_at_open_ = journal.valid_bytes;
  journal_seen_ = journal.file_bytes;
  if (!journal.torn.empty()) add_warning(journal.torn + "; the next learn or forget cuts it off");
  try {
    knn_.training_db = Xapian::Database(paths_.training_db);
    knn_.training_db_open = true;
  } catch (const Xapian::Error&) {
    // Reported by knn_index(): methods other than kNN do not need it.
  }
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
  const auto live_or_trained = [this](Method method, std::unique_ptr<Classifier> trained) {
    classifiers_[static_cast<size_t>(method)] = std::make_unique<LiveOrTrainedClassifier>(
        std::move(trained), [this, method] { return live_model(method); });
  };
  // Each built on first use, after its part of the model file is decoded.
  const auto lazy = [](Method method, LazyClassifier::Build build) {
    return std::make_unique<LazyClassifier>(method, std::move(build));
  };
  live_or_trained(Method::kRocchio, lazy(Method::kRocchio, [this] {
                    return std::make_unique<RocchioClassifier>(rocchio(), idf_);
                  }));
  for (Method method :
       {Method::kNaiveBayes, Method::kBernoulliNaiveBayes, Method::kComplementNaiveBayes}) {
    live_or_trained(method, lazy(method, [this, method] {
                      return std::make_unique<NaiveBayesClassifier>(naive_bayes(method));
                    }));
  }
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    live_or_trained(method, lazy(method, [this, method] {
                      return std::make_unique<LinearClassifier>(method, linear(method), idf_,
                                                                model_.decision);
                    }));
  }
  classifiers_[static_cast<size_t>(Method::kCombo)] = std::make_unique<ComboClassifier>(
      model_.combo, model_.calibration, model_.decision,
      [this](Method member, const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) {
        std::call_once(combo_parts_loaded_, [this] { load_combo_parts(); });
        classifier(member).score(doc, options, scores);
      });
}

void Categorizer::load_combo_parts() const {
  if (!file_) return;
  std::vector<ModelPart> parts;
  const auto add = [&](Method member) {
    ModelPart part;
    if (model_part_of(member, &part)) parts.push_back(part);
  };
  if (model_.combo.empty()) {
    for (Method member : combo_members()) add(member);
  } else {
    for (int32_t member : model_.combo.members) add(static_cast<Method>(member));
  }
  // Each part on its own thread (ModelFile::load decodes each once, from
  // any thread): opening a combo model takes the longest part's time, not
  // the sum. A part that fails is left to throw where its member is used.
  const unsigned threads =
      std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), parts.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < parts.size();) {
      try {
        file_->load(parts[i], &model_);
      } catch (const std::exception&) {
      }
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
}

Categorizer::~Categorizer() = default;

void Categorizer::load_part(Method method) const {
  ModelPart part;
  if (file_ && model_part_of(method, &part)) file_->load(part, &model_);
}

const ModelState& Categorizer::model() const {
  if (file_) file_->load_all(&model_);
  return model_;
}

const RocchioModel& Categorizer::rocchio() const {
  load_part(Method::kRocchio);
  return model_.rocchio;
}

const NaiveBayesModel& Categorizer::naive_bayes(Method method) const {
  load_part(method);
  switch (method) {
    case Method::kBernoulliNaiveBayes:
      return model_.bernoulli_nb;
    case Method::kComplementNaiveBayes:
      return model_.complement_nb;
    default:
      return model_.multinomial_nb;
  }
}

const LinearModel& Categorizer::linear(Method method) const {
  load_part(method);
  return method == Method::kSvm ? model_.svm : model_.logreg;
}

std::shared_ptr<const KnnIndex> Categorizer::build_knn_index(const TrainingCorpus& corpus) const {
  auto index = std::make_shared<KnnIndex>(corpus, model_.knn_weights(idf_), model_.knn_tf);
  // The two-step arrays the index file would hold, for the search the
  // model was tuned with.
  if (model_.knn_search == KnnSearchMode::kTwoStep) index->build_two_step();
  return index;
}

const KnnIndex& Categorizer::knn_index() const {
  // If building throws, call_once lets the next caller try again.
  std::call_once(knn_.once, [this] {
    std::shared_ptr<const KnnIndex> index;
    std::shared_ptr<KnnLiveIndex> live;
    if (corpus_) {
      index = build_knn_index(*corpus_);
      live = std::make_shared<KnnLiveIndex>(index, std::vector<std::string>());
    } else if ((index = KnnIndex::open(paths_.knn_index, model_.knn_weights(idf_), model_.num_docs,
                                       static_cast<uint32_t>(model_.categories.size()),
                                       model_.knn_tf))) {
      // Written at training time: mapped, not rebuilt. The training
      // documents' ids (to learn and forget by id) are read from the
      // training database only when learning needs them.
      live = std::make_shared<KnnLiveIndex>(index, [this] { return training_ids(); });
    } else {
      const std::string& path = paths_.training_db;
      if (!knn_.training_db_open) {
        knn_.training_db = open_training_db(path, model_dir_);
        knn_.training_db_open = true;
      }
      TrainingCorpus corpus = read_training_corpus(knn_.training_db, path, model_dir_);
      check_corpus_matches(corpus, model_, path);
      index = build_knn_index(corpus);
      // The database open since construction: this generation may have
      // been removed by later trains meanwhile.
      live = std::make_shared<KnnLiveIndex>(index, training_ids(&knn_.training_db));
    }
    if (knn_.replay && !knn_.replay->empty() && !corpus_) {
      // Replaying needs the training documents' ids (a learn may replace
      // one); without the training database (a classify-only node) kNN
      // keeps the trained index rather than failing every search.
      try {
        live->contains(std::string());
      } catch (const Error& e) {
        add_warning(std::string(e.what()) +
                    "; kNN classifies with the index as trained, without the "
                    "journal's documents, until the refit");
        knn_.replay.reset();
      }
    }
    const bool replaying = knn_.replay != nullptr;
    if (knn_.replay) {
      for (const JournalRecord& record : *knn_.replay) {
        if (apply_record(record, live.get())) ++status_.replayed;
      }
    }
    knn_.classifier = std::make_unique<KnnClassifier>(std::shared_ptr<const KnnLiveIndex>(live),
                                                      model_.knn_similarity_power, model_.knn_k,
                                                      model_.knn_search);
    knn_.index = std::move(index);
    {
      // Records caught up while the index was built follow the open's.
      std::lock_guard<std::mutex> lock(learn_mutex_);
      if (replaying) {
        for (const JournalRecord& record : knn_appended_) apply_record(record, live.get());
      }
      knn_appended_.clear();
      knn_.live = std::move(live);
      knn_ready_ = true;
    }
    knn_.replay.reset();
    if (knn_.training_db_open) {
      knn_.training_db.close();
      knn_.training_db_open = false;
    }
  });
  return *knn_.index;
}

std::vector<std::string> Categorizer::training_ids(const Xapian::Database* db) const {
  const std::string& path = paths_.training_db;
  try {
    return read_training_ids(db != nullptr ? *db : open_training_db(path, model_dir_));
  } catch (const Xapian::Error& e) {
    throw ModelFormatError(path + ": the training database is damaged (" + e.get_description() +
                           "); retrain with: autocat train --model " + model_dir_ + " INPUT...");
  }
}

const KnnLiveIndex& Categorizer::live_index() const {
  knn_index();
  return *knn_.live;
}

}  // namespace autocat::internal
