// Bad input for the `autocat` tool: each case checks the exit code (1 for a
// runtime error, 2 for a usage error, 0 when only warned) and that stderr is
// one line naming the file (and line) at fault.
#include <gtest/gtest.h>
#include <xapian.h>

#include <filesystem>
#include <string>
#include <vector>

#include "autocat/corrections.h"
#include "autocat/error.h"
#include "classify/io/model_dir.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

namespace fs = std::filesystem;

using testing_util::CliResult;
using testing_util::json;
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
    write_file(model_file_in(copy), contents);
    return copy;
  }

  std::string model_file() const { return read_file(model_file_in(model_)); }
  static std::string model_file_in(const std::string& model_dir) {
    return internal::resolve_model_dir(model_dir).model_file;
  }

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

// What is missing from a model directory is named as it is: CURRENT (with
// the generation to write into it), or the training database train --add
// adds to; a directory that is no database is named by `serve --db`; a
// category name holding a NUL is printed whole.
TEST_F(CliErrorsTest, MissingPiecesAreNamedAsTheyAre) {
  const std::string no_current = scratch_.file("no-current");
  fs::copy(model_, no_current, fs::copy_options::recursive);
  const std::string generation = testing_util::split_lines(read_file(model_ + "/CURRENT"))[0];
  fs::remove(no_current + "/CURRENT");
  const CliResult classified =
      run_autocat({"classify", "--model", no_current, test_data("fixture_test.jsonl")});
  EXPECT_EQ(classified.exit_code, 1);
  EXPECT_NE(classified.err.find(no_current + "/CURRENT is missing"), std::string::npos)
      << classified.err;
  EXPECT_NE(classified.err.find(generation), std::string::npos) << classified.err;

  const std::string no_training = scratch_.file("no-training");
  fs::copy(model_, no_training, fs::copy_options::recursive);
  fs::remove_all(no_training + "/" + generation + "/training");
  const CliResult added =
      run_autocat({"train", "--add", "--model", no_training, test_data("fixture_test.jsonl")});
  EXPECT_EQ(added.exit_code, 1);
  EXPECT_NE(added.err.find(no_training + "/" + generation + "/training is missing"),
            std::string::npos)
      << added.err;

  const std::string not_a_db = scratch_.file("not-a-db");
  fs::create_directory(not_a_db);
  const CliResult served =
      run_autocat({"serve", "--db", not_a_db, "--model", model_, "--listen", "127.0.0.1:0"});
  EXPECT_EQ(served.exit_code, 1);
  EXPECT_NE(served.err.find(not_a_db + ": cannot open the database"), std::string::npos)
      << served.err;

  const CategoryIndexer indexer(model_, IndexOptions());
  try {
    known_categories(indexer, {std::string("food\0and more", 13)});
    FAIL() << "an unknown category was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("food\\x00and more' is not in the model"),
              std::string::npos)
        << e.what();
  }
}

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
  EXPECT_EQ(out[0].rfind("a\tsports 0.", 0), 0u) << out[0];  // a calibrated probability
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
  // One-of without "other" gives every document a category: with no
  // evidence, the most frequent training category.
  EXPECT_TRUE(contains(one_line(classified.err), "autocat: warning: " + input +
                                                     ":2: empty text; the most frequent training "
                                                     "category, "))
      << classified.err;
  EXPECT_FALSE(contains(classified.out, "empty\t(none)\n")) << classified.out;

  // Indexed all the same, and counted.
  const std::string db = scratch_.file("db");
  const CliResult indexed = run_autocat({"index", "--model", model_, "--db", db, "--json", input});
  EXPECT_EQ(indexed.exit_code, 0);
  EXPECT_TRUE(contains(one_line(indexed.err), input + ":2: empty text")) << indexed.err;
  EXPECT_TRUE(contains(indexed.out, "\"uncategorized\":0")) << indexed.out;
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
  EXPECT_EQ(warnings[19].rfind("autocat: warning: " + input + ":20: empty text; ", 0), 0u)
      << warnings[19];
  EXPECT_EQ(warnings[20], "autocat: warning: 5 more warnings not shown");
  EXPECT_EQ(lines_of(result.out).size(), 25u);
}

TEST_F(CliErrorsTest, TextWithNoKnownTerms) {
  const std::string input = scratch_.file("unknown.txt");
  write_file(input, "Zyxwv qqqq plorble.\n");
  const CliResult result = run_autocat({"classify", "--model", model_, "--json", input});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(
      one_line(result.err),
      "autocat: warning: " + input +
          ": no word known to the model; the most frequent training category, " +
          json(lines_of(result.out).at(0)).at("categories").at(0).at("name").get<std::string>())
      << result.out;
  EXPECT_TRUE(contains(result.out, "\"score\":0")) << result.out;
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
  EXPECT_EQ(line.rfind("autocat: " + model_file_in(broken) + ": ", 0), 0u) << line;
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
    write_file(model_file_in(broken), contents);
    const CliResult result = run_autocat(
        {"index", "--model", broken, "--db", dir.file("db"), test_data("fixture_tree")});
    EXPECT_EQ(result.exit_code, 1);
    const std::string line = one_line(result.err);
    EXPECT_EQ(line.rfind("autocat: " + model_file_in(broken) + ": ", 0), 0u) << line;
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
  EXPECT_EQ(line.rfind("autocat: " + model_file_in(broken) + ": ", 0), 0u) << line;
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
            "svm, logreg, combo (see autocat classify --help)");
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
       "autocat index: --prefix: category prefix 'xc' is not allowed: use one or more capital "
       "letters A-Z (like XC), not X alone and not "
       "starting with Q (reserved for unique ids) or Z (reserved for stemmed terms) (see autocat "
       "index --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--prefix", "Q", input},
       "autocat index: --prefix: category prefix 'Q' is not allowed: use one or more capital "
       "letters A-Z (like XC), not X alone and not "
       "starting with Q (reserved for unique ids) or Z (reserved for stemmed terms) (see autocat "
       "index --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--prefix", "QC", input},
       "autocat index: --prefix: category prefix 'QC' is not allowed: use one or more capital "
       "letters A-Z (like XC), not X alone and not "
       "starting with Q (reserved for unique ids) or Z (reserved for stemmed terms) (see autocat "
       "index --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--prefix", "Z", input},
       "autocat index: --prefix: category prefix 'Z' is not allowed: use one or more capital "
       "letters A-Z (like XC), not X alone and not "
       "starting with Q (reserved for unique ids) or Z (reserved for stemmed terms) (see autocat "
       "index --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--prefix", "X", input},
       "autocat index: --prefix: category prefix 'X' is not allowed: use one or more capital "
       "letters A-Z (like XC), not X alone and not "
       "starting with Q (reserved for unique ids) or Z (reserved for stemmed terms) (see autocat "
       "index --help)"},
      {{"search", "--db", scratch_.file("db"), "--prefix", "QX"},
       "autocat search: --prefix: category prefix 'QX' is not allowed: use one or more capital "
       "letters A-Z (like XC), not X alone and not "
       "starting with Q (reserved for unique ids) or Z (reserved for stemmed terms) (see autocat "
       "search --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--stemmer", "klingon", input},
       "autocat index: --stemmer: unknown language 'klingon'; use one Xapian knows (english, "
       "german, french, ...) or none (see autocat index --help)"},
      {{"index", "--model", model_, "--db", scratch_.file("db"), "--no-categories",
        "--categories-only", input},
       "autocat index: --no-categories and --categories-only exclude each other (see autocat "
       "index --help)"},
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
            "eval, features, explain, recategorize, rules, split, learn, forget, relabel, "
            "corrections, serve, journal, model (see autocat --help)");
}

// The command line is split by CLI11; its own messages never reach the user:
// each mistake gets autocat's wording, and the values CLI11 would take for a
// valued option (the next word, whatever it is) are checked.
TEST_F(CliErrorsTest, CommandLineMistakesKeepTheirWording) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string input = test_data("fixture_test.jsonl");
  const std::vector<Case> cases = {
      {{"classify", "--model", model_, "-x", input},
       "autocat classify: unknown option '-x' (see autocat classify --help)"},
      {{"classify", "--model", model_, "--bogus=3", input},
       "autocat classify: unknown option '--bogus' (see autocat classify --help)"},
      {{"classify", "--model", model_, "--stopwords", "none", input},
       "autocat classify: unknown option '--stopwords' (see autocat classify --help)"},
      {{"classify", "--model", model_, input, "--k"},
       "autocat classify: --k needs a value (see autocat classify --help)"},
      {{"classify", "--model", model_, "--k=", input},
       "autocat classify: --k needs a value (see autocat classify --help)"},
      {{"classify", "--model", "--json", input},
       "autocat classify: --model needs a value (see autocat classify --help)"},
      {{"classify", "--model", model_, "--k", "3", "--k=4", input},
       "autocat classify: --k given more than once (see autocat classify --help)"},
      {{"classify", "--model", model_, "--json", "--json", input},
       "autocat classify: --json given more than once (see autocat classify --help)"},
      {{"classify", "--model", model_, "--json=yes", input},
       "autocat classify: --json takes no value (see autocat classify --help)"},
      {{"classify", "--model", model_, "--json=true", input},
       "autocat classify: --json takes no value (see autocat classify --help)"},
      {{"classify", "--model", model_, "--json=", input},
       "autocat classify: --json takes no value (see autocat classify --help)"},
      {{"classify", "--model", model_, "--bogus=", input},
       "autocat classify: unknown option '--bogus' (see autocat classify --help)"},
      {{"classify", "--model=" + model_, "--top=x", input},
       "autocat classify: --top needs a whole number, got 'x' (see autocat classify --help)"},
      {{"train", "--model", scratch_.file("m"), "--one-of", "--one-of", input},
       "autocat train: --one-of given more than once (see autocat train --help)"},
      {{"rules", "check", "--rules", input, input},
       "autocat rules: unknown subcommand 'check'; use autocat rules test (see autocat rules "
       "--help)"},
  };
  for (const Case& c : cases) {
    const CliResult result = run_autocat(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.message;
    EXPECT_EQ(one_line(result.err), c.message);
    EXPECT_EQ(result.out, "");
  }
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
  EXPECT_TRUE(contains(result.out, "0 matches for")) << result.out;
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
    EXPECT_FALSE(fs::exists(model_file_in(model)));
  }
}

TEST_F(CliErrorsTest, TrainWithoutLabels) {
  const std::string input = scratch_.file("unlabelled.jsonl");
  write_file(input, "{\"id\": \"1\", \"text\": \"the team won\"}\n");
  const CliResult result = run_autocat({"train", "--model", scratch_.file("m"), input});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err).rfind("autocat: ", 0), 0u);
}

// The records of fixture_train.jsonl in [first, last), without their ids.
std::string records_without_ids(size_t first, size_t last) {
  const std::vector<std::string> lines = lines_of(read_file(test_data("fixture_train.jsonl")));
  std::string out;
  for (size_t i = first; i < last && i < lines.size(); ++i) {
    out += "{" + lines[i].substr(lines[i].find("\"labels\"")) + "\n";
  }
  return out;
}

TEST_F(CliErrorsTest, GeneratedIdsDoNotCollideAcrossInputs) {
  // Same basename, no ids: each file once made ids train.jsonl:1..12, and
  // the second replaced the first (12 documents, a category lost).
  fs::create_directories(scratch_.file("A"));
  fs::create_directories(scratch_.file("B"));
  write_file(scratch_.file("A/train.jsonl"), records_without_ids(0, 12));
  write_file(scratch_.file("B/train.jsonl"), records_without_ids(12, 24));
  const CliResult trained =
      run_autocat({"train", "--model", scratch_.file("m"), "--json", scratch_.file("A/train.jsonl"),
                   scratch_.file("B/train.jsonl")});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const internal::Json report = testing_util::json(trained.out);
  EXPECT_EQ(testing_util::number_at(report, "documents"), 24);
  EXPECT_EQ(testing_util::number_at(report, "categories"), 3);

  fs::create_directories(scratch_.file("d1"));
  fs::create_directories(scratch_.file("d2"));
  write_file(scratch_.file("d1/docs.jsonl"),
             "{\"text\": \"the team won\"}\n{\"text\": \"soup\"}\n");
  write_file(scratch_.file("d2/docs.jsonl"), "{\"text\": \"a goal\"}\n{\"text\": \"bread\"}\n");
  // Two folder trees that both hold inbox/a.txt.
  for (const char* tree : {"t1", "t2"}) {
    fs::create_directories(scratch_.file(std::string(tree) + "/inbox"));
    write_file(scratch_.file(std::string(tree) + "/inbox/a.txt"), std::string("text of ") + tree);
  }
  const CliResult indexed =
      run_autocat({"index", "--model", model_, "--db", scratch_.file("db"), "--json",
                   scratch_.file("d1/docs.jsonl"), scratch_.file("d2/docs.jsonl"),
                   scratch_.file("t1"), scratch_.file("t2")});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  const internal::Json summary = testing_util::json(indexed.out);
  EXPECT_EQ(testing_util::number_at(summary, "documents"), 6);
  EXPECT_EQ(testing_util::number_at(summary, "db_documents"), 6);
}

TEST_F(CliErrorsTest, RepeatedIdStopsUnlessAllowed) {
  const std::string first = scratch_.file("first.jsonl");
  const std::string second = scratch_.file("second.jsonl");
  write_file(first,
             "{\"id\": \"x\", \"labels\": [\"sports\"], \"text\": \"the team won the match\"}\n"
             "{\"id\": \"y\", \"labels\": [\"food\"], \"text\": \"simmer the tomato sauce\"}\n");
  write_file(second, "{\"id\": \"x\", \"labels\": [\"food\"], \"text\": \"bake the bread\"}\n");
  const std::string expected = "autocat: " + second + ":1: duplicate id \"x\" (first at " + first +
                               ":1); give every document its own \"id\", or pass "
                               "--allow-duplicate-ids to let the later one replace the earlier";
  const std::string db = scratch_.file("db");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"train", "--model", scratch_.file("m")},
        std::vector<std::string>{"train", "--add", "--model", scratch_.file("m")},
        std::vector<std::string>{"index", "--model", model_, "--db", db},
        std::vector<std::string>{"classify", "--model", model_},
        std::vector<std::string>{"eval", "--model", model_}}) {
    std::vector<std::string> command = args;
    command.push_back(first);
    command.push_back(second);
    if (args[1] == "--add") {
      ASSERT_EQ(
          run_autocat({"train", "--model", scratch_.file("m"), test_data("fixture_train.jsonl")})
              .exit_code,
          0);
    }
    const CliResult refused = run_autocat(command);
    EXPECT_EQ(refused.exit_code, 1) << args[0];
    // index adds what the database holds after the stop.
    EXPECT_EQ(one_line(refused.err).substr(0, expected.size()), expected) << args[0];

    command.push_back("--allow-duplicate-ids");
    const CliResult allowed = run_autocat(command);
    EXPECT_EQ(allowed.exit_code, 0) << args[0] << ": " << allowed.err;
    EXPECT_EQ(one_line(allowed.err), "autocat: warning: " + second +
                                         ":1: duplicate id \"x\" (first at " + first +
                                         ":1); allowed by --allow-duplicate-ids")
        << args[0];
  }
  // The later document replaced the earlier.
  EXPECT_EQ(Xapian::Database(db).get_doccount(), 2u);
}

TEST_F(CliErrorsTest, NumericIdsBeyondDoublePrecisionStayApart) {
  const std::string input = scratch_.file("big-ids.jsonl");
  write_file(input,
             "{\"id\": 9007199254740993, \"text\": \"the team won\"}\n"
             "{\"id\": 9007199254740992, \"text\": \"simmer the sauce\"}\n");
  const std::string db = scratch_.file("db");
  const CliResult result = run_autocat({"index", "--model", model_, "--db", db, input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Xapian::Database index(db);
  EXPECT_EQ(index.get_doccount(), 2u);
  EXPECT_TRUE(index.term_exists("Q9007199254740993"));
  EXPECT_TRUE(index.term_exists("Q9007199254740992"));
}

TEST_F(CliErrorsTest, OversizedInputNamesFileAndLine) {
  // /dev/zero has no size and no newline: it once ended in std::bad_alloc.
  const CliResult zero = run_autocat({"classify", "--model", model_, "/dev/zero"});
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_EQ(one_line(zero.err),
            "autocat: /dev/zero: file is larger than 67108864 bytes; the limit is 67108864 "
            "bytes; raise it with --max-document-bytes or split the document (use "
            "--skip-malformed to skip it)");

  const std::string input = scratch_.file("long.jsonl");
  write_file(input, "{\"id\": \"a\", \"text\": \"the team won\"}\n{\"id\": \"b\", \"text\": \"" +
                        std::string(500, 'x') + "\"}\n");
  const CliResult refused = run_autocat({"index", "--model", model_, "--db", scratch_.file("db"),
                                         "--max-document-bytes", "100", input});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(
      one_line(refused.err).rfind("autocat: " + input + ":2: line is longer than 100 bytes", 0), 0u)
      << refused.err;
  const CliResult skipped = run_autocat(
      {"classify", "--model", model_, "--max-document-bytes=100", "--skip-malformed", input});
  EXPECT_EQ(skipped.exit_code, 0);
  EXPECT_EQ(lines_of(skipped.out).size(), 1u) << skipped.out;
  const CliResult usage =
      run_autocat({"classify", "--model", model_, "--max-document-bytes", "0", input});
  EXPECT_EQ(usage.exit_code, 2);
}

TEST_F(CliErrorsTest, InvalidUtf8IdsAndLabelsLeaveJsonOutputValid) {
  // A label that is not UTF-8 would be a category name no output (nor the
  // Python module) can decode: training refuses it, naming the line.
  const std::string train = scratch_.file("bytes.jsonl");
  write_file(train,
             "{\"id\": \"1\", \"labels\": [\"caf\xC3\"], \"text\": \"espresso beans roasted\"}\n"
             "{\"id\": \"2\", \"labels\": [\"sports\"], \"text\": \"the team won the match\"}\n");
  const CliResult refused = run_autocat({"train", "--model", scratch_.file("m"), train});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(one_line(refused.err), "autocat: " + train +
                                       ":1: label \"caf\\xc3\" is not valid UTF-8; category "
                                       "names must be UTF-8 (convert the input, e.g. with iconv) "
                                       "(use --skip-malformed to skip it)");
  EXPECT_FALSE(fs::exists(scratch_.file("m")) && fs::exists(model_file_in(scratch_.file("m"))));

  // A model trained before labels were checked (tests/data/latin1_label_model,
  // label b"caf\xE9") and an id that is not UTF-8: JSON shows U+FFFD.
  const std::string old_model = scratch_.file("latin1_label_model");
  fs::copy(test_data("latin1_label_model"), old_model, fs::copy_options::recursive);
  const std::string input = scratch_.file("doc.jsonl");
  write_file(input, "{\"id\": \"doc\xFF\", \"text\": \"roasted espresso\"}\n");
  const CliResult result = run_autocat({"classify", "--model", old_model, "--json", input});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(one_line(result.err), "autocat: warning: " + input +
                                      ":1: id is not valid UTF-8; JSON output shows "
                                      "U+FFFD in place of the invalid bytes");
  // No raw invalid byte reaches the output; U+FFFD stands in for each.
  EXPECT_EQ(result.out.find('\xFF'), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("caf\xE9\""), std::string::npos) << result.out;
  const internal::Json line = testing_util::json(lines_of(result.out).at(0));
  EXPECT_EQ(testing_util::string_at(line, "id"), "doc\xEF\xBF\xBD");
  EXPECT_TRUE(contains(result.out, "\"caf\xEF\xBF\xBD\"")) << result.out;
}

TEST_F(CliErrorsTest, OverlongIdNamesTheLine) {
  const std::string input = scratch_.file("long-id.jsonl");
  write_file(input, "{\"id\": \"ok\", \"labels\": [\"sports\"], \"text\": \"the team won\"}\n" +
                        std::string("{\"id\": \"") + std::string(245, 'Q') +
                        "\", \"labels\": [\"food\"], \"text\": \"soup\"}\n");
  const CliResult result = run_autocat({"train", "--model", scratch_.file("m"), input});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err), "autocat: " + input +
                                      ":2: id is 245 bytes long, over the 244-byte limit of "
                                      "Xapian terms; give a shorter \"id\" (use --skip-malformed "
                                      "to skip it)");
}

TEST_F(CliErrorsTest, DamagedTrainingDatabaseNamesItAndTheFix) {
  const std::string broken = scratch_.file("damaged");
  fs::copy(model_, broken, fs::copy_options::recursive);
  const std::string training_db = internal::resolve_model_dir(broken).training_db;
  const std::string postlist = training_db + "/postlist.glass";
  write_file(postlist, read_file(postlist).substr(0, 100));
  // classify reads kNN's postings from the index file train wrote, not from
  // the training database...
  EXPECT_EQ(run_autocat({"classify", "--model", broken, test_data("fixture_test.jsonl")}).exit_code,
            0);
  // ...which a generation from before that file has to read.
  fs::remove(internal::resolve_model_dir(broken).knn_index);
  for (const char* command : {"classify", "features", "train"}) {
    std::vector<std::string> args = {command, "--model", broken};
    if (std::string(command) == "train") args.push_back("--add");
    if (std::string(command) != "features") args.push_back(test_data("fixture_test.jsonl"));
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 1) << command;
    const std::string line = one_line(result.err);
    EXPECT_EQ(line.rfind("autocat: " + training_db + ": the training database is damaged (", 0), 0u)
        << line;
    EXPECT_TRUE(contains(line, "); retrain with: autocat train --model " + broken + " INPUT..."))
        << line;
  }
}

TEST_F(CliErrorsTest, ModelFileThatIsADirectory) {
  const std::string broken = scratch_.file("dir-model");
  fs::copy(model_, broken, fs::copy_options::recursive);
  const std::string model_file = internal::resolve_model_dir(broken).model_file;
  fs::remove(model_file);
  fs::create_directories(model_file);
  const CliResult result =
      run_autocat({"classify", "--model", broken, test_data("fixture_test.jsonl")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(one_line(result.err), "autocat: " + model_file +
                                      ": not a model file (a directory or special "
                                      "file); train the model again with autocat train");
}

TEST(CliFieldsTest, TrainReadsTheFieldsGiven) {
  TempDir dir;
  const std::string path = dir.file("fields.jsonl");
  write_file(path,
             "{\"title\": \"zebra\", \"text\": \"stripes\", \"labels\": [\"animal\"]}\n"
             "{\"title\": \"tulip\", \"text\": \"petals\", \"labels\": [\"plant\"]}\n"
             "{\"text\": \"no title\", \"labels\": [\"plant\"]}\n");
  const auto terms_with = [&](std::vector<std::string> fields) {
    std::vector<std::string> args = {
        "train",       "--model", dir.file("model"), "--threshold-folds", "0",
        "--stopwords", "none",    "--json"};
    args.insert(args.end(), fields.begin(), fields.end());
    args.push_back(path);
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return testing_util::number_at(testing_util::json(result.out), "terms");
  };
  EXPECT_EQ(terms_with({}), 4);  // stripes, petals, no, title
  EXPECT_EQ(terms_with({"--field", "title^2", "--field", "text"}), 6);
  EXPECT_EQ(terms_with({"--field", "title"}), 2);  // the third record has no terms

  const CliResult bad_boost =
      run_autocat({"train", "--model", dir.file("model"), "--field", "title^0", path});
  EXPECT_EQ(bad_boost.exit_code, 2);
  EXPECT_NE(bad_boost.err.find("--field title^0: the boost after ^ must be a whole number"),
            std::string::npos)
      << bad_boost.err;
  write_file(path, "{\"title\": [\"x\"], \"text\": \"y\", \"labels\": [\"a\"]}\n");
  const CliResult not_string =
      run_autocat({"train", "--model", dir.file("model"), "--field", "title", path});
  EXPECT_NE(not_string.exit_code, 0);
  EXPECT_NE(not_string.err.find(path + ":1: \"title\" (a --field) is not a string"),
            std::string::npos)
      << not_string.err;
}

}  // namespace
}  // namespace autocat
