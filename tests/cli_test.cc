// End-to-end tests of the `autocat` tool: the real binary, on-disk model
// and databases in a temporary directory, over the fixture corpus
// (tests/data/fixture_*: categories food, science, sports).
#include "indexer/cli.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "autocat/types.h"
#include "indexer/output.h"
#include "indexer/progress.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

using internal::Json;
using testing_util::CliResult;
using testing_util::json;
using testing_util::lines_of;
using testing_util::number_at;
using testing_util::run_autocat;
using testing_util::string_at;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

const char kSportsText[] = "The striker scored in the match and the team won the final.";

std::vector<std::string> category_names(const Json& list) {
  std::vector<std::string> names;
  for (const Json& entry : list) names.push_back(string_at(entry, "name"));
  return names;
}

std::vector<std::string> category_names_of_strings(const Json& list) {
  std::vector<std::string> names;
  for (const Json& entry : list) names.push_back(entry.get<std::string>());
  return names;
}

class CliTest : public testing::Test {
 protected:
  // One model for the whole suite: training is the slow part.
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    model_ = dir_->file("model");
    train_result_ = new CliResult(
        run_autocat({"train", "--model", model_, "--json", test_data("fixture_train.jsonl")}));
  }
  static void TearDownTestSuite() {
    delete train_result_;
    delete dir_;
    train_result_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(train_result_->exit_code, 0) << train_result_->err; }

  // Indexes the folder tree and the JSONL test file into `db`.
  static CliResult index_fixtures(const std::string& db, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"index", "--model", model_, "--db", db, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(test_data("fixture_tree"));
    args.push_back(test_data("fixture_test.jsonl"));
    return run_autocat(args);
  }

  static TempDir* dir_;
  static std::string model_;
  static CliResult* train_result_;
  TempDir scratch_;
};

TempDir* CliTest::dir_ = nullptr;
std::string CliTest::model_;
CliResult* CliTest::train_result_ = nullptr;

TEST_F(CliTest, TrainPrintsJsonSummary) {
  const std::vector<std::string> lines = lines_of(train_result_->out);
  ASSERT_EQ(lines.size(), 1u) << train_result_->out;
  const Json summary = json(lines[0]);
  EXPECT_EQ(number_at(summary, "documents"), 24);
  EXPECT_EQ(number_at(summary, "categories"), 3);
  EXPECT_GT(number_at(summary, "terms"), 0);
  EXPECT_GE(number_at(summary, "seconds"), 0);
  // No --method: the default is the method with the best cross-validated
  // objective (ties: the first in all_methods() order).
  const Json* by_method = testing_util::member(summary, "method_cross_validation");
  ASSERT_TRUE(by_method != nullptr && by_method->is_object());
  // Every method, combo too (its objective cross-fitted).
  EXPECT_EQ(by_method->size(), all_methods().size());
  std::string best_method;
  double best_objective = -1;
  for (Method method : all_methods()) {
    const double value = number_at(*by_method, method_name(method));
    if (value > best_objective) {
      best_objective = value;
      best_method = method_name(method);
    }
  }
  EXPECT_EQ(string_at(summary, "default_method"), best_method);
  EXPECT_TRUE(summary.at("default_method_cross_validated").get<bool>());
  EXPECT_EQ(number_at(summary, "ngrams"), 1);
  // Naive Bayes' alpha, per method, from the grid 0.00001 .. 1.
  const std::vector<double> alpha_grid = {0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003,
                                          0.01,    0.03,    0.1,    0.3,    1.0};
  const Json* alpha_tried = testing_util::member(summary, "nb_alpha_cross_validation");
  ASSERT_TRUE(alpha_tried != nullptr && alpha_tried->is_object());
  for (const char* method : {"nb", "bnb", "cnb"}) {
    const double alpha = number_at(summary.at("nb_alpha"), method);
    EXPECT_NE(std::find(alpha_grid.begin(), alpha_grid.end(), alpha), alpha_grid.end())
        << method << " " << alpha;
    EXPECT_EQ(alpha_tried->at(method).size(), alpha_grid.size()) << method;
  }
  // One label per document: one-of, with the cross-validated settings.
  EXPECT_EQ(string_at(summary, "decision"), "one-of");
  EXPECT_TRUE(summary.at("tuned").get<bool>());
  EXPECT_GE(number_at(summary, "knn_k"), 10);
  // 9 k x 2 powers, then smaller k while the best sits at the grid's low edge.
  EXPECT_GE(summary.at("knn_cross_validation").size(), 18u);
  EXPECT_EQ(summary.at("rocchio_cross_validation").size(), 7u);
  // C picked from the cross-validation grids (svm 0.3, 1, 3; logreg 10, 30).
  const double svm_c = number_at(summary, "svm_c");
  EXPECT_TRUE(svm_c == 0.3 || svm_c == 1 || svm_c == 3) << svm_c;
  const double logreg_c = number_at(summary, "logreg_c");
  EXPECT_TRUE(logreg_c == 10 || logreg_c == 30) << logreg_c;
  const Json* never = testing_util::member(summary, "never_assigned");
  ASSERT_TRUE(never != nullptr && never->is_object());
  EXPECT_EQ(never->size(), all_methods().size());  // one list per method
  // Every phase in the order it ran, with its time; the cross-validation's
  // count is its fits: five kinds on each of 5 folds, the one-of winners'
  // refit on each fold, then the calibrations.
  const Json* phases = testing_util::member(summary, "phases");
  ASSERT_TRUE(phases != nullptr && phases->is_array());
  std::vector<std::string> names;
  for (const Json& phase : *phases) {
    names.push_back(string_at(phase, "phase"));
    EXPECT_GE(number_at(phase, "seconds"), 0) << names.back();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"read", "load collection", "cross-validate", "fit",
                                             "write"}));
  EXPECT_EQ(number_at((*phases)[0], "count"), 24);
  EXPECT_EQ(string_at((*phases)[0], "unit"), "documents");
  EXPECT_EQ(number_at((*phases)[2], "count"), 5 * 5 + 5 + 1);
  EXPECT_EQ(number_at((*phases)[3], "count"), 6);
  EXPECT_EQ(number_at(summary, "cross_validations"), 1);
  // A small collection: kNN keeps up with indexing and is stacked.
  EXPECT_GT(number_at(summary, "knn_postings_per_token"), 0);
  EXPECT_EQ(number_at(summary, "knn_cost_limit"), 1000);
  EXPECT_TRUE(summary.at("knn_keeps_up_with_indexing").get<bool>());
  EXPECT_EQ(train_result_->err, "");
}

// kNN's search past --knn-cost-limit: the summary says kNN was left out of
// combo and of the default's choice, and why; combo classifies without it.
TEST_F(CliTest, TrainLeavesKnnTooSlowForIndexingOutOfTheDefault) {
  TempDir dir;
  const CliResult result = run_autocat({"train", "--model", dir.file("m"), "--knn-cost-limit",
                                        "0.5", test_data("fixture_train.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::regex_search(
      result.out, std::regex("default method  [a-z]+ \\(cross-validated: accuracy [0-9.]+\\); "
                             "kNN left out of combo and of this choice: at this size its "
                             "search walks about [0-9]+ postings per token of a document, past "
                             "--knn-cost-limit 0.5, and would slow indexing\n")))
      << result.out;
  EXPECT_EQ(result.out.find("default method  knn"), std::string::npos) << result.out;
  const std::string input = dir.file("in.jsonl");
  write_file(input,
             "{\"id\": \"x\", \"text\": \"The striker scored as the home team won the match\"}\n");
  const CliResult explained =
      run_autocat({"explain", "--model", dir.file("m"), "--method", "combo", "--json", input});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_EQ(explained.out.find("\"knn\""), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("\"svm\""), std::string::npos) << explained.out;
  // A refit keeps the settings: kNN stays out, and the summary says so.
  const std::string more = dir.file("more.jsonl");
  write_file(more,
             "{\"id\": \"sp-new\", \"labels\": [\"sports\"], \"text\": \"The keeper saved "
             "a penalty in the final match\"}\n");
  const CliResult refit = run_autocat({"train", "--model", dir.file("m"), "--add", more});
  ASSERT_EQ(refit.exit_code, 0) << refit.err;
  EXPECT_NE(refit.out.find("; kNN left out of combo and of this choice"), std::string::npos)
      << refit.out;
  EXPECT_EQ(refit.out.find("default method  knn"), std::string::npos) << refit.out;
  EXPECT_NE(run_autocat({"train", "--model", dir.file("n"), "--knn-cost-limit", "-1",
                         test_data("fixture_train.jsonl")})
                .exit_code,
            0);
}

// --progress: a line as each phase ends, then the collection's size.
TEST_F(CliTest, TrainProgressShowsEveryPhase) {
  TempDir dir;
  const CliResult result = run_autocat(
      {"train", "--model", dir.file("m"), "--progress", test_data("fixture_train.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* line :
       {"read: 24 documents in ", "load collection: ", "cross-validate: 31 fits in ",
        "expected model size ", "fit: 6 models in ", "write: ", "trained on 24 documents ("}) {
    EXPECT_NE(("\n" + result.err).find(std::string("\n") + line), std::string::npos)
        << line << result.err;
  }
  // The expected size is said before the model is written, and the report
  // gives it beside the size written.
  EXPECT_LT(result.err.find("expected model size "), result.err.find("fit: 6 models in "));
  EXPECT_NE(result.out.find("  model files  "), std::string::npos) << result.out;
  const CliResult quiet =
      run_autocat({"train", "--model", dir.file("q"), "--quiet", test_data("fixture_train.jsonl")});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

TEST_F(CliTest, TrainHumanSummaryWithOptions) {
  const std::string model = scratch_.file("nb-model");
  const CliResult result =
      run_autocat({"train", "--model", model, "--method", "nb", "--stemmer", "english",
                   "--features", "50", "--select", "chi2", "--per-category", "--alpha", "0.5",
                   "--split", "train", test_data("fixture_train.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // fixture_train.jsonl holds 22 documents of split "train" and 2 of "test".
  EXPECT_NE(result.out.find("documents       22\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("categories      3"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("selected"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("default method  nb\n"), std::string::npos) << result.out;
  // --alpha fixes every Naive Bayes method's alpha.
  EXPECT_NE(result.out.find("alpha nb = 0.5, bnb = 0.5, cnb = 0.5\n"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("seconds"), std::string::npos) << result.out;

  // The model's default method and stemmer are used by classify.
  const std::string input = scratch_.file("in.jsonl");
  write_file(input, "{\"id\": \"x\", \"text\": \"Strikers scoring goals for teams\"}\n");
  const CliResult classified = run_autocat({"classify", "--model", model, "--json", input});
  ASSERT_EQ(classified.exit_code, 0) << classified.err;
  const Json line = json(lines_of(classified.out).at(0));
  EXPECT_EQ(string_at(line, "method"), "nb");
  EXPECT_EQ(category_names(line.at("categories")), std::vector<std::string>{"sports"});
}

// Training says how many documents repeat an earlier one's terms: its
// cross-validated objectives are optimistic for new text by that much.
TEST_F(CliTest, TrainReportsCopiesInItsCrossValidation) {
  const std::vector<std::string> lines = lines_of(train_result_->out);
  ASSERT_EQ(lines.size(), 1u) << train_result_->out;
  EXPECT_EQ(number_at(json(lines[0]), "tuned_copied_documents"), 0);

  const std::string copies = scratch_.file("copies.jsonl");
  write_file(copies, testing_util::read_file(test_data("fixture_train.jsonl")) +
                         "{\"id\": \"again-1\", \"text\": \"Goals, goals! The striker scored.\", "
                         "\"labels\": [\"sports\"]}\n"
                         "{\"id\": \"again-2\", \"text\": \"the striker scored goals goals\", "
                         "\"labels\": [\"sports\"]}\n");
  const CliResult json_run =
      run_autocat({"train", "--model", scratch_.file("copies-json"), "--json", copies});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  EXPECT_EQ(number_at(json(lines_of(json_run.out).at(0)), "tuned_copied_documents"), 1);
  const CliResult human = run_autocat({"train", "--model", scratch_.file("copies-human"), copies});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("5-fold cross-validation on all 26 documents; 1 repeat an earlier "
                           "one's terms, so its scores are optimistic for new text (eval --folds "
                           "holds copies out together)\n"),
            std::string::npos)
      << human.out;
}

// Short texts whose category is in the order of their words: every
// document of "rising" lists four of these words in the list's order, every
// one of "falling" in reverse. Single words cannot tell them apart; bigrams
// can. `padding_words` more words pad each (the same for both).
std::string ordered_words_corpus(int documents, int padding_words) {
  static const char* const kWords[] = {"amber",  "basil",  "cedar",  "delta",   "ember",
                                       "fjord",  "grove",  "harbor", "indigo",  "juniper",
                                       "kelp",   "lagoon", "maple",  "nectar",  "orchid",
                                       "pepper", "quartz", "raven",  "saffron", "tundra"};
  uint32_t state = 12345;
  const auto next = [&state]() {
    state = state * 1103515245u + 12345u;
    return (state >> 16) % 20;
  };
  std::string out;
  for (int d = 0; d < documents; ++d) {
    std::vector<uint32_t> picked;
    while (picked.size() < 4) {
      const uint32_t word = next();
      if (std::find(picked.begin(), picked.end(), word) == picked.end()) picked.push_back(word);
    }
    const bool rising = d % 2 == 0;
    std::sort(picked.begin(), picked.end());
    if (!rising) std::reverse(picked.begin(), picked.end());
    std::string text;
    for (uint32_t word : picked) text += std::string(kWords[word]) + " ";
    for (int p = 0; p < padding_words; ++p) text += std::string(kWords[next()]) + "x ";
    out += "{\"id\": \"d" + std::to_string(d) + "\", \"text\": \"" + text + "\", \"labels\": [\"" +
           (rising ? "rising" : "falling") + "\"]}\n";
  }
  return out;
}

// Whether train --json's `summary` lists the phase with this detail and count.
bool has_phase(const Json& summary, const std::string& name, const std::string& detail,
               double count) {
  for (const Json& phase : summary.at("phases")) {
    if (string_at(phase, "phase") == name && string_at(phase, "detail") == detail &&
        number_at(phase, "count") == count) {
      return true;
    }
  }
  return false;
}

TEST_F(CliTest, ShortTextsGetTheAnalysisThatCrossValidatesBest) {
  const std::string input = scratch_.file("ordered.jsonl");
  write_file(input, ordered_words_corpus(1200, 0));
  const std::string model = scratch_.file("ordered-model");
  const CliResult trained = run_autocat({"train", "--model", model, "--json", input});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const Json summary = json(lines_of(trained.out).at(0));
  EXPECT_EQ(number_at(summary, "mean_terms_per_document"), 4);
  EXPECT_TRUE(summary.at("analysis_cross_validated").get<bool>());
  const Json& analyses = summary.at("analysis_cross_validation");
  EXPECT_EQ(analyses.size(), 5u) << trained.out;
  // Words alone are a coin toss here; an analysis with bigrams is near
  // perfect, and it is the model's.
  EXPECT_LT(number_at(analyses, "words"), 0.6);
  EXPECT_GT(number_at(analyses, "words and bigrams"), 0.95);
  EXPECT_EQ(number_at(summary, "ngrams"), 2);
  // Each analysis compared is a phase of its own, judged by svm; every
  // method is then cross-validated once, under the winner.
  EXPECT_EQ(number_at(summary, "cross_validations"), 6);
  EXPECT_EQ(number_at(summary, "analysis_sample"), 0);
  // The others are compared at the C the given analysis chose among svm's
  // candidates.
  const double compared_at = number_at(summary, "analysis_svm_c");
  EXPECT_TRUE(compared_at == 0.3 || compared_at == 1.0 || compared_at == 3.0) << compared_at;
  std::vector<std::string> phases;
  for (const Json& phase : summary.at("phases")) {
    const std::string detail = string_at(phase, "detail");
    phases.push_back(string_at(phase, "phase") + (detail.empty() ? "" : " " + detail));
  }
  EXPECT_EQ(phases,
            (std::vector<std::string>{
                "read", "compare analyses words", "compare analyses words and bigrams",
                "compare analyses stems (english)", "compare analyses stems (english) and bigrams",
                "compare analyses words, stopwords kept", "load collection", "cross-validate",
                "fit", "write"}));
  const std::string messages = scratch_.file("ordered-in.jsonl");
  write_file(messages,
             "{\"id\": \"up\", \"text\": \"basil ember kelp raven\"}\n"
             "{\"id\": \"down\", \"text\": \"raven kelp ember basil\"}\n");
  const CliResult classified = run_autocat({"classify", "--model", model, "--json", messages});
  ASSERT_EQ(classified.exit_code, 0) << classified.err;
  const std::vector<std::string> lines = lines_of(classified.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(category_names(json(lines[0]).at("categories")), std::vector<std::string>{"rising"});
  EXPECT_EQ(category_names(json(lines[1]).at("categories")), std::vector<std::string>{"falling"});
  const CliResult human = run_autocat({"train", "--model", scratch_.file("ordered-human"), input});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("  analysis        the best for short texts by svm's cross-validation "
                           "at C = " +
                           cli::format_number(compared_at) + ": words "),
            std::string::npos)
      << human.out;

  // A collection larger than --tuning-sample: the analyses are compared on
  // a uniform sample, and the whole collection, held back meanwhile, is
  // written under the one chosen.
  const CliResult sampled = run_autocat({"train", "--model", scratch_.file("ordered-sampled"),
                                         "--tuning-sample", "1000", "--json", input});
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  const Json sampled_summary = json(lines_of(sampled.out).at(0));
  EXPECT_TRUE(sampled_summary.at("analysis_cross_validated").get<bool>());
  EXPECT_EQ(number_at(sampled_summary, "analysis_sample"), 1000);
  EXPECT_EQ(number_at(sampled_summary, "ngrams"), 2);
  EXPECT_EQ(number_at(sampled_summary, "documents"), 1200);
  EXPECT_EQ(number_at(sampled_summary, "tuned_on_documents"), 1000);
  EXPECT_TRUE(has_phase(sampled_summary, "write collection", "analyzed as chosen", 1200))
      << sampled.out;
  // From standard input the collection cannot be read again: the analysis
  // given is kept, and the summary says why.
  const CliResult piped = run_autocat({"train", "--model", scratch_.file("ordered-piped"),
                                       "--tuning-sample", "1000", "--json", "-"},
                                      input);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  const Json piped_summary = json(lines_of(piped.out).at(0));
  EXPECT_FALSE(piped_summary.at("analysis_cross_validated").get<bool>());
  EXPECT_TRUE(piped_summary.at("analysis_svm_c").is_null());
  EXPECT_EQ(number_at(piped_summary, "ngrams"), 1);
  EXPECT_NE(string_at(piped_summary, "analysis_not_compared").find("standard input"),
            std::string::npos);
  EXPECT_EQ(number_at(piped_summary, "documents"), 1200);

  // An analysis the user names is kept.
  const CliResult fixed = run_autocat(
      {"train", "--model", scratch_.file("ordered-fixed"), "--ngrams", "1", "--json", input});
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  const Json fixed_summary = json(lines_of(fixed.out).at(0));
  EXPECT_FALSE(fixed_summary.at("analysis_cross_validated").get<bool>());
  EXPECT_EQ(number_at(fixed_summary, "ngrams"), 1);

  // Longer texts keep the words: 4 + 40 terms a document.
  const std::string long_input = scratch_.file("ordered-long.jsonl");
  write_file(long_input, ordered_words_corpus(1200, 40));
  const CliResult long_run =
      run_autocat({"train", "--model", scratch_.file("ordered-long"), "--json", long_input});
  ASSERT_EQ(long_run.exit_code, 0) << long_run.err;
  const Json long_summary = json(lines_of(long_run.out).at(0));
  EXPECT_GT(number_at(long_summary, "mean_terms_per_document"), 30);
  EXPECT_FALSE(long_summary.at("analysis_cross_validated").get<bool>());
  EXPECT_EQ(number_at(long_summary, "ngrams"), 1);

  // Long texts first, then short ones: the documents are written as they
  // come once the first thousand look long, yet the whole collection is
  // short texts. Its analyses are still compared, on a sample, and the
  // winner's collection is read again from the input.
  std::string mixed = ordered_words_corpus(1100, 40);
  for (size_t at = mixed.find("\"id\": \"d"); at != std::string::npos;
       at = mixed.find("\"id\": \"d", at)) {
    mixed.replace(at, 8, "\"id\": \"long-");
  }
  mixed += ordered_words_corpus(4000, 0);
  const std::string mixed_input = scratch_.file("ordered-mixed.jsonl");
  write_file(mixed_input, mixed);
  const CliResult mixed_run = run_autocat({"train", "--model", scratch_.file("ordered-mixed"),
                                           "--tuning-sample", "1000", "--json", mixed_input});
  ASSERT_EQ(mixed_run.exit_code, 0) << mixed_run.err;
  const Json mixed_summary = json(lines_of(mixed_run.out).at(0));
  EXPECT_LE(number_at(mixed_summary, "mean_terms_per_document"), 30);
  EXPECT_TRUE(mixed_summary.at("analysis_cross_validated").get<bool>());
  EXPECT_EQ(number_at(mixed_summary, "ngrams"), 2);
  EXPECT_EQ(number_at(mixed_summary, "documents"), 5100);
  EXPECT_TRUE(has_phase(mixed_summary, "read", "again, analyzed as chosen", 5100)) << mixed_run.out;
}

TEST_F(CliTest, BigramModelClassifiesShortMessages) {
  const std::string model = scratch_.file("bigram-model");
  CliResult result = run_autocat({"train", "--model", model, "--ngrams", "2", "--method", "cnb",
                                  "--json", test_data("fixture_train.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json summary = json(lines_of(result.out).at(0));
  EXPECT_EQ(number_at(summary, "ngrams"), 2);
  // Bigrams add terms to the words a unigram model has.
  const Json words = json(lines_of(train_result_->out).at(0));
  EXPECT_GT(number_at(summary, "terms"), number_at(words, "terms"));
  EXPECT_EQ(run_autocat({"train", "--model", scratch_.file("m4"), "--ngrams", "4",
                         test_data("fixture_train.jsonl")})
                .exit_code,
            2);

  // Stopwords only, or words no training document has: one-of still gives
  // every message a category, with every method.
  const std::string input = scratch_.file("short.jsonl");
  write_file(input,
             "{\"id\": \"a\", \"text\": \"What you doing?how are you?\"}\n"
             "{\"id\": \"b\", \"text\": \"qwxz zzyzx\"}\n");
  for (const char* method : {"knn", "rocchio", "nb", "bnb", "cnb", "svm", "logreg"}) {
    for (const std::string& which : {model, model_}) {
      result = run_autocat({"classify", "--model", which, "--method", method, "--json", input});
      ASSERT_EQ(result.exit_code, 0) << result.err;
      for (const std::string& line : lines_of(result.out)) {
        EXPECT_EQ(json(line).at("categories").size(), 1u) << method << ": " << line;
      }
    }
  }
}

TEST_F(CliTest, TrainFromFolderTree) {
  const std::string model = scratch_.file("tree-model");
  const CliResult result =
      run_autocat({"train", "--model", model, "--json", test_data("fixture_tree")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json summary = json(lines_of(result.out).at(0));
  EXPECT_EQ(number_at(summary, "documents"), 9);
  EXPECT_EQ(number_at(summary, "categories"), 3);
}

TEST_F(CliTest, HelpForEverySubcommand) {
  for (const std::string command : {"train", "index", "classify", "search", "eval", "features"}) {
    for (const std::string flag : {"--help", "-h"}) {
      const CliResult result = run_autocat({command, flag});
      EXPECT_EQ(result.exit_code, 0) << command << " " << flag;
      EXPECT_EQ(result.out.rfind("usage: autocat " + command, 0), 0u) << result.out;
      EXPECT_EQ(result.err, "");
    }
  }
  // --help wins over anything else on the line, even a missing --model.
  EXPECT_EQ(run_autocat({"classify", "--bogus", "--help"}).exit_code, 0);
  EXPECT_EQ(run_autocat({"help", "eval"}).out.rfind("usage: autocat eval", 0), 0u);
}

// Each command's help lists every option it takes once, and takes every
// option its help lists: the help is written from the declarations.
TEST_F(CliTest, HelpListsEachAcceptedOptionOnce) {
  for (const std::string command :
       {"train", "index", "classify", "search", "eval", "features", "explain", "recategorize",
        "rules", "split", "learn", "forget"}) {
    const CliResult help = run_autocat({command, "--help"});
    ASSERT_EQ(help.exit_code, 0) << command;
    std::map<std::string, int> entries;
    for (const std::string& line : lines_of(help.out)) {
      if (line.rfind("  --", 0) != 0) continue;
      const size_t end = line.find(' ', 2);
      ++entries[line.substr(2, end == std::string::npos ? std::string::npos : end - 2)];
    }
    EXPECT_GT(entries.size(), 1u) << command;
    for (const auto& [option, count] : entries) {
      EXPECT_EQ(count, 1) << command << " " << option;
      const CliResult given = run_autocat({command, option + "=1"});
      EXPECT_EQ(given.err.find("unknown option"), std::string::npos)
          << command << " " << option << ": " << given.err;
    }
    const CliResult unknown = run_autocat({command, "--no-such-option"});
    EXPECT_EQ(unknown.exit_code, 2) << command;
    if (command != "rules") {  // rules asks for its subcommand first
      EXPECT_NE(unknown.err.find("unknown option '--no-such-option'"), std::string::npos)
          << command << ": " << unknown.err;
    }
  }
}

// "--k 5" and "--k=5" mean the same; "--" ends the options and "-" is an
// argument (standard input).
TEST_F(CliTest, OptionValuesAndArguments) {
  const std::string doc = scratch_.file("doc.txt");
  write_file(doc, kSportsText);
  const CliResult spaced = run_autocat({"classify", "--model", model_, "--k", "3", doc});
  const CliResult joined = run_autocat({"classify", "--model=" + model_, "--k=3", "--", doc});
  ASSERT_EQ(spaced.exit_code, 0) << spaced.err;
  EXPECT_EQ(joined.exit_code, 0) << joined.err;
  EXPECT_EQ(spaced.out, joined.out);
  EXPECT_NE(spaced.out.find("\tsports "), std::string::npos) << spaced.out;
  // After "--", "--json" is an input's name, not the option.
  const CliResult ended = run_autocat({"classify", "--model", model_, "--", "--json"});
  EXPECT_EQ(ended.exit_code, 1) << ended.err;
  EXPECT_NE(ended.err.find("--json"), std::string::npos) << ended.err;
  const std::string jsonl = scratch_.file("stdin.jsonl");
  write_file(jsonl, "{\"id\": \"s\", \"text\": \"" + std::string(kSportsText) + "\"}\n");
  const CliResult piped = run_autocat({"classify", "--model", model_, "-"}, jsonl);
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out.rfind("s\tsports ", 0), 0u) << piped.out;
}

// Every command taking --method lists every method in its help, combo too.
TEST_F(CliTest, MethodHelpListsEveryMethod) {
  for (const std::string command :
       {"train", "index", "classify", "eval", "explain", "recategorize", "rules"}) {
    const CliResult result = run_autocat({command, "--help"});
    ASSERT_EQ(result.exit_code, 0) << command;
    const size_t start = result.out.find("  --method M ");
    ASSERT_NE(start, std::string::npos) << command;
    const size_t end = result.out.find("\n  -", start);
    const std::string entry = result.out.substr(start, end - start);
    for (Method method : all_methods()) {
      EXPECT_NE(entry.find(" " + method_name(method)), std::string::npos)
          << command << ": " << method_name(method) << " missing from " << entry;
    }
    for (const std::string& line : lines_of(entry)) {
      EXPECT_LE(line.size(), 80u) << command << ": " << line;
    }
  }
}

// eval's help does not deny knn and rocchio the probabilities they give.
TEST_F(CliTest, EvalHelpSaysEveryMethodGivesProbabilities) {
  const CliResult result = run_autocat({"eval", "--help"});
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.find("Only nb, bnb"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Every method's scores are calibrated probabilities"),
            std::string::npos)
      << result.out;
}

TEST_F(CliTest, OverviewWithoutSubcommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, std::vector<std::string>{"--help"}}) {
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_NE(result.out.find("commands:"), std::string::npos);
    for (const char* command : {"train", "index", "classify", "search", "eval", "features"}) {
      EXPECT_NE(result.out.find(std::string("  ") + command), std::string::npos) << command;
    }
  }
}

TEST_F(CliTest, ClassifyJsonLines) {
  const CliResult result =
      run_autocat({"classify", "--model", model_, "--json", test_data("fixture_test.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  const std::vector<std::string> lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 9u);
  for (const std::string& text : lines) {
    const Json line = json(text);
    ASSERT_TRUE(line.is_object()) << text;
    const std::string id = string_at(line, "id");
    EXPECT_EQ(string_at(line, "method"), "knn");
    const Json* categories = testing_util::member(line, "categories");
    ASSERT_TRUE(categories != nullptr && categories->is_array()) << text;
    const Json* scores = testing_util::member(line, "scores");
    ASSERT_TRUE(scores != nullptr && scores->is_object()) << text;
    EXPECT_EQ(scores->size(), 3u);
    for (const auto& [name, score] : scores->items()) {
      EXPECT_GE(score.get<double>(), 0.0) << name;
      EXPECT_LE(score.get<double>(), 1.0) << name;
    }
    // One-of: exactly the best category; ids name their category.
    ASSERT_EQ(categories->size(), 1u) << text;
    const std::string expected = id.rfind("t-sp-", 0) == 0    ? "sports"
                                 : id.rfind("t-sci-", 0) == 0 ? "science"
                                                              : "food";
    EXPECT_EQ(category_names(*categories), std::vector<std::string>{expected}) << text;
  }
}

TEST_F(CliTest, ClassifySportsTextWithEveryMethod) {
  const std::string input = scratch_.file("sports.jsonl");
  write_file(input, std::string("{\"id\": \"s1\", \"text\": \"") + kSportsText + "\"}\n");
  for (const std::string method : {"knn", "rocchio", "nb", "bnb", "cnb"}) {
    const CliResult result =
        run_autocat({"classify", "--model", model_, "--method", method, "--json", input});
    ASSERT_EQ(result.exit_code, 0) << method << ": " << result.err;
    const Json line = json(lines_of(result.out).at(0));
    EXPECT_EQ(string_at(line, "id"), "s1");
    EXPECT_EQ(string_at(line, "method"), method);
    EXPECT_EQ(category_names(line.at("categories")), std::vector<std::string>{"sports"}) << method;
    if (method == "nb" || method == "bnb" || method == "cnb") {
      double sum = 0;
      for (const auto& member : line.at("scores").items()) sum += member.value().get<double>();
      EXPECT_NEAR(sum, 1.0, 1e-6) << method << ": posteriors sum to 1";
    }
  }
}

TEST_F(CliTest, ClassifyReadsJsonLinesFromStdin) {
  const std::string input = scratch_.file("stdin.jsonl");
  write_file(input,
             std::string("{\"id\": \"a\", \"text\": \"") + kSportsText +
                 "\"}\n{\"id\": \"b\", \"text\": \"Simmer the garlic and tomato sauce.\"}\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"classify", "--model", model_},
        std::vector<std::string>{"classify", "--model", model_, "-"}}) {
    const CliResult result = run_autocat(args, input);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.rfind("a\tsports ", 0), 0u) << result.out;
    EXPECT_NE(result.out.find("\nb\tfood "), std::string::npos) << result.out;
  }
}

TEST_F(CliTest, ClassifyReadsPlainTextFromStdin) {
  const std::string input = scratch_.file("stdin.txt");
  write_file(input, std::string("\n  ") + kSportsText + "\nThe fans cheered the goalkeeper.\n");
  const CliResult result = run_autocat({"classify", "--model", model_, "-"}, input);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 1u) << result.out;
  EXPECT_EQ(lines[0].rfind("stdin\tsports ", 0), 0u) << lines[0];
}

TEST_F(CliTest, ClassifyPlainFileIsOneDocument) {
  const std::string input = scratch_.file("note.txt");
  write_file(input, std::string(kSportsText) + "\n\nThe fans cheered the goalkeeper.\n");
  const CliResult result = run_autocat({"classify", "--model", model_, "--top", "3", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 1u) << result.out;
  EXPECT_NE(lines[0].find("\tsports "), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("(top: sports "), std::string::npos) << lines[0];
}

TEST_F(CliTest, ClassifyAnyOfWithThreshold) {
  const CliResult result =
      run_autocat({"classify", "--model", model_, "--method", "nb", "--any-of", "--threshold",
                   "0.0000001", "--json", test_data("fixture_test.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const std::string& text : lines_of(result.out)) {
    const Json line = json(text);
    for (const Json& category : line.at("categories")) {
      EXPECT_GE(number_at(category, "score"), 0.0000001) << text;
    }
    EXPECT_GE(line.at("categories").size(), 1u) << text;
  }
}

// classify --json says what was decided and why.
TEST_F(CliTest, ClassifyJsonExplainsTheDecision) {
  const std::string input = scratch_.file("decide.jsonl");
  write_file(input, std::string("{\"id\": \"s1\", \"text\": \"") + kSportsText +
                        "\"}\n{\"id\": \"z\", \"text\": \"qwzx plorble\"}\n");
  CliResult result = run_autocat({"classify", "--model", model_, "--method", "rocchio", "--json",
                                  "--min-score", "0.01", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 2u);
  Json decision = json(lines[0]).at("decision");
  EXPECT_EQ(string_at(decision, "mode"), "one-of");
  EXPECT_FALSE(decision.at("other").get<bool>());
  EXPECT_EQ(string_at(decision, "thresholds"), "minimum score");
  EXPECT_EQ(number_at(decision, "min_score"), 0.01);
  EXPECT_EQ(string_at(decision, "outcome"), "assigned");
  EXPECT_EQ(string_at(decision, "reason"), "best score");
  const auto& candidates = decision.at("candidates");
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(string_at(candidates[0], "name"), "sports");
  EXPECT_TRUE(candidates[0].at("assigned").get<bool>());
  EXPECT_FALSE(candidates[1].at("assigned").get<bool>());
  // No known word: no evidence, said so.
  decision = json(lines[1]).at("decision");
  EXPECT_EQ(string_at(decision, "outcome"), "none");
  EXPECT_EQ(string_at(decision, "reason"), "no word known to the model; no category");

  // Any-of and "other" use the thresholds tuned at training (Rocchio: radius).
  result = run_autocat(
      {"classify", "--model", model_, "--method", "rocchio", "--json", "--other", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  decision = *json(lines_of(result.out)[0]).find("decision");
  EXPECT_TRUE(decision.at("other").get<bool>());
  EXPECT_EQ(string_at(decision, "thresholds"), "tuned radius");
  for (const Json& candidate : decision.at("candidates")) {
    const Json* threshold = testing_util::member(candidate, "threshold");
    if (!candidate.at("assigned").get<bool>() || threshold->is_null()) continue;
    EXPECT_GE(number_at(candidate, "score"), threshold->get<double>());
  }
  result = run_autocat({"classify", "--model", model_, "--json", "--any-of", input});
  decision = *json(lines_of(result.out)[0]).find("decision");
  EXPECT_EQ(string_at(decision, "mode"), "any-of");
  EXPECT_EQ(string_at(decision, "thresholds"), "tuned per category");
}

// Categories any-of never assigns are named in the human summary, with why:
// too few documents to calibrate, or no threshold good enough in
// cross-validation. The list stops after ten.
TEST_F(CliTest, TrainNamesNeverAssignedCategories) {
  const std::string input = scratch_.file("rare.jsonl");
  std::string records;
  for (int i = 0; i < 8; ++i) {
    records += "{\"id\": \"f" + std::to_string(i) +
               "\", \"labels\": [\"food\"], \"text\": \"chef pasta sauce bread\"}\n";
  }
  // 12 categories, each on 6 of 72 identical texts: no cut separates them.
  for (int i = 0; i < 72; ++i) {
    records += "{\"id\": \"s" + std::to_string(i) + "\", \"labels\": [\"sports\", \"rare" +
               std::to_string(i % 12 + 10) + "\"], \"text\": \"team match goal league\"}\n";
  }
  write_file(input, records);
  const std::string model = scratch_.file("rare-model");
  CliResult result = run_autocat({"train", "--model", model, "--method", "rocchio", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("12 of 14 categories"), std::string::npos) << result.err;
  // Named in order, ten of them, with the reason; the rest counted.
  EXPECT_NE(result.err.find("never assign them. No threshold reached F1 0.3 in "
                            "cross-validation: rare10 (6 documents), rare11 (6 documents), "),
            std::string::npos)
      << result.err;
  for (int c = 10; c < 20; ++c) {
    EXPECT_NE(result.err.find("rare" + std::to_string(c) + " (6 documents)"), std::string::npos)
        << c << result.err;
  }
  EXPECT_EQ(result.err.find("rare20"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("rare19 (6 documents). And 2 more"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("food ("), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("sports ("), std::string::npos) << result.err;

  // Every category too rare to calibrate, and none to borrow a cut from.
  records.clear();
  const char* const words[] = {"team match goal", "chef pasta sauce", "star orbit comet",
                               "court judge jury"};
  for (int i = 0; i < 12; ++i) {
    const char* const name[] = {"alpha", "beta", "gamma", "delta"};
    records += "{\"id\": \"d" + std::to_string(i) + "\", \"labels\": [\"" + name[i % 4] +
               "\"], \"text\": \"" + words[i % 4] + "\"}\n";
  }
  write_file(input, records);
  result = run_autocat({"train", "--model", model, "--method", "rocchio", "--any-of", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("4 of 4 categories"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("Too few documents to calibrate a threshold: alpha (3 documents), "),
            std::string::npos)
      << result.err;
  // svm scores every held-out document, its positives highest: the folds
  // give these categories cuts of their own, and the summary says so.
  result = run_autocat({"train", "--model", model, "--method", "svm", "--any-of", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.find("get no threshold"), std::string::npos) << result.err;
  EXPECT_NE(result.out.find("rare categories  4 categories of 2-4 documents: own cuts accepting "
                            "about 1x their count of out-of-fold scores with svm, logreg; the "
                            "others' median cut with knn, rocchio, nb, bnb, cnb, combo"),
            std::string::npos)
      << result.out;
  result = run_autocat({"train", "--model", model, "--method", "svm", "--any-of", "--json", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json summary = json(lines_of(result.out).at(0));
  EXPECT_EQ(number_at(summary, "rare_categories"), 4);
  EXPECT_GT(number_at(summary.at("rare_cut_ratio"), "svm"), 0.0) << result.out;
  EXPECT_EQ(testing_util::member(summary.at("rare_cut_ratio"), "nb"), nullptr) << result.out;
}

// Each category any-of never assigns is named in the summary with why, and
// in --json with the reason: a category with a single document is too rare
// to calibrate (and no other has a cut to lend it); six that share one text
// get no useful cut out of fold.
TEST_F(CliTest, TrainSummaryNamesEachNeverAssignedCategoryWithWhy) {
  const std::string input = scratch_.file("single.jsonl");
  std::string records =
      "{\"id\": \"solo\", \"labels\": [\"solo\"], \"text\": \"violin cello sonata\"}\n";
  // Twelve categories of five documents with the same text: no cut of
  // theirs reaches F1 0.2 (accepting all 60 documents gives 10 / 65).
  for (int i = 0; i < 60; ++i) {
    records += "{\"id\": \"d" + std::to_string(i) + "\", \"labels\": [\"same" +
               std::to_string(i % 12) + "\"], \"text\": \"team match goal league\"}\n";
  }
  write_file(input, records);
  const std::string model = scratch_.file("single-model");
  CliResult result =
      run_autocat({"train", "--model", model, "--method", "rocchio", "--any-of", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(
      result.out.find("\n  never assigned  13 of 13 categories by rocchio any-of decisions:\n"),
      std::string::npos)
      << result.out;
  EXPECT_TRUE(std::regex_search(
      result.out,
      std::regex("\n    solo +too few positive training documents to calibrate a threshold: "
                 "1 \\(5 needed\\), and no other category's "
                 "threshold to borrow\n")))
      << result.out;
  for (int c = 0; c < 12; ++c) {
    EXPECT_TRUE(std::regex_search(
        result.out, std::regex("\n    same" + std::to_string(c) +
                               " +no cut of its out-of-fold scores reached F1 0\\.[23] \\(5 "
                               "positive training documents\\), so its threshold is above "
                               "every score\n")))
        << c << result.out;
  }
  result =
      run_autocat({"train", "--model", model, "--method", "rocchio", "--any-of", "--json", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json summary = json(lines_of(result.out)[0]);
  EXPECT_EQ(summary.at("never_assigned").at("rocchio").size(), 13u);
  const Json& reasons = summary.at("never_assigned_reasons").at("rocchio");
  ASSERT_EQ(reasons.size(), 13u) << result.out;
  for (const Json& entry : reasons) {
    const bool solo = string_at(entry, "name") == "solo";
    EXPECT_EQ(number_at(entry, "documents"), solo ? 1 : 5) << entry.dump();
    EXPECT_EQ(string_at(entry, "reason"), solo ? "too_few_documents" : "no_useful_threshold")
        << entry.dump();
  }
}

// A model trained on multi-label data decides any-of unless told otherwise.
TEST_F(CliTest, MultiLabelTrainingDetectsAnyOf) {
  const std::string input = scratch_.file("multi.jsonl");
  std::string records;
  for (int i = 0; i < 8; ++i) {
    records += "{\"id\": \"s" + std::to_string(i) +
               "\", \"labels\": [\"sports\"], \"text\": \"team match goal league\"}\n";
    records += "{\"id\": \"f" + std::to_string(i) +
               "\", \"labels\": [\"food\"], \"text\": \"chef pasta sauce bread\"}\n";
    records += "{\"id\": \"b" + std::to_string(i) +
               "\", \"labels\": [\"food\", \"sports\"], \"text\": \"team chef pasta "
               "match\"}\n";
  }
  write_file(input, records);
  const std::string model = scratch_.file("multi-model");
  CliResult result = run_autocat({"train", "--model", model, "--json", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(string_at(json(lines_of(result.out)[0]), "decision"), "any-of");
  const std::string query = scratch_.file("query.jsonl");
  write_file(query, "{\"id\": \"q\", \"text\": \"the team chef cooked pasta before the match\"}\n");
  result = run_autocat({"classify", "--model", model, "--json", query});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json line = json(lines_of(result.out)[0]);
  EXPECT_EQ(category_names(line.at("categories")), (std::vector<std::string>{"food", "sports"}))
      << result.out;
  // explain decides as classify does, and says why.
  result = run_autocat({"explain", "--model", model, "--method", "rocchio", query});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> explained = lines_of(result.out);
  ASSERT_GE(explained.size(), 3u) << result.out;
  EXPECT_EQ(explained[0], "q: food, sports") << result.out;
  EXPECT_EQ(explained[2], "  any-of: 2 categories reached their radius") << result.out;
  result = run_autocat({"explain", "--model", model, "--json", query});
  const Json why = json(lines_of(result.out)[0]);
  EXPECT_EQ(string_at(why, "decision"), "any-of");
  EXPECT_EQ(category_names(why.at("categories")), (std::vector<std::string>{"food", "sports"}));
  // --one-of overrides the model's mode; training with --one-of sets it.
  result = run_autocat({"classify", "--model", model, "--json", "--one-of", query});
  EXPECT_EQ(json(lines_of(result.out)[0]).at("categories").size(), 1u);
  result = run_autocat({"train", "--model", model, "--json", "--one-of", input});
  EXPECT_EQ(string_at(json(lines_of(result.out)[0]), "decision"), "one-of");
}

// True if `text` holds a control byte other than a line break or a tab (the
// column separator of human output): ESC [ ... would drive the terminal.
bool has_control_byte(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n' && c != '\t') || u == 0x7F;
  });
}

// Ids, titles and text are the input's: human output and messages show their
// control bytes escaped (\x1b), --json escapes them as JSON does.
TEST_F(CliTest, ControlBytesAreEscapedInHumanOutput) {
  const std::string input = scratch_.file("escape.jsonl");
  write_file(input,
             "{\"id\": \"evil\\u001b[2J\\u0000x\", \"title\": \"T\\u001b]0;pwn\\u0007\", "
             "\"text\": \"The striker scored a goal \\u001b[31m\"}\n");
  const CliResult classified = run_autocat({"classify", "--model", model_, input});
  ASSERT_EQ(classified.exit_code, 0) << classified.err;
  EXPECT_FALSE(has_control_byte(classified.out)) << classified.out;
  EXPECT_EQ(classified.out.rfind("evil\\x1b[2J\\x00x\tsports ", 0), 0u) << classified.out;
  const CliResult classified_json = run_autocat({"classify", "--model", model_, "--json", input});
  ASSERT_EQ(classified_json.exit_code, 0) << classified_json.err;
  EXPECT_EQ(string_at(json(lines_of(classified_json.out).at(0)), "id"),
            std::string("evil\x1b[2J\0x", 10));

  const std::string db = scratch_.file("escape-db");
  ASSERT_EQ(run_autocat({"index", "--model", model_, "--db", db, input}).exit_code, 0);
  const CliResult searched = run_autocat({"search", "--db", db, "--facets", "striker"});
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  EXPECT_FALSE(has_control_byte(searched.out)) << searched.out;
  EXPECT_NE(searched.out.find("1. evil\\x1b[2J\\x00x  [sports"), std::string::npos) << searched.out;
  EXPECT_NE(searched.out.find("   T\\x1b]0;pwn\\x07"), std::string::npos) << searched.out;

  // An error message quoting the input.
  const std::string twice = scratch_.file("twice.jsonl");
  write_file(twice,
             "{\"id\": \"dup\\u001b[5m\", \"labels\": [\"sports\"], \"text\": \"a goal\"}\n"
             "{\"id\": \"dup\\u001b[5m\", \"labels\": [\"food\"], \"text\": \"a sauce\"}\n");
  const CliResult refused = run_autocat({"train", "--model", scratch_.file("m"), twice});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_FALSE(has_control_byte(refused.err)) << refused.err;
  EXPECT_NE(refused.err.find("duplicate id \"dup\\x1b[5m\""), std::string::npos) << refused.err;
}

TEST_F(CliTest, IndexSearchAndFacets) {
  const std::string db = scratch_.file("db");
  const CliResult indexed = index_fixtures(db);
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  const Json summary = json(lines_of(indexed.out).at(0));
  EXPECT_EQ(number_at(summary, "documents"), 18);
  EXPECT_EQ(number_at(summary, "db_documents"), 18);
  EXPECT_EQ(number_at(summary, "uncategorized"), 0);
  double indexed_total = 0;
  for (const Json& entry : summary.at("categories")) {
    indexed_total += number_at(entry, "count");
  }
  EXPECT_EQ(indexed_total, 18);

  // Every document matches an empty query; facets cover them all.
  const CliResult all = run_autocat({"search", "--db", db, "--facets", "--json"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const Json everything = json(lines_of(all.out).at(0));
  EXPECT_EQ(number_at(everything, "matches_estimated"), 18);
  EXPECT_EQ(everything.at("results").size(), 10u);  // default --limit
  std::map<std::string, double> facets;
  double facet_total = 0;
  for (const Json& entry : everything.at("facets")) {
    facets[string_at(entry, "category")] = number_at(entry, "count");
    facet_total += number_at(entry, "count");
  }
  EXPECT_EQ(facet_total, 18);
  EXPECT_EQ(facets, (std::map<std::string, double>{{"food", 6}, {"science", 6}, {"sports", 6}}));

  // Filtering by each category matches exactly its facet count.
  for (const auto& [category, count] : facets) {
    const CliResult filtered = run_autocat(
        {"search", "--db", db, "--category", category, "--limit", "100", "--facets", "--json"});
    ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
    EXPECT_EQ(filtered.err, "");
    const Json result = json(lines_of(filtered.out).at(0));
    EXPECT_EQ(number_at(result, "matches_estimated"), count) << category;
    EXPECT_EQ(result.at("results").size(), count) << category;
    for (const Json& match : result.at("results")) {
      EXPECT_EQ(category_names(match.at("categories")), std::vector<std::string>{category});
    }
    const Json& only = result.at("facets").at(0);
    EXPECT_EQ(string_at(only, "category"), category);
    EXPECT_EQ(number_at(only, "count"), count);
  }

  // Two categories: the union.
  const CliResult two = run_autocat({"search", "--db", db, "--category", "sports", "--category",
                                     "food", "--limit", "100", "--json"});
  EXPECT_EQ(number_at(json(lines_of(two.out).at(0)), "matches_estimated"), 12);
}

// --exact counts every match (a filtered, limited search otherwise prints
// Xapian's estimate, "about N"); --facets-top keeps the largest facets.
TEST_F(CliTest, SearchCountsExactlyWhenAskedAndCutsFacets) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index_fixtures(db).exit_code, 0);
  const std::vector<std::string> query = {"team", "OR", "sauce", "OR", "comet", "OR", "goal"};
  std::vector<std::string> all_args = {"search", "--db", db, "--limit", "100", "--json"};
  all_args.insert(all_args.end(), query.begin(), query.end());
  const CliResult all = run_autocat(all_args);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const double matching = json(lines_of(all.out).at(0)).at("results").size();
  ASSERT_GT(matching, 1);

  std::vector<std::string> exact_args = {"search", "--db", db, "--limit", "1", "--exact", "--json"};
  exact_args.insert(exact_args.end(), query.begin(), query.end());
  const Json exact = json(lines_of(run_autocat(exact_args).out).at(0));
  EXPECT_EQ(number_at(exact, "matches_estimated"), matching);
  EXPECT_TRUE(exact.at("matches_exact").get<bool>());
  exact_args.pop_back();  // human output: no "about" when counted
  exact_args.erase(std::find(exact_args.begin(), exact_args.end(), "--json"));
  exact_args.push_back("goal");
  const CliResult human = run_autocat(exact_args);
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_EQ(human.out.rfind(std::to_string(static_cast<int>(matching)) + " matches for", 0), 0u)
      << human.out;

  const CliResult top =
      run_autocat({"search", "--db", db, "--facets", "--facets-top", "2", "--json"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const Json cut = json(lines_of(top.out).at(0));
  EXPECT_EQ(cut.at("facets").size(), 2u);
  EXPECT_EQ(number_at(cut, "facet_categories"), 3);
  const CliResult top_human = run_autocat({"search", "--db", db, "--facets", "--facets-top", "2"});
  EXPECT_NE(top_human.out.find("matching documents (the top 2 of 3):\n"), std::string::npos)
      << top_human.out;
  EXPECT_EQ(run_autocat({"search", "--db", db, "--facets-top", "2"}).exit_code, 2);
}

TEST_F(CliTest, SearchTextIsCaseFoldedAndRanked) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index_fixtures(db).exit_code, 0);
  const CliResult lower =
      run_autocat({"search", "--db", db, "--json", "--category", "sports", "team"});
  const CliResult upper = run_autocat({"search", "--db", db, "--json", "TEAM"});
  ASSERT_EQ(lower.exit_code, 0) << lower.err;
  ASSERT_EQ(upper.exit_code, 0) << upper.err;
  const Json lower_json = json(lines_of(lower.out).at(0));
  const Json upper_json = json(lines_of(upper.out).at(0));
  EXPECT_GT(number_at(lower_json, "matches_estimated"), 0);
  EXPECT_EQ(number_at(lower_json, "matches_estimated"), number_at(upper_json, "matches_estimated"));
  const Json& first = upper_json.at("results").at(0);
  EXPECT_EQ(number_at(first, "rank"), 1);
  EXPECT_GT(number_at(first, "weight"), 0);
  EXPECT_FALSE(string_at(first, "id").empty());
  EXPECT_NE(string_at(first, "data"), "<missing>");

  // The QueryParser field works too, and human output lists id and category.
  const CliResult field = run_autocat({"search", "--db", db, "category:food", "AND", "sauce"});
  ASSERT_EQ(field.exit_code, 0) << field.err;
  EXPECT_NE(field.out.find("[food "), std::string::npos) << field.out;
  EXPECT_EQ(field.out.find("[sports "), std::string::npos) << field.out;
}

TEST_F(CliTest, StemmerIsRecordedAndSearchParsesLikeXapian) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index_fixtures(db, {"--stemmer", "english"}).exit_code, 0);
  EXPECT_EQ(Xapian::Database(db).get_metadata("autocat:stemmer"), "english");
  // Stemmed queries find other forms ("goals" -> Zgoal); a stopword-only
  // AND term does not block the match (Xapian drops it outside phrases).
  const CliResult plural = run_autocat({"search", "--db", db, "--json", "goals"});
  const CliResult singular = run_autocat({"search", "--db", db, "--json", "goal"});
  const CliResult with_stopword = run_autocat({"search", "--db", db, "--json", "the AND goal"});
  ASSERT_EQ(plural.exit_code, 0) << plural.err;
  const double matches = number_at(json(lines_of(singular.out).at(0)), "matches_estimated");
  EXPECT_GT(matches, 0);
  EXPECT_EQ(number_at(json(lines_of(plural.out).at(0)), "matches_estimated"), matches);
  EXPECT_EQ(number_at(json(lines_of(with_stopword.out).at(0)), "matches_estimated"), matches);

  // Without stemming the index holds no Z terms and search follows the metadata.
  const std::string plain = scratch_.file("plain");
  ASSERT_EQ(index_fixtures(plain, {"--stemmer", "none"}).exit_code, 0);
  EXPECT_EQ(Xapian::Database(plain).allterms_begin("Z"), Xapian::Database(plain).allterms_end("Z"));
  const CliResult none = run_autocat({"search", "--db", plain, "--json", "goal"});
  EXPECT_EQ(number_at(json(lines_of(none.out).at(0)), "matches_estimated"), matches);
}

TEST_F(CliTest, CategoriesOnlyLeavesTheTextToTheApplication) {
  const std::string db = scratch_.file("db");
  const CliResult indexed = index_fixtures(db, {"--categories-only"});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  Xapian::Database database(db);
  EXPECT_EQ(database.get_termfreq("XCsports"), 6u);
  // Only Q ids, XC categories and the model term: no text terms at all.
  for (Xapian::TermIterator it = database.allterms_begin(); it != database.allterms_end(); ++it) {
    EXPECT_TRUE((*it)[0] == 'Q' || (*it).rfind("XC", 0) == 0 ||
                (*it).rfind("XAUTOCATMODEL", 0) == 0)
        << *it;
  }
  EXPECT_EQ(database.get_metadata("autocat:stemmer"), "");
}

TEST_F(CliTest, QuotedCategoryNamesPassThroughSearchExactly) {
  // Issue 8.12: category:"New York" kept its first word only and lower-cased the rest.
  const std::string train = scratch_.file("train.jsonl");
  std::ofstream(train)
      << R"({"id":"1","text":"subway taxi broadway manhattan","labels":["New York"]})"
      << "\n"
      << R"({"id":"2","text":"tomato basil pasta sauce","labels":["cooking"]})"
      << "\n";
  const std::string model = scratch_.file("model");
  ASSERT_EQ(run_autocat({"train", "--model", model, "--threshold-folds", "0", train}).exit_code, 0);
  const std::string db = scratch_.file("db");
  ASSERT_EQ(run_autocat({"index", "--model", model, "--db", db, train}).exit_code, 0);
  EXPECT_EQ(Xapian::Database(db).get_termfreq("XC:New York"), 1u);
  const CliResult field = run_autocat({"search", "--db", db, "--json", "category:\"New York\""});
  ASSERT_EQ(field.exit_code, 0) << field.err;
  const Json result = json(lines_of(field.out).at(0));
  EXPECT_EQ(number_at(result, "matches_estimated"), 1);
  EXPECT_EQ(string_at(result, "parsed_query"), "Query(0 * XC:New York)");
  const CliResult option = run_autocat({"search", "--db", db, "--json", "--category", "New York"});
  EXPECT_EQ(number_at(json(lines_of(option.out).at(0)), "matches_estimated"), 1);
}

TEST_F(CliTest, ReindexingSameIdsReplaces) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index_fixtures(db).exit_code, 0);
  const CliResult again = index_fixtures(db, {"--method", "rocchio", "--batch", "2"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const Json summary = json(lines_of(again.out).at(0));
  EXPECT_EQ(number_at(summary, "documents"), 18);
  EXPECT_EQ(number_at(summary, "db_documents"), 18);
  EXPECT_EQ(string_at(summary, "method"), "rocchio");
  EXPECT_EQ(Xapian::Database(db).get_doccount(), 18u);
}

TEST_F(CliTest, IndexHumanSummary) {
  const std::string db = scratch_.file("db");
  const CliResult result =
      run_autocat({"index", "--model", model_, "--db", db, test_data("fixture_tree")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("indexed 9 documents into " + db + " (", 0), 0u) << result.out;
  EXPECT_NE(result.out.find("docs/s)"), std::string::npos);
  EXPECT_NE(result.out.find("  sports"), std::string::npos);
  EXPECT_NE(result.out.find("now holds 9 documents"), std::string::npos);
}

TEST_F(CliTest, IndexWithoutCategories) {
  const std::string db = scratch_.file("plain-db");
  const CliResult indexed = index_fixtures(db, {"--no-categories"});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  EXPECT_EQ(number_at(json(lines_of(indexed.out).at(0)), "db_documents"), 18);
  const CliResult search = run_autocat({"search", "--db", db, "--facets", "--json", "team"});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const Json result = json(lines_of(search.out).at(0));
  EXPECT_GT(number_at(result, "matches_estimated"), 0);
  EXPECT_TRUE(result.at("facets").empty());
  // Same terms and positions as a categorized index: a phrase matches.
  const CliResult phrase = run_autocat({"search", "--db", db, "--json", "\"home team\""});
  EXPECT_EQ(number_at(json(lines_of(phrase.out).at(0)), "matches_estimated"), 1);

  // Term for term, position for position, data for data, the documents equal
  // those of a categorized index without their category terms and value.
  const std::string categorized_db = scratch_.file("db");
  ASSERT_EQ(index_fixtures(categorized_db).exit_code, 0);
  const Xapian::Database plain(db), categorized(categorized_db);
  // A file of a folder tree is named by its path as reached from the input.
  const std::string tree_id = "Q" + test_data("fixture_tree") + "/sports/a.txt";
  for (const std::string& id : {std::string("Qt-sp-01"), tree_id, std::string("Qt-fd-03")}) {
    Xapian::PostingIterator plain_it = plain.postlist_begin(id);
    Xapian::PostingIterator categorized_it = categorized.postlist_begin(id);
    ASSERT_NE(plain_it, plain.postlist_end(id)) << id;
    ASSERT_NE(categorized_it, categorized.postlist_end(id)) << id;
    const Xapian::Document a = plain.get_document(*plain_it);
    const Xapian::Document b = categorized.get_document(*categorized_it);
    EXPECT_EQ(a.get_data(), b.get_data());
    EXPECT_TRUE(a.get_value(kDefaultCategorySlot).empty());
    std::vector<std::string> a_terms, b_terms;
    for (auto it = a.termlist_begin(); it != a.termlist_end(); ++it) {
      std::string entry = *it;
      for (auto pos = it.positionlist_begin(); pos != it.positionlist_end(); ++pos) {
        entry += " " + std::to_string(*pos);
      }
      a_terms.push_back(entry);
    }
    for (auto it = b.termlist_begin(); it != b.termlist_end(); ++it) {
      // Categories, and the model term: only categorized documents have them.
      if ((*it).rfind(kDefaultCategoryPrefix, 0) == 0) continue;
      if ((*it).rfind("XAUTOCATMODEL", 0) == 0) continue;
      std::string entry = *it;
      for (auto pos = it.positionlist_begin(); pos != it.positionlist_end(); ++pos) {
        entry += " " + std::to_string(*pos);
      }
      b_terms.push_back(entry);
    }
    EXPECT_EQ(a_terms, b_terms) << id;
  }
}

TEST_F(CliTest, CustomPrefixAndSlotAreRecordedForSearch) {
  const std::string db = scratch_.file("db");
  const CliResult indexed = index_fixtures(db, {"--prefix", "XTOPIC", "--slot", "7"});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  Xapian::Database database(db);
  EXPECT_EQ(database.get_termfreq("XTOPICsports"), 6u);
  EXPECT_EQ(database.get_termfreq("XCsports"), 0u);
  // search picks the prefix and slot up from the database's metadata.
  const CliResult search =
      run_autocat({"search", "--db", db, "--category", "sports", "--facets", "--json"});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_EQ(search.err, "");
  const Json result = json(lines_of(search.out).at(0));
  EXPECT_EQ(number_at(result, "matches_estimated"), 6);
  EXPECT_EQ(number_at(result.at("facets").at(0), "count"), 6);
}

// Every metric of `eval --json` equals the one recomputed here from the
// labels of the test file and the categories `classify` assigns with the
// same options: by default (every method is right on this easy set) and
// any-of with one low threshold (which makes mistakes).
TEST_F(CliTest, EvalJson) {
  const std::string input = test_data("fixture_test.jsonl");
  std::map<std::string, std::vector<std::string>> truth;
  for (const std::string& line : lines_of(testing_util::read_file(input))) {
    const Json record = json(line);
    truth[string_at(record, "id")] = category_names_of_strings(record.at("labels"));
  }
  ASSERT_EQ(truth.size(), 9u);
  const std::vector<std::string> categories = {"food", "science", "sports"};
  int imperfect = 0;
  for (const std::string method : {"knn", "rocchio", "nb", "bnb", "cnb"}) {
    for (const std::vector<std::string>& options :
         {std::vector<std::string>{}, std::vector<std::string>{"--any-of", "--threshold", "0.1"}}) {
      const std::string what = method + (options.empty() ? "" : " any-of 0.1");
      std::vector<std::string> args = {"--model", model_, "--method", method, "--json"};
      args.insert(args.end(), options.begin(), options.end());
      args.push_back(input);
      std::vector<std::string> classify_args = {"classify"}, eval_args = {"eval"};
      classify_args.insert(classify_args.end(), args.begin(), args.end());
      eval_args.insert(eval_args.end(), args.begin(), args.end());
      const CliResult classified = run_autocat(classify_args);
      ASSERT_EQ(classified.exit_code, 0) << classified.err;
      const CliResult result = run_autocat(eval_args);
      ASSERT_EQ(result.exit_code, 0) << result.err;
      EXPECT_EQ(result.err, "");
      const std::vector<std::string> lines = lines_of(result.out);
      ASSERT_EQ(lines.size(), 1u);
      const Json report = json(lines[0]);
      EXPECT_EQ(string_at(report, "method"), method);
      EXPECT_EQ(number_at(report, "documents"), 9);

      // Counts from the classify output.
      std::map<std::string, double> tp, fp, fn;
      double exact = 0;
      for (const std::string& line : lines_of(classified.out)) {
        const Json doc = json(line);
        const std::vector<std::string>& labels = truth.at(string_at(doc, "id"));
        const std::vector<std::string> assigned = category_names(doc.at("categories"));
        for (const std::string& c : categories) {
          const bool is = std::count(labels.begin(), labels.end(), c) > 0;
          const bool got = std::count(assigned.begin(), assigned.end(), c) > 0;
          tp[c] += is && got;
          fp[c] += !is && got;
          fn[c] += is && !got;
        }
        std::vector<std::string> sorted = assigned;
        std::sort(sorted.begin(), sorted.end());
        exact += sorted == labels;
      }
      const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
      const auto f1 = [&](double t, double p, double n) { return ratio(2 * t, 2 * t + p + n); };
      double sum_tp = 0, sum_fp = 0, sum_fn = 0, sum_f1 = 0, counted = 0;
      const auto& per_category = report.at("per_category");
      ASSERT_EQ(per_category.size(), 3u);
      for (size_t i = 0; i < 3; ++i) {
        const std::string& c = categories[i];
        const Json& entry = per_category[i];
        EXPECT_EQ(string_at(entry, "name"), c);
        EXPECT_EQ(number_at(entry, "true_positives"), tp[c]) << what << " " << c;
        EXPECT_EQ(number_at(entry, "false_positives"), fp[c]) << what << " " << c;
        EXPECT_EQ(number_at(entry, "false_negatives"), fn[c]) << what << " " << c;
        EXPECT_NEAR(number_at(entry, "precision"), ratio(tp[c], tp[c] + fp[c]), 1e-12) << what;
        EXPECT_NEAR(number_at(entry, "recall"), ratio(tp[c], tp[c] + fn[c]), 1e-12) << what;
        EXPECT_NEAR(number_at(entry, "f1"), f1(tp[c], fp[c], fn[c]), 1e-12) << what;
        sum_tp += tp[c];
        sum_fp += fp[c];
        sum_fn += fn[c];
        if (tp[c] + fp[c] + fn[c] > 0) {
          sum_f1 += f1(tp[c], fp[c], fn[c]);
          ++counted;
        }
      }
      EXPECT_NEAR(number_at(report, "accuracy"), exact / 9, 1e-12) << what;
      EXPECT_NEAR(number_at(report, "micro_f1"), f1(sum_tp, sum_fp, sum_fn), 1e-12) << what;
      EXPECT_NEAR(number_at(report, "macro_f1"), ratio(sum_f1, counted), 1e-12) << what;
      imperfect += exact < 9;
      for (const char* key : {"classify_seconds", "docs_per_second", "analyze_seconds"}) {
        EXPECT_GE(number_at(report, key), 0.0) << key;
      }
      EXPECT_EQ(report.at("confusion").at("matrix").size(), 3u);
    }
  }
  EXPECT_GT(imperfect, 0);  // some runs make mistakes, so wrong counts would show
}

TEST_F(CliTest, EvalHumanTableAndUnknownLabels) {
  const std::string input = scratch_.file("eval.jsonl");
  write_file(input,
             std::string("{\"id\": \"1\", \"labels\": [\"sports\"], \"text\": \"") + kSportsText +
                 "\"}\n{\"id\": \"2\", \"labels\": [\"music\"], \"text\": \"The band played.\"}\n"
                 "{\"id\": \"3\", \"text\": \"no labels here\"}\n");
  const CliResult result = run_autocat({"eval", "--model", model_, input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("evaluated 2 documents with knn", 0), 0u) << result.out;
  EXPECT_NE(result.out.find("accuracy  0.5000"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("music"), std::string::npos) << "unknown label listed";
  const std::vector<std::string> warnings = lines_of(result.err);
  ASSERT_EQ(warnings.size(), 2u) << result.err;
  EXPECT_EQ(warnings[0], "autocat: warning: skipped 1 documents without labels");
  EXPECT_NE(warnings[1].find("1 documents have labels the model does not know (music)"),
            std::string::npos)
      << warnings[1];
}

TEST_F(CliTest, FeaturesJson) {
  const CliResult result =
      run_autocat({"features", "--model", model_, "--json", "--top", "5", "--select", "chi2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json report = json(lines_of(result.out).at(0));
  EXPECT_EQ(string_at(report, "select"), "chi2");
  const auto& categories = report.at("categories");
  ASSERT_EQ(categories.size(), 3u);
  for (const Json& category : categories) {
    EXPECT_EQ(number_at(category, "documents"), 8);
    const auto& terms = category.at("terms");
    ASSERT_EQ(terms.size(), 5u);
    for (size_t i = 1; i < terms.size(); ++i) {
      EXPECT_GE(number_at(terms[i - 1], "utility"), number_at(terms[i], "utility"));
    }
  }

  const CliResult sports = run_autocat({"features", "--model", model_, "--category", "sports"});
  ASSERT_EQ(sports.exit_code, 0) << sports.err;
  EXPECT_NE(sports.out.find("top 10 terms by mi"), std::string::npos) << sports.out;
  EXPECT_NE(sports.out.find("sports (8 documents)"), std::string::npos) << sports.out;
  EXPECT_EQ(sports.out.find("food ("), std::string::npos) << sports.out;
}

TEST(CliMessagesTest, ProgressAtMostEveryTwoSeconds) {
  std::ostringstream err;
  cli::Messages messages(err);
  messages.progress("indexed", 100, 1.0);
  EXPECT_EQ(err.str(), "");
  messages.progress("indexed", 500, 2.5);
  EXPECT_EQ(err.str(), "indexed 500 documents (200/s)\n");
  messages.progress("indexed", 600, 3.0);
  EXPECT_EQ(err.str(), "indexed 500 documents (200/s)\n");
  messages.progress("indexed", 1800, 4.5);
  EXPECT_EQ(err.str(), "indexed 500 documents (200/s)\nindexed 1800 documents (400/s)\n");
}

TEST(CliMessagesTest, PhaseLines) {
  EXPECT_EQ(cli::phase_line("cross-validate", "fits", 5, 26, 10.0, "svm, fold 2 of 5"),
            "cross-validate 5/26 fits (0.5/s, ETA 42s): svm, fold 2 of 5");
  EXPECT_EQ(cli::phase_line("read", "documents", 5000, 0, 2.0, ""), "read 5000 documents (2500/s)");
  EXPECT_EQ(cli::phase_line("write", "", 0, 0, 12.2, ""), "write (12s)");
  EXPECT_EQ(cli::phase_done_line("read", "documents", 5000, 2.0, ""),
            "read: 5000 documents in 2.0s (2500/s)");
  EXPECT_EQ(cli::phase_done_line("compare analyses", "fits", 26, 31.25, "words and bigrams"),
            "compare analyses (words and bigrams): 26 fits in 31.2s");
  EXPECT_EQ(cli::phase_done_line("write", "", 0, 0.84, ""), "write: 0.8s");
  EXPECT_EQ(cli::phase_done_line("fold journal", "documents", 1, 0.1, ""),
            "fold journal: 1 document in 0.1s (10/s)");

  // Lines while a phase runs are throttled; a phase's end is not.
  std::ostringstream err;
  cli::Messages messages(err);
  messages.progress_text("a", 1.0);
  messages.progress_note("b", 1.5);
  messages.progress_text("c", 2.0);
  messages.progress_text("d", 3.6);
  EXPECT_EQ(err.str(), "b\nd\n");
}

TEST(CliMessagesTest, WarningsStayOnOneLine) {
  std::ostringstream err;
  cli::Messages messages(err, 1);
  messages.warning("a.jsonl:3: bad\nthing");
  messages.warning("not shown");
  messages.finish();
  EXPECT_EQ(err.str(),
            "autocat: warning: a.jsonl:3: bad thing\n"
            "autocat: warning: 1 more warnings not shown\n");
}

// The library entry point, in process: same behaviour as the binary.
TEST_F(CliTest, RunInProcess) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::run({"search", "--help"}, out, err), 0);
  EXPECT_EQ(out.str().rfind("usage: autocat search", 0), 0u);

  std::ostringstream out2, err2;
  const std::string input = scratch_.file("doc.txt");
  write_file(input, kSportsText);
  EXPECT_EQ(cli::run({"classify", "--model", model_, input}, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("\tsports "), std::string::npos) << out2.str();

  std::ostringstream out3, err3;
  EXPECT_EQ(cli::run({"classify", "--model", model_, "--k", "x"}, out3, err3), 2);
  EXPECT_EQ(err3.str(),
            "autocat classify: --k needs a whole number, got 'x' (see autocat classify --help)\n");
}

}  // namespace
}  // namespace autocat
