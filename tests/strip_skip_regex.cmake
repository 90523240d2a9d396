# Run after gtest_discover_tests() has written a test's ctest file
# (POST_BUILD): removes the SKIP_REGULAR_EXPRESSION "[  SKIPPED ]" it sets on
# every test. Under that pattern a suite whose setup threw (gtest records the
# failure, then skips the suite's tests) shows as "Skipped" and ctest exits
# 0; skips are decided by the exit code (SKIP_RETURN_CODE) instead. The
# property appends, so it cannot be overridden through PROPERTIES.
# Usage: cmake -D CTEST_FILE=<target>[1]_tests.cmake -P strip_skip_regex.cmake
if(NOT EXISTS "${CTEST_FILE}")
  message(FATAL_ERROR "strip_skip_regex: ${CTEST_FILE} not found")
endif()
file(READ "${CTEST_FILE}" script)
string(REPLACE " SKIP_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==]" "" script "${script}")
if(script MATCHES "SKIP_REGULAR_EXPRESSION")
  message(FATAL_ERROR "strip_skip_regex: a skip pattern is left in ${CTEST_FILE} "
                      "(has gtest_discover_tests changed its format?)")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
