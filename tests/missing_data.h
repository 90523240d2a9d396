// Shared by test_util.h and test_main.cc: how many tests skipped because
// the real data they need is absent (AUTOCAT_SKIP_WITHOUT_DATA).
#pragma once

#include <atomic>

namespace autocat::testing_util {

inline std::atomic<int> missing_data_skips{0};

// ctest's SKIP_RETURN_CODE (tests/CMakeLists.txt): the test main returns it
// only when every skipped test skipped for missing data.
inline constexpr int kSkipReturnCode = 77;

}  // namespace autocat::testing_util
