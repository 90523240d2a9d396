// `autocat model slim`: the copy without the training collection
// classifies exactly as the model it came from, with every method, and
// refuses what needs the collection with a message.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "autocat/types.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

using testing_util::CliResult;
using testing_util::json;
using testing_util::run_autocat;
using testing_util::TempDir;
using testing_util::test_data;

TEST(CliModelSlimTest, SlimModelClassifiesIdenticallyWithoutTheTrainingCollection) {
  TempDir dir;
  const std::string full = dir.file("full"), slim = dir.file("slim");
  CliResult result = run_autocat({"train", "--model", full, test_data("fixture_train.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  result = run_autocat({"model", "slim", "--model", full, "--out", slim, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const internal::Json summary = json(result.out);
  EXPECT_EQ(summary.at("files").size(), 2u);  // model file, kNN index
  EXPECT_GT(summary.at("left_out_bytes").get<double>(), 0);
  // No training database anywhere under the slim copy.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(slim)) {
    EXPECT_NE(entry.path().filename().string(), "training") << entry.path();
  }
  for (Method method : all_methods()) {
    const std::vector<std::string> args = {"--method", method_name(method), "--json",
                                           test_data("fixture_test.jsonl")};
    std::vector<std::string> from_full = {"classify", "--model", full};
    std::vector<std::string> from_slim = {"classify", "--model", slim};
    from_full.insert(from_full.end(), args.begin(), args.end());
    from_slim.insert(from_slim.end(), args.begin(), args.end());
    const CliResult a = run_autocat(from_full), b = run_autocat(from_slim);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << method_name(method) << ": " << b.err;
    EXPECT_EQ(a.out, b.out) << method_name(method);
    EXPECT_FALSE(a.out.empty());
  }
  // Learning needs the training collection: refused, saying so.
  const std::string doc = dir.file("new.jsonl");
  testing_util::write_file(
      doc, "{\"id\": \"n1\", \"labels\": [\"sports\"], \"text\": \"a late goal won the cup\"}\n");
  result = run_autocat({"learn", "--model", slim, doc});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("learning needs the training database"), std::string::npos)
      << result.err;
  // Into itself, or without the action: usage errors.
  EXPECT_EQ(run_autocat({"model", "slim", "--model", full, "--out", full}).exit_code, 2);
  EXPECT_EQ(run_autocat({"model", "--model", full, "--out", slim}).exit_code, 2);
}

}  // namespace
}  // namespace autocat
