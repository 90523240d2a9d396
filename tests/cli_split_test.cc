// autocat split on a small page stream: letters about sports or food whose
// first pages open with a greeting and whose last pages close with one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

using testing_util::CliResult;
using testing_util::lines_of;
using testing_util::run_autocat;
using testing_util::TempDir;
using testing_util::write_file;

std::string page(const std::string& id, const std::string& label, const std::string& text) {
  return "{\"id\": \"" + id + "\", \"labels\": [\"" + label + "\"], \"text\": \"" + text + "\"}\n";
}

TEST(CliSplitTest, CutsAStreamIntoDocuments) {
  TempDir dir;
  const std::vector<std::string> roles = {"dear friend greetings", "and then moreover",
                                          "kind regards goodbye", "note memo brief"};
  const std::vector<std::string> role_names = {"first", "middle", "last", "single"};
  const std::vector<std::string> topics = {"striker goal match team", "tomato sauce garlic"};
  const std::vector<std::string> topic_names = {"sports", "food"};
  std::string types_jsonl, roles_jsonl;
  int n = 0;
  for (size_t t = 0; t < topics.size(); ++t) {
    for (size_t r = 0; r < roles.size(); ++r) {
      for (int copy = 0; copy < 4; ++copy) {
        const std::string id = "p" + std::to_string(++n);
        types_jsonl += page(id, topic_names[t], topics[t] + " " + roles[r]);
        roles_jsonl += page(id, role_names[r], roles[r] + " " + topics[t]);
      }
    }
  }
  write_file(dir.file("types.jsonl"), types_jsonl);
  write_file(dir.file("roles.jsonl"), roles_jsonl);
  ASSERT_EQ(run_autocat({"train", "--model", dir.file("types"), "--method", "nb",
                         "--threshold-folds", "0", dir.file("types.jsonl")})
                .exit_code,
            0);
  ASSERT_EQ(run_autocat({"train", "--model", dir.file("roles"), "--method", "nb",
                         "--threshold-folds", "0", dir.file("roles.jsonl")})
                .exit_code,
            0);
  // sports letter of 3 pages, a food note, a food letter of 2 pages.
  write_file(dir.file("stream.jsonl"), page("a1", "", "dear friend the striker scored a goal") +
                                           page("a2", "", "and then the team won the match") +
                                           page("a3", "", "the goal was great kind regards") +
                                           page("b1", "", "memo note: tomato sauce") +
                                           page("c1", "", "dear friend the garlic and tomato") +
                                           page("c2", "", "sauce was good kind regards goodbye"));
  const CliResult result = run_autocat({"split", "--model", dir.file("types"), "--role-model",
                                        dir.file("roles"), dir.file("stream.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(lines_of(result.out),
            (std::vector<std::string>{"a1..a3\tsports\t3", "b1..b1\tfood\t1", "c1..c2\tfood\t2"}))
      << result.out;

  const CliResult json = run_autocat({"split", "--model", dir.file("types"), "--role-model",
                                      dir.file("roles"), "--json", dir.file("stream.jsonl")});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"id\":\"c1\",\"type\":\"food\",\"pages\":[\"c1\",\"c2\"]"),
            std::string::npos)
      << json.out;

  // Page ids are the input's: their control bytes are shown escaped.
  write_file(dir.file("escape.jsonl"), page("e\\u001b[2J1", "", "dear friend the striker scored") +
                                           page("e2\\u0007", "", "the goal kind regards goodbye"));
  const CliResult escaped = run_autocat({"split", "--model", dir.file("types"), "--role-model",
                                         dir.file("roles"), dir.file("escape.jsonl")});
  ASSERT_EQ(escaped.exit_code, 0) << escaped.err;
  EXPECT_EQ(escaped.out.find('\x1b'), std::string::npos) << escaped.out;
  EXPECT_EQ(escaped.out.find('\x07'), std::string::npos) << escaped.out;
  EXPECT_EQ(escaped.out.rfind("e\\x1b[2J1..e2\\x07\t", 0), 0u) << escaped.out;

  // A role model without the role categories is refused.
  const CliResult bad = run_autocat({"split", "--model", dir.file("types"), "--role-model",
                                     dir.file("types"), dir.file("stream.jsonl")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("has no category 'first'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace autocat
