// main() of every test executable, instead of gtest_main: a run in which
// tests skipped exits with kSkipReturnCode (ctest: "Skipped") only when each
// skip was for absent real data; any other skip fails the run, so that no
// skip hides a broken setup. Failures (including exceptions thrown by a
// suite's setup, which gtest records and then skips the suite's tests for)
// exit non-zero as usual.
#include <gtest/gtest.h>

#include <cstdio>

#include "missing_data.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  if (result != 0) return result;
  const int skipped = testing::UnitTest::GetInstance()->skipped_test_count();
  if (skipped == 0) return 0;
  const int missing_data = autocat::testing_util::missing_data_skips.load();
  if (skipped > missing_data) {
    std::fprintf(stderr,
                 "autocat tests: %d test(s) skipped for a reason other than missing data; "
                 "a test must pass or fail\n",
                 skipped - missing_data);
    return 1;
  }
  return autocat::testing_util::kSkipReturnCode;
}
