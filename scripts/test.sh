#!/usr/bin/env bash
# Command 2: install what is missing, then build and run the whole test
# suite twice: warnings as errors, and under AddressSanitizer +
# UndefinedBehaviorSanitizer, with the Debian package built, installed, used
# and removed in between (scripts/package-smoke.sh); then the Concurrent* tests under
# ThreadSanitizer; then fuzz the untrusted-input readers for a bounded time
# (AUTOCAT_FUZZ_SECONDS each, default 30; 0 skips).
set -euo pipefail
cd "$(dirname "$0")/.."

# The last line says whether the whole suite passed, and where it stopped if not.
step="installing dependencies"
started=$SECONDS
finish() {
  local status=$?
  if [ "$status" -eq 0 ]; then
    echo "autocat: PASS: the whole test suite passed ($((SECONDS - started)) s)"
  else
    echo "autocat: FAIL: the test suite stopped at: $step (exit $status; the output above says why)"
  fi
}
trap finish EXIT
# Each stage's heading says when it began, so a slow suite shows which
# stage took the time.
section() {
  echo "== $* [at $((SECONDS - started)) s]"
}

bash scripts/install-deps.sh

if [ ! -d ../shared/data ]; then
  echo "autocat: NOTE ../shared/data is missing: the 20 Newsgroups and Reuters-21578 tests will report SKIPPED"
fi

step="formatting"
section "formatting (clang-format --dry-run --Werror)"
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror --style=file

jobs=$(nproc)
# Line tables only (-g1): sanitizer reports and gdb backtraces keep file and
# line, and each build compiles about a quarter faster than with full -g
# (the suite is four builds).
relwithdebinfo=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

step="the -Werror build and its tests"
section "build with -Werror"
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${relwithdebinfo[@]}" \
  -DAUTOCAT_WERROR=ON > /dev/null
cmake --build build-test -j "$jobs"
(cd build-test && ctest --output-on-failure -j "$jobs")

step="the Debian package and pip install (scripts/package-smoke.sh)"
section "the Debian package: build, apt-get install, use, remove; pip install . into a venv"
package_status=0
bash scripts/package-smoke.sh build-package || package_status=$?
if [ "$package_status" -eq 77 ]; then
  echo "autocat: NOTE the package test was skipped (the line above says why)"
elif [ "$package_status" -ne 0 ]; then
  exit "$package_status"
fi

step="the AddressSanitizer + UndefinedBehaviorSanitizer build and its tests"
section "build with AddressSanitizer + UndefinedBehaviorSanitizer"
# Debug (assertions on) at -O1: at -O0 the 20 Newsgroups and Reuters suites,
# which train with the full cross-validation, took over 15 min each under
# ASan; at -O1 about 3 min, and ASan still sees every access.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
  -DAUTOCAT_WERROR=ON \
  -DAUTOCAT_SANITIZE=ON -DAUTOCAT_BUILD_BENCH=OFF > /dev/null
cmake --build build-asan -j "$jobs"
# Everything again, so the sanitizers also see the real-data paths: every
# method trained and deciding on a fifth of Reuters (multi-label, 30 s
# here), the 20 Newsgroups page-stream and EM tests. The full-collection
# accuracy suites (Reuters 2.5 min, the two 20 Newsgroups ones 3 and 2 min
# under ASan) train through the same code and run in the -Werror build above.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$jobs" -E '^(NewsgroupsTest|NewsgroupsLiveTest\..*|NewsgroupsSubjectsTest\..*|ReutersTest)$')

step="the ThreadSanitizer tests"
section "ThreadSanitizer: the Concurrent* tests"
# A third build, kept cheap: only the executables that hold Concurrent*
# tests, and only those tests run (category_indexer_test's fixture also
# trains a model, whose cross-validation folds run on several threads).
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${relwithdebinfo[@]}" -DAUTOCAT_WERROR=ON \
  -DAUTOCAT_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" > /dev/null
cmake --build build-tsan -j "$jobs" \
  --target analyzer_test rocchio_test knn_test category_indexer_test live_learning_test \
  live_models_test model_sections_test linear_test
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j "$jobs" -R '\.Concurrent')

fuzz_seconds=${AUTOCAT_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" -gt 0 ]; then
  step="the fuzzers"
  section "fuzzers (clang libFuzzer, ASan + UBSan), ${fuzz_seconds} s each"
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${relwithdebinfo[@]}" -DCMAKE_CXX_COMPILER=clang++ \
    -DAUTOCAT_FUZZ=ON -DAUTOCAT_SANITIZE=ON -DAUTOCAT_WERROR=ON -DAUTOCAT_BUILD_TESTS=OFF \
    -DAUTOCAT_BUILD_EXAMPLES=OFF -DAUTOCAT_BUILD_BENCH=OFF > /dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzz_model_file fuzz_jsonl_reader fuzz_analyzer fuzz_journal
  bash scripts/run_fuzzers.sh build-fuzz "$fuzz_seconds"
fi
