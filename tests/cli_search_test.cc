// `autocat search --min-score` and `--sort-by-score`: the real binary over
// the fixture corpus indexed with every category's score stored (any-of,
// threshold 0), checked against the scores each result reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

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

class CliSearchTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string model = dir_->file("model");
    db_ = dir_->file("db");
    setup_ =
        new CliResult(run_autocat({"train", "--model", model, test_data("fixture_train.jsonl")}));
    if (setup_->exit_code != 0) return;
    *setup_ = run_autocat({"index", "--model", model, "--db", db_, "--any-of", "--threshold", "0",
                           test_data("fixture_tree"), test_data("fixture_test.jsonl")});
  }
  static void TearDownTestSuite() {
    delete setup_;
    delete dir_;
  }
  void SetUp() override { ASSERT_EQ(setup_->exit_code, 0) << setup_->err; }

  // The one JSON object `autocat search --json ARGS` prints.
  static Json search(std::vector<std::string> args) {
    args.insert(args.begin(), {"search", "--db", db_, "--json", "--limit", "1000"});
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    return json(lines_of(result.out).at(0));
  }

  // name -> score of one result.
  static std::map<std::string, double> scores(const Json& result) {
    std::map<std::string, double> out;
    for (const Json& category : result.at("categories")) {
      out[string_at(category, "name")] = number_at(category, "score");
    }
    return out;
  }

  static std::vector<std::string> ids(const Json& found) {
    std::vector<std::string> out;
    for (const Json& result : found.at("results")) out.push_back(string_at(result, "id"));
    return out;
  }

  static TempDir* dir_;
  static std::string db_;
  static CliResult* setup_;
};

TempDir* CliSearchTest::dir_ = nullptr;
std::string CliSearchTest::db_;
CliResult* CliSearchTest::setup_ = nullptr;

TEST_F(CliSearchTest, MinScoreKeepsExactlyTheDocumentsScoringEnough) {
  for (const std::vector<std::string>& categories :
       std::vector<std::vector<std::string>>{{"food"}, {"science"}, {"sports", "food"}}) {
    for (const std::string query : {"", "the", "team OR bread OR comet"}) {
      std::vector<std::string> base = {"--facets"};
      for (const std::string& category : categories) {
        base.push_back("--category");
        base.push_back(category);
      }
      const Json unfiltered = search([&] {
        std::vector<std::string> args = base;
        args.push_back("--");
        args.push_back(query);
        return args;
      }());
      for (double min_score : {0.2, 0.5, 0.8}) {
        std::vector<std::string> args = base;
        args.push_back("--min-score");
        args.push_back(std::to_string(min_score));
        args.push_back("--");
        args.push_back(query);
        const Json found = search(args);
        const std::string what = categories[0] + " >= " + std::to_string(min_score) + " " + query;
        // Expected: the unfiltered results with a score >= S for a category.
        std::vector<std::string> expected;
        std::map<std::string, double> expected_facets;
        for (const Json& result : unfiltered.at("results")) {
          const std::map<std::string, double> stored = scores(result);
          bool keep = false;
          for (const std::string& category : categories) {
            const auto it = stored.find(category);
            keep = keep || (it != stored.end() && it->second >= min_score);
          }
          if (!keep) continue;
          expected.push_back(string_at(result, "id"));
          for (const auto& [name, score] : stored) ++expected_facets[name];
        }
        EXPECT_EQ(ids(found), expected) << what;  // same relevance order, filtered
        EXPECT_EQ(number_at(found, "matches_estimated"), expected.size()) << what;
        EXPECT_TRUE(found.at("matches_exact").get<bool>()) << what;
        EXPECT_EQ(number_at(found, "facet_documents"), expected.size()) << what;
        std::map<std::string, double> facets;
        for (const Json& entry : found.at("facets")) {
          facets[string_at(entry, "category")] = number_at(entry, "count");
        }
        EXPECT_EQ(facets, expected_facets) << what;  // the facets follow the filter
        EXPECT_EQ(number_at(found, "min_score"), min_score) << what;
      }
    }
  }
  // The filter does cut something, and keeps something.
  const Json all = search({"--category", "food"});
  const Json half = search({"--category", "food", "--min-score", "0.5"});
  EXPECT_LT(half.at("results").size(), all.at("results").size());
  EXPECT_GT(half.at("results").size(), 0u);
  EXPECT_TRUE(all.at("min_score").is_null());
  EXPECT_TRUE(all.at("sort_by_score").is_null());
}

TEST_F(CliSearchTest, SortByScoreOrdersByTheCategorysScoreThenRelevance) {
  for (const std::string category : {"food", "science", "sports"}) {
    for (const std::string query : {"", "the", "team OR bread OR comet"}) {
      const Json by_relevance = search({"--", query});
      const Json found = search({"--sort-by-score", category, "--", query});
      EXPECT_EQ(string_at(found, "sort_by_score"), category);
      std::vector<std::string> got = ids(found);
      std::vector<std::string> expected = ids(by_relevance);
      ASSERT_EQ(got.size(), expected.size()) << category << " " << query;
      std::sort(got.begin(), got.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(got, expected) << "the same documents";
      double last_score = INFINITY;
      double last_weight = INFINITY;
      for (const Json& result : found.at("results")) {
        const double score = scores(result).at(category);  // every score is stored here
        const double weight = number_at(result, "weight");
        EXPECT_LE(score, last_score) << category << " " << query;
        if (score == last_score) {
          EXPECT_LE(weight, last_weight) << "ties by relevance";
        }
        last_score = score;
        last_weight = weight;
      }
    }
  }
  // With --min-score and paging: the same order, cut.
  const Json sorted = search({"--category", "sports", "--sort-by-score", "sports"});
  const Json both = search(
      {"--category", "sports", "--min-score", "0.3", "--sort-by-score", "sports", "--offset", "1"});
  std::vector<std::string> expected;
  for (const Json& result : sorted.at("results")) {
    if (scores(result).at("sports") >= 0.3) expected.push_back(string_at(result, "id"));
  }
  ASSERT_FALSE(expected.empty());
  expected.erase(expected.begin());
  EXPECT_EQ(ids(both), expected);
}

TEST_F(CliSearchTest, HumanOutputSaysTheFilterAndTheOrder) {
  const CliResult result = run_autocat({"search", "--db", db_, "--category", "food", "--min-score",
                                        "0.5", "--sort-by-score", "food"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(" in food scoring at least 0.5, by score for food\n"),
            std::string::npos)
      << result.out;
}

TEST_F(CliSearchTest, BadScoreOptionsAreOneLineUsageErrors) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--min-score", "0.5"},  // which category?
                                             {"--category", "food", "--min-score", "high"},
                                             {"--category", "food", "--min-score", "nan"},
                                             {"--category", "food", "--min-score", ""},
                                             {"--sort-by-score", ""}}) {
    std::vector<std::string> full = {"search", "--db", db_};
    full.insert(full.end(), args.begin(), args.end());
    const CliResult result = run_autocat(full);
    EXPECT_EQ(result.exit_code, 2) << args[0] << " " << args[1];
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_NE(result.err.find(args.size() == 2 ? args[0] : args[2]), std::string::npos)
        << result.err;
  }
  // A category no document has: a warning, as for --category.
  const CliResult unknown = run_autocat({"search", "--db", db_, "--sort-by-score", "nosuch"});
  EXPECT_EQ(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("no document has category 'nosuch'"), std::string::npos)
      << unknown.err;
}

}  // namespace
}  // namespace autocat
