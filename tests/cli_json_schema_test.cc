// Every --json output of the CLI starts with "schema_version": 1, the
// version of the fields documented in docs/json.md.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli_test_util.h"

namespace autocat {
namespace {

using testing_util::json;
using testing_util::lines_of;
using testing_util::run_autocat;
using testing_util::TempDir;

const std::string kTrain = std::string(AUTOCAT_SOURCE_DIR) + "/examples/data/train.jsonl";
const std::string kInbox = std::string(AUTOCAT_SOURCE_DIR) + "/examples/data/inbox";

void expect_versioned_objects(const std::string& command, const std::string& out) {
  const std::vector<std::string> lines = lines_of(out);
  ASSERT_FALSE(lines.empty()) << command << " printed nothing";
  for (const std::string& line : lines) {
    const internal::Json object = json(line);
    ASSERT_TRUE(object.is_object()) << command << ": " << line;
    ASSERT_FALSE(object.empty()) << command;
    EXPECT_EQ(object.begin().key(), "schema_version") << command << ": " << line;
    EXPECT_EQ(testing_util::number_at(object, "schema_version"), 1) << command;
  }
}

TEST(CliJsonSchemaTest, EveryCommandWritesSchemaVersionFirst) {
  TempDir dir;
  const std::string model = dir.file("model");
  const std::string db = dir.file("db");
  const std::vector<std::vector<std::string>> commands = {
      {"train", "--model", model, "--json", kTrain},
      {"index", "--model", model, "--db", db, "--store-text", "--json", kInbox},
      {"recategorize", "--model", model, "--db", db, "--json"},
      {"classify", "--model", model, "--json", kInbox},
      {"search", "--db", db, "--facets", "--json", "comet"},
      {"eval", "--model", model, "--json", kTrain},
      {"eval", "--folds", "2", "--json", kTrain},
      {"features", "--model", model, "--top", "3", "--json"},
      {"explain", "--model", model, "--json", kInbox},
      {"learn", "--model", model, "--json", kTrain},
      {"forget", "--model", model, "--json", "astro-01"},
  };
  for (const std::vector<std::string>& args : commands) {
    const testing_util::CliResult result = run_autocat(args);
    ASSERT_EQ(result.exit_code, 0) << args[0] << ": " << result.err;
    expect_versioned_objects(args[0], result.out);
  }
}

}  // namespace
}  // namespace autocat
