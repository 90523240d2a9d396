// autocat eval: accuracy, F1, log-loss and speed of a model on labelled
// documents, or of freshly trained models by stratified k-fold
// cross-validation (--folds).
#include <stdlib.h>
#include <unistd.h>
#include <xapian.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>

#include "autocat/error.h"
#include "classify/corpus/training_collection.h"
#include "classify/decide/categorizer.h"
#include "classify/metrics/confusion_plot.h"
#include "classify/metrics/evaluation.h"
#include "classify/metrics/reliability_plot.h"
#include "classify/model/model_io.h"
#include "classify/train/cross_validation.h"
#include "classify/train/trainer.h"
#include "indexer/commands.h"
#include "indexer/eval_report.h"

namespace autocat::cli {

namespace {

namespace fs = std::filesystem;

const char kUsage[] =
    "usage: autocat eval --model DIR [OPTIONS] INPUT...\n"
    "       autocat eval --folds K [--seed N] [TRAINING OPTIONS] [OPTIONS] INPUT...\n"
    "\n"
    "Classifies the labelled documents of INPUT with the model DIR and compares the\n"
    "assigned categories with the labels: accuracy (assigned set == labels), micro-\n"
    "and macro-averaged precision, recall and F1, per-category precision, recall, F1\n"
    "and support (documents truly in the category), log-loss, and the confusion\n"
    "matrix (as a table up to 20 categories; as a picture with --plot). Labels the\n"
    "model does not know count as misses and are listed. The speed measured\n"
    "(docs/s) is classification alone: reading, analysis, loading the model and\n"
    "building kNN's index are excluded.\n"
    "\n"
    "Log-loss is the mean of -ln(max(p, 1e-15)), p the probability the method gives\n"
    "the true category, over the documents with exactly one true category known to\n"
    "the model (documents without any known term, where every score is 0, are left\n"
    "out). Every method's scores are calibrated probabilities (in a model written\n"
    "before knn and rocchio were calibrated, theirs are not, and log-loss is n/a).\n"
    "\n"
    "With --folds K, INPUT is one labelled collection instead: it is split into K\n"
    "folds stratified by label (each document goes with its rarest label; the split\n"
    "depends only on --seed), a model is trained on every K-1 folds with the\n"
    "training options below, exactly as autocat train would, and the held-out fold\n"
    "is evaluated. Reported: each fold, the mean and sample standard deviation over\n"
    "folds, and the pooled evaluation of every held-out document. Every category\n"
    "needs at least K documents (otherwise exit status 1, naming the category).\n";

const char kExamples[] =
    "\n"
    "examples:\n"
    "  autocat eval --model news.model --split test --plot confusion.html news.jsonl\n"
    "  autocat eval --folds 5 --method all --split train news.jsonl\n";

// The options of both forms; --method, --any-of and --one-of are training
// and decision options at once, and are listed once, with the decision ones.
void define_options(OptionSet& options) {
  add_model_option(options, "model directory written by autocat train (not with --folds)");
  add_method_option(options,
                    "(default: the model's; knn with --folds); with --folds also all: every "
                    "method on the same folds and models");
  add_k_option(options);
  options.value("--folds", "K", "K-fold cross-validation on INPUT (K >= 2) instead of --model");
  options.value("--seed", "N", "the fold split of --folds (default 1)");
  options.value("--unlabelled", "count|skip",
                "documents without labels count as documents whose right answer is no "
                "category, or are skipped (default: count for any-of decisions, skip for "
                "one-of); with --folds this concerns documents kept by --keep-unlabelled");
  options.flag("--shared-categories",
               "score only the categories both the model knows and some evaluated document is "
               "labelled with (Reuters-21578 ModApte \"90 categories\"): other labels are "
               "dropped from the truth, other categories from what was assigned; a document "
               "left without a label counts as \"no category\" (not with --folds)");
  options.value("--plot", "FILE",
                "draw the confusion matrix: FILE.svg (an SVG picture) or FILE.html / FILE.htm "
                "(a self-contained page with the picture and the per-category table); with "
                "--folds the pooled matrix of one method");
  add_decision_options(options);
  add_reader_options(options);
  options.flag("--json",
               "one JSON object: method, documents, accuracy, macro_f1, micro_f1, "
               "micro_precision, micro_recall, macro_precision, macro_recall, log_loss (null "
               "when n/a), log_loss_documents, per_category (name, precision, recall, f1, "
               "support, true_positives, false_positives, false_negatives), confusion, "
               "unknown_categories (name, documents), classify_seconds, docs_per_second, "
               "analyze_seconds...; with --folds: folds, seed, fold_documents, "
               "copied_documents (same terms as an earlier document: held out in its fold) "
               "and per method its folds, mean, std and pooled evaluation");
  add_train_options(options, "training options (with --folds)");
}

// Training options that mean nothing without --folds.
std::vector<std::string> training_only_options() {
  const std::vector<std::string> decision = declared_names(add_decision_options);
  std::vector<std::string> names;
  for (const std::string& name : train_option_names()) {
    const bool shared = std::find(decision.begin(), decision.end(), name) != decision.end();
    if (!shared && name != "method") names.push_back(name);
  }
  return names;
}

// --unlabelled: nullopt when absent (the default depends on the decision mode).
std::optional<bool> count_unlabelled_option(const ParsedArgs& args) {
  if (!args.has("unlabelled")) return std::nullopt;
  const std::string value = args.value("unlabelled");
  if (value == "count") return true;
  if (value == "skip") return false;
  throw UsageError("--unlabelled must be count or skip, got '" + value + "'");
}

// Checks --plot before the (possibly long) evaluation: a name the format
// can be told from, in a directory that exists.
std::string plot_path(const ParsedArgs& args) {
  if (!args.has("plot")) return std::string();
  const std::string path = args.value("plot");
  if (!internal::plot_format_for(path)) {
    throw UsageError("--plot " + path + ": the file name must end in .svg, .html or .htm");
  }
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw IOError(path + ": cannot write the plot: no directory " + parent.string());
  }
  return path;
}

std::string plot_title(Method method, const std::string& what,
                       const internal::Evaluation& evaluation) {
  return "Confusion matrix: " + method_name(method) + what + ", accuracy " +
         format_fixed(evaluation.accuracy(), 4) + " (" + std::to_string(evaluation.documents()) +
         " documents)";
}

// ---------------------------------------------------------------------------
// eval --model

struct LabelledDocument {
  internal::DocumentTerms terms;
  std::vector<uint32_t> truth;  // indexes into CategoryIndex; empty: "no category"
};

// The evaluation's categories: the model's, then labels the model lacks.
class CategoryIndex {
 public:
  explicit CategoryIndex(const std::vector<std::string>& model_categories)
      : names_(model_categories), model_size_(model_categories.size()) {
    for (size_t i = 0; i < names_.size(); ++i) index_[names_[i]] = static_cast<uint32_t>(i);
  }
  uint32_t find_or_add(const std::string& name) {
    auto [it, added] = index_.emplace(name, static_cast<uint32_t>(names_.size()));
    if (added) names_.push_back(name);
    return it->second;
  }
  bool known_to_model(uint32_t index) const { return index < model_size_; }
  size_t model_size() const { return model_size_; }
  uint32_t at(const std::string& name) const { return index_.at(name); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  size_t model_size_;
  std::map<std::string, uint32_t> index_;
};

// Evaluates the model of --model on the labelled documents of the inputs
// (and draws --plot).
ModelEvalResults evaluate_model(const ParsedArgs& args, const std::string& plot,
                                Messages& messages) {
  const std::string model_dir = args.required("model");
  const ClassifyOptions options = classify_options(args);
  const std::optional<bool> count_option = count_unlabelled_option(args);

  const internal::Categorizer categorizer(model_dir);
  report_model_warnings(categorizer, messages);
  const Method method = categorizer.method(options);
  const bool count_unlabelled =
      count_option.value_or(categorizer.decision_mode(options) == Decision::kAnyOf);
  CategoryIndex categories(categorizer.categories());

  // Read and analyze everything first, so the timing below is classification only.
  std::vector<LabelledDocument> documents;
  uint64_t labelled = 0, unlabelled = 0, unknown_label_documents = 0;
  std::map<std::string, uint64_t> unknown_documents;  // per unknown label
  double analyze_seconds = 0;
  auto on_document = [&](internal::InputDocument&& doc) {
    if (doc.labels.empty()) {
      ++unlabelled;
      if (!count_unlabelled) return;
    } else {
      ++labelled;
    }
    LabelledDocument document;
    bool unknown = false;
    for (const std::string& label : doc.labels) {
      const uint32_t index = categories.find_or_add(label);
      if (std::find(document.truth.begin(), document.truth.end(), index) != document.truth.end()) {
        continue;
      }
      document.truth.push_back(index);
      if (!categories.known_to_model(index)) {
        unknown = true;
        ++unknown_documents[label];
      }
    }
    if (unknown) ++unknown_label_documents;
    const Stopwatch clock;
    document.terms = categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
    analyze_seconds += clock.seconds();
    documents.push_back(std::move(document));
  };
  internal::read_documents(args.positional(), read_options(args), on_document, warn_to(messages));
  if (labelled == 0) {
    throw InvalidArgumentError(
        join(args.positional()) + ": no labelled documents to evaluate" +
        (unlabelled != 0 ? " (" + std::to_string(unlabelled) + " without labels)" : std::string()));
  }
  if (unlabelled != 0 && !count_unlabelled) {
    messages.warning("skipped " + std::to_string(unlabelled) + " documents without labels");
  }
  std::vector<std::string> unknown_names;
  for (const auto& [name, count] : unknown_documents) unknown_names.push_back(name);
  if (unknown_label_documents != 0) {
    messages.warning(std::to_string(unknown_label_documents) +
                     " documents have labels the model does not know (" + join(unknown_names) +
                     ")" +
                     (args.has("shared-categories") ? "; --shared-categories leaves them out"
                                                    : "; they count as misses"));
  }

  // The categories scored: all of them, or with --shared-categories those
  // the model knows and some document is labelled with. scored[i] is the
  // evaluation's index of CategoryIndex entry i, or -1.
  const bool shared = args.has("shared-categories");
  std::vector<int64_t> scored(categories.names().size(), -1);
  std::vector<std::string> scored_names;
  if (shared) {
    std::vector<uint8_t> in_truth(categories.names().size(), 0);
    for (const LabelledDocument& document : documents) {
      for (uint32_t index : document.truth) in_truth[index] = 1;
    }
    for (uint32_t i = 0; i < categories.model_size(); ++i) {
      if (!in_truth[i]) continue;
      scored[i] = static_cast<int64_t>(scored_names.size());
      scored_names.push_back(categories.names()[i]);
    }
  } else {
    for (size_t i = 0; i < scored.size(); ++i) scored[i] = static_cast<int64_t>(i);
    scored_names = categories.names();
  }
  auto scored_only = [&](const std::vector<uint32_t>& indexes) {
    std::vector<uint32_t> kept;
    for (uint32_t index : indexes) {
      if (scored[index] >= 0) kept.push_back(static_cast<uint32_t>(scored[index]));
    }
    return kept;
  };
  uint64_t left_without_label = 0;  // labelled, but with no scored label
  for (LabelledDocument& document : documents) {
    const bool had_labels = !document.truth.empty();
    if (shared) {
      std::vector<uint32_t> kept;
      for (uint32_t index : document.truth) {
        if (scored[index] >= 0) kept.push_back(index);
      }
      document.truth = std::move(kept);
    }
    if (had_labels && document.truth.empty()) ++left_without_label;
  }

  if (method == Method::kKnn) categorizer.knn_index();  // build outside the timing
  std::vector<std::vector<Category>> assigned(documents.size());
  internal::LogLoss log_loss;
  internal::CalibrationReport calibration(categorizer.categories().size());
  const bool probabilities = categorizer.gives_probabilities(method);
  const Stopwatch classify_clock;
  for (size_t i = 0; i < documents.size(); ++i) {
    const std::vector<double> scores = categorizer.scores(documents[i].terms, options);
    if (i == 0) report_model_warnings(categorizer, messages);  // the method's, once it is built
    assigned[i] = categorizer.decide(scores, options);
    const std::vector<uint32_t>& truth = documents[i].truth;
    if (probabilities && truth.size() == 1 && categories.known_to_model(truth.front())) {
      log_loss.add(scores, truth.front());  // model categories come first in CategoryIndex
    }
    // Every labelled document with evidence: each model category it could
    // be in is one prediction.
    const bool evidence = std::any_of(scores.begin(), scores.end(), [](double v) { return v > 0; });
    if (probabilities && evidence && !truth.empty()) {
      calibration.add(scores, truth);
    }
  }
  const double classify_seconds = classify_clock.seconds();

  internal::Evaluation evaluation(scored_names);
  for (size_t i = 0; i < documents.size(); ++i) {
    std::vector<uint32_t> chosen;
    for (const Category& category : assigned[i]) chosen.push_back(categories.at(category.name));
    evaluation.add(scored_only(documents[i].truth), scored_only(chosen));
  }
  const double docs_per_second = rate(documents.size(), classify_seconds);

  std::string reliability_plot;
  if (!plot.empty()) {
    internal::write_confusion_plot(plot, evaluation, plot_title(method, "", evaluation));
    if (calibration.pooled().pairs() != 0) {
      reliability_plot = internal::reliability_plot_path(plot);
      internal::write_reliability_plot(reliability_plot, calibration,
                                       "reliability of " + method_name(method));
    }
  }

  ModelEvalResults results;
  results.model_dir = model_dir;
  results.method = method;
  results.decision = categorizer.decision_mode(options);
  results.evaluation = std::move(evaluation);
  results.log_loss = log_loss;
  results.calibration = std::move(calibration);
  results.model_category_names = categorizer.categories();
  results.count_unlabelled = count_unlabelled;
  results.unlabelled = unlabelled;
  results.unknown_label_documents = unknown_label_documents;
  results.unknown_documents = std::move(unknown_documents);
  results.shared = shared;
  results.scored_categories = scored_names.size();
  results.model_categories = categories.model_size();
  results.left_without_label = left_without_label;
  results.classify_seconds = classify_seconds;
  results.docs_per_second = docs_per_second;
  results.analyze_seconds = analyze_seconds;
  results.plot = plot;
  results.reliability_plot = reliability_plot;
  return results;
}

int run_model_eval(const ParsedArgs& args, const std::string& plot, std::ostream& out,
                   Messages& messages) {
  const ModelEvalResults results = evaluate_model(args, plot, messages);
  if (args.has("json")) {
    out << json_output(model_eval_json(results)) << '\n';
  } else {
    print_model_eval(out, results);
  }
  return 0;
}

// ---------------------------------------------------------------------------
// eval --folds

// A fresh temporary directory, removed with everything in it when the
// object goes out of scope (whether the run succeeded or threw).
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (fs::temp_directory_path() / "autocat-folds-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw IOError(pattern + ": cannot create a temporary directory");
    }
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Cross-validates the methods asked for on the collection of the inputs
// (and draws --plot).
CrossValidationResults cross_validate_inputs(const ParsedArgs& args, bool all,
                                             const std::string& plot, Messages& messages) {
  if (args.has("model")) {
    throw UsageError(
        "--folds trains its own models on INPUT, so --model is not used; drop --model, or "
        "drop --folds to evaluate that model");
  }
  if (args.has("shared-categories")) {
    throw UsageError(
        "--shared-categories needs --model: with --folds every category is both trained and "
        "evaluated");
  }
  const int64_t folds = args.integer("folds", 5, -1000000, 1000000);
  if (folds < 2) {
    throw UsageError(
        "--folds must be at least 2 (each fold is held out once while the others "
        "train), got " +
        std::to_string(folds));
  }
  if (all && !plot.empty()) {
    throw UsageError("--plot draws the confusion matrix of one method; choose one with --method");
  }
  internal::CrossValidationOptions options;
  options.folds = static_cast<uint32_t>(folds);
  options.seed = static_cast<uint32_t>(args.integer("seed", 1, 0, 4294967295));
  options.classify = classify_options(args);
  options.count_unlabelled = count_unlabelled_option(args);
  options.methods =
      all ? all_methods() : std::vector<Method>{options.classify.method.value_or(Method::kKnn)};
  const TrainOptions train = train_options(args);

  const Stopwatch clock;
  // The collection is written and read back exactly as autocat train does;
  // the model fitted on all of it is not needed, so its thresholds are not tuned.
  ScratchDirectory scratch;
  const std::string model_dir = (scratch.path() / "model").string();
  TrainOptions collection_options = train;
  collection_options.tune_thresholds = false;
  const internal::TrainReport report = internal::train_model(
      args.positional(), model_dir, collection_options, read_options(args), warn_to(messages));
  const internal::ModelPaths paths = internal::resolve_model_dir(model_dir);
  const internal::AnalyzerSettings analyzer = internal::read_model_file(paths.model_file).analyzer;
  const internal::TrainingCorpus corpus =
      internal::load_training_corpus(Xapian::Database(paths.training_db));
  const double prepare_seconds = clock.seconds();

  const Stopwatch cv_clock;
  internal::CrossValidationResult result = internal::cross_validate(
      corpus, analyzer, train, options,
      [&](uint64_t done) { messages.progress("cross-validated", done, cv_clock.seconds()); });
  const double seconds = clock.seconds();
  const uint64_t skipped_unlabelled = report.skipped_unlabelled + result.unlabelled_skipped;

  if (!plot.empty()) {
    const internal::MethodFolds& only = result.methods.front();
    internal::write_confusion_plot(
        plot, only.pooled,
        plot_title(only.method, ", " + std::to_string(result.folds) + "-fold cross-validation",
                   only.pooled));
  }

  CrossValidationResults results;
  results.result = std::move(result);
  results.documents = corpus.num_docs();
  results.categories = corpus.num_categories();
  results.skipped_unlabelled = skipped_unlabelled;
  results.prepare_seconds = prepare_seconds;
  results.seconds = seconds;
  results.plot = plot;
  return results;
}

int run_cross_validation(const ParsedArgs& args, bool all, const std::string& plot,
                         std::ostream& out, Messages& messages) {
  const CrossValidationResults results = cross_validate_inputs(args, all, plot, messages);
  if (args.has("json")) {
    out << json_output(cross_validation_json(results)) << '\n';
  } else {
    print_cross_validation(out, results);
  }
  return 0;
}

int run_eval(const ParsedArgs& given, std::ostream& out, Messages& messages) {
  // "--method all" is not a method: the other options are read without it.
  const bool all = given.value("method") == "all";
  ParsedArgs args = given;
  if (all) args.erase("method");
  if (!args.has("folds")) args.required("model");
  require_inputs(args);
  const std::string plot = plot_path(args);
  if (args.has("folds")) return run_cross_validation(args, all, plot, out, messages);
  if (all) {
    throw UsageError("--method all needs --folds; with --model, evaluate one method at a time");
  }
  if (args.has("seed")) throw UsageError("--seed needs --folds");
  for (const std::string& name : training_only_options()) {
    if (args.has(name)) {
      throw UsageError("--" + name +
                       " is a training option: it needs --folds (the model in --model was "
                       "trained with its own options)");
    }
  }
  return run_model_eval(args, plot, out, messages);
}

}  // namespace

Command eval_command() {
  return {"eval",    "measure accuracy, F1 and speed on labelled documents, or cross-validate",
          kUsage,    define_options,
          kExamples, run_eval};
}

}  // namespace autocat::cli
