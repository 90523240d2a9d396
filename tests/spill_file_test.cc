#include "classify/io/spill_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/io/filenames.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

// Strings of every length, empty ones and a run longer than a write's
// megabyte included, come back the same and in order; the file is gone
// from the directory as soon as it is open.
TEST(SpilledStringsTest, StringsComeBackTheSame) {
  const testing_util::TempDir dir;
  std::vector<std::string> strings = {"", "a", "", std::string(3 << 20, 'x'), "tail"};
  for (int i = 0; i < 5000; ++i) strings.push_back("term" + std::to_string(i * 7919));
  const std::vector<std::string> original = strings;
  SpilledStrings spilled(&strings, dir.path(), kTermsSpillFilePrefix, "the test's");
  EXPECT_TRUE(strings.empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  spilled.restore();
  EXPECT_EQ(strings, original);
}

// A directory that cannot take the file is an IOError naming it, and the
// strings stay where they were.
TEST(SpilledStringsTest, MissingDirectoryKeepsTheStrings) {
  const testing_util::TempDir dir;
  std::vector<std::string> strings = {"kept", "as", "they", "were"};
  const std::vector<std::string> original = strings;
  try {
    SpilledStrings spilled(&strings, dir.file("missing"), kTermsSpillFilePrefix, "the test's");
    FAIL() << "no error";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("missing") + ": cannot create the test's "),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(strings, original);
}

TEST(SpillFileTest, EveryKindIsRecognizedForRemoval) {
  for (const std::string_view prefix :
       {kSpillFilePrefix, kWeightsSpillFilePrefix, kTermsSpillFilePrefix}) {
    EXPECT_TRUE(is_spill_file(std::string(prefix) + "a1B2c3")) << prefix;
    EXPECT_FALSE(is_spill_file(std::string(prefix) + "a1B2c")) << prefix;
  }
  EXPECT_FALSE(is_spill_file("model.autocat"));
}

}  // namespace
}  // namespace autocat::internal
