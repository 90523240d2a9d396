#include "classify/decide/categorizer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>

#include "autocat/error.h"
#include "classify/corpus/document_reader.h"
#include "classify/corpus/weighting.h"
#include "classify/io/filenames.h"
#include "classify/io/retry_once.h"
#include "classify/methods/combo.h"
#include "classify/methods/linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"
#include "classify/metrics/evaluation.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

std::string train_hint(const std::string& model_dir) {
  return "train one with: autocat train --model " + model_dir + " INPUT...";
}

// Throws ModelFormatError naming the training database at `path` if it no
// longer holds the documents, terms and categories `model` was trained on.
void check_corpus_matches(const TrainingCorpus& corpus, const ModelState& model,
                          const std::string& path) {
  if (corpus.num_docs() != model.num_docs || corpus.posting_doc.size() != model.num_postings ||
      corpus.terms != model.terms || corpus.categories != model.categories) {
    throw ModelFormatError(path +
                           ": the training database has changed since the model was "
                           "trained; run autocat train again");
  }
}

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

// The id of each document of the training database, by dense index (as
// load_training_corpus numbers them: docid order).
std::vector<std::string> read_training_ids(const Xapian::Database& db) {
  std::vector<Xapian::docid> docids;
  docids.reserve(db.get_doccount());
  for (auto it = db.postlist_begin(std::string()); it != db.postlist_end(std::string()); ++it) {
    docids.push_back(*it);
  }
  std::vector<std::string> ids(docids.size());
  for (auto term = db.allterms_begin(kIdPrefix); term != db.allterms_end(kIdPrefix); ++term) {
    const std::string name = *term;
    for (auto p = db.postlist_begin(name); p != db.postlist_end(name); ++p) {
      const auto it = std::lower_bound(docids.begin(), docids.end(), *p);
      if (it != docids.end() && *it == *p) ids[size_t(it - docids.begin())] = name.substr(1);
    }
  }
  return ids;
}

}  // namespace

Xapian::Database open_training_db(const std::string& path, const std::string& model_dir) {
  try {
    return Xapian::Database(path);
  } catch (const Xapian::DatabaseOpeningError& e) {
    throw NotFoundError(path + ": cannot open the training database (" + e.get_msg() + "); " +
                        train_hint(model_dir));
  } catch (const Xapian::Error& e) {
    throw ModelFormatError(path + ": the training database is damaged (" + e.get_description() +
                           "); retrain with: autocat train --model " + model_dir + " INPUT...");
  }
}

TrainingCorpus read_training_corpus(const Xapian::Database& db, const std::string& path,
                                    const std::string& model_dir) {
  try {
    return load_training_corpus(db);
  } catch (const Xapian::Error& e) {
    // Xapian names neither the database nor the way out ("EOF reading block 2").
    throw ModelFormatError(path + ": the training database is damaged (" + e.get_description() +
                           "); retrain with: autocat train --model " + model_dir + " INPUT...");
  }
}

TrainingCorpus read_training_corpus(const std::string& path, const std::string& model_dir) {
  return read_training_corpus(open_training_db(path, model_dir), path, model_dir);
}

Categorizer::Categorizer(const std::string& model_dir) : model_dir_(model_dir) {
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) {
    throw NotFoundError(model_dir + ": no such model directory; " + train_hint(model_dir));
  }
  paths_ = resolve_model_dir(model_dir);
  if (!fs::exists(paths_.model_file, ec)) {
    throw NotFoundError(model_dir + ": no model here (" + kModelFileName + " missing); " +
                        train_hint(model_dir));
  }
  file_ = std::make_unique<const ModelFile>(paths_.model_file, &model_);
  // Read now, applied once kNN's index is built; a damaged journal fails
  // the open, so that nothing learned is silently dropped.
  JournalContents journal = read_journal(paths_.journal);
  journal_at_open_ = !journal.records.empty();
  knn_replay_ = std::make_shared<const std::vector<JournalRecord>>(std::move(journal.records));
  live_replay_ = knn_replay_;
  journal_end_ = journal.valid_bytes;
  journal_bytes_at_open_ = journal.valid_bytes;
  if (!journal.torn.empty()) add_warning(journal.torn + "; the next learn or forget cuts it off");
  try {
    training_db_ = Xapian::Database(paths_.training_db);
    training_db_open_ = true;
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
             std::vector<double>* scores) { classifier(member).score(doc, options, scores); });
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

const KnnIndex& Categorizer::knn_index() const {
  // If building throws, call_once lets the next caller try again.
  std::call_once(knn_once_, [this] {
    std::shared_ptr<const KnnIndex> index;
    std::shared_ptr<KnnLiveIndex> live;
    if (corpus_) {
      index = std::make_shared<const KnnIndex>(*corpus_, model_.knn_weights(idf_));
      live = std::make_shared<KnnLiveIndex>(index, std::vector<std::string>());
    } else if ((index = KnnIndex::open(paths_.knn_index, model_.knn_weights(idf_), model_.num_docs,
                                       static_cast<uint32_t>(model_.categories.size())))) {
      // Written at training time: mapped, not rebuilt. The training
      // documents' ids (to learn and forget by id) are read from the
      // training database only when learning needs them.
      live = std::make_shared<KnnLiveIndex>(index, [this] { return training_ids(); });
    } else {
      const std::string& path = paths_.training_db;
      if (!training_db_open_) {
        training_db_ = open_training_db(path, model_dir_);
        training_db_open_ = true;
      }
      TrainingCorpus corpus = read_training_corpus(training_db_, path, model_dir_);
      check_corpus_matches(corpus, model_, path);
      index = std::make_shared<const KnnIndex>(corpus, model_.knn_weights(idf_));
      // The database open since construction: this generation may have
      // been removed by later trains meanwhile.
      live = std::make_shared<KnnLiveIndex>(index, training_ids(&training_db_));
    }
    if (knn_replay_ && !knn_replay_->empty() && !corpus_) {
      // Replaying needs the training documents' ids (a learn may replace
      // one); without the training database (a classify-only node) kNN
      // keeps the trained index rather than failing every search.
      try {
        live->contains(std::string());
      } catch (const Error& e) {
        add_warning(std::string(e.what()) +
                    "; kNN classifies with the index as trained, without the "
                    "journal's documents, until the refit");
        knn_replay_.reset();
      }
    }
    if (knn_replay_) {
      for (const JournalRecord& record : *knn_replay_) {
        if (apply_record(record, live.get())) ++status_.replayed;
      }
    }
    knn_classifier_ = std::make_unique<KnnClassifier>(std::shared_ptr<const KnnLiveIndex>(live),
                                                      model_.knn_similarity_power, model_.knn_k);
    knn_index_ = std::move(index);
    live_index_ = std::move(live);
    knn_replay_.reset();
    if (training_db_open_) {
      training_db_.close();
      training_db_open_ = false;
    }
  });
  return *knn_index_;
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
  return *live_index_;
}

bool Categorizer::record_document(const JournalRecord& record, bool warn, DocumentTerms* doc,
                                  std::vector<uint32_t>* categories) const {
  for (const std::string& label : record.labels) {
    const int64_t c = category_index(label);
    if (c < 0) {
      if (warn) {
        add_warning(paths_.journal + ": skipped document " + record.id + ": category " + label +
                    " is not in the model");
      }
      return false;
    }
    categories->push_back(static_cast<uint32_t>(c));
  }
  for (const JournalTerm& term : record.terms) {
    const int64_t id = vocabulary_.find(term.term);
    doc->total_tokens += term.count;
    if (id < 0 || term.count == 0) continue;
    doc->known_tokens += term.count;
    doc->terms.push_back({static_cast<TermId>(id), term.count});
  }
  std::sort(doc->terms.begin(), doc->terms.end(),
            [](const TermCount& a, const TermCount& b) { return a.term < b.term; });
  return true;
}

bool Categorizer::apply_record(const JournalRecord& record, KnnLiveIndex* live) const {
  if (record.kind == JournalRecord::Kind::kForget) return live->forget(record.id);
  DocumentTerms doc;
  std::vector<uint32_t> categories;
  if (!record_document(record, /*warn=*/true, &doc, &categories)) return false;
  live->learn(record.id, doc, categories);
  return true;
}

void Categorizer::ensure_live_models(bool for_learning) const {
  // LiveModels reads the Naive Bayes models' alpha, the linear weights and idf: a damaged
  // section throws ModelFormatError here, not mistaken for a missing
  // training database below.
  for (Method method : {Method::kNaiveBayes, Method::kBernoulliNaiveBayes,
                        Method::kComplementNaiveBayes, Method::kSvm, Method::kLogreg}) {
    load_part(method);
  }
  std::call_once(live_models_once_, [this] {
    std::shared_ptr<LiveModels> live;
    std::string error;
    try {
      if (corpus_) {
        live = std::make_shared<LiveModels>(model_, idf_, *corpus_, std::vector<std::string>());
      } else {
        const std::string& path = paths_.training_db;
        const Xapian::Database db = open_training_db(path, model_dir_);
        const TrainingCorpus corpus = read_training_corpus(db, path, model_dir_);
        check_corpus_matches(corpus, model_, path);
        live = std::make_shared<LiveModels>(model_, idf_, corpus, training_ids(&db));
      }
      if (live_replay_) {
        for (const JournalRecord& record : *live_replay_) {
          if (record.kind == JournalRecord::Kind::kForget) {
            live->forget(record.id);
            continue;
          }
          DocumentTerms doc;
          std::vector<uint32_t> categories;
          // kNN's replay warns about skipped records already.
          if (record_document(record, /*warn=*/false, &doc, &categories)) {
            live->learn(record.id, doc, categories);
          }
        }
      }
    } catch (const Error& e) {
      error = e.what();
      live.reset();
    }
    live_replay_.reset();
    std::atomic_store(&live_models_, live);
    live_models_active_.store(live != nullptr, std::memory_order_release);
    if (!error.empty()) {
      std::lock_guard<std::mutex> lock(learn_mutex_);
      live_models_error_ = error;
      if (journal_at_open_) {
        add_warning(error +
                    "; Rocchio, Naive Bayes, svm and logreg classify with the models as trained, "
                    "without the "
                    "journal's documents, until the refit (autocat train --add --model " +
                    model_dir_ + ")");
      }
    }
  });
  if (for_learning && !live_models_active_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(learn_mutex_);
    throw NotFoundError(live_models_error_ +
                        " (learning needs the training database: nothing was learned or "
                        "forgotten)");
  }
}

std::shared_ptr<const LiveModel> Categorizer::live_model(Method method) const {
  if (journal_at_open_) {
    ensure_live_models(/*for_learning=*/false);
  } else if (!live_models_active_.load(std::memory_order_acquire)) {
    return nullptr;  // nothing learned: the trained model, at no cost
  }
  const std::shared_ptr<LiveModels> live = std::atomic_load(&live_models_);
  return live ? live->model(method) : nullptr;
}

void Categorizer::require_installed() const {
  // Two trains later the generation's training database is gone, and
  // reading it would fail with advice to train a model that exists.
  if (!model_dir_.empty() && resolve_model_dir(model_dir_).model_file != paths_.model_file) {
    throw InvalidArgumentError(model_dir_ + ": " + kTrainedAgainSinceOpened);
  }
}

void Categorizer::journal(const std::vector<JournalRecord>& records, bool sync) {
  if (model_dir_.empty() || records.empty()) return;
  const JournalContents result =
      append_journal(model_dir_, paths_.model_file, paths_.journal, records, sync, &journal_end_);
  if (!result.torn.empty()) add_warning(result.torn + " (cut off)");
}

void Categorizer::learn(const std::string& id, std::string_view text,
                        const std::vector<std::string>& labels) {
  learn({LearnedDocument{id, std::string(text), labels}});
}

void Categorizer::learn(const std::vector<LearnedDocument>& documents, bool sync) {
  const std::string where = model_dir_.empty() ? std::string("model") : model_dir_;
  std::vector<JournalRecord> records;
  records.reserve(documents.size());
  std::vector<Token> tokens;
  for (const LearnedDocument& document : documents) {
    const std::string name = where + ": document '" + document.id + "'";
    if (document.id.empty()) throw InvalidArgumentError(where + ": a document to learn has no id");
    if (document.id.size() > kMaxIdBytes) {
      throw InvalidArgumentError(name.substr(0, 200) + "...: id longer than " +
                                 std::to_string(kMaxIdBytes) + " bytes");
    }
    if (document.labels.empty()) {
      throw InvalidArgumentError(name + ": no labels; learn needs at least one category");
    }
    JournalRecord record;
    record.id = document.id;
    for (const std::string& label : document.labels) {
      if (category_index(label) < 0) {
        throw InvalidArgumentError(
            name + ": category '" + label +
            "' is not in the model; a new category needs a refit: autocat train --add --model " +
            where + " INPUT... (nothing was learned)");
      }
      if (std::find(record.labels.begin(), record.labels.end(), label) == record.labels.end()) {
        record.labels.push_back(label);
      }
    }
    tokens.clear();
    analyzer_->analyze(document.text, &tokens);
    if (tokens.empty()) {
      throw InvalidArgumentError(name + ": no terms after analysis (nothing was learned)");
    }
    std::map<std::string, uint32_t> counts;
    for (const Token& token : tokens) ++counts[token.term];
    record.terms.reserve(counts.size());
    for (auto& [term, count] : counts) record.terms.push_back({term, count});
    records.push_back(std::move(record));
  }
  require_installed();
  knn_index();
  ensure_live_models(/*for_learning=*/true);
  std::lock_guard<std::mutex> lock(learn_mutex_);
  journal(records, sync);
  for (const JournalRecord& record : records) {
    apply_record(record, live_index_.get());
    DocumentTerms doc;
    std::vector<uint32_t> categories;
    if (record_document(record, /*warn=*/false, &doc, &categories)) {
      live_models_->learn(record.id, doc, categories);
    }
  }
  status_.learned_now += records.size();
}

void Categorizer::forget(const std::string& id) { forget(std::vector<std::string>{id}); }

void Categorizer::forget(const std::vector<std::string>& ids, bool sync) {
  const std::string where = model_dir_.empty() ? std::string("model") : model_dir_;
  require_installed();
  knn_index();
  ensure_live_models(/*for_learning=*/true);
  std::lock_guard<std::mutex> lock(learn_mutex_);
  std::vector<JournalRecord> records;
  for (const std::string& id : ids) {
    if (!live_index_->contains(id)) {
      throw NotFoundError(where + ": no training document with id '" + id +
                          "' (nothing was forgotten)");
    }
    const bool repeated = std::any_of(records.begin(), records.end(),
                                      [&](const JournalRecord& r) { return r.id == id; });
    if (repeated) continue;
    JournalRecord record;
    record.kind = JournalRecord::Kind::kForget;
    record.id = id;
    records.push_back(std::move(record));
  }
  journal(records, sync);
  for (const JournalRecord& record : records) {
    live_index_->forget(record.id);
    live_models_->forget(record.id);
  }
  status_.forgotten_now += records.size();
}

void Categorizer::add_warning(std::string warning) const {
  std::lock_guard<std::mutex> lock(warnings_mutex_);
  status_.warnings.push_back(std::move(warning));
}

std::vector<std::string> Categorizer::take_warnings() const {
  std::lock_guard<std::mutex> lock(warnings_mutex_);
  std::vector<std::string> fresh(status_.warnings.begin() + static_cast<ptrdiff_t>(warnings_taken_),
                                 status_.warnings.end());
  warnings_taken_ = status_.warnings.size();
  return fresh;
}

LiveStatus Categorizer::live_status() const {
  knn_index();
  std::lock_guard<std::mutex> lock(learn_mutex_);
  LiveStatus status;
  {
    std::lock_guard<std::mutex> warnings_lock(warnings_mutex_);
    status = status_;
  }
  status.learned_present = live_index_->learned_docs();
  status.forgotten_base = live_index_->forgotten_docs();
  return status;
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

bool Categorizer::gives_probabilities(Method method) const {
  const auto slot = static_cast<size_t>(method);
  const bool calibrated = slot < model_.calibration.size() && !model_.calibration[slot].empty();
  return calibrated || (method == Method::kCombo && !model_.combo.empty()) ||
         internal::gives_probabilities(method);
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
  if (options.k < 0) throw InvalidArgumentError("k must be at least 1 (or 0: the model's k)");
  std::vector<double> result(model_.categories.size(), 0.0);
  // No known term means no evidence: every method says so with all zeros
  // rather than, say, Naive Bayes falling back to the priors.
  if (doc.terms.empty()) return result;
  const Method chosen = method(options);
  classifier(chosen).score(doc, options, &result);
  // combo's scores are calibrated already; the others are mapped here, so
  // a score means a probability whatever the method (when the model has
  // calibrations: trained with tuning, format version 4 or later).
  const auto slot = static_cast<size_t>(chosen);
  if (chosen != Method::kCombo && slot < model_.calibration.size()) {
    apply_calibration(model_.calibration[slot], decision_mode(options), &result);
  }
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

Decision Categorizer::decision_mode(const ClassifyOptions& options) const {
  return options.decision.value_or(model_.decision);
}

bool Categorizer::other_enabled(const ClassifyOptions& options) const {
  return options.other.value_or(model_.has_unlabelled);
}

Method Categorizer::method(const ClassifyOptions& options) const {
  return options.method.value_or(default_method());
}

uint32_t Categorizer::most_frequent_category() const {
  const auto& counts = model_.category_doc_counts;
  // Ties go to the first name, as ranked() orders equal scores.
  return static_cast<uint32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
}

std::vector<Category> Categorizer::decide(const std::vector<double>& scores,
                                          const ClassifyOptions& options) const {
  return decide_with(scores, options, /*explain=*/false).assigned;
}

DecisionTrace Categorizer::explain_decision(const std::vector<double>& scores,
                                            const ClassifyOptions& options) const {
  return decide_with(scores, options, /*explain=*/true);
}

namespace {

std::string score_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

}  // namespace

DecisionTrace Categorizer::decide_with(const std::vector<double>& scores,
                                       const ClassifyOptions& options, bool explain) const {
  DecisionTrace trace;
  trace.method = method(options);
  trace.mode = decision_mode(options);
  trace.other = trace.mode == Decision::kOneOf && other_enabled(options);
  trace.min_score = options.min_score;
  const auto slot = static_cast<size_t>(trace.method);
  const bool uses_thresholds = trace.mode == Decision::kAnyOf || trace.other;
  trace.tuned = uses_thresholds && options.tuned_thresholds && slot < model_.thresholds.size() &&
                !model_.thresholds[slot].empty();
  const size_t limit =
      trace.mode == Decision::kOneOf ? 1 : static_cast<size_t>(std::max(options.max_categories, 1));
  const bool radius = trace.method == Method::kRocchio;

  // Category indexes best score first; ties keep name order, as ranked() does.
  std::vector<uint32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
  bool capped = false;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t c = order[i];
    const double score = scores[c];
    // Without a trace to fill, stop once nothing more can be assigned.
    if (!explain && (score <= 0.0 || trace.assigned.size() == limit)) break;
    double threshold = options.min_score;
    if (trace.tuned) threshold = std::max(threshold, model_.thresholds[slot][c]);
    bool passes = score > 0.0 && score >= threshold;
    if (!uses_thresholds && i > 0) passes = false;  // plain one-of: the best or nothing
    const bool assigned = passes && trace.assigned.size() < limit;
    if (assigned) trace.assigned.push_back(Category{model_.categories[c], score});
    capped = capped || (passes && !assigned);
    if (explain && trace.candidates.size() < std::max<size_t>(5, trace.assigned.size())) {
      trace.candidates.push_back({model_.categories[c], score, threshold, assigned});
    }
  }
  // Plain one-of promises a category for every document: with no positive
  // score, the best score if the scores tell categories apart at all,
  // else (no known term, all scores equal) the most frequent training
  // category.
  enum class Fallback { kNone, kBestScore, kPrior } fallback = Fallback::kNone;
  if (trace.mode == Decision::kOneOf && !trace.other && options.min_score <= 0.0 &&
      trace.assigned.empty() && !order.empty()) {
    uint32_t chosen = order.front();
    fallback = Fallback::kBestScore;
    if (!(scores[order.front()] > scores[order.back()])) {
      fallback = Fallback::kPrior;
      chosen = most_frequent_category();
    }
    trace.assigned.push_back(Category{model_.categories[chosen], scores[chosen]});
    if (explain) {
      bool listed = false;
      for (auto& candidate : trace.candidates) {
        if (candidate.name == model_.categories[chosen]) candidate.assigned = listed = true;
      }
      if (!listed) {
        trace.candidates.insert(trace.candidates.begin(),
                                {model_.categories[chosen], scores[chosen], 0.0, true});
      }
    }
  }
  if (!explain) return trace;
  if (fallback == Fallback::kPrior) {
    trace.reason = "no evidence (no known term, or every score " +
                   score_text(scores[order.front()]) +
                   "): the most frequent training category, as one-of assigns one";
    return trace;
  }
  if (fallback == Fallback::kBestScore) {
    trace.reason = "best score (none above 0; one-of assigns one)";
    return trace;
  }
  const DecisionTrace::Candidate* best_rejected = nullptr;
  for (const auto& candidate : trace.candidates) {
    if (!candidate.assigned) {
      best_rejected = &candidate;
      break;
    }
  }

  const std::string what_threshold =
      trace.tuned ? (radius ? "its radius" : "its threshold") : "the minimum score";
  if (order.empty() || scores[order.front()] <= 0.0) {
    trace.reason = "no category scored above 0 (no evidence)";
  } else if (!trace.assigned.empty()) {
    if (trace.mode == Decision::kAnyOf) {
      const bool one = trace.assigned.size() == 1;
      const std::string own = one ? "its" : "their";
      trace.reason = std::to_string(trace.assigned.size()) +
                     (one ? " category reached " : " categories reached ") +
                     (trace.tuned ? own + (radius ? " radius" : " threshold") : what_threshold);
      if (capped) trace.reason += "; capped at " + std::to_string(limit);
    } else if (trace.other && trace.assigned.front().name != trace.candidates.front().name) {
      trace.reason = "best-scoring category within " + what_threshold + "; " +
                     trace.candidates.front().name + " scored higher but not enough";
    } else {
      trace.reason = trace.other ? "best score, within " + what_threshold : "best score";
    }
  } else {
    const std::string outcome = trace.other ? "other" : "none";
    std::string best;
    if (best_rejected) {
      const bool never = best_rejected->threshold >= kNeverAssign;
      best = "; the best, " + best_rejected->name + ", scored " + score_text(best_rejected->score) +
             (never ? " but too few training examples calibrate it"
                    : " < " + score_text(best_rejected->threshold));
    }
    if (trace.mode == Decision::kOneOf && !trace.other) {
      trace.reason = "none: the best category is under the minimum score" + best;
    } else {
      trace.reason = outcome + ": no category reached " + what_threshold + best;
    }
  }
  return trace;
}

std::vector<Category> Categorizer::classify(std::string_view text,
                                            const ClassifyOptions& options) const {
  const DocumentTerms doc = document_terms(analyzer_->analyze(text));
  return decide(scores(doc, options), options);
}

}  // namespace autocat::internal
