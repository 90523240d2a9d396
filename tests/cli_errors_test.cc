// Bad input for the `autocat` tool: each case checks the exit code (1 for a
// runtime error, 2 for a usage error, 0 when only warned) and that stderr is
// one line naming the file (and line) at fault.
#include <gtest/gtest.h>
#include <xapian.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

namespace fs = std::filesystem;

using testing_util::CliResult;
using testing_util::lines_of;
using testing_util::read_file;
using testing_util::run_autocat;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

// Asserts that `text` is exactly one line and returns it.
std::string one_line(const std::string& text) {
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << text;
  const std::vector<std::string> lines = lines_of(text);
  EXPECT_EQ(lines.size(), 1u) << text;
  return lines.empty() ? std::string() : lines[0];
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CliErrorsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    model_ = dir_->file("model");
    const CliResult trained =
        run_autocat({"train", "--model", model_, test_data("fixture_train.jsonl")});
    trained_ = trained.exit_code == 0;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(trained_); }

  // A copy of the model whose model.autocat has `contents`.
  std::string broken_model(const std::string& contents) {
    const std::string copy = scratch_.file("broken");
    fs::copy(model_, copy, fs::copy_options::recursive);
    write_file(copy + "/model.autocat", contents);
    return copy;
  }

  std::string model_file() const { return read_file(model_ + "/model.autocat"); }

  // A JSONL file with a malformed second line.
  std::string malformed_jsonl() {
    const std::string path = scratch_.file("bad.jsonl");
    write_file(path,
               "{\"id\": \"a\", \"labels\": [\"sports\"], \"text\": \"the team won the match\"}\n"
               "{\"id\": \"b\", \"labels\": [\"food\"] \"text\": \"missing comma\"}\n"
               "{\"id\": \"c\", \"labels\": [\"food\"], \"text\": \"simmer the tomato sauce\"}\n");
    return path;
  }

  static TempDir* dir_;
  static std::string model_;
  static bool trained_;
  TempDir scratch_;
};

TempDir* CliErrorsTest::dir_ = nullptr;
std::string CliErrorsTest::model_;
bool CliErrorsTest::trained_ = false;

TEST_F(CliErrorsTest, MissingInputFile) {
  const std::string missing = scratch_.file("missing.jsonl");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"classify", "--model", model_, missing},
        std::vector<std::string>{"train", "--model", scratch_.file("m"), missing},
        std::vector<std::string>{"index", "--model", model_, "--db", scratch_.file("db"), missing},
        std::vector<std::string>{"eval", "--model", model_, missing}}) {
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 1) << args[0];
    const std::string line = one_line(result.err);
    EXPECT_EQ(line.rfind("autocat: " + missing, 0), 0u) << line;
  }
}

TEST_F(CliErrorsTest, MalformedJsonLineStops) {
  const std::string bad = malformed_jsonl();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"classify", "--model", model_, bad},
        std::vector<std::string>{"train", "--model", scratch_.file("m"), bad},
        std::vector<std::string>{"eval", "--model", model_, bad}}) {
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 1) << args[0];
    const std::string line = one_line(result.err);
    EXPECT_TRUE(contains(line, bad + ":2")) << line;
    EXPECT_EQ(line.rfind("autocat: ", 0), 0u) << line;
  }
}

TEST_F(CliErrorsTest, MalformedJsonLineSkipped) {
  const std::string bad = malformed_jsonl();
  const CliResult result = run_autocat({"classify", "--model", model_, "--skip-malformed", bad});
  EXPECT_EQ(result.exit_code, 0);
  const std::string line = one_line(result.err);
  EXPECT_EQ(line.rfind("autocat: warning: " + bad + ":2", 0), 0u) << line;
  const std::vector<std::string> out = lines_of(result.out);
  ASSERT_EQ(out.size(), 2u) << result.out;
  EXPECT_EQ(out[0], "a\tsports 1.0000");
  EXPECT_EQ(out[1].rfind("c\tfood ", 0), 0u) << out[1];

  const CliResult trained =
      run_autocat({"train", "--model", scratch_.file("m"), "--skip-malformed", "--json", bad});
  EXPECT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_TRUE(contains(one_line(trained.err), bad + ":2"));
  EXPECT_TRUE(contains(trained.out, "\"documents\":2")) << trained.out;
}

TEST_F(CliErrorsTest, EmptyTextDocument) {
  const std::string input = scratch_.file("empty.jsonl");
  write_file(input,
             "{\"id\": \"full\", \"text\": \"the team won the match\"}\n"
             "{\"id\": \"empty\", \"text\": \"\"}\n");
  const CliResult classified = run_autocat({"classify", "--model", model_, input});
  EXPECT_EQ(classified.exit_code, 0);
  EXPECT_EQ(one_line(classified.err), "autocat: warning: " + input + ":2: empty text; no category");
  EXPECT_TRUE(contains(classified.out, "empty\t(none)\n")) << classified.out;

  // Indexed all the same, without a category, and counted.
  const std::string db = scratch_.file("db");
  const CliResult indexed = run_autocat({"index", "--model", model_, "--db", db, "--json", input});
  EXPECT_EQ(indexed.exit_code, 0);
  EXPECT_TRUE(contains(one_line(indexed.err), input + ":2: empty text")) << indexed.err;
  EXPECT_TRUE(contains(indexed.out, "\"uncategorized\":1")) << indexed.out;
  EXPECT_TRUE(contains(indexed.out, "\"empty_text\":1")) << indexed.out;
  EXPECT_TRUE(contains(indexed.out, "\"db_documents\":2")) << indexed.out;
  EXPECT_EQ(Xapian::Database(db).get_termfreq("Qempty"), 1u);
}

TEST_F(CliErrorsTest, EmptyPlainFileIsSkippedWithWarning) {
  const std::string input = scratch_.file("empty.txt");
  write_file(input, "");
  const CliResult result = run_autocat({"classify", "--model", model_, input});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(contains(one_line(result.err), input)) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST_F(CliErrorsTest, ManyWarningsAreCapped) {
  const std::string input = scratch_.file("empties.jsonl");
  std::string lines;
  for (int i = 1; i <= 25; ++i)
    lines += "{\"id\": \"" + std::to_string(i) + "\", \"text\": \"\"}\n";
  write_file(input, lines);
  const CliResult result = run_autocat({"classify", "--model", model_, input});
  EXPECT_EQ(result.exit_code, 0);
  const std::vector<std::string> warnings = lines_of(result.err);
  ASSERT_EQ(warnings.size(), 21u) << result.err;
  EXPECT_EQ(warnings[19], "autocat: warning: " + input + ":20: empty text; no category");
  EXPECT_EQ(warnings[20], "autocat: warning: 5 more warnings not shown");
  EXPECT_EQ(lines_of(result.out).size(), 25u);
}

TEST_F(CliErrorsTest, TextWithNoKnownTerms) {
  const std::string input = scratch_.file("unknown.txt");
  write_file(input, "Zyxwv qqqq plorble.\n");
  const CliResult result = run_autocat({"classify", "--model", model_, "--json", input});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(one_line(result.err),
            "autocat: warning: " + input + ": no word known to the model; no category");
  EXPECT_TRUE(contains(result.out, "\"categories\":[]")) << result.out;
}

TEST_F(CliErrorsTest, MissingModelDir) {
  const std::string missing = scratch_.file("no-model");
  const CliResult result =
      run_autocat({"classify", "--model", missing, test_data("fixture_test.jsonl")});
  EXPECT_EQ(result.exit_code, 1);
  const std::string line = one_line(result.err);
  EXPECT_EQ(line.rfind("autocat: " + missing + ": ", 0), 0u) << line;
  EXPECT_TRUE(contains(line, "autocat train --model " + missing)) << line;
  // No empty database is left behind when the model is missing.
  const std::string db = scratch_.file("db");
  EXPECT_EQ(
      run_autocat({"index", "--model", missing, "--db", db, test_data("fixture_tree")}).exit_code,
      1);
  EXPECT_FALSE(fs::exists(db));
}

TEST_F(CliErrorsTest, EmptyModelDir) {
  const std::string empty = scratch_.file("empty-model");
  fs::create_directories(empty);
  for (const char* command : {"classify", "eval", "features"}) {
    std::vector<std::string> args = {command, "--model", empty};
    if (std::string(command) != "features") args.push_back(test_data("fixture_test.jsonl"));
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 1) << command;
    EXPECT_EQ(one_line(result.err), "autocat: " + empty +
                                        ": no model here (model.autocat missing); train one with: "
                                        "autocat train --model " +
                                        empty + " INPUT...");
  }
}

TEST_F(CliErrorsTest, TruncatedModelFile) {
  const std::string model = model_file();
  const std::string broken = broken_model(model.substr(0, model.size() / 2));
  const CliResult result =
      run_autocat({"classify", "--model", broken, test_data("fixture_test.jsonl")});
  EXPECT_EQ(result.exit_code, 1);
  const std::string line = one_line(result.err);
  EXPECT_EQ(line.rfind("autocat: " + broken + "/model.autocat: ", 0), 0u) << line;
  EXPECT_TRUE(contains(line, "truncated")) << line;
}

TEST_F(CliErrorsTest, ForeignModelFile) {
  std::string random_bytes;
  uint32_t state = 12345;
  for (int i = 0; i < 4096; ++i) {
    state = state * 1103515245u + 12345u;
    random_bytes += static_cast<char>(state >> 24);
  }
  for (const std::string& contents : {random_bytes, std::string("just some text\n")}) {
    TempDir dir;
    const std::string broken = dir.file("m");
    fs::copy(model_, broken, fs::copy_options::recursive);
    write_file(broken + "/model.autocat", contents);
    const CliResult result = run_autocat(
        {"index", "--model", broken, "--db", dir.file("db"), test_data("fixture_tree")});
    EXPECT_EQ(result.exit_code, 1);
    const std::string line = one_line(result.err);
    EXPECT_EQ(line.rfind("autocat: " + broken + "/model.autocat: ", 0), 0u) << line;
    EXPECT_TRUE(contains(line, "not an autocat model file")) << line;
  }
}

TEST_F(CliErrorsTest, NewerModelFormatVersion) {
  std::string model = model_file();
  ASSERT_GT(model.size(), 12u);
  // Little-endian uint32 version right after the 8-byte magic.
  model[8] = static_cast<char>(999 & 0xff);
  model[9] = static_cast<char>(999 >> 8);
  model[10] = 0;
  model[11] = 0;
  const std::string broken = broken_model(model);
  const CliResult result =
      run_autocat({"eval", "--model", broken, test_data("fixture_test.jsonl")});
  EXPECT_EQ(result.exit_code, 1);
  const std::string line = one_line(result.err);
  EXPECT_EQ(line.rfind("autocat: " + broken + "/model.autocat: ", 0), 0u) << line;
  EXPECT_TRUE(contains(line, "999")) << line;
}

TEST_F(CliErrorsTest, DatabaseLockedByAnotherWriter) {
  const std::string db = scratch_.file("db");
  Xapian::WritableDatabase holder(db, Xapian::DB_CREATE_OR_OPEN);
  const CliResult result =
      run_autocat({"index", "--model", model_, "--db", db, test_data("fixture_tree")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err),
            "autocat: " + db +
                ": database is locked by another writer; wait for it to finish "
                "or close it");
  EXPECT_EQ(result.out, "");
  holder.close();
  EXPECT_EQ(
      run_autocat({"index", "--model", model_, "--db", db, test_data("fixture_tree")}).exit_code,
      0);
}

TEST_F(CliErrorsTest, UnknownMethod) {
  const CliResult result = run_autocat(
      {"classify", "--model", model_, "--method", "xyz", test_data("fixture_test.jsonl")});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(one_line(result.err),
            "autocat classify: unknown method 'xyz'; choose one of knn, rocchio, nb, bnb, cnb, "
            "svm, logreg (see autocat classify --help)");
  EXPECT_EQ(result.out, "");
}

TEST_F(CliErrorsTest, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string input = test_data("fixture_test.jsonl");
  const std::vector<Case> cases = {
      {{"classify", "--model", model_, "--bogus", input},
       "autocat classify: unknown option '--bogus' (see autocat classify --help)"},
      {{"classify", "--model"},
       "autocat classify: --model needs a value (see autocat classify --help)"},
      {{"classify", input}, "autocat classify: --model is required (see autocat classify --help)"},
      {{"eval", "--model", model_, "--k", "0", input},
       "autocat eval: --k must be between 1 and 100000, got 0 (see autocat eval --help)"},
      {{"eval", "--model", model_, "--k", "5x", input},
       "autocat eval: --k needs a whole number, got '5x' (see autocat eval --help)"},
      {{"classify", "--model", model_, "--threshold", "1.5", input},
       "autocat classify: --threshold must be between 0 and 1, got 1.5 (see autocat classify "
       "--help)"},
      {{"train", "--model", model_}, "autocat train: no INPUT given (see autocat train --help)"},
      {{"train", "--model", scratch_.file("m"), "--select", "mi", input},
       "autocat train: --select needs --features N (see autocat train --help)"},
      {{"train", "--model", scratch_.file("m"), "--features", "10", "--select", "foo", input},
       "autocat train: unknown selection measure 'foo'; choose one of mi, chi2, df, kl (see "
       "autocat train --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--prefix", "xc", input},
       "autocat index: --prefix must be one or more capital letters A-Z (like XC), got 'xc' "
       "(see autocat index --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--no-categories", "--k", "3",
        input},
       "autocat index: --no-categories cannot be combined with --k (see autocat index --help)"},
      {{"search", "--db", scratch_.file("db"), "--limit", "-1"},
       "autocat search: --limit must be between 0 and 1000000, got -1 (see autocat search "
       "--help)"},
      {{"features", "--model", model_, "--top", "3", "extra"},
       "autocat features: unexpected argument 'extra' (see autocat features --help)"},
      {{"classify", "--model", model_, "--any-of", "--one-of", input},
       "autocat classify: --any-of and --one-of exclude each other (see autocat classify "
       "--help)"},
      {{"classify", "--model", model_, "--other", "--no-other", input},
       "autocat classify: --other and --no-other exclude each other (see autocat classify "
       "--help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--min-score", "0.2",
        "--threshold", "0.3", input},
       "autocat index: --min-score and --threshold exclude each other (--threshold T is "
       "--min-score T without the tuned thresholds) (see autocat index --help)"},
      {{"classify", "--model", model_, "--min-score", "-0.1", input},
       "autocat classify: --min-score must be between 0 and 1, got -0.1 (see autocat classify "
       "--help)"},
      {{"train", "--model", scratch_.file("m"), "--any-of", "--one-of", input},
       "autocat train: --any-of and --one-of exclude each other (see autocat train --help)"},
      {{"train", "--model", scratch_.file("m"), "--threshold-folds", "1", input},
       "autocat train: --threshold-folds must be 0 (no tuning) or at least 2 (see autocat "
       "train --help)"},
      {{"train", "--model", model_, "--add", "--any-of", input},
       "autocat train: --add keeps the model's settings; --any-of needs a new model (train "
       "without --add) (see autocat train --help)"},
  };
  for (const Case& c : cases) {
    const CliResult result = run_autocat(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.message;
    EXPECT_EQ(one_line(result.err), c.message);
  }
  const CliResult stemmer =
      run_autocat({"train", "--model", scratch_.file("m"), "--stemmer", "klingon", input});
  EXPECT_EQ(stemmer.exit_code, 2);
  EXPECT_TRUE(
      contains(one_line(stemmer.err), "unknown stemmer language 'klingon'; choose one of none, "));

  const CliResult command = run_autocat({"frobnicate"});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_EQ(one_line(command.err),
            "autocat: unknown command 'frobnicate'; choose one of train, index, classify, search, "
            "eval, features, explain (see autocat --help)");
}

TEST_F(CliErrorsTest, UnknownCategoryInSearchWarns) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(
      run_autocat({"index", "--model", model_, "--db", db, test_data("fixture_tree")}).exit_code,
      0);
  const CliResult result = run_autocat({"search", "--db", db, "--category", "music", "team"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(one_line(result.err),
            "autocat: warning: no document has category 'music'; known: food, science, sports");
  EXPECT_TRUE(contains(result.out, "about 0 matches")) << result.out;
}

TEST_F(CliErrorsTest, MissingDatabase) {
  const std::string missing = scratch_.file("no-db");
  const CliResult result = run_autocat({"search", "--db", missing, "team"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err), "autocat: " + missing + ": no such database");

  // A directory that is not a database is named too.
  const std::string not_db = scratch_.file("not-db");
  fs::create_directories(not_db);
  const CliResult other = run_autocat({"search", "--db", not_db});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_EQ(one_line(other.err).rfind("autocat: " + not_db + ": cannot open the database", 0), 0u)
      << other.err;
}

TEST_F(CliErrorsTest, UnknownCategoryInFeatures) {
  const CliResult result = run_autocat({"features", "--model", model_, "--category", "music"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err),
            "autocat: " + model_ + ": unknown category 'music'; known: food, science, sports");
}

TEST_F(CliErrorsTest, EvalWithoutLabels) {
  const std::string input = scratch_.file("unlabelled.jsonl");
  write_file(input, "{\"id\": \"1\", \"text\": \"the team won\"}\n");
  const CliResult result = run_autocat({"eval", "--model", model_, input});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err),
            "autocat: " + input + ": no labelled documents to evaluate (1 without labels)");
}

// A label must be usable as a term and a line of the category slot: an
// empty one or one with a control character stops training, naming the
// file and line, and leaves no model behind.
TEST_F(CliErrorsTest, BadLabelsNameTheLine) {
  const std::string good = "{\"id\": \"1\", \"labels\": [\"a\"], \"text\": \"the team won\"}\n";
  const struct {
    std::string record;
    std::string problem;
  } cases[] = {
      {"{\"id\": \"2\", \"labels\": [\"\"], \"text\": \"a goal\"}\n", "empty label"},
      {"{\"id\": \"2\", \"labels\": [\"sp\\torts\"], \"text\": \"a goal\"}\n",
       "label contains a control character"},
  };
  for (const auto& c : cases) {
    const std::string input = scratch_.file("labels.jsonl");
    write_file(input, good + c.record);
    const std::string model = scratch_.file("bad-label-model");
    const CliResult result = run_autocat({"train", "--model", model, input});
    EXPECT_EQ(result.exit_code, 1) << c.problem;
    EXPECT_EQ(one_line(result.err), "autocat: " + input + ":2: " + c.problem);
    EXPECT_FALSE(fs::exists(model + "/model.autocat"));
  }
}

TEST_F(CliErrorsTest, TrainWithoutLabels) {
  const std::string input = scratch_.file("unlabelled.jsonl");
  write_file(input, "{\"id\": \"1\", \"text\": \"the team won\"}\n");
  const CliResult result = run_autocat({"train", "--model", scratch_.file("m"), input});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err).rfind("autocat: ", 0), 0u);
}

}  // namespace
}  // namespace autocat
