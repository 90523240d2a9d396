#include "classify/train/trainer.h"

#include <unicode/uversion.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <future>
#include <iterator>
#include <optional>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>  // malloc_trim
#endif

#include "autocat/error.h"
#include "classify/corpus/feature_selection.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/io/atomic_file.h"
#include "classify/io/journal.h"
#include "classify/io/json_text.h"
#include "classify/io/model_dir.h"
#include "classify/methods/knn.h"
#include "classify/methods/linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"
#include "classify/train/thresholds.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Labels become Xapian terms and lines of the category value slot: they must
// be non-empty, free of control characters, UTF-8 (as every output and the
// Python module read them) and short enough for a term.
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
  if (!is_valid_utf8(label)) {
    throw InvalidArgumentError(source + ": label \"" + printable(label) + "\" is not valid UTF-8");
  }
}

// Reports training's phases to a TrainProgressCallback and records each in
// TrainReport::phases as it ends. One phase at a time: begin() ends the one
// before. Not thread-safe; tune_settings() calls tune_progress()'s callback
// from one thread at a time.
class PhaseTracker {
 public:
  PhaseTracker(const TrainProgressCallback& on_progress, TrainReport* report)
      : on_progress_(on_progress), report_(report) {}

  void begin(const std::string& phase, const std::string& unit = {}, uint64_t total = 0,
             const std::string& detail = {}) {
    end();
    progress_ = TrainProgress();
    progress_.phase = phase;
    progress_.unit = unit;
    progress_.total = total;
    progress_.detail = detail;
    detail_ = detail;
    start_ = Clock::now();
    open_ = true;
    notify();
  }
  void advance(uint64_t done) {
    progress_.done = done;
    notify();
  }
  void advance(uint64_t done, uint64_t total, const std::string& detail) {
    progress_.total = total;
    progress_.detail = detail;
    advance(done);
  }
  // Ends the phase begun last, if not ended yet.
  void end() {
    if (!open_) return;
    open_ = false;
    progress_.finished = true;
    progress_.detail = detail_;
    notify();
    report_->phases.push_back(
        {progress_.phase, detail_, progress_.unit, progress_.done, progress_.seconds});
  }
  // Progress of a tune_settings() run in this phase; each step is named
  // after `prefix`, if any.
  TuneProgressCallback tune_progress(const std::string& prefix = {}) {
    return [this, prefix](uint64_t done, uint64_t total, const std::string& step) {
      advance(done, total, prefix.empty() ? step : prefix + ": " + step);
    };
  }

 private:
  void notify() {
    progress_.seconds = seconds_since(start_);
    if (on_progress_) on_progress_(progress_);
  }

  const TrainProgressCallback& on_progress_;
  TrainReport* report_;
  TrainProgress progress_;
  std::string detail_;  // the phase's own, as begun
  Clock::time_point start_;
  bool open_ = false;
};

}  // namespace

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
  if (!(options.nb_alpha >= 0) || !std::isfinite(options.nb_alpha)) {
    throw InvalidArgumentError("--alpha must be greater than 0 (0: cross-validate)");
  }
  if (options.svm_c < 0 || options.logreg_c < 0) {
    throw InvalidArgumentError("C of svm / logreg must be greater than 0 (0: cross-validate)");
  }
  if (!std::isfinite(options.knn_concentration) || options.knn_concentration > 4) {
    throw InvalidArgumentError(
        "kNN concentration must be between 0 and 4 (negative: cross-validate)");
  }
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
    tuned = tune_settings(sample.corpus, options, model.decision);
  } else {
    model.tuned_on_documents = options.tune_thresholds ? corpus.num_docs() : 0;
    tuned = tune_settings(corpus, options, model.decision);
  }
  model.tuned_copied_documents = tuned.copied_documents;
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
  if (options.choose_default_method && !model.thresholds.empty()) {
    // Ties keep the earlier method in all_methods() order.
    const auto best =
        std::max_element(model.method_objective.begin(), model.method_objective.end());
    if (best != model.method_objective.end() && *best >= 0) {
      model.training.default_method =
          all_methods()[static_cast<size_t>(best - model.method_objective.begin())];
    }
  }

  const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
  model.knn_concentration = tuned.knn_concentration;
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
  if (fit_linear) {
    fit_linear_models(make_linear_problem(corpus, idf), corpus, &model, part_fitted);
  }
  return model;
}

void fit_linear_models(const LinearProblem& problem, const TrainingCorpus& corpus,
                       ModelState* model, const PartFitted& part_fitted) {
  const auto fit = [&](LinearLoss loss, LinearModel* linear, ModelPart part) {
    // Every core: this is the longest fit at scale (cross-validation runs
    // its folds in parallel instead).
    LinearModel fitted = std::move(
        train_linear_path(problem, corpus, loss, {linear->c}, std::thread::hardware_concurrency())
            .front());
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

namespace {

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
      return std::vector<float>().swap(model->multinomial_nb.term_weight);
    case ModelPart::kBernoulliNb:
      return std::vector<float>().swap(model->bernoulli_nb.term_weight);
    case ModelPart::kComplementNb:
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

// Documents read and checked, waiting to be analyzed, then their tokens.
struct TrainingChunk {
  std::vector<InputDocument> documents;
  std::vector<std::vector<Token>> tokens;  // per document, filled by analyze_chunk
};

void analyze_chunk(const Analyzer& analyzer, TrainingChunk* chunk) {
  chunk->tokens.resize(chunk->documents.size());
  for (size_t i = 0; i < chunk->documents.size(); ++i) {
    analyzer.analyze(chunk->documents[i].text, &chunk->tokens[i]);
    // The text is not needed any more; drop it so a chunk in flight holds
    // only its terms.
    std::string().swap(chunk->documents[i].text);
  }
}

// The texts train keeps while it reads, to analyze them again for the
// choice of analysis of short texts (TrainOptions::
// choose_short_text_analysis); given up past kMaxKeptTextBytes or
// `max_documents`.
struct KeptTexts {
  struct Text {
    std::string id;
    std::vector<std::string> labels;
    std::string text;
  };
  std::vector<Text> texts;
  size_t bytes = 0;
  size_t max_documents = 0;
  bool complete = true;  // every document written is in `texts`
  uint64_t written = 0;  // documents written to the collection
  uint64_t tokens = 0;   // their tokens

  void keep(const InputDocument& doc);
  double mean_tokens() const { return written == 0 ? 0.0 : double(tokens) / double(written); }
};

// Short texts take little memory: 64 MB is a million tweets.
constexpr size_t kMaxKeptTextBytes = size_t{64} << 20;

void KeptTexts::keep(const InputDocument& doc) {
  if (!complete) return;
  bytes += doc.id.size() + doc.text.size();
  for (const std::string& label : doc.labels) bytes += label.size();
  if (bytes > kMaxKeptTextBytes || texts.size() >= max_documents) {
    complete = false;
    std::vector<Text>().swap(texts);
    return;
  }
  texts.push_back({doc.id, doc.labels, doc.text});
}

// Documents per chunk: large enough that handing a chunk between threads
// costs nothing, small enough that the two chunks in flight stay small.
constexpr size_t kTrainingChunkDocuments = 256;

// Reads, analyzes and adds the documents of `inputs` to `writer`. Returns
// the number of labelled documents added. Reading and writing the training
// database run on this thread while another thread analyzes the next chunk:
// on 2 cores the Xapian writes and the ICU analysis take about the same
// time, so this overlaps them. Documents are written in input order, so the
// collection is the same as with one thread.
uint64_t add_documents(const std::vector<std::string>& inputs, const ReadOptions& read_options,
                       const Analyzer& analyzer, bool keep_unlabelled,
                       TrainingCollectionWriter* writer, TrainReport* report,
                       const WarningCallback& on_warning, PhaseTracker* phases,
                       KeptTexts* kept = nullptr) {
  uint64_t labelled = 0;
  uint64_t read = 0;
  TrainingChunk chunk;
  std::future<TrainingChunk> pending;
  auto write_pending = [&]() {
    if (!pending.valid()) return;
    const TrainingChunk analyzed = pending.get();
    for (size_t i = 0; i < analyzed.documents.size(); ++i) {
      const InputDocument& doc = analyzed.documents[i];
      if (analyzed.tokens[i].empty()) {
        ++report->skipped_empty;
        if (on_warning) on_warning(doc.source + ": skipped: no terms after analysis");
        continue;
      }
      writer->add(doc.id, analyzed.tokens[i], doc.labels);
      if (kept) {
        ++kept->written;
        kept->tokens += analyzed.tokens[i].size();
      }
      ++report->added;
      if (!doc.labels.empty()) ++labelled;
    }
  };
  auto submit_chunk = [&]() {
    if (chunk.documents.empty()) return;
    auto next = std::async(std::launch::async, [&analyzer, taken = std::move(chunk)]() mutable {
      analyze_chunk(analyzer, &taken);
      return std::move(taken);
    });
    chunk = TrainingChunk();
    write_pending();
    pending = std::move(next);
  };
  read_documents(
      inputs, read_options,
      [&](InputDocument&& doc) {
        phases->advance(++read);
        // "labels": [] says "none of these categories"; no labels at all
        // says nothing, unless keep_unlabelled reads it the same way.
        if (doc.labels.empty() && !doc.labels_given && !keep_unlabelled) {
          ++report->skipped_unlabelled;
          return;
        }
        for (const std::string& label : doc.labels) check_label(label, doc.source);
        if (kept) kept->keep(doc);
        chunk.documents.push_back(std::move(doc));
        if (chunk.documents.size() >= kTrainingChunkDocuments) submit_chunk();
      },
      on_warning);
  submit_chunk();
  write_pending();
  writer->commit();
  return labelled;
}

// Runs after fit_model() on the loaded corpus and may refine the model (EM).
using RefineModel = std::function<void(const TrainingCorpus&, ModelState*)>;

// Fits every classifier from the collection the writer's new generation
// holds, writes the model file beside it and installs the generation.
// `tuned`: settings cross-validated already on this collection, if any.
void fit_and_install(ModelDirWriter* writer, const AnalyzerSettings& settings,
                     const TrainOptions& options, TrainReport* report, PhaseTracker* phases,
                     const RefineModel& refine = nullptr,
                     std::optional<SampleTuning> tuned = std::nullopt) {
  const auto fit_start = Clock::now();
  const bool kept = tuned && tuned->kept;
  ModelState model;
  {
    const Xapian::Database db(writer->next().training_db);
    report->documents = db.get_doccount();
    // A large collection is cross-validated on a sample (see fit_model),
    // read and tuned before the whole corpus is loaded, so that the
    // cross-validation's memory and the corpus's are never needed at once.
    std::optional<SampleTuning> sample_tuning = std::move(tuned);
    if (!sample_tuning && options.tune_thresholds && options.tuning_sample > 0) {
      const auto max_docs = static_cast<uint32_t>(options.tuning_sample);
      std::vector<uint8_t> keep;
      Decision decision = Decision::kOneOf;
      {
        const TrainingCorpus labels = load_training_labels(db);
        if (labels.num_docs() > max_docs) {
          keep = tuning_sample(labels, max_docs, /*seed=*/1);
          decision = model_decision(labels, options);
        }
      }
      if (!keep.empty()) {
        const std::string sample_of =
            "a sample of " +
            std::to_string(std::count_if(keep.begin(), keep.end(), [](uint8_t k) { return k; })) +
            " documents";
        phases->begin("cross-validate", "fits", 0, sample_of);
        const TrainingCorpus sample = load_training_corpus(db, keep);
        sample_tuning =
            SampleTuning{tune_settings(sample, options, decision, phases->tune_progress(sample_of)),
                         sample.num_docs()};
        if (!sample_tuning->settings.thresholds.empty()) ++report->cross_validations;
      }
      release_free_memory();
    }
    phases->begin("load collection");
    TrainingCorpus corpus = load_training_corpus(db);
    if (!sample_tuning && options.tune_thresholds) {
      // Cross-validation here rather than in fit_model(), as its own phase.
      phases->begin("cross-validate", "fits");
      sample_tuning = SampleTuning{
          tune_settings(corpus, options, model_decision(corpus, options), phases->tune_progress()),
          corpus.num_docs()};
      if (!sample_tuning->settings.thresholds.empty()) ++report->cross_validations;
    }
    phases->begin("fit", "models", kNumModelParts);
    uint64_t parts_written = 0;
    const std::string model_file = writer->next().model_file;
    // Each method's part goes to the model file as soon as it is fitted and
    // its weights are dropped, keeping what the report reads: at a million
    // documents each part is 0.2 GB, and only one lives at a time.
    const auto write_and_drop = [&](const WritePart& write_part) {
      return [&write_part, &refine, &parts_written, phases](ModelPart part, ModelState* fitted) {
        // EM refits multinomial NB after the fits: written after it.
        if (refine && part == ModelPart::kMultinomialNb) return;
        write_part(part, *fitted);
        drop_part_weights(part, fitted);
        phases->advance(++parts_written, kNumModelParts, model_part_name(part));
      };
    };
    std::vector<float> idf;  // the model's; the linear fits' and kNN's
    write_model_file_as_fitted(model_file, [&](const WritePart& write_part) -> const ModelState& {
      model = fit_model(corpus, settings, options, /*fit_linear=*/false, write_and_drop(write_part),
                        sample_tuning ? &*sample_tuning : nullptr);
      if (refine) {
        refine(corpus, &model);
        write_part(ModelPart::kMultinomialNb, model);
        drop_part_weights(ModelPart::kMultinomialNb, &model);
        phases->advance(++parts_written, kNumModelParts, "nb (EM)");
      }
      release_free_memory();
      // The linear methods fit on a document-major copy of the postings:
      // the corpus's own wait on disk meanwhile.
      idf = compute_idf(model.df, model.num_docs, model.selected);
      SpilledPostings spilled(&corpus, fs::path(model_file).parent_path().string());
      {
        const LinearProblem problem = make_linear_problem(
            corpus.num_docs(), idf,
            [&](const TermPostingsVisitor& visit) { spilled.for_each_term_postings(visit); });
        fit_linear_models(problem, corpus, &model, write_and_drop(write_part));
      }
      spilled.restore();
      crash_point("fitted");  // the model file not in place yet
      return model;
    });
    report->fit_seconds = seconds_since(fit_start);
    crash_point("model-written");
    phases->begin("write");
    report->nb_alpha = {model.multinomial_nb.alpha, model.bernoulli_nb.alpha,
                        model.complement_nb.alpha};
    report->nb_tfidf = {model.multinomial_nb.tfidf(), model.bernoulli_nb.tfidf(),
                        model.complement_nb.tfidf()};
    report->svm_c = model.svm.c;
    report->logreg_c = model.logreg.c;
    // kNN's postings as classification reads them, so that loading the
    // model maps them instead of rebuilding them; written as they are
    // computed, never held in memory beside the corpus.
    write_knn_index(corpus, model.knn_weights(idf), writer->next().knn_index);
  }
  writer->install();
  phases->end();

  report->categories = static_cast<uint32_t>(model.categories.size());
  report->default_method = model.training.default_method;
  report->decision = model.decision;
  report->knn_k = model.knn_k;
  report->ngrams = model.analyzer.ngrams;
  report->stemmer = model.analyzer.stemmer;
  report->default_method_chosen =
      model.training.choose_default_method && !model.method_objective.empty() &&
      *std::max_element(model.method_objective.begin(), model.method_objective.end()) >= 0;
  report->method_objective = model.method_objective;
  report->nb_alpha_objective = model.nb_alpha_objective;
  report->knn_similarity_power = model.knn_similarity_power;
  report->knn_concentration = model.knn_concentration;
  report->rocchio_gamma = model.rocchio_gamma;
  report->tuned = !model.thresholds.empty();
  report->settings_kept = kept;
  report->tuned_on_documents = report->tuned ? model.tuned_on_documents : 0;
  report->tuned_on_sample = report->tuned && !kept && model.tuned_on_documents < model.num_docs;
  report->tuned_copied_documents = report->tuned ? model.tuned_copied_documents : 0;
  report->threshold_folds = std::max(model.training.threshold_folds, 2);
  report->knn_objective = model.knn_objective;
  report->rocchio_gamma_objective = model.rocchio_gamma_objective;
  report->never_assigned.assign(model.thresholds.size(), {});
  for (size_t method = 0; method < model.thresholds.size(); ++method) {
    for (size_t c = 0; c < model.thresholds[method].size(); ++c) {
      if (model.thresholds[method][c] >= kNeverAssign) {
        const uint32_t documents =
            c < model.category_doc_counts.size() ? model.category_doc_counts[c] : 0;
        report->never_assigned[method].push_back(
            {model.categories[c], documents, documents < kMinPositives});
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

// What the analyses of short texts compete on: the default method's
// cross-validated objective, or the best method's when cross-validation
// chooses the default (as fit_model() does).
double analysis_objective(const TunedSettings& tuned, const TrainOptions& options) {
  const std::vector<double>& objectives = tuned.method_objective;
  if (objectives.empty()) return -1.0;
  if (options.choose_default_method) return *std::max_element(objectives.begin(), objectives.end());
  const auto slot = static_cast<size_t>(options.default_method);
  return slot < objectives.size() ? objectives[slot] : -1.0;
}

// A candidate must beat the given analysis by more than this: less is
// within cross-validation's noise at some thousands of documents, and not
// worth the bigger model.
constexpr double kMinAnalysisGain = 0.002;

std::string analysis_name(const AnalyzerSettings& settings) {
  std::string name = settings.stemmer == "none" ? "words" : "stems (" + settings.stemmer + ")";
  if (settings.ngrams > 1) name += settings.ngrams == 2 ? " and bigrams" : " and trigrams";
  return name;
}

struct AnalysisChoice {
  AnalyzerSettings settings;
  SampleTuning tuning;  // the chosen analysis' cross-validation
};

TunedSettings tune_collection(const std::string& training_db, const TrainOptions& options,
                              uint64_t* documents, TrainReport* report, PhaseTracker* phases,
                              const std::string& analysis) {
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(training_db));
  *documents = corpus.num_docs();
  TunedSettings tuned = tune_settings(corpus, options, model_decision(corpus, options),
                                      phases->tune_progress(analysis));
  if (!tuned.thresholds.empty()) ++report->cross_validations;
  return tuned;
}

// Cross-validates the kept texts under the given analysis (its collection
// is at `training_db` already) and under the candidates with bigrams,
// English stemming or both; leaves the winner's collection at
// `training_db`.
AnalysisChoice choose_analysis(const KeptTexts& kept, const AnalyzerSettings& given,
                               const TrainOptions& options, const std::string& training_db,
                               TrainReport* report, PhaseTracker* phases) {
  AnalysisChoice best{given, {}};
  phases->begin("compare analyses", "fits", 0, analysis_name(given));
  best.tuning.settings = tune_collection(training_db, options, &best.tuning.documents, report,
                                         phases, analysis_name(given));
  const double given_objective = analysis_objective(best.tuning.settings, options);
  double best_objective = given_objective;
  report->analysis_objective.emplace_back(analysis_name(given), given_objective);
  const std::string candidate_db =
      (fs::path(training_db).parent_path() / kCandidateDbName).string();
  for (const char* stemmer : {"none", "english"}) {
    for (int ngrams : {1, 2}) {
      AnalyzerSettings settings = given;
      settings.stemmer = stemmer;
      settings.ngrams = ngrams;
      if (settings.stemmer == given.stemmer && settings.ngrams == given.ngrams) continue;
      phases->begin("compare analyses", "fits", 0, analysis_name(settings));
      {
        const Analyzer analyzer(settings);
        TrainingCollectionWriter writer(candidate_db, options.commit_batch);
        std::vector<Token> tokens;
        for (const KeptTexts::Text& text : kept.texts) {
          tokens.clear();
          analyzer.analyze(text.text, &tokens);
          if (!tokens.empty()) writer.add(text.id, tokens, text.labels);
        }
        writer.commit();
      }
      SampleTuning tuning;
      tuning.settings = tune_collection(candidate_db, options, &tuning.documents, report, phases,
                                        analysis_name(settings));
      const double objective = analysis_objective(tuning.settings, options);
      report->analysis_objective.emplace_back(analysis_name(settings), objective);
      if (objective > best_objective && objective > given_objective + kMinAnalysisGain) {
        best = AnalysisChoice{settings, std::move(tuning)};
        best_objective = objective;
        fs::remove_all(training_db);
        fs::rename(candidate_db, training_db);
      } else {
        fs::remove_all(candidate_db);
      }
    }
  }
  phases->end();
  report->analysis_chosen = true;
  return best;
}

// The settings, thresholds and calibrations `model` (the core `file`
// opened) was trained with, as fit_model() takes them from
// cross-validation, for a refit on the collection at `training_db` that
// keeps them. Returns nullopt if there is nothing to keep (no tuning) or, with the
// reason in `reason`, if they do not fit the new collection.
std::optional<SampleTuning> kept_tuning(const ModelFile& file, ModelState* model,
                                        const std::string& training_db, std::string* reason) {
  const TrainOptions& options = model->training;
  if (!options.tune_thresholds) return std::nullopt;  // defaults: nothing cross-validated
  if (model->thresholds.empty()) {
    *reason = "the model had too few documents to cross-validate";
    return std::nullopt;
  }
  {
    const TrainingCorpus labels = load_training_labels(Xapian::Database(training_db));
    if (labels.categories != model->categories) {
      std::vector<std::string> added, removed;
      std::set_difference(labels.categories.begin(), labels.categories.end(),
                          model->categories.begin(), model->categories.end(),
                          std::back_inserter(added));
      std::set_difference(model->categories.begin(), model->categories.end(),
                          labels.categories.begin(), labels.categories.end(),
                          std::back_inserter(removed));
      *reason = "the categories changed:";
      if (!added.empty())
        *reason += " " + std::to_string(added.size()) + " new (" + added[0] +
                   (added.size() > 1 ? ", ...)" : ")");
      if (!removed.empty())
        *reason += " " + std::to_string(removed.size()) + " without documents (" + removed[0] +
                   (removed.size() > 1 ? ", ...)" : ")");
      return std::nullopt;
    }
    const Decision decision = model_decision(labels, options);
    if (decision != model->decision) {
      *reason = std::string("the decision mode changed to ") +
                (decision == Decision::kAnyOf ? "any-of (a document has several labels or none)"
                                              : "one-of");
      return std::nullopt;
    }
  }
  // Files older than the calibrations lack settings a model of today needs.
  if (model->calibration.empty() || model->method_objective.empty()) {
    *reason = "the model file predates some of today's settings";
    return std::nullopt;
  }
  SampleTuning kept;
  kept.kept = true;
  TunedSettings& tuned = kept.settings;
  // Each part is decoded for its settings and dropped again (its weights
  // are refitted), so that no two are in memory at once.
  for (const ModelPart part :
       {ModelPart::kMultinomialNb, ModelPart::kBernoulliNb, ModelPart::kComplementNb}) {
    file.load(part, model);
    NaiveBayesModel& nb = part == ModelPart::kMultinomialNb ? model->multinomial_nb
                          : part == ModelPart::kBernoulliNb ? model->bernoulli_nb
                                                            : model->complement_nb;
    tuned.nb_alpha.push_back(nb.alpha);
    tuned.nb_tfidf.push_back(nb.tfidf());
    nb = NaiveBayesModel();
  }
  file.load(ModelPart::kSvm, model);
  tuned.svm_c = model->svm.c;
  tuned.svm_slope = std::move(model->svm.slope);
  tuned.svm_intercept = std::move(model->svm.intercept);
  model->svm = LinearModel();
  file.load(ModelPart::kLogreg, model);
  tuned.logreg_c = model->logreg.c;
  model->logreg = LinearModel();
  if (!(tuned.svm_c > 0) || !(tuned.logreg_c > 0)) {
    *reason = "the model file predates the linear models";
    return std::nullopt;
  }
  tuned.thresholds = model->thresholds;
  tuned.knn_k = model->knn_k;
  tuned.knn_similarity_power = model->knn_similarity_power;
  tuned.knn_concentration = model->knn_concentration;
  tuned.rocchio_gamma = model->rocchio_gamma;
  tuned.knn_objective = model->knn_objective;
  tuned.rocchio_gamma_objective = model->rocchio_gamma_objective;
  tuned.svm_c_objective = model->svm_c_objective;
  tuned.logreg_c_objective = model->logreg_c_objective;
  tuned.nb_alpha_objective = model->nb_alpha_objective;
  tuned.method_objective = model->method_objective;
  tuned.calibration = model->calibration;
  tuned.combo = model->combo;
  return kept;
}

}  // namespace

TrainReport train_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                        const TrainOptions& options, const ReadOptions& read_options,
                        const WarningCallback& on_warning, const UnlabelledInputs& unlabelled,
                        const TrainProgressCallback& on_progress) {
  const auto start = Clock::now();
  TrainReport report;
  PhaseTracker phases(on_progress, &report);
  const AnalyzerSettings settings = resolve_analyzer_options(options.analyzer);
  const Analyzer analyzer(settings);

  // The new model is built in a generation of its own and installed only
  // once training has succeeded, so a failed or killed run leaves the old
  // model working.
  ModelDirWriter model_writer(model_dir, on_warning);
  if (model_writer.has_model() && on_warning) {
    std::error_code ec;
    const auto journal_bytes = fs::file_size(model_writer.current().journal, ec);
    if (!ec && journal_bytes > kJournalHeaderBytes) {
      on_warning(model_writer.current().journal +
                 ": documents learned or forgotten on the replaced model are not in the new "
                 "one (train --add keeps them)");
    }
  }
  uint64_t labelled = 0;
  // Short texts may take another analysis (choose_short_text_analysis):
  // their texts are kept to analyze them again.
  const bool may_choose_analysis = options.choose_short_text_analysis && options.tune_thresholds &&
                                   settings.ngrams == 1 && settings.stemmer == "none";
  KeptTexts kept;
  // Cross-validation of every document (tuning_sample 0) compares analyses
  // up to the default sample's size.
  kept.max_documents = static_cast<size_t>(
      options.tuning_sample > 0 ? options.tuning_sample : TrainOptions().tuning_sample);
  {
    phases.begin("read", "documents");
    TrainingCollectionWriter writer(model_writer.next().training_db, options.commit_batch);
    labelled = add_documents(inputs, read_options, analyzer, options.keep_unlabelled, &writer,
                             &report, on_warning, &phases, may_choose_analysis ? &kept : nullptr);
  }
  phases.end();
  crash_point("collection-written");
  report.mean_tokens = kept.mean_tokens();
  report.analyze_seconds = seconds_since(start);
  if (labelled == 0) {
    throw InvalidArgumentError(
        "no labelled document with text in the input; JSON Lines records need a non-empty "
        "\"labels\" array, folder trees need one subfolder per category");
  }
  // The model's analysis: the given one, or the one short texts chose
  // (with the tuning that chose it).
  AnalyzerSettings model_settings = settings;
  std::optional<SampleTuning> tuning;
  double choice_seconds = 0;
  if (may_choose_analysis && kept.complete && kept.written >= kMinShortTextDocuments &&
      kept.mean_tokens() <= kShortTextMeanTokens) {
    const auto choice_start = Clock::now();
    AnalysisChoice choice =
        choose_analysis(kept, settings, options, model_writer.next().training_db, &report, &phases);
    choice_seconds = seconds_since(choice_start);
    model_settings = choice.settings;
    tuning = std::move(choice.tuning);
  }
  std::vector<KeptTexts::Text>().swap(kept.texts);
  RefineModel run_em;
  if (!unlabelled.empty()) {
    // EM's unlabelled documents are analyzed as the model's.
    run_em = [&](const TrainingCorpus& corpus, ModelState* model) {
      const Analyzer model_analyzer(model_settings);
      fit_unlabelled(unlabelled, read_options, model_analyzer, corpus, model, &report, on_warning);
    };
  }
  fit_and_install(&model_writer, model_settings, options, &report, &phases, run_em,
                  std::move(tuning));
  report.fit_seconds += choice_seconds;  // the comparison is fitting too
  report.total_seconds = seconds_since(start);
  return report;
}

TrainReport add_to_model(const std::vector<std::string>& inputs, const std::string& model_dir,
                         const ReadOptions& read_options, const WarningCallback& on_warning,
                         const TrainProgressCallback& on_progress, bool retune) {
  const auto start = Clock::now();
  TrainReport report;
  PhaseTracker phases(on_progress, &report);
  const std::string no_model = model_dir +
                               ": no model here to add to; train one with: autocat train "
                               "--model " +
                               model_dir + " INPUT...";
  // Checked before the writer creates anything: --add never makes a directory.
  std::error_code ec;
  if (!fs::is_regular_file(resolve_model_dir(model_dir).model_file, ec)) {
    throw NotFoundError(no_model);
  }
  ModelDirWriter model_writer(model_dir, on_warning);
  if (!model_writer.has_model()) throw NotFoundError(no_model);
  // Settings come from the model, so new documents are analyzed and the
  // classifiers fitted exactly as before. Only its core is read at once
  // (every method is fitted again), and the parts one at a time for the
  // settings kept: at a million documents, seconds and a gigabyte less.
  ModelState old_model;
  const ModelFile old_file(model_writer.current().model_file, &old_model);
  const TrainOptions& options = old_model.training;
  const Analyzer analyzer(old_model.analyzer);
  // Read once before copying, so a damaged collection is named as such
  // instead of failing later with Xapian's bare "EOF reading block 2".
  phases.begin("copy collection");
  read_training_corpus(model_writer.current().training_db, model_dir);

  // Add to a copy in the new generation, so a failed run leaves the model
  // as it was.
  const fs::path new_db = model_writer.next().training_db;
  fs::copy(model_writer.current().training_db, new_db, fs::copy_options::recursive, ec);
  if (ec) {
    throw IOError(new_db.string() + ": cannot copy the training database: " + ec.message() +
                  "; free space (or fix what stopped the copy) and run again");
  }
  // Xapian's lock file is no part of the data.
  fs::remove(new_db / "flintlock", ec);

  // What was learned and forgotten on the open model since it was trained.
  const JournalContents journal = read_journal(model_writer.current().journal);
  if (!journal.torn.empty() && on_warning) on_warning(journal.torn);

  {
    phases.begin("fold journal", "documents", journal.records.size());
    TrainingCollectionWriter writer(new_db.string(), options.commit_batch, /*overwrite=*/false);
    std::vector<std::string> terms;
    std::vector<uint32_t> counts;
    for (const JournalRecord& record : journal.records) {
      phases.advance(report.journal_learned + report.journal_forgotten + 1);
      if (record.kind == JournalRecord::Kind::kForget) {
        writer.remove(record.id);
        ++report.journal_forgotten;
        continue;
      }
      // Added as counts: a record may say a term occurs up to 2^32 - 1
      // times, which one token per occurrence would not fit in memory.
      terms.clear();
      counts.clear();
      for (const JournalTerm& term : record.terms) {
        terms.push_back(term.term);
        counts.push_back(term.count);
      }
      writer.add(record.id, terms, counts, record.labels);
      ++report.journal_learned;
    }
    if (!inputs.empty() || !read_options.databases.empty()) {
      phases.begin("read", "documents");
      add_documents(inputs, read_options, analyzer, options.keep_unlabelled, &writer, &report,
                    on_warning, &phases);
    }
    writer.commit();
  }
  phases.end();
  crash_point("collection-written");
  report.analyze_seconds = seconds_since(start);
  if (report.added == 0 && journal.records.empty()) {
    throw InvalidArgumentError(
        inputs.empty() && read_options.databases.empty()
            ? "nothing to refit: no INPUT given and no document learned or forgotten since " +
                  model_dir + " was trained; it is unchanged"
            : "no document with text to add; " + model_dir + " is unchanged");
  }
  // Cross-validation is most of a training's time, and a few more
  // documents hardly move what it chose: keep its choices unless asked.
  std::optional<SampleTuning> kept;
  if (!retune) {
    phases.begin("keep settings");
    kept = kept_tuning(old_file, &old_model, new_db.string(), &report.retune_reason);
  }
  fit_and_install(&model_writer, old_model.analyzer, options, &report, &phases, nullptr,
                  std::move(kept));
  report.total_seconds = seconds_since(start);
  return report;
}

}  // namespace autocat::internal
