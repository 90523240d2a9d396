// End-to-end tests of `autocat eval`: the evaluation report (support, macro
// and micro averages, log-loss, unknown categories, --unlabelled,
// --shared-categories), the --plot pictures, and k-fold cross-validation
// (--folds), on the fixture corpus (categories food, science, sports, 8
// training documents each).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "classify/metrics/reliability_plot.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"
#include "tests/xml_check.h"

namespace autocat {
namespace {

namespace fs = std::filesystem;

using internal::Json;
using testing_util::CliResult;
using testing_util::count_of;
using testing_util::json;
using testing_util::lines_of;
using testing_util::number_at;
using testing_util::read_file;
using testing_util::run_autocat;
using testing_util::string_at;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::well_formed_xml;
using testing_util::write_file;

// Texts of the fixture's own training documents: the model trained on them
// categorizes them correctly.
const char kSportsText[] = "The striker scored twice as the home team won the match 3-1.";
const char kFoodText[] = "Bake the bread at high heat until the crust turns golden brown.";
const char kScienceText[] = "Physicists measured the mass of the particle with a new detector.";

// The single JSON line of a successful run.
Json json_report(const CliResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = lines_of(result.out);
  EXPECT_EQ(lines.size(), 1u) << result.out;
  return lines.empty() ? internal::Json() : json(lines[0]);
}

std::string record(const std::string& id, const std::vector<std::string>& labels,
                   const std::string& text) {
  std::string line = "{\"id\": \"" + id + "\", ";
  if (!labels.empty()) {
    line += "\"labels\": [";
    for (size_t i = 0; i < labels.size(); ++i) {
      line += (i ? ", \"" : "\"") + labels[i] + "\"";
    }
    line += "], ";
  }
  return line + "\"text\": \"" + text + "\"}\n";
}

std::vector<std::string> names_of(const Json& list) {
  std::vector<std::string> names;
  for (const Json& entry : list) names.push_back(string_at(entry, "name"));
  return names;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The one line of stderr of a failed run.
std::string error_line(const CliResult& result) {
  const std::vector<std::string> lines = lines_of(result.err);
  EXPECT_EQ(lines.size(), 1u) << result.err;
  return lines.empty() ? std::string() : lines[0];
}

class CliEvalTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    model_ = dir_->file("model");
    trained_ =
        run_autocat({"train", "--model", model_, test_data("fixture_train.jsonl")}).exit_code == 0;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(trained_); }

  std::string input(const std::string& contents) {
    const std::string path = scratch_.file("input" + std::to_string(inputs_++) + ".jsonl");
    write_file(path, contents);
    return path;
  }

  static TempDir* dir_;
  static std::string model_;
  static bool trained_;
  TempDir scratch_;
  int inputs_ = 0;
};

TempDir* CliEvalTest::dir_ = nullptr;
std::string CliEvalTest::model_;
bool CliEvalTest::trained_ = false;

TEST_F(CliEvalTest, JsonHasEveryMetric) {
  const Json report = json_report(run_autocat(
      {"eval", "--model", model_, "--method", "nb", "--json", test_data("fixture_test.jsonl")}));
  EXPECT_EQ(string_at(report, "decision"), "one-of");
  EXPECT_EQ(number_at(report, "documents"), 9);
  const auto& per_category = report.at("per_category");
  ASSERT_EQ(per_category.size(), 3u);
  double f1 = 0, precision = 0, recall = 0, true_positives = 0;
  for (const Json& entry : per_category) {
    EXPECT_EQ(number_at(entry, "support"), 3) << string_at(entry, "name");
    EXPECT_EQ(number_at(entry, "support"),
              number_at(entry, "true_positives") + number_at(entry, "false_negatives"));
    f1 += number_at(entry, "f1") / 3;
    precision += number_at(entry, "precision") / 3;
    recall += number_at(entry, "recall") / 3;
    true_positives += number_at(entry, "true_positives");
  }
  EXPECT_NEAR(number_at(report, "macro_f1"), f1, 1e-12);
  EXPECT_NEAR(number_at(report, "macro_precision"), precision, 1e-12);
  EXPECT_NEAR(number_at(report, "macro_recall"), recall, 1e-12);
  // One-of over single-label documents: accuracy = micro recall = diagonal / documents.
  EXPECT_NEAR(number_at(report, "accuracy"), true_positives / 9, 1e-12);
  EXPECT_NEAR(number_at(report, "micro_recall"), true_positives / 9, 1e-12);
  const double log_loss = number_at(report, "log_loss");
  EXPECT_GT(log_loss, 0.0);
  EXPECT_LT(log_loss, std::log(3.0));  // better than the uniform guess on this easy set
  EXPECT_EQ(number_at(report, "log_loss_documents"), 9);
  EXPECT_TRUE(report.at("unknown_categories").empty());
  EXPECT_EQ(number_at(report, "scored_categories"), 3);
  EXPECT_FALSE(report.at("shared_categories").get<bool>());
  EXPECT_TRUE(report.at("plot").is_null());
}

// A calibrated model (format version 4) gives kNN and Rocchio probabilities
// too: their log-loss and reliability table are reported.
TEST_F(CliEvalTest, LogLossAndReliabilityOfCalibratedKnnAndRocchio) {
  for (const std::string method : {"knn", "rocchio"}) {
    const Json report = json_report(run_autocat({"eval", "--model", model_, "--method", method,
                                                 "--json", test_data("fixture_test.jsonl")}));
    ASSERT_FALSE(report.at("log_loss").is_null()) << method;
    EXPECT_GT(number_at(report, "log_loss"), 0.0) << method;
    const Json* reliability = testing_util::member(report, "reliability");
    ASSERT_FALSE(reliability->is_null()) << method;
    EXPECT_EQ(number_at(*reliability, "pairs"), 9 * 3) << method;  // documents x categories
    EXPECT_EQ(reliability->at("bins").size(), 10u);
    // The top label: one prediction per document, and its error is the
    // documents' weighted gap per bin.
    const Json* top = testing_util::member(*reliability, "top_label");
    ASSERT_TRUE(top != nullptr && top->is_object()) << method;
    EXPECT_EQ(number_at(*top, "documents"), 9) << method;
    double documents = 0, gap = 0;
    for (const Json& bin : top->at("bins")) {
      documents += number_at(bin, "pairs");
      gap += number_at(bin, "pairs") *
             std::fabs(number_at(bin, "mean_predicted") - number_at(bin, "observed"));
    }
    EXPECT_EQ(documents, 9) << method;
    EXPECT_NEAR(number_at(*top, "expected_calibration_error"), gap / 9, 1e-9) << method;
    const Json* per_category = testing_util::member(*reliability, "per_category");
    ASSERT_TRUE(per_category != nullptr && per_category->is_object()) << method;
    EXPECT_EQ(number_at(*per_category, "categories"), 3) << method;
    // Each category's own error, in [0, 1]; their mean is the reported one.
    const Json* by_category = testing_util::member(*per_category, "by_category");
    ASSERT_TRUE(by_category != nullptr && by_category->is_array()) << method;
    ASSERT_EQ(by_category->size(), 3u) << method;
    double sum = 0;
    std::vector<std::string> names;
    for (const Json& entry : *by_category) {
      names.push_back(string_at(entry, "name"));
      EXPECT_EQ(number_at(entry, "documents"), 9) << method;
      const double error = number_at(entry, "expected_calibration_error");
      EXPECT_GE(error, 0.0) << method;
      EXPECT_LE(error, 1.0) << method;
      sum += error;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"food", "science", "sports"})) << method;
    EXPECT_NEAR(number_at(*per_category, "mean_expected_calibration_error"), sum / 3, 1e-12);
    for (const double error : {number_at(*reliability, "expected_calibration_error"),
                               number_at(*top, "expected_calibration_error")}) {
      EXPECT_GE(error, 0.0) << method;
      EXPECT_LE(error, 1.0) << method;
    }
    const CliResult human = run_autocat(
        {"eval", "--model", model_, "--method", method, test_data("fixture_test.jsonl")});
    ASSERT_EQ(human.exit_code, 0) << human.err;
    EXPECT_TRUE(contains(human.out, "  log-loss  0.")) << human.out;
    // The three errors, one line each saying what it measures; the model is
    // one-of, so no line per category.
    EXPECT_TRUE(contains(human.out, "\ncalibration (expected calibration error: ")) << human.out;
    EXPECT_TRUE(std::regex_search(
        human.out, std::regex("\n  pooled        0\\.[0-9]{4}  all 27 document-category pairs; ")))
        << human.out;
    EXPECT_TRUE(std::regex_search(
        human.out, std::regex("\n  top label     0\\.[0-9]{4}  each document's best category: ")))
        << human.out;
    EXPECT_TRUE(std::regex_search(
        human.out, std::regex("\n  per category  0\\.[0-9]{4}  mean over 3 categories of ")))
        << human.out;
    EXPECT_FALSE(contains(human.out, "calibration error per category")) << human.out;
    EXPECT_TRUE(contains(human.out, "\ntop label (each document's best score")) << human.out;
    EXPECT_TRUE(contains(human.out, "\n  bin      documents  predicted  observed\n")) << human.out;
    EXPECT_TRUE(contains(human.out, "category  precision  recall      F1  support  TP  FP  FN\n"))
        << human.out;
  }
  const CliResult nb =
      run_autocat({"eval", "--model", model_, "--method", "cnb", test_data("fixture_test.jsonl")});
  EXPECT_TRUE(contains(nb.out, "  log-loss  0.")) << nb.out;
  EXPECT_TRUE(contains(nb.out, " (9 documents)\n")) << nb.out;
}

// Any-of decisions rest on each category's own probability: the human
// report lists each category's calibration error, as --json does.
TEST_F(CliEvalTest, AnyOfListsEachCategorysCalibrationError) {
  const CliResult human = run_autocat(
      {"eval", "--model", model_, "--any-of", "--method", "knn", test_data("fixture_test.jsonl")});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  const Json report = json_report(run_autocat({"eval", "--model", model_, "--any-of", "--method",
                                               "knn", "--json", test_data("fixture_test.jsonl")}));
  EXPECT_EQ(string_at(report, "decision"), "any-of");
  EXPECT_TRUE(contains(human.out, "\ncalibration error per category (")) << human.out;
  const Json& by_category = report.at("reliability").at("per_category").at("by_category");
  ASSERT_EQ(by_category.size(), 3u);
  for (const Json& entry : by_category) {
    // "  food      0.1234": the category and its error as --json has it.
    const std::regex line("\n  " + string_at(entry, "name") + " +([0-9.]+)\n");
    std::smatch match;
    ASSERT_TRUE(std::regex_search(human.out, match, line)) << string_at(entry, "name") << human.out;
    EXPECT_NEAR(std::stod(match[1]), number_at(entry, "expected_calibration_error"), 5e-5);
  }
}

TEST_F(CliEvalTest, CategoriesTheModelNeverSawAreCountedAndListed) {
  const std::string path =
      input(record("1", {"sports"}, kSportsText) + record("2", {"music"}, "The band played.") +
            record("3", {"music"}, "A loud guitar solo.") +
            record("4", {"art", "sports"}, "Painting the stadium."));
  const Json report = json_report(run_autocat({"eval", "--model", model_, "--json", path}));
  EXPECT_EQ(number_at(report, "documents"), 4);
  EXPECT_EQ(number_at(report, "unknown_label_documents"), 3);
  const auto& unknown = report.at("unknown_categories");
  ASSERT_EQ(unknown.size(), 2u);
  EXPECT_EQ(string_at(unknown[0], "name"), "art");
  EXPECT_EQ(number_at(unknown[0], "documents"), 1);
  EXPECT_EQ(string_at(unknown[1], "name"), "music");
  EXPECT_EQ(number_at(unknown[1], "documents"), 2);
  // They are scored (as misses): the model's categories, then theirs.
  EXPECT_EQ(names_of(report.at("per_category")),
            (std::vector<std::string>{"food", "science", "sports", "music", "art"}));
  EXPECT_EQ(number_at(report.at("per_category")[3], "support"), 2);

  const CliResult human = run_autocat({"eval", "--model", model_, path});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_EQ(human.err,
            "autocat: warning: 3 documents have labels the model does not know (art, music); "
            "they count as misses\n");
  EXPECT_TRUE(contains(human.out,
                       "  unknown   3 documents with labels the model lacks: art (1), music (2)"))
      << human.out;
}

TEST_F(CliEvalTest, UnlabelledDocumentsAreSkippedOrCounted) {
  const std::string path =
      input(record("1", {"sports"}, kSportsText) + record("2", {}, "Bake the bread at high heat."));
  // One-of model: skipped by default.
  const Json skipped = json_report(run_autocat({"eval", "--model", model_, "--json", path}));
  EXPECT_EQ(string_at(skipped, "unlabelled"), "skip");
  EXPECT_EQ(number_at(skipped, "documents"), 1);
  EXPECT_EQ(number_at(skipped, "skipped_unlabelled"), 1);
  EXPECT_EQ(number_at(skipped, "counted_unlabelled"), 0);
  EXPECT_EQ(number_at(skipped, "accuracy"), 1);

  // Counted: "no category" is the right answer; one-of assigns one, a miss.
  const CliResult counted_run =
      run_autocat({"eval", "--model", model_, "--unlabelled", "count", "--json", path});
  EXPECT_EQ(counted_run.err, "");
  const Json counted = json_report(counted_run);
  EXPECT_EQ(string_at(counted, "unlabelled"), "count");
  EXPECT_EQ(number_at(counted, "documents"), 2);
  EXPECT_EQ(number_at(counted, "counted_unlabelled"), 1);
  EXPECT_EQ(number_at(counted, "skipped_unlabelled"), 0);
  EXPECT_EQ(number_at(counted, "accuracy"), 0.5);
  EXPECT_EQ(number_at(counted.at("per_category")[0], "false_positives"), 1);

  const CliResult human = run_autocat({"eval", "--model", model_, "--unlabelled", "count", path});
  EXPECT_TRUE(contains(human.out,
                       "  no label  1 documents counted as \"no category\" (--unlabelled count)\n"))
      << human.out;
  const CliResult human_skip = run_autocat({"eval", "--model", model_, path});
  EXPECT_TRUE(contains(human_skip.out, "  no label  1 documents skipped (--unlabelled skip)\n"))
      << human_skip.out;

  // Any-of decisions count them by default.
  const Json any_of =
      json_report(run_autocat({"eval", "--model", model_, "--any-of", "--json", path}));
  EXPECT_EQ(string_at(any_of, "decision"), "any-of");
  EXPECT_EQ(string_at(any_of, "unlabelled"), "count");
  EXPECT_EQ(number_at(any_of, "documents"), 2);

  const CliResult bad = run_autocat({"eval", "--model", model_, "--unlabelled", "maybe", path});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(error_line(bad),
            "autocat eval: --unlabelled must be count or skip, got 'maybe' (see autocat eval "
            "--help)");
}

// Evaluated labels: sports, food and music (unknown to the model). Scored:
// food and sports. The science text labelled music is left with no label;
// the science it is assigned is dropped, so it is right ("no category").
TEST_F(CliEvalTest, SharedCategoriesScoreOnlyCategoriesOnBothSides) {
  const std::string path =
      input(record("1", {"sports"}, kSportsText) + record("2", {"food"}, kFoodText) +
            record("3", {"music"}, kScienceText));
  const Json all = json_report(run_autocat({"eval", "--model", model_, "--json", path}));
  EXPECT_NEAR(number_at(all, "accuracy"), 2.0 / 3, 1e-12);
  EXPECT_EQ(number_at(all, "scored_categories"), 4);

  const Json shared =
      json_report(run_autocat({"eval", "--model", model_, "--shared-categories", "--json", path}));
  EXPECT_TRUE(shared.at("shared_categories").get<bool>());
  EXPECT_EQ(number_at(shared, "scored_categories"), 2);
  EXPECT_EQ(number_at(shared, "documents_without_scored_label"), 1);
  EXPECT_EQ(names_of(shared.at("per_category")), (std::vector<std::string>{"food", "sports"}));
  EXPECT_EQ(number_at(shared, "documents"), 3);
  EXPECT_EQ(number_at(shared, "accuracy"), 1);
  EXPECT_EQ(number_at(shared, "micro_f1"), 1);
  // Still reported as unknown.
  EXPECT_EQ(names_of(shared.at("unknown_categories")), std::vector<std::string>{"music"});

  const CliResult human = run_autocat({"eval", "--model", model_, "--shared-categories", path});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(contains(human.out,
                       "  scored    2 of 3 model categories (--shared-categories); 1 documents "
                       "left without a scored label count as \"no category\"\n"))
      << human.out;
  EXPECT_TRUE(contains(human.err, "--shared-categories leaves them out")) << human.err;
}

TEST_F(CliEvalTest, PlotSvgShowsTheConfusionMatrix) {
  const std::string svg = scratch_.file("confusion.svg");
  const Json report =
      json_report(run_autocat({"eval", "--model", model_, "--method", "knn", "--plot", svg,
                               "--json", test_data("fixture_test.jsonl")}));
  EXPECT_EQ(string_at(report, "plot"), svg);
  const std::string picture = read_file(svg);
  std::string error;
  ASSERT_TRUE(well_formed_xml(picture, &error)) << error;
  EXPECT_TRUE(contains(picture, "Confusion matrix: knn, accuracy ")) << picture;
  for (const char* name : {"food", "science", "sports", "(none)"}) {
    EXPECT_GE(count_of(picture, std::string(">") + name + "</text>"), 1u) << name;
  }
  // Every non-empty cell of the JSON matrix, with its count.
  const Json& confusion = report.at("confusion");
  const auto& names = confusion.at("categories");
  const auto& matrix = confusion.at("matrix");
  size_t cells = 0;
  for (size_t t = 0; t < matrix.size(); ++t) {
    for (size_t a = 0; a < names.size(); ++a) {
      const double count = matrix[t][a].get<double>();
      if (count == 0) continue;
      ++cells;
      const std::string title = "<title>" + names[t].get<std::string>() + " \u2192 " +
                                names[a].get<std::string>() + ": " +
                                std::to_string(static_cast<int>(count)) + " (";
      EXPECT_TRUE(contains(picture, title)) << title;
    }
  }
  EXPECT_GE(cells, 3u);
  EXPECT_EQ(count_of(picture, "</title></rect>"), cells);
  // Nothing but the plot and the reliability diagram beside it is left.
  EXPECT_EQ(std::distance(fs::directory_iterator(scratch_.path()), fs::directory_iterator()), 2);
  EXPECT_TRUE(fs::exists(internal::reliability_plot_path(svg)));

  const CliResult human =
      run_autocat({"eval", "--model", model_, "--plot", svg, test_data("fixture_test.jsonl")});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(contains(human.out, "\nconfusion matrix drawn in " + svg + "\n")) << human.out;
}

TEST_F(CliEvalTest, PlotHtmlIsSelfContained) {
  const std::string html = scratch_.file("report.html");
  const CliResult result = run_autocat({"eval", "--model", model_, "--method", "nb", "--plot", html,
                                        test_data("fixture_test.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string page = read_file(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* external : {"<script", "src=", "href=", "<link", "@import"}) {
    EXPECT_FALSE(contains(page, external)) << external;
  }
  const size_t start = page.find("<svg"), end = page.find("</svg>");
  ASSERT_TRUE(start != std::string::npos && end != std::string::npos);
  std::string error;
  EXPECT_TRUE(well_formed_xml(page.substr(start, end + 6 - start), &error)) << error;
  EXPECT_TRUE(contains(page, "<title>Confusion matrix: nb, accuracy ")) << page;
  EXPECT_TRUE(contains(page, "<td>science</td>"));
}

TEST_F(CliEvalTest, PlotEscapesCategoryNames) {
  const std::string path = input(record("1", {"R&D"}, "laboratory prototype research") +
                                 record("2", {"R&D"}, "research laboratory budget") +
                                 record("3", {"<lab>"}, "microscope slides samples") +
                                 record("4", {"<lab>"}, "samples microscope cultures"));
  const std::string model = scratch_.file("names-model");
  ASSERT_EQ(run_autocat({"train", "--model", model, path}).exit_code, 0);
  const std::string svg = scratch_.file("names.svg");
  const CliResult result = run_autocat({"eval", "--model", model, "--plot", svg, path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string picture = read_file(svg);
  std::string error;
  ASSERT_TRUE(well_formed_xml(picture, &error)) << error;
  EXPECT_EQ(count_of(picture, ">R&amp;D</text>"), 2u);
  EXPECT_EQ(count_of(picture, ">&lt;lab&gt;</text>"), 2u);
  EXPECT_FALSE(contains(picture, "<lab>"));
}

TEST_F(CliEvalTest, PlotErrors) {
  const std::string test = test_data("fixture_test.jsonl");
  const CliResult png = run_autocat({"eval", "--model", model_, "--plot", "out.png", test});
  EXPECT_EQ(png.exit_code, 2);
  EXPECT_EQ(error_line(png),
            "autocat eval: --plot out.png: the file name must end in .svg, .html or .htm (see "
            "autocat eval --help)");

  const std::string missing = scratch_.file("no-such-dir/plot.svg");
  const CliResult no_dir = run_autocat({"eval", "--model", model_, "--plot", missing, test});
  EXPECT_EQ(no_dir.exit_code, 1);
  EXPECT_EQ(error_line(no_dir), "autocat: " + missing + ": cannot write the plot: no directory " +
                                    scratch_.file("no-such-dir"));
  EXPECT_EQ(no_dir.out, "");

  // Found only when writing, after the evaluation: still one line naming
  // the file, no report, no temporary file left.
  const std::string taken = scratch_.file("taken.svg");
  fs::create_directory(taken);
  const CliResult blocked = run_autocat({"eval", "--model", model_, "--plot", taken, test});
  EXPECT_EQ(blocked.exit_code, 1);
  EXPECT_EQ(error_line(blocked).rfind("autocat: " + taken + ": cannot write the plot: ", 0), 0u)
      << blocked.err;
  EXPECT_EQ(blocked.out, "");
  EXPECT_EQ(std::distance(fs::directory_iterator(scratch_.path()), fs::directory_iterator()), 1);
}

// ---------------------------------------------------------------------------
// --folds

TEST_F(CliEvalTest, FoldsJsonReportsEachFoldMeanAndStd) {
  const Json report = json_report(
      run_autocat({"eval", "--folds", "3", "--json", test_data("fixture_train.jsonl")}));
  EXPECT_EQ(number_at(report, "folds"), 3);
  EXPECT_EQ(number_at(report, "seed"), 1);
  EXPECT_EQ(number_at(report, "documents"), 24);
  EXPECT_EQ(number_at(report, "categories"), 3);
  EXPECT_EQ(string_at(report, "decision"), "one-of");
  std::vector<double> sizes;
  for (const Json& size : report.at("fold_documents")) {
    sizes.push_back(size.get<double>());
  }
  EXPECT_EQ(sizes, (std::vector<double>{8, 8, 8}));
  EXPECT_EQ(number_at(report, "copied_documents"), 0);
  const auto& methods = report.at("methods");
  ASSERT_EQ(methods.size(), 1u);
  const Json& knn = methods[0];
  EXPECT_EQ(string_at(knn, "method"), "knn");
  EXPECT_FALSE(knn.at("log_loss_defined").get<bool>());
  const auto& folds = knn.at("folds");
  ASSERT_EQ(folds.size(), 3u);
  std::vector<double> accuracy;
  for (const Json& fold : folds) {
    EXPECT_EQ(number_at(fold, "documents"), 8);
    EXPECT_TRUE(fold.at("log_loss").is_null());
    accuracy.push_back(number_at(fold, "accuracy"));
  }
  const double mean = (accuracy[0] + accuracy[1] + accuracy[2]) / 3;
  double squares = 0;
  for (double a : accuracy) squares += (a - mean) * (a - mean);
  EXPECT_NEAR(number_at(knn.at("mean"), "accuracy"), mean, 1e-12);
  EXPECT_NEAR(number_at(knn.at("std"), "accuracy"), std::sqrt(squares / 2), 1e-12);
  EXPECT_TRUE(knn.at("mean").at("log_loss").is_null());
  const Json& pooled = knn.at("pooled");
  EXPECT_EQ(number_at(pooled, "documents"), 24);
  EXPECT_NEAR(number_at(pooled, "accuracy"), mean, 1e-12);  // equal folds: pooled = mean
  EXPECT_EQ(pooled.at("per_category").size(), 3u);
  EXPECT_EQ(number_at(pooled.at("per_category")[0], "support"), 8);
}

TEST_F(CliEvalTest, FoldsAllMethodsShareTheFolds) {
  const std::string train = test_data("fixture_train.jsonl");
  const Json all = json_report(
      run_autocat({"eval", "--folds", "3", "--seed", "4", "--method", "all", "--json", train}));
  const auto& methods = all.at("methods");
  ASSERT_EQ(methods.size(), 8u);
  std::vector<std::string> names;
  for (const Json& method : methods) names.push_back(string_at(method, "method"));
  EXPECT_EQ(names, (std::vector<std::string>{"knn", "rocchio", "nb", "bnb", "cnb", "svm", "logreg",
                                             "combo"}));
  for (const Json& method : methods) {
    const bool probabilities = method.at("log_loss_defined").get<bool>();
    const std::string name = string_at(method, "method");
    EXPECT_EQ(probabilities, name != "knn" && name != "rocchio") << name;
    EXPECT_EQ(method.at("pooled").at("log_loss").is_null(), !probabilities);
  }
  // One method alone: the same numbers as its entry in --method all.
  const Json nb = json_report(
      run_autocat({"eval", "--folds", "3", "--seed", "4", "--method", "nb", "--json", train}));
  EXPECT_EQ(nb.at("methods").at(0).at("folds").dump(), methods[2].at("folds").dump());
  EXPECT_EQ(nb.at("methods").at(0).at("pooled").dump(), methods[2].at("pooled").dump());
}

TEST_F(CliEvalTest, FoldsAreDeterministicForASeed) {
  const std::string train = test_data("fixture_train.jsonl");
  const Json first =
      json_report(run_autocat({"eval", "--folds", "4", "--seed", "9", "--json", train}));
  const Json second =
      json_report(run_autocat({"eval", "--folds", "4", "--seed", "9", "--json", train}));
  EXPECT_EQ(first.at("methods").dump(), second.at("methods").dump());
}

TEST_F(CliEvalTest, FoldsHumanOutput) {
  const std::string svg = scratch_.file("folds.svg");
  const CliResult result = run_autocat(
      {"eval", "--folds", "3", "--method", "nb", "--plot", svg, test_data("fixture_train.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("3-fold cross-validation (stratified, seed 1) of 24 documents in 3 "
                             "categories, one-of\ndocuments held out per fold: 8 8 8\n",
                             0),
            0u)
      << result.out;
  EXPECT_TRUE(contains(result.out, "mean \u00b1 sample standard deviation over the folds:\n"));
  EXPECT_TRUE(contains(result.out, "\nnb by fold:\n"));
  EXPECT_TRUE(contains(result.out,
                       "\npooled over the held-out documents of every fold: 24 "
                       "documents with nb\n"));
  EXPECT_TRUE(contains(result.out, "confusion matrix drawn in " + svg));
  std::string error;
  EXPECT_TRUE(well_formed_xml(read_file(svg), &error)) << error;
  EXPECT_TRUE(contains(read_file(svg), "Confusion matrix: nb, 3-fold cross-validation, accuracy"));

  const CliResult all =
      run_autocat({"eval", "--folds", "3", "--method", "all", test_data("fixture_train.jsonl")});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(contains(all.out, "log-loss of knn: n/a (scores of knn are not probabilities)\n"))
      << all.out;
  for (const char* method :
       {"\nknn ", "\nrocchio ", "\nnb ", "\nbnb ", "\ncnb ", "\nsvm ", "\nlogreg "}) {
    EXPECT_TRUE(contains(all.out, method)) << method;
  }
}

// A record whose text repeats another's (a re-sent item, a reply's subject
// line) is held out with it: reported, and counted in the JSON.
TEST_F(CliEvalTest, FoldsKeepCopiesTogetherAndSaySo) {
  const std::string path = input(read_file(test_data("fixture_train.jsonl")) +
                                 record("again-1", {"sports"}, "The striker scored in the match.") +
                                 record("again-2", {"sports"}, "The striker scored in the match."));
  const CliResult result = run_autocat({"eval", "--folds", "3", "--method", "nb", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out,
                       "documents with the same terms as an earlier one: 1 (each held out in the "
                       "same fold as it)\n"))
      << result.out;
  const Json report =
      json_report(run_autocat({"eval", "--folds", "3", "--method", "nb", "--json", path}));
  EXPECT_EQ(number_at(report, "copied_documents"), 1);
  EXPECT_EQ(number_at(report, "documents"), 26);
}

TEST_F(CliEvalTest, FoldsWithTrainingOptionsAndUnlabelledDocuments) {
  const std::string train = read_file(test_data("fixture_train.jsonl"));
  const std::string path =
      input(train + record("u1", {}, "The team ate bread.") + record("u2", {}, "Stars and soup.") +
            record("u3", {}, "A match under the telescope."));
  // Unlabelled documents are skipped by training unless kept.
  const Json skipped = json_report(run_autocat(
      {"eval", "--folds", "3", "--stemmer", "english", "--alpha", "0.5", "--json", path}));
  EXPECT_EQ(number_at(skipped, "documents"), 24);
  EXPECT_EQ(number_at(skipped, "skipped_unlabelled"), 3);
  EXPECT_EQ(number_at(skipped, "counted_unlabelled"), 0);
  // Kept, they make the data any-of, which counts them as "no category".
  const Json kept =
      json_report(run_autocat({"eval", "--folds", "3", "--keep-unlabelled", "--json", path}));
  EXPECT_EQ(number_at(kept, "documents"), 27);
  EXPECT_EQ(string_at(kept, "decision"), "any-of");
  EXPECT_EQ(string_at(kept, "unlabelled"), "count");
  EXPECT_EQ(number_at(kept, "counted_unlabelled"), 3);
  EXPECT_EQ(number_at(kept.at("methods").at(0).at("pooled"), "documents"), 27);
}

TEST_F(CliEvalTest, FoldsBadInput) {
  const std::string train = test_data("fixture_train.jsonl");
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"--folds", "1", train},
       2,
       "autocat eval: --folds must be at least 2 (each fold is held out once while the others "
       "train), got 1 (see autocat eval --help)"},
      {{"--folds", "x", train},
       2,
       "autocat eval: --folds needs a whole number, got 'x' (see autocat eval --help)"},
      {{"--folds", "9", train},
       1,
       "autocat: 9 folds need at least 9 documents in every category; category 'food' has 8 "
       "(use fewer folds)"},
      {{"--folds", "3", "--model", model_, train},
       2,
       "autocat eval: --folds trains its own models on INPUT, so --model is not used; drop "
       "--model, or drop --folds to evaluate that model (see autocat eval --help)"},
      {{"--folds", "3", "--shared-categories", train},
       2,
       "autocat eval: --shared-categories needs --model: with --folds every category is both "
       "trained and evaluated (see autocat eval --help)"},
      {{"--folds", "3", "--method", "all", "--plot", "x.svg", train},
       2,
       "autocat eval: --plot draws the confusion matrix of one method; choose one with --method "
       "(see autocat eval --help)"},
      {{"--folds", "3", "--method", "best", train},
       2,
       "autocat eval: unknown method 'best'; choose one of knn, rocchio, nb, bnb, cnb, svm, "
       "logreg, combo (see autocat eval --help)"},
      {{"--folds", "3", "--method", "nb", "--method", "all", train},
       2,
       "autocat eval: --method given more than once (see autocat eval --help)"},
      {{"--model", model_, "--method", "all", train},
       2,
       "autocat eval: --method all needs --folds; with --model, evaluate one method at a time "
       "(see autocat eval --help)"},
      {{"--model", model_, "--stemmer", "english", train},
       2,
       "autocat eval: --stemmer is a training option: it needs --folds (the model in --model "
       "was trained with its own options) (see autocat eval --help)"},
      {{"--model", model_, "--seed", "3", train},
       2,
       "autocat eval: --seed needs --folds (see autocat eval --help)"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"eval"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, c.exit_code) << c.error;
    EXPECT_EQ(error_line(result), c.error);
    EXPECT_EQ(result.out, "");
  }
}

// The models of the folds live in a temporary directory that is removed,
// whether the run succeeds or fails after training.
TEST_F(CliEvalTest, FoldsLeaveNoTemporaryFiles) {
  const std::string tmp = scratch_.file("tmp");
  fs::create_directory(tmp);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const CliResult ok =
      run_autocat({"eval", "--folds", "3", "--json", test_data("fixture_train.jsonl")});
  const CliResult failed =
      run_autocat({"eval", "--folds", "9", "--json", test_data("fixture_train.jsonl")});
  if (old != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  for (const auto& entry : fs::directory_iterator(tmp)) {
    ADD_FAILURE() << "left behind: " << entry.path();
  }
}

TEST_F(CliEvalTest, HelpDescribesTheNewOptions) {
  const CliResult help = run_autocat({"eval", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  for (const char* option :
       {"--folds K", "--seed N", "--plot FILE", "--unlabelled count|skip", "--shared-categories",
        "Log-loss", "--stemmer LANG", "--keep-unlabelled"}) {
    EXPECT_TRUE(contains(help.out, option)) << option;
  }
  // Training help leaves out what eval documents itself.
  EXPECT_FALSE(contains(help.out, "default method for index/classify"));
}

}  // namespace
}  // namespace autocat
