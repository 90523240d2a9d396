// Rule categories through the `autocat` tool: classify --rules (text and the
// decision trace of --json), index --rules (category terms in the database),
// rules test (precision and recall per rule) and bad rules files.
#include <gtest/gtest.h>
#include <xapian.h>

#include <string>
#include <vector>

#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

using testing_util::CliResult;
using testing_util::run_autocat;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CliRulesTest : public testing::Test {
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

  std::string file(const std::string& name, const std::string& contents) {
    const std::string path = scratch_.file(name);
    write_file(path, contents);
    return path;
  }

  static TempDir* dir_;
  static std::string model_;
  static bool trained_;
  TempDir scratch_;
};

TempDir* CliRulesTest::dir_ = nullptr;
std::string CliRulesTest::model_;
bool CliRulesTest::trained_ = false;

// A sports text that mentions a tomato: the rule makes it food as well; a
// veto keeps "science" away from a text about telescopes.
const char kRules[] =
    "# test rules\n"
    "food\tassign\ttomato\n"
    "science\tveto\ttelescope AND match\n";

const char kDocs[] =
    "{\"id\": \"d1\", \"labels\": [\"sports\", \"food\"], \"text\": \"The striker scored and "
    "the team won the match; fans threw a tomato\"}\n"
    "{\"id\": \"d2\", \"labels\": [\"sports\"], \"text\": \"The telescope crew won the "
    "football match\"}\n"
    "{\"id\": \"d3\", \"labels\": [\"food\"], \"text\": \"Simmer the sauce with garlic\"}\n"
    "{\"id\": \"d4\", \"labels\": [\"science\"], \"text\": \"The telescope found a comet\"}\n";

// The "categories" member of a classify --json line (what was assigned).
std::string assigned_part(const std::string& line) {
  const size_t begin = line.find("\"categories\":");
  return line.substr(begin, line.find("\"scores\":") - begin);
}

TEST_F(CliRulesTest, ClassifyAppliesRulesAndTracesThem) {
  const std::string rules = file("my.rules", kRules);
  const std::string docs = file("docs.jsonl", kDocs);
  const CliResult plain = run_autocat({"classify", "--model", model_, "--json", docs});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const CliResult ruled =
      run_autocat({"classify", "--model", model_, "--rules", rules, "--json", docs});
  ASSERT_EQ(ruled.exit_code, 0) << ruled.err;
  const std::vector<std::string> lines = testing_util::lines_of(ruled.out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(contains(assigned_part(lines[0]), "{\"name\":\"food\",\"score\":1}")) << lines[0];
  EXPECT_TRUE(contains(lines[0], "\"rules\":[{\"source\":\"" + rules +
                                     ":2\",\"category\":\"food\",\"mode\":\"assign\""))
      << lines[0];
  EXPECT_TRUE(contains(lines[0], "rules: assign food (" + rules + ":2)")) << lines[0];
  EXPECT_FALSE(contains(assigned_part(testing_util::lines_of(plain.out)[0]), "\"name\":\"food\""));
  EXPECT_TRUE(contains(lines[1], "veto science")) << lines[1];
  EXPECT_FALSE(contains(assigned_part(lines[1]), "\"name\":\"science\"")) << lines[1];
  EXPECT_FALSE(contains(lines[2], "\"rules\"")) << lines[2];
}

TEST_F(CliRulesTest, IndexStoresRuleCategories) {
  const std::string rules = file("my.rules", kRules);
  const std::string docs = file("docs.jsonl", kDocs);
  const std::string db = scratch_.file("db");
  const CliResult indexed =
      run_autocat({"index", "--model", model_, "--db", db, "--rules", rules, docs});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  Xapian::Database database(db);
  Xapian::PostingIterator it = database.postlist_begin("XCfood");
  ASSERT_NE(it, database.postlist_end("XCfood"));
  bool d1_is_food = false;
  for (; it != database.postlist_end("XCfood"); ++it) {
    Xapian::Document doc = database.get_document(*it);
    Xapian::TermIterator id = doc.termlist_begin();
    id.skip_to("Qd1");
    d1_is_food |= id != doc.termlist_end() && *id == "Qd1";
  }
  EXPECT_TRUE(d1_is_food);
  EXPECT_EQ(run_autocat(
                {"index", "--model", model_, "--db", db, "--rules", rules, "--no-categories", docs})
                .exit_code,
            2);
}

TEST_F(CliRulesTest, RulesTestReportsPrecisionAndRecall) {
  const std::string rules = file("my.rules", kRules);
  const std::string docs = file("docs.jsonl", kDocs);
  const CliResult result =
      run_autocat({"rules", "test", "--rules", rules, "--model", model_, "--json", docs});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // food: the rule matches d1 only (food), of the two food documents.
  EXPECT_TRUE(contains(result.out,
                       "\"mode\":\"assign\",\"query\":\"tomato\",\"matched\":1,"
                       "\"correct\":1,\"precision\":1,\"recall\":0.5"))
      << result.out;
  EXPECT_TRUE(contains(result.out, "\"documents\":4")) << result.out;
  EXPECT_TRUE(contains(result.out, "\"learned\":{")) << result.out;
  const CliResult text = run_autocat({"rules", "test", "--rules", rules, docs});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "rules P R F1")) << text.out;
}

TEST_F(CliRulesTest, BadRulesNameFileAndLine) {
  const std::string docs = file("docs.jsonl", kDocs);
  const std::string unknown = file("unknown.rules", "# x\nmusic\tassign\tguitar\n");
  CliResult result = run_autocat({"classify", "--model", model_, "--rules", unknown, docs});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.err, unknown + ":2: unknown category 'music'")) << result.err;
  const std::string bad = file("bad.rules", "food\tassign\t(tomato OR\n");
  result =
      run_autocat({"index", "--model", model_, "--db", scratch_.file("db"), "--rules", bad, docs});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.err, bad + ":1: bad query")) << result.err;
  // Without a model, a category no document has is an error too.
  result = run_autocat({"rules", "test", "--rules", unknown, docs});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.err, unknown + ":2: category 'music' is not a label")) << result.err;
  EXPECT_EQ(run_autocat({"rules", "check", "--rules", unknown, docs}).exit_code, 2);
}

}  // namespace
}  // namespace autocat
