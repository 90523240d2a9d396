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
#include "classify/io/json_text.h"
#include "classify/metrics/confusion_plot.h"
#include "classify/metrics/evaluation.h"
#include "classify/metrics/reliability_plot.h"
#include "classify/model/model_io.h"
#include "classify/train/cross_validation.h"
#include "classify/train/trainer.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

namespace fs = std::filesystem;
using internal::Json;

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
    "needs at least K documents (otherwise exit status 1, naming the category).\n"
    "\n"
    "options:\n"
    "  --model DIR          model directory written by autocat train (not with --folds)\n";

const char kUsageOptions[] =
    "  --k N                kNN: neighbours that vote (default: the model's, chosen when\n"
    "                       training)\n"
    "  --folds K            K-fold cross-validation on INPUT (K >= 2) instead of --model\n"
    "  --seed N             the fold split of --folds (default 1)\n"
    "  --unlabelled count|skip\n"
    "                       documents without labels count as documents whose right\n"
    "                       answer is no category, or are skipped (default: count for\n"
    "                       any-of decisions, skip for one-of); with --folds this\n"
    "                       concerns documents kept by --keep-unlabelled\n"
    "  --shared-categories  score only the categories both the model knows and some\n"
    "                       evaluated document is labelled with (Reuters-21578 ModApte\n"
    "                       \"90 categories\"): other labels are dropped from the truth,\n"
    "                       other categories from what was assigned; a document left\n"
    "                       without a label counts as \"no category\" (not with --folds)\n"
    "  --plot FILE          draw the confusion matrix: FILE.svg (an SVG picture) or\n"
    "                       FILE.html / FILE.htm (a self-contained page with the\n"
    "                       picture and the per-category table); with --folds the\n"
    "                       pooled matrix of one method\n";

const char kUsageTail[] =
    "  --split NAME         use only JSON Lines records whose \"split\" is NAME\n"
    "  --skip-malformed     skip malformed JSON lines with a warning instead of failing\n"
    "  --allow-duplicate-ids  accept an id given twice (warning); the later document\n"
    "                       replaces the earlier where ids are stored (default: error)\n"
    "  --max-document-bytes N  longest JSON line or text file read (default 67108864)\n"
    "  --json               one JSON object: method, documents, accuracy, macro_f1,\n"
    "                       micro_f1, micro_precision, micro_recall, macro_precision,\n"
    "                       macro_recall, log_loss (null when n/a), log_loss_documents,\n"
    "                       per_category (name, precision, recall, f1, support,\n"
    "                       true_positives, false_positives, false_negatives),\n"
    "                       confusion, unknown_categories (name, documents),\n"
    "                       classify_seconds, docs_per_second, analyze_seconds...;\n"
    "                       with --folds: folds, seed, fold_documents,\n"
    "                       copied_documents (same terms as an earlier document:\n"
    "                       held out in its fold) and per method\n"
    "                       its folds, mean, std and pooled evaluation\n"
    "  -h, --help           show this help\n"
    "\n"
    "training options (with --folds):\n";

const char kExamples[] =
    "\n"
    "examples:\n"
    "  autocat eval --model news.model --split test --plot confusion.html news.jsonl\n"
    "  autocat eval --folds 5 --method all --split train news.jsonl\n";

// The options of both forms; --method, --any-of and --one-of are training
// and decision options at once, and are listed once.
const std::vector<OptionSpec>& command_options() {
  static const std::vector<OptionSpec> specs = [] {
    const std::vector<OptionSpec> all = with_options(with_options(
                                                         {
                                                             {"model", true},
                                                             {"method", true},
                                                             {"k", true},
                                                             {"split", true},
                                                             {"json", false},
                                                             {"skip-malformed", false},
                                                             {"allow-duplicate-ids", false},
                                                             {"max-document-bytes", true},
                                                             {"folds", true},
                                                             {"seed", true},
                                                             {"unlabelled", true},
                                                             {"shared-categories", false},
                                                             {"plot", true},
                                                         },
                                                         decision_option_specs()),
                                                     train_option_specs());
    std::vector<OptionSpec> unique;
    for (const OptionSpec& spec : all) {
      const bool seen = std::any_of(unique.begin(), unique.end(), [&](const OptionSpec& other) {
        return other.name == spec.name;
      });
      if (!seen) unique.push_back(spec);
    }
    return unique;
  }();
  return specs;
}

// Training options that mean nothing without --folds.
std::vector<std::string> training_only_options() {
  std::vector<std::string> names;
  for (const OptionSpec& spec : train_option_specs()) {
    const bool decision =
        std::any_of(decision_option_specs().begin(), decision_option_specs().end(),
                    [&](const OptionSpec& other) { return other.name == spec.name; });
    if (!decision && spec.name != "method") names.push_back(spec.name);
  }
  return names;
}

// `words` without "--method all" (or "--method=all"), which ParsedArgs would
// refuse as an unknown method; sets *all if it was there.
std::vector<std::string> without_method_all(const std::vector<std::string>& words, bool* all) {
  std::vector<std::string> kept;
  bool options_ended = false;
  for (size_t i = 0; i < words.size(); ++i) {
    if (!options_ended && words[i] == "--method" && i + 1 < words.size() && words[i + 1] == "all") {
      *all = true;
      ++i;
      continue;
    }
    if (!options_ended && words[i] == "--method=all") {
      *all = true;
      continue;
    }
    options_ended = options_ended || words[i] == "--";
    kept.push_back(words[i]);
  }
  return kept;
}

// Confusion matrices wider than this are left out of the human output.
constexpr size_t kMaxConfusionCategories = 20;

Json json_number(double value) { return internal::Json(value); }
Json json_count(uint64_t value) { return internal::Json(static_cast<double>(value)); }

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

// A log-loss fed no document is n/a; the reason is the method's when its
// scores are not probabilities (an uncalibrated kNN or Rocchio model).
std::string log_loss_text(Method method, const internal::LogLoss& log_loss) {
  if (log_loss.documents() == 0 && !internal::gives_probabilities(method)) {
    return "n/a (scores of " + method_name(method) + " are not probabilities)";
  }
  if (log_loss.documents() == 0) return "n/a (no document with one known true category)";
  std::string text = format_fixed(log_loss.value(), 4) + " (" +
                     std::to_string(log_loss.documents()) + " documents";
  if (log_loss.no_evidence() != 0) {
    text += "; " + std::to_string(log_loss.no_evidence()) + " without a known term left out";
  }
  return text + ")";
}

Json log_loss_json(Method method, const internal::LogLoss& log_loss) {
  (void)method;
  if (log_loss.documents() == 0) return internal::Json();
  return json_number(log_loss.value());
}

// Each bin's predictions against what was observed.
Json bins_json(const internal::Reliability& reliability) {
  Json bins = internal::Json::array();
  for (const internal::Reliability::Bin& bin : reliability.bins()) {
    Json entry = internal::Json::object();
    entry["lower"] = json_number(bin.lower);
    entry["upper"] = json_number(bin.upper);
    entry["pairs"] = json_count(bin.pairs);
    entry["mean_predicted"] = json_number(bin.mean_predicted);
    entry["observed"] = json_number(bin.observed);
    bins.push_back(std::move(entry));
  }
  return bins;
}

// Predicted against observed per probability bin: every pair pooled, the
// top label of each document, and the mean per category; null without pairs.
Json reliability_json(const internal::CalibrationReport& calibration) {
  const internal::Reliability& pooled = calibration.pooled();
  if (pooled.pairs() == 0) return internal::Json();
  Json json = internal::Json::object();
  json["pairs"] = json_count(pooled.pairs());
  json["expected_calibration_error"] = json_number(pooled.expected_calibration_error());
  json["bins"] = bins_json(pooled);
  const internal::Reliability& top = calibration.top_label();
  Json top_json = internal::Json::object();
  top_json["documents"] = json_count(top.pairs());
  top_json["expected_calibration_error"] = json_number(top.expected_calibration_error());
  top_json["bins"] = bins_json(top);
  json["top_label"] = std::move(top_json);
  Json per_category = internal::Json::object();
  per_category["categories"] = json_count(calibration.categories_with_pairs());
  per_category["mean_expected_calibration_error"] =
      json_number(calibration.per_category_expected_calibration_error());
  json["per_category"] = std::move(per_category);
  return json;
}

void print_bins(std::ostream& out, const internal::Reliability& reliability, const char* counted) {
  std::vector<std::vector<std::string>> rows = {{"  bin", counted, "predicted", "observed"}};
  for (const internal::Reliability::Bin& bin : reliability.bins()) {
    if (bin.pairs == 0) continue;
    rows.push_back({"  " + format_fixed(bin.lower, 1) + "-" + format_fixed(bin.upper, 1),
                    std::to_string(bin.pairs), format_fixed(bin.mean_predicted, 4),
                    format_fixed(bin.observed, 4)});
  }
  print_table(out, rows, {1, 2, 3});
}

void print_reliability(std::ostream& out, const internal::CalibrationReport& calibration) {
  const internal::Reliability& pooled = calibration.pooled();
  const internal::Reliability& top = calibration.top_label();
  out << "\nreliability (" << pooled.pairs() << " document-category pairs; expected "
      << "calibration error " << format_fixed(pooled.expected_calibration_error(), 4) << " pooled, "
      << format_fixed(top.expected_calibration_error(), 4) << " top label, "
      << format_fixed(calibration.per_category_expected_calibration_error(), 4)
      << " mean per category):\n";
  out << "top label (each document's best score; observed: the best category is a label):\n";
  print_bins(out, top, "documents");
  out << "all document-category pairs:\n";
  print_bins(out, pooled, "pairs");
}

// The metrics of `evaluation` as members of `json`.
void add_evaluation_json(Json* json, const internal::Evaluation& evaluation, Method method,
                         const internal::LogLoss& log_loss) {
  (*json)["documents"] = json_count(evaluation.documents());
  (*json)["accuracy"] = json_number(evaluation.accuracy());
  (*json)["macro_f1"] = json_number(evaluation.macro_f1());
  (*json)["micro_f1"] = json_number(evaluation.micro_f1());
  (*json)["micro_precision"] = json_number(evaluation.micro_precision());
  (*json)["micro_recall"] = json_number(evaluation.micro_recall());
  (*json)["macro_precision"] = json_number(evaluation.macro_precision());
  (*json)["macro_recall"] = json_number(evaluation.macro_recall());
  (*json)["log_loss"] = log_loss_json(method, log_loss);
  (*json)["log_loss_documents"] = json_count(log_loss.documents());
  Json per_category = internal::Json::array();
  for (const internal::CategoryMetrics& metrics : evaluation.per_category()) {
    Json entry = internal::Json::object();
    entry["name"] = metrics.name;
    entry["precision"] = json_number(metrics.precision);
    entry["recall"] = json_number(metrics.recall);
    entry["f1"] = json_number(metrics.f1);
    entry["support"] = json_count(metrics.support);
    entry["true_positives"] = json_count(metrics.true_positives);
    entry["false_positives"] = json_count(metrics.false_positives);
    entry["false_negatives"] = json_count(metrics.false_negatives);
    per_category.push_back(std::move(entry));
  }
  (*json)["per_category"] = std::move(per_category);
  Json confusion = internal::Json::object();
  Json names = internal::Json::array();
  for (const std::string& name : evaluation.categories()) names.push_back(internal::Json(name));
  names.push_back(internal::Json("(none)"));
  confusion["categories"] = std::move(names);
  Json matrix = internal::Json::array();
  for (const std::vector<uint64_t>& row : evaluation.confusion()) {
    Json row_json = internal::Json::array();
    for (uint64_t count : row) row_json.push_back(json_count(count));
    matrix.push_back(std::move(row_json));
  }
  confusion["matrix"] = std::move(matrix);
  (*json)["confusion"] = std::move(confusion);
}

void print_confusion(std::ostream& out, const internal::Evaluation& evaluation) {
  const std::vector<std::string>& names = evaluation.categories();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"true \\ assigned"};
  header.insert(header.end(), names.begin(), names.end());
  header.push_back("(none)");
  rows.push_back(header);
  std::vector<size_t> right;
  for (size_t c = 1; c < header.size(); ++c) right.push_back(c);
  for (size_t t = 0; t < names.size(); ++t) {
    std::vector<std::string> row = {names[t]};
    for (uint64_t count : evaluation.confusion()[t]) row.push_back(std::to_string(count));
    rows.push_back(row);
  }
  print_table(out, rows, right);
}

// The summary lines, the per-category table and (when small enough) the
// confusion matrix. `extra` rows go between the metrics and the timing.
void print_evaluation(std::ostream& out, const internal::Evaluation& evaluation, Method method,
                      const internal::LogLoss& log_loss,
                      const std::vector<std::vector<std::string>>& extra) {
  std::vector<std::vector<std::string>> summary = {
      {"  accuracy", format_fixed(evaluation.accuracy(), 4)},
      {"  macro-F1", format_fixed(evaluation.macro_f1(), 4) + " (precision " +
                         format_fixed(evaluation.macro_precision(), 4) + ", recall " +
                         format_fixed(evaluation.macro_recall(), 4) + ")"},
      {"  micro-F1", format_fixed(evaluation.micro_f1(), 4) + " (precision " +
                         format_fixed(evaluation.micro_precision(), 4) + ", recall " +
                         format_fixed(evaluation.micro_recall(), 4) + ")"},
      {"  log-loss", log_loss_text(method, log_loss)}};
  summary.insert(summary.end(), extra.begin(), extra.end());
  print_table(out, summary, {});
  out << '\n';
  std::vector<std::vector<std::string>> rows = {
      {"category", "precision", "recall", "F1", "support", "TP", "FP", "FN"}};
  for (const internal::CategoryMetrics& metrics : evaluation.per_category()) {
    rows.push_back({metrics.name, format_fixed(metrics.precision, 4),
                    format_fixed(metrics.recall, 4), format_fixed(metrics.f1, 4),
                    std::to_string(metrics.support), std::to_string(metrics.true_positives),
                    std::to_string(metrics.false_positives),
                    std::to_string(metrics.false_negatives)});
  }
  print_table(out, rows, {1, 2, 3, 4, 5, 6, 7});
  if (evaluation.categories().size() <= kMaxConfusionCategories) {
    out << "\nconfusion matrix (documents with one label):\n";
    print_confusion(out, evaluation);
  }
}

std::string plot_title(Method method, const std::string& what,
                       const internal::Evaluation& evaluation) {
  return "Confusion matrix: " + method_name(method) + what + ", accuracy " +
         format_fixed(evaluation.accuracy(), 4) + " (" + std::to_string(evaluation.documents()) +
         " documents)";
}

// train_help() without the entries eval documents itself (--method and
// --one-of / --any-of mean the same in both, but read differently there).
std::string training_help() {
  std::string help;
  bool skipping = false;
  size_t start = 0;
  const std::string text = train_help();
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(start, end - start);
    if (line.rfind("  --", 0) == 0) {
      skipping = line.rfind("  --method ", 0) == 0 || line.rfind("  --one-of ", 0) == 0;
    }
    if (!skipping) help += line;
    start = end;
  }
  return help;
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

int run_model_eval(const ParsedArgs& args, const std::string& plot, std::ostream& out,
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
  const uint64_t counted_unlabelled = count_unlabelled ? unlabelled : 0;
  const uint64_t skipped_unlabelled = count_unlabelled ? 0 : unlabelled;

  std::string reliability_plot;
  if (!plot.empty()) {
    internal::write_confusion_plot(plot, evaluation, plot_title(method, "", evaluation));
    if (calibration.pooled().pairs() != 0) {
      reliability_plot = internal::reliability_plot_path(plot);
      internal::write_reliability_plot(reliability_plot, calibration,
                                       "reliability of " + method_name(method));
    }
  }

  if (args.has("json")) {
    Json json = internal::Json::object();
    json["model"] = model_dir;
    json["method"] = method_name(method);
    json["decision"] = internal::Json(decision_name(categorizer.decision_mode(options)));
    add_evaluation_json(&json, evaluation, method, log_loss);
    json["unlabelled"] = count_unlabelled ? "count" : "skip";
    json["skipped_unlabelled"] = json_count(skipped_unlabelled);
    json["counted_unlabelled"] = json_count(counted_unlabelled);
    json["unknown_label_documents"] = json_count(unknown_label_documents);
    Json unknown = internal::Json::array();
    for (const auto& [name, count] : unknown_documents) {
      Json entry = internal::Json::object();
      entry["name"] = name;
      entry["documents"] = json_count(count);
      unknown.push_back(std::move(entry));
    }
    json["unknown_categories"] = std::move(unknown);
    json["shared_categories"] = shared;
    json["scored_categories"] = json_count(scored_names.size());
    json["documents_without_scored_label"] = json_count(left_without_label);
    json["classify_seconds"] = json_number(classify_seconds);
    json["docs_per_second"] = json_number(docs_per_second);
    json["analyze_seconds"] = json_number(analyze_seconds);
    json["plot"] = plot.empty() ? internal::Json() : internal::Json(plot);
    json["reliability"] = reliability_json(calibration);
    json["reliability_plot"] =
        reliability_plot.empty() ? internal::Json() : internal::Json(reliability_plot);
    out << json_output(json) << '\n';
    return 0;
  }

  out << "evaluated " << evaluation.documents() << " documents with " << method_name(method)
      << " (model " << model_dir << ", " << decision_name(categorizer.decision_mode(options))
      << ")\n";
  std::vector<std::vector<std::string>> extra;
  if (unlabelled != 0) {
    extra.push_back(
        {"  no label",
         std::to_string(unlabelled) +
             (count_unlabelled ? " documents counted as \"no category\"" : " documents skipped") +
             " (--unlabelled " + (count_unlabelled ? "count" : "skip") + ")"});
  }
  if (unknown_label_documents != 0) {
    std::string names;
    for (const auto& [name, count] : unknown_documents) {
      names += (names.empty() ? "" : ", ") + name + " (" + std::to_string(count) + ")";
    }
    extra.push_back({"  unknown", std::to_string(unknown_label_documents) +
                                      " documents with labels the model lacks: " + names});
  }
  if (shared) {
    std::string scored_text = std::to_string(scored_names.size()) + " of " +
                              std::to_string(categories.model_size()) +
                              " model categories (--shared-categories)";
    if (left_without_label != 0) {
      scored_text += "; " + std::to_string(left_without_label) +
                     " documents left without a scored label count as \"no category\"";
    }
    extra.push_back({"  scored", scored_text});
  }
  extra.push_back({"  classify", format_fixed(classify_seconds, 4) + " s (" +
                                     format_fixed(docs_per_second, 0) + " docs/s)"});
  extra.push_back({"  analyze", format_fixed(analyze_seconds, 4) + " s (not in docs/s)"});
  print_evaluation(out, evaluation, method, log_loss, extra);
  if (calibration.pooled().pairs() != 0) print_reliability(out, calibration);
  if (!plot.empty()) out << "\nconfusion matrix drawn in " << plot << '\n';
  if (!reliability_plot.empty()) out << "reliability diagram drawn in " << reliability_plot << '\n';
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

struct FoldScores {
  std::vector<double> accuracy, micro_f1, macro_f1, log_loss;
};

FoldScores fold_scores(const internal::MethodFolds& folds) {
  FoldScores scores;
  for (const internal::Evaluation& evaluation : folds.folds) {
    scores.accuracy.push_back(evaluation.accuracy());
    scores.micro_f1.push_back(evaluation.micro_f1());
    scores.macro_f1.push_back(evaluation.macro_f1());
  }
  for (const internal::LogLoss& log_loss : folds.fold_log_loss) {
    if (log_loss.documents() != 0) scores.log_loss.push_back(log_loss.value());
  }
  return scores;
}

std::string mean_std_text(const std::vector<double>& values) {
  const internal::MeanStd summary = internal::mean_and_std(values);
  return format_fixed(summary.mean, 4) + " \u00b1 " + format_fixed(summary.std, 4);
}

int run_cross_validation(const ParsedArgs& args, bool all, const std::string& plot,
                         std::ostream& out, Messages& messages) {
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
  const internal::CrossValidationResult result = internal::cross_validate(
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

  if (args.has("json")) {
    Json json = internal::Json::object();
    json["folds"] = json_count(result.folds);
    json["seed"] = json_count(result.seed);
    json["documents"] = json_count(corpus.num_docs());
    json["categories"] = json_count(corpus.num_categories());
    json["decision"] = decision_name(result.decision);
    json["unlabelled"] = result.count_unlabelled ? "count" : "skip";
    json["skipped_unlabelled"] = json_count(skipped_unlabelled);
    json["counted_unlabelled"] = json_count(result.unlabelled_counted);
    Json sizes = internal::Json::array();
    for (uint32_t size : result.fold_documents) sizes.push_back(json_count(size));
    json["fold_documents"] = std::move(sizes);
    json["copied_documents"] = json_count(result.copied_documents);
    Json methods = internal::Json::array();
    for (const internal::MethodFolds& method : result.methods) {
      Json entry = internal::Json::object();
      entry["method"] = method_name(method.method);
      entry["log_loss_defined"] = internal::Json(internal::gives_probabilities(method.method));
      Json per_fold = internal::Json::array();
      for (size_t f = 0; f < method.folds.size(); ++f) {
        const internal::Evaluation& evaluation = method.folds[f];
        Json fold = internal::Json::object();
        fold["fold"] = json_count(f + 1);
        fold["documents"] = json_count(evaluation.documents());
        fold["accuracy"] = json_number(evaluation.accuracy());
        fold["micro_f1"] = json_number(evaluation.micro_f1());
        fold["macro_f1"] = json_number(evaluation.macro_f1());
        fold["log_loss"] = method.fold_log_loss.empty()
                               ? internal::Json()
                               : log_loss_json(method.method, method.fold_log_loss[f]);
        per_fold.push_back(std::move(fold));
      }
      entry["folds"] = std::move(per_fold);
      const FoldScores scores = fold_scores(method);
      Json mean = internal::Json::object(), std = internal::Json::object();
      for (const auto& [name, values] :
           std::vector<std::pair<const char*, const std::vector<double>*>>{
               {"accuracy", &scores.accuracy},
               {"micro_f1", &scores.micro_f1},
               {"macro_f1", &scores.macro_f1},
               {"log_loss", &scores.log_loss}}) {
        if (values->empty()) {
          mean[name] = nullptr;
          std[name] = nullptr;
          continue;
        }
        const internal::MeanStd summary = internal::mean_and_std(*values);
        mean[name] = json_number(summary.mean);
        std[name] = json_number(summary.std);
      }
      entry["mean"] = std::move(mean);
      entry["std"] = std::move(std);
      Json pooled = internal::Json::object();
      add_evaluation_json(&pooled, method.pooled, method.method, method.pooled_log_loss);
      entry["pooled"] = std::move(pooled);
      methods.push_back(std::move(entry));
    }
    json["methods"] = std::move(methods);
    json["prepare_seconds"] = json_number(prepare_seconds);
    json["seconds"] = json_number(seconds);
    json["plot"] = plot.empty() ? internal::Json() : internal::Json(plot);
    out << json_output(json) << '\n';
    return 0;
  }

  out << result.folds << "-fold cross-validation (stratified, seed " << result.seed << ") of "
      << corpus.num_docs() << " documents in " << corpus.num_categories() << " categories, "
      << decision_name(result.decision) << '\n';
  std::vector<std::string> sizes;
  for (uint32_t size : result.fold_documents) sizes.push_back(std::to_string(size));
  out << "documents held out per fold: " << join(sizes, " ") << '\n';
  if (result.copied_documents != 0) {
    out << "documents with the same terms as an earlier one: " << result.copied_documents
        << " (each held out in the same fold as it)\n";
  }
  if (skipped_unlabelled != 0 || result.unlabelled_counted != 0) {
    out << "documents without labels: " << skipped_unlabelled << " skipped, "
        << result.unlabelled_counted << " counted as \"no category\"\n";
  }
  out << '\n';

  std::vector<std::vector<std::string>> summary = {
      {"method", "accuracy", "micro-F1", "macro-F1", "log-loss", "pooled accuracy"}};
  for (const internal::MethodFolds& method : result.methods) {
    const FoldScores scores = fold_scores(method);
    summary.push_back(
        {method_name(method.method), mean_std_text(scores.accuracy), mean_std_text(scores.micro_f1),
         mean_std_text(scores.macro_f1),
         scores.log_loss.empty() ? std::string("n/a") : mean_std_text(scores.log_loss),
         format_fixed(method.pooled.accuracy(), 4)});
  }
  out << "mean \u00b1 sample standard deviation over the folds:\n";
  print_table(out, summary, {});
  for (const internal::MethodFolds& method : result.methods) {
    if (!internal::gives_probabilities(method.method)) {
      out << "log-loss of " << method_name(method.method) << ": "
          << log_loss_text(method.method, method.pooled_log_loss) << '\n';
    }
  }

  for (const internal::MethodFolds& method : result.methods) {
    out << '\n' << method_name(method.method) << " by fold:\n";
    std::vector<std::vector<std::string>> rows = {
        {"  fold", "documents", "accuracy", "micro-F1", "macro-F1", "log-loss"}};
    for (size_t f = 0; f < method.folds.size(); ++f) {
      const internal::Evaluation& evaluation = method.folds[f];
      const bool defined =
          !method.fold_log_loss.empty() && method.fold_log_loss[f].documents() != 0;
      rows.push_back({"  " + std::to_string(f + 1), std::to_string(evaluation.documents()),
                      format_fixed(evaluation.accuracy(), 4),
                      format_fixed(evaluation.micro_f1(), 4),
                      format_fixed(evaluation.macro_f1(), 4),
                      defined ? format_fixed(method.fold_log_loss[f].value(), 4) : "n/a"});
    }
    print_table(out, rows, {0, 1, 2, 3, 4, 5});
  }

  if (result.methods.size() == 1) {
    const internal::MethodFolds& only = result.methods.front();
    out << "\npooled over the held-out documents of every fold: " << only.pooled.documents()
        << " documents with " << method_name(only.method) << '\n';
    print_evaluation(out, only.pooled, only.method, only.pooled_log_loss, {});
  }
  if (!plot.empty()) out << "\nconfusion matrix drawn in " << plot << '\n';
  out << "\ntook " << format_fixed(seconds, 1) << " s (reading and analysis "
      << format_fixed(prepare_seconds, 1) << " s)\n";
  return 0;
}

int run_eval(const std::vector<std::string>& words, std::ostream& out, Messages& messages) {
  bool all = false;
  const ParsedArgs args = parse_args(without_method_all(words, &all), command_options());
  if (all && args.has("method")) throw UsageError("--method given more than once");
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
  return {"eval", "measure accuracy, F1 and speed on labelled documents, or cross-validate",
          std::string(kUsage) +
              method_help("(default: the model's; knn with --folds); with --folds also all: "
                          "every method on the same folds and models") +
              kUsageOptions + kDecisionHelp + kUsageTail + training_help() + kExamples,
          run_eval};
}

}  // namespace autocat::cli
