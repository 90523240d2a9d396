// `autocat train --methods` and `--time-budget`: which methods are
// cross-validated, what train --json says ran and was skipped, and that a
// budget too small for any cross-validation still gives a usable model.
// Over the fixture corpus (tests/data/fixture_*: food, science, sports).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "autocat/types.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

using internal::Json;
using testing_util::CliResult;
using testing_util::json;
using testing_util::lines_of;
using testing_util::run_autocat;
using testing_util::string_at;
using testing_util::TempDir;
using testing_util::test_data;

// The keys of a JSON object.
std::set<std::string> keys_of(const Json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

std::set<std::string> strings_of(const Json& list) {
  std::set<std::string> names;
  for (const Json& entry : list) names.insert(entry.get<std::string>());
  return names;
}

class TrainSelectionTest : public testing::Test {
 protected:
  // train --json on the fixture with `options`; fails the test on a
  // non-zero exit.
  Json train(const std::vector<std::string>& options) {
    std::vector<std::string> args = {"train", "--model", model_, "--json"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(test_data("fixture_train.jsonl"));
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return json(result.out);
  }

  TempDir dir_;
  const std::string model_ = dir_.file("model");
};

TEST_F(TrainSelectionTest, MethodsCrossValidatesOnlyThoseNamed) {
  const Json summary = train({"--methods", "svm,cnb"});
  EXPECT_EQ(keys_of(summary.at("method_cross_validation")), (std::set<std::string>{"svm", "cnb"}));
  EXPECT_EQ(strings_of(summary.at("methods")), (std::set<std::string>{"svm", "cnb"}));
  const std::string chosen = string_at(summary, "default_method");
  EXPECT_TRUE(chosen == "svm" || chosen == "cnb") << chosen;
  EXPECT_EQ(strings_of(summary.at("methods_not_cross_validated")),
            (std::set<std::string>{"knn", "rocchio", "nb", "bnb", "logreg", "combo"}));
  // Naive Bayes tried alphas for cnb alone.
  EXPECT_TRUE(summary.at("nb_alpha_cross_validation").at("nb").empty());
  EXPECT_FALSE(summary.at("nb_alpha_cross_validation").at("cnb").empty());
  // One run per family named, every fold run.
  std::set<std::string> ran;
  for (const Json& run : summary.at("cross_validation_runs")) {
    EXPECT_TRUE(run.at("used").get<bool>());
    EXPECT_EQ(run.at("folds_run").get<int>(), run.at("folds").get<int>());
    EXPECT_EQ(run.at("folds").get<int>(), 5);
    EXPECT_EQ(string_at(run, "skipped_reason"), "");
    for (const std::string& method : strings_of(run.at("methods"))) ran.insert(method);
  }
  EXPECT_EQ(ran, (std::set<std::string>{"svm", "cnb"}));
  EXPECT_TRUE(summary.at("time_budget").is_null());

  // The methods not named still classify (fitted, untuned).
  const CliResult classified = run_autocat({"classify", "--model", model_, "--method", "knn",
                                            "--json", test_data("fixture_test.jsonl")});
  EXPECT_EQ(classified.exit_code, 0) << classified.err;
}

TEST_F(TrainSelectionTest, ComboStacksTheMethodsNamed) {
  const Json summary = train({"--methods", "svm,cnb,combo"});
  EXPECT_EQ(keys_of(summary.at("method_cross_validation")),
            (std::set<std::string>{"svm", "cnb", "combo"}));
}

TEST_F(TrainSelectionTest, EveryMethodByDefaultAndTheJsonSaysWhatRan) {
  const Json summary = train({});
  EXPECT_EQ(summary.at("method_cross_validation").size(), all_methods().size());
  EXPECT_TRUE(summary.at("methods_not_cross_validated").empty());
  std::set<std::string> ran;
  for (const Json& run : summary.at("cross_validation_runs")) {
    EXPECT_TRUE(run.at("used").get<bool>());
    EXPECT_EQ(run.at("folds_run").get<int>(), 5);
    for (const std::string& method : strings_of(run.at("methods"))) ran.insert(method);
  }
  EXPECT_EQ(ran.size(), all_methods().size() - 1);  // all but combo, stacked on them
}

TEST_F(TrainSelectionTest, BadMethodsAreOneLineErrors) {
  const struct {
    std::vector<std::string> options;
    std::string says;
  } cases[] = {
      {{"--methods", "svm,bogus"},
       "--methods: unknown method 'bogus'; choose from knn, rocchio, nb, bnb, cnb, svm, logreg, "
       "combo"},
      {{"--methods", "svm,combo"}, "combo stacks the other methods named and needs at least two"},
      {{"--methods", ""}, "--methods: unknown method ''"},
      {{"--methods", "cnb", "--method", "svm"}, "--method svm is not among --methods"},
      {{"--time-budget", "0"}, "--time-budget must be between"},
      {{"--time-budget", "soon"}, "--time-budget needs a number"},
  };
  for (const auto& bad : cases) {
    std::vector<std::string> args = {"train", "--model", model_};
    args.insert(args.end(), bad.options.begin(), bad.options.end());
    args.push_back(test_data("fixture_train.jsonl"));
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 2) << bad.says;
    EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
    EXPECT_NE(result.err.find(bad.says), std::string::npos) << result.err;
  }
}

TEST_F(TrainSelectionTest, TinyBudgetStillGivesAUsableModelAndSaysWhatWasSkipped) {
  const Json summary = train({"--time-budget", "0.001"});
  EXPECT_EQ(summary.at("time_budget").get<double>(), 0.001);
  const Json& runs = summary.at("cross_validation_runs");
  ASSERT_FALSE(runs.empty());
  std::set<std::string> listed;
  for (const Json& run : runs) {
    EXPECT_FALSE(run.at("used").get<bool>());
    EXPECT_EQ(run.at("folds_run").get<int>(), 0);
    EXPECT_NE(string_at(run, "skipped_reason").find("time budget"), std::string::npos);
    for (const std::string& method : strings_of(run.at("methods"))) listed.insert(method);
  }
  EXPECT_EQ(listed.size(), all_methods().size() - 1);  // every family; combo needs them
  EXPECT_EQ(summary.at("methods_not_cross_validated").size(), all_methods().size());
  EXPECT_FALSE(summary.at("tuned").get<bool>());
  EXPECT_EQ(string_at(summary, "default_method"), "svm");

  // The model classifies with its default method.
  const CliResult classified =
      run_autocat({"classify", "--model", model_, "--json", test_data("fixture_test.jsonl")});
  ASSERT_EQ(classified.exit_code, 0) << classified.err;
  const std::vector<std::string> lines = lines_of(classified.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_FALSE(json(lines.front()).at("categories").empty()) << lines.front();

  // The text summary names what was skipped.
  const CliResult text = run_autocat(
      {"train", "--model", model_, "--time-budget", "0.001", test_data("fixture_train.jsonl")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("not cross-validated: svm skipped"), std::string::npos) << text.out;
}

TEST_F(TrainSelectionTest, AmpleBudgetRunsEveryFamilyOnEveryFold) {
  const Json summary = train({"--time-budget", "600"});
  for (const Json& run : summary.at("cross_validation_runs")) {
    EXPECT_TRUE(run.at("used").get<bool>()) << string_at(run, "skipped_reason");
    EXPECT_EQ(run.at("folds_run").get<int>(), 5);
  }
  EXPECT_EQ(summary.at("method_cross_validation").size(), all_methods().size());
}

TEST_F(TrainSelectionTest, AddRefusesTheSelectionOptions) {
  train({});
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--time-budget", "5"}, {"--methods", "svm"}}) {
    std::vector<std::string> args = {"train", "--model", model_, "--add"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(test_data("fixture_train.jsonl"));
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 2) << options.front();
    EXPECT_NE(result.err.find("--add keeps the model's settings; " + options.front()),
              std::string::npos)
        << result.err;
  }
}

}  // namespace
}  // namespace autocat
