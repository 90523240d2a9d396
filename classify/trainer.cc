#include "classify/trainer.h"

#include <unicode/uversion.h>

#include <chrono>
#include <filesystem>
#include <functional>

#include "autocat/error.h"
#include "classify/feature_selection.h"
#include "classify/naive_bayes.h"
#include "classify/rocchio.h"
#include "classify/thresholds.h"
#include "classify/weighting.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Labels become Xapian terms and lines of the category value slot: they must
// be non-empty, free of control characters and short enough for a term.
void check_label(const std::string& label, const std::string& source) {
  if (label.empty()) throw InvalidArgumentError(source + ": empty label");
  if (label.size() > 200) {
    throw InvalidArgumentError(source + ": label longer than 200 bytes: " + label.substr(0, 40) +
                               "...");
  }
  for (unsigned char ch : label) {
    if (ch < 0x20 || ch == 0x7f) {
      throw InvalidArgumentError(source + ": label contains a control character");
    }
  }
}

}  // namespace

ModelState fit_model(const TrainingCorpus& corpus, const AnalyzerSettings& analyzer,
                     const TrainOptions& options) {
  if (options.nb_alpha <= 0) throw InvalidArgumentError("--alpha must be greater than 0");
  if (options.knn_similarity_power < 0 || options.knn_similarity_power > 2) {
    throw InvalidArgumentError("kNN similarity power must be 1 or 2 (0: cross-validate)");
  }
  ModelState model;
  model.analyzer = analyzer;
  model.training = options;
  model.categories = corpus.categories;
  model.category_doc_counts = corpus.category_doc_counts();
  model.num_docs = corpus.num_docs();
  model.num_postings = corpus.posting_doc.size();
  model.terms = corpus.terms;
  model.df = corpus.df;
  model.icu_version = U_ICU_VERSION;
  bool multi_label = false;
  for (const std::vector<uint32_t>& labels : corpus.doc_categories) {
    model.has_unlabelled = model.has_unlabelled || labels.empty();
    multi_label = multi_label || labels.size() != 1;
  }
  model.decision = options.decision.value_or(multi_label ? Decision::kAnyOf : Decision::kOneOf);

  if (options.feature_selection != FeatureSelection::kNone && options.num_features > 0) {
    const std::vector<double> utility = term_class_utility(corpus, options.feature_selection);
    model.selected = select_features(utility, corpus.num_terms(), corpus.num_categories(),
                                     options.num_features, options.features_per_category);
  }
  // Cross-validation first: it may choose Rocchio's gamma and kNN's k.
  TunedSettings tuned = tune_settings(corpus, analyzer, options, model.decision);
  model.thresholds = std::move(tuned.thresholds);
  model.knn_k = tuned.knn_k;
  model.knn_similarity_power = tuned.knn_similarity_power;
  model.rocchio_gamma = tuned.rocchio_gamma;
  model.knn_objective = std::move(tuned.knn_objective);
  model.rocchio_gamma_objective = std::move(tuned.rocchio_gamma_objective);

  const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
  model.rocchio = train_rocchio(corpus, idf, model.rocchio_gamma);
  model.multinomial_nb = train_multinomial_nb(corpus, model.selected, options.nb_alpha);
  model.bernoulli_nb = train_bernoulli_nb(corpus, model.selected, options.nb_alpha);
  model.complement_nb = train_complement_nb(corpus, model.selected, options.nb_alpha);
  return model;
}

namespace {

// Removes a directory when it goes out of scope, unless released: the
// half-built collection of a failed run does not stay behind.
class RemoveOnFailure {
 public:
  explicit RemoveOnFailure(fs::path path) : path_(std::move(path)) {}
  ~RemoveOnFailure() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  RemoveOnFailure(const RemoveOnFailure&) = delete;
  RemoveOnFailure& operator=(const RemoveOnFailure&) = delete;
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

// Reads, analyzes and adds the documents of `inputs` to `writer`. Returns
// the number of labelled documents added.
uint64_t add_documents(const std::vector<std::string>& inputs, const ReadOptions& read_options,
                       const Analyzer& analyzer, bool keep_unlabelled,
                       TrainingCollectionWriter* writer, TrainReport* report,
                       const WarningCallback& on_warning) {
  uint64_t labelled = 0;
  std::vector<Token> tokens;
  read_documents(
      inputs, read_options,
      [&](InputDocument&& doc) {
        if (doc.labels.empty() && !keep_unlabelled) {
          ++report->skipped_unlabelled;
          return;
        }
        for (const std::string& label : doc.labels) check_label(label, doc.source);
        tokens.clear();
        analyzer.analyze(doc.text, &tokens);
        if (tokens.empty()) {
          ++report->skipped_empty;
          if (on_warning) on_warning(doc.source + ": skipped: no terms after analysis");
          return;
        }
        writer->add(doc.id, tokens, doc.labels);
        ++report->added;
        if (!doc.labels.empty()) ++labelled;
      },
      on_warning);
  writer->commit();
  return labelled;
}

// Runs after fit_model() on the loaded corpus and may refine the model (EM).
using RefineModel = std::function<void(const TrainingCorpus&, ModelState*)>;

// Fits every classifier from the collection at `new_db`, swaps it in as the
// model's training collection and writes the model file.
void fit_and_install(const fs::path& model_dir, const fs::path& new_db,
                     const AnalyzerSettings& settings, const TrainOptions& options,
                     TrainReport* report, const RefineModel& refine = nullptr) {
  const auto fit_start = Clock::now();
  ModelState model;
  {
    const Xapian::Database db(new_db.string());
    report->documents = db.get_doccount();
    const TrainingCorpus corpus = load_training_corpus(db);
    model = fit_model(corpus, settings, options);
    if (refine) refine(corpus, &model);
  }
  report->fit_seconds = seconds_since(fit_start);

  std::error_code ec;
  const fs::path final_db = model_dir / kTrainingDbName;
  fs::remove_all(final_db, ec);
  fs::rename(new_db, final_db, ec);
  if (ec) {
    throw IOError(final_db.string() +
                  ": cannot move the training database in place: " + ec.message());
  }
  write_model_file((model_dir / kModelFileName).string(), model);

  report->categories = static_cast<uint32_t>(model.categories.size());
  report->default_method = options.default_method;
  report->decision = model.decision;
  report->knn_k = model.knn_k;
  report->knn_similarity_power = model.knn_similarity_power;
  report->rocchio_gamma = model.rocchio_gamma;
  report->tuned = !model.thresholds.empty();
  report->knn_objective = model.knn_objective;
  report->rocchio_gamma_objective = model.rocchio_gamma_objective;
  report->never_assigned.assign(model.thresholds.size(), {});
  for (size_t method = 0; method < model.thresholds.size(); ++method) {
    for (size_t c = 0; c < model.thresholds[method].size(); ++c) {
      if (model.thresholds[method][c] >= kNeverAssign) {
        report->never_assigned[method].push_back(model.categories[c]);
      }
    }
  }
  report->terms = static_cast<uint32_t>(model.terms.size());
  report->selected_terms = report->terms;
  if (!model.selected.empty()) {
    report->selected_terms = 0;
    for (uint8_t flag : model.selected) report->selected_terms += flag ? 1 : 0;
  }
}

// Semi-supervised EM: reads `unlabelled` (labels ignored) onto the corpus'
// vocabulary and replaces the model's multinomial NB with EM's.
void fit_unlabelled(const UnlabelledInputs& unlabelled, const ReadOptions& read_options,
                    const Analyzer& analyzer, const TrainingCorpus& corpus, ModelState* model,
                    TrainReport* report, const WarningCallback& on_warning) {
  const Vocabulary vocabulary(corpus.terms);
  std::vector<DocumentTerms> docs;
  std::vector<Token> tokens;
  read_documents(
      unlabelled.inputs, read_options,
      [&](InputDocument&& doc) {
        ++report->unlabelled_read;
        tokens.clear();
        analyzer.analyze(doc.text, &tokens);
        docs.push_back(make_document_terms(vocabulary, tokens));
      },
      on_warning);
  EmResult em = train_multinomial_nb_em(corpus, docs, model->selected, model->training.nb_alpha,
                                        unlabelled.em);
  model->multinomial_nb = std::move(em.model);
  model->em = em.report;
  report->em = std::move(em.report);
}

}  // namespace

TrainReport train_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                        const TrainOptions& options, const ReadOptions& read_options,
                        const WarningCallback& on_warning, const UnlabelledInputs& unlabelled) {
  const auto start = Clock::now();
  TrainReport report;
  const AnalyzerSettings settings = resolve_analyzer_options(options.analyzer);
  const Analyzer analyzer(settings);

  std::error_code ec;
  fs::create_directories(model_dir, ec);
  if (ec) throw IOError(model_dir + ": cannot create model directory: " + ec.message());
  // The new collection is built beside the old one and swapped in only once
  // training has succeeded, so a failed run leaves the old model working.
  const fs::path new_db = fs::path(model_dir) / (kTrainingDbName + ".new");
  fs::remove_all(new_db, ec);
  RemoveOnFailure cleanup(new_db);

  uint64_t labelled = 0;
  {
    TrainingCollectionWriter writer(new_db.string(), options.commit_batch);
    labelled = add_documents(inputs, read_options, analyzer, options.keep_unlabelled, &writer,
                             &report, on_warning);
  }
  report.analyze_seconds = seconds_since(start);
  if (labelled == 0) {
    throw InvalidArgumentError(
        "no labelled document with text in the input; JSON Lines records need a non-empty "
        "\"labels\" array, folder trees need one subfolder per category");
  }
  RefineModel run_em;
  if (!unlabelled.inputs.empty()) {
    run_em = [&](const TrainingCorpus& corpus, ModelState* model) {
      fit_unlabelled(unlabelled, read_options, analyzer, corpus, model, &report, on_warning);
    };
  }
  fit_and_install(model_dir, new_db, settings, options, &report, run_em);
  cleanup.release();
  report.total_seconds = seconds_since(start);
  return report;
}

TrainReport add_to_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                         const ReadOptions& read_options, const WarningCallback& on_warning) {
  const auto start = Clock::now();
  const fs::path dir(model_dir);
  const fs::path model_file = dir / kModelFileName;
  const fs::path old_db = dir / kTrainingDbName;
  std::error_code ec;
  if (!fs::exists(model_file, ec) || !fs::is_directory(old_db, ec)) {
    throw NotFoundError(model_dir +
                        ": no model here to add to; train one with: autocat train "
                        "--model " +
                        model_dir + " INPUT...");
  }
  // Settings come from the model, so new documents are analyzed and the
  // classifiers fitted exactly as before.
  const ModelState old_model = read_model_file(model_file.string());
  const TrainOptions& options = old_model.training;
  const Analyzer analyzer(old_model.analyzer);

  // Add to a copy, so a failed run leaves the model as it was.
  const fs::path new_db = dir / (kTrainingDbName + ".new");
  fs::remove_all(new_db, ec);
  RemoveOnFailure cleanup(new_db);
  fs::copy(old_db, new_db, fs::copy_options::recursive, ec);
  if (ec) throw IOError(new_db.string() + ": cannot copy the training database: " + ec.message());
  // A copy taken while another process held the lock carries its lock file.
  fs::remove(new_db / "flintlock", ec);

  TrainReport report;
  {
    TrainingCollectionWriter writer(new_db.string(), options.commit_batch, /*overwrite=*/false);
    add_documents(inputs, read_options, analyzer, options.keep_unlabelled, &writer, &report,
                  on_warning);
  }
  report.analyze_seconds = seconds_since(start);
  if (report.added == 0) {
    throw InvalidArgumentError("no document with text to add; " + model_dir + " is unchanged");
  }
  fit_and_install(dir, new_db, old_model.analyzer, options, &report);
  cleanup.release();
  report.total_seconds = seconds_since(start);
  return report;
}

}  // namespace autocat::internal
