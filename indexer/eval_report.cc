// Text and --json rendering of autocat eval's results.
#include "indexer/eval_report.h"

#include <ostream>
#include <utility>
#include <vector>

#include "classify/corpus/folds.h"
#include "indexer/commands.h"
#include "indexer/output.h"

namespace autocat::cli {

namespace {

using internal::Json;

// Confusion matrices wider than this are left out of the human output.
constexpr size_t kMaxConfusionCategories = 20;

Json json_number(double value) { return internal::Json(value); }
Json json_count(uint64_t value) { return internal::Json(static_cast<double>(value)); }

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
// top label of each document, and each category on its own with their
// mean; null without pairs. `names`: the model's categories, as
// `calibration` indexes them.
Json reliability_json(const internal::CalibrationReport& calibration,
                      const std::vector<std::string>& names) {
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
  Json by_category = internal::Json::array();
  for (size_t c = 0; c < calibration.categories(); ++c) {
    const internal::Reliability& category = calibration.category(c);
    if (category.pairs() == 0) continue;
    Json entry = internal::Json::object();
    entry["name"] = c < names.size() ? names[c] : std::to_string(c);
    entry["documents"] = json_count(category.pairs());
    entry["expected_calibration_error"] = json_number(category.expected_calibration_error());
    by_category.push_back(std::move(entry));
  }
  per_category["by_category"] = std::move(by_category);
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

// The three calibration errors, each with what it measures; for any-of
// models each category's own error too (what its any-of decision relies
// on); then the bins of the top label and of all pairs.
void print_reliability(std::ostream& out, const internal::CalibrationReport& calibration,
                       const std::vector<std::string>& names, Decision decision) {
  const internal::Reliability& pooled = calibration.pooled();
  const internal::Reliability& top = calibration.top_label();
  out << "\ncalibration (expected calibration error: the gap between mean prediction and share "
         "observed, averaged over "
      << pooled.bins().size() << " equal-width bins weighted by their counts; 0 is perfect):\n";
  print_table(
      out,
      {{"  pooled", format_fixed(pooled.expected_calibration_error(), 4),
        "all " + std::to_string(pooled.pairs()) +
            " document-category pairs; the many easy negatives near 0 flatter it"},
       {"  top label", format_fixed(top.expected_calibration_error(), 4),
        "each document's best category: its probability against whether it is a label "
        "(what one-of claims)"},
       {"  per category", format_fixed(calibration.per_category_expected_calibration_error(), 4),
        "mean over " + std::to_string(calibration.categories_with_pairs()) +
            " categories of each one's error on its own pairs (what any-of claims)"}},
      {1});
  if (decision == Decision::kAnyOf) {
    out << "calibration error per category (its probability against whether the document has "
           "it):\n";
    std::vector<std::vector<std::string>> rows = {{"  category", "error"}};
    for (size_t c = 0; c < calibration.categories(); ++c) {
      const internal::Reliability& category = calibration.category(c);
      if (category.pairs() == 0) continue;
      rows.push_back({"  " + (c < names.size() ? names[c] : std::to_string(c)),
                      format_fixed(category.expected_calibration_error(), 4)});
    }
    print_table(out, rows, {1});
  }
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

}  // namespace

internal::Json model_eval_json(const ModelEvalResults& results) {
  const internal::Evaluation& evaluation = results.evaluation;
  const Method method = results.method;
  const bool count_unlabelled = results.count_unlabelled;
  const uint64_t unlabelled = results.unlabelled;
  const uint64_t unknown_label_documents = results.unknown_label_documents;
  const std::string& plot = results.plot;
  const std::string& reliability_plot = results.reliability_plot;
  Json json = internal::Json::object();
  json["model"] = results.model_dir;
  json["method"] = method_name(method);
  json["decision"] = decision_name(results.decision);
  add_evaluation_json(&json, evaluation, method, results.log_loss);
  json["unlabelled"] = count_unlabelled ? "count" : "skip";
  json["skipped_unlabelled"] = json_count(count_unlabelled ? 0 : unlabelled);
  json["counted_unlabelled"] = json_count(count_unlabelled ? unlabelled : 0);
  json["unknown_label_documents"] = json_count(unknown_label_documents);
  Json unknown = internal::Json::array();
  for (const auto& [name, count] : results.unknown_documents) {
    Json entry = internal::Json::object();
    entry["name"] = name;
    entry["documents"] = json_count(count);
    unknown.push_back(std::move(entry));
  }
  json["unknown_categories"] = std::move(unknown);
  json["shared_categories"] = results.shared;
  json["scored_categories"] = json_count(results.scored_categories);
  json["documents_without_scored_label"] = json_count(results.left_without_label);
  json["classify_seconds"] = json_number(results.classify_seconds);
  json["docs_per_second"] = json_number(results.docs_per_second);
  json["analyze_seconds"] = json_number(results.analyze_seconds);
  json["plot"] = plot.empty() ? internal::Json() : internal::Json(plot);
  json["reliability"] = reliability_json(results.calibration, results.model_category_names);
  json["reliability_plot"] =
      reliability_plot.empty() ? internal::Json() : internal::Json(reliability_plot);
  return json;
}

void print_model_eval(std::ostream& out, const ModelEvalResults& results) {
  const internal::Evaluation& evaluation = results.evaluation;
  const Method method = results.method;
  const bool count_unlabelled = results.count_unlabelled;
  const uint64_t unlabelled = results.unlabelled;
  const uint64_t unknown_label_documents = results.unknown_label_documents;
  const std::string& plot = results.plot;
  const std::string& reliability_plot = results.reliability_plot;

  out << "evaluated " << evaluation.documents() << " documents with " << method_name(method)
      << " (model " << results.model_dir << ", " << decision_name(results.decision) << ")\n";
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
    for (const auto& [name, count] : results.unknown_documents) {
      names += (names.empty() ? "" : ", ") + name + " (" + std::to_string(count) + ")";
    }
    extra.push_back({"  unknown", std::to_string(unknown_label_documents) +
                                      " documents with labels the model lacks: " + names});
  }
  if (results.shared) {
    std::string scored_text = std::to_string(results.scored_categories) + " of " +
                              std::to_string(results.model_categories) +
                              " model categories (--shared-categories)";
    if (results.left_without_label != 0) {
      scored_text += "; " + std::to_string(results.left_without_label) +
                     " documents left without a scored label count as \"no category\"";
    }
    extra.push_back({"  scored", scored_text});
  }
  extra.push_back({"  classify", format_fixed(results.classify_seconds, 4) + " s (" +
                                     format_fixed(results.docs_per_second, 0) + " docs/s)"});
  extra.push_back({"  analyze", format_fixed(results.analyze_seconds, 4) + " s (not in docs/s)"});
  print_evaluation(out, evaluation, method, results.log_loss, extra);
  if (results.calibration.pooled().pairs() != 0) {
    print_reliability(out, results.calibration, results.model_category_names, results.decision);
  }
  if (!plot.empty()) out << "\nconfusion matrix drawn in " << plot << '\n';
  if (!reliability_plot.empty()) out << "reliability diagram drawn in " << reliability_plot << '\n';
}

internal::Json cross_validation_json(const CrossValidationResults& results) {
  const internal::CrossValidationResult& result = results.result;
  const uint64_t skipped_unlabelled = results.skipped_unlabelled;
  const std::string& plot = results.plot;
  Json json = internal::Json::object();
  json["folds"] = json_count(result.folds);
  json["seed"] = json_count(result.seed);
  json["documents"] = json_count(results.documents);
  json["categories"] = json_count(results.categories);
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
  json["prepare_seconds"] = json_number(results.prepare_seconds);
  json["seconds"] = json_number(results.seconds);
  json["plot"] = plot.empty() ? internal::Json() : internal::Json(plot);
  return json;
}

void print_cross_validation(std::ostream& out, const CrossValidationResults& results) {
  const internal::CrossValidationResult& result = results.result;
  const uint64_t skipped_unlabelled = results.skipped_unlabelled;
  const std::string& plot = results.plot;

  out << result.folds << "-fold cross-validation (stratified, seed " << result.seed << ") of "
      << results.documents << " documents in " << results.categories << " categories, "
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
  out << "\ntook " << format_fixed(results.seconds, 1) << " s (reading and analysis "
      << format_fixed(results.prepare_seconds, 1) << " s)\n";
}

}  // namespace autocat::cli
