#!/usr/bin/env bash
# Runs each libFuzzer harness of fuzz/ for a bounded time, starting from the
# seed corpora (tests/data, fuzz/seeds) and the saved reproducers of fixed
# bugs (fuzz/regressions), as many at once as there are cores. Fails if any
# harness finds a crash, leak, timeout, or allocation over the limit; the
# input that did it is left in BUILD/fuzz-artifacts/ and printed in base64,
# so a CI log alone is enough to reproduce it. The seed is fixed (AUTOCAT_FUZZ_SEED, default 1) so a
# failure on one machine can be replayed on another.
# Usage: scripts/run_fuzzers.sh BUILD_DIR [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: scripts/run_fuzzers.sh BUILD_DIR [SECONDS]}
seconds=${2:-60}
seed=${AUTOCAT_FUZZ_SEED:-1}

seeds_for() {
  case "$1" in
    fuzz_model_file) echo tests/data/*.autocat fuzz/seeds/model/* ;;
    fuzz_jsonl_reader) echo tests/data/*.jsonl ;;
    fuzz_analyzer) echo tests/data/*.jsonl tests/data/analyzer_stopwords.txt ;;
    fuzz_journal) echo fuzz/seeds/journal/* ;;
  esac
}

rm -rf "$build/fuzz-logs"
mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs"
# One fuzzer: its filtered output into $build/fuzz-logs/NAME.log, its exit
# status into NAME.status.
run_fuzzer() {
  local fuzzer=$1 corpus="$build/fuzz-corpus/$1" regressions=()
  mkdir -p "$corpus"
  # shellcheck disable=SC2046
  cp $(seeds_for "$fuzzer") "$corpus/"
  if [ -d "fuzz/regressions/$fuzzer" ]; then regressions=("fuzz/regressions/$fuzzer"); fi
  # A crafted input may not make autocat allocate more than 256 MB at once
  # or 2 GB in all; 25 s on one input counts as a hang.
  set +e
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/fuzz/$fuzzer" -seed="$seed" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -timeout=25 -max_len=200000 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$fuzzer-" "$corpus" "${regressions[@]}" 2>&1 |
    grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^ +#[0-9]+ 0x|^stat::number_of_executed_units|ERROR|SUMMARY|Test unit written|==[0-9]+==|terminate called|what\(\)|runtime error" |
    head -200 > "$build/fuzz-logs/$fuzzer.log"
  echo "${PIPESTATUS[0]}" > "$build/fuzz-logs/$fuzzer.status"
  set -e
}

# As many fuzzers at once as there are cores: each is one process.
fuzzers=(fuzz_model_file fuzz_jsonl_reader fuzz_analyzer fuzz_journal)
parallel=$(nproc)
for ((first = 0; first < ${#fuzzers[@]}; first += parallel)); do
  batch=("${fuzzers[@]:first:parallel}")
  echo "== ${batch[*]} for ${seconds} s"
  for fuzzer in "${batch[@]}"; do run_fuzzer "$fuzzer" & done
  wait
done

failed=0
for fuzzer in "${fuzzers[@]}"; do
  echo "== $fuzzer"
  cat "$build/fuzz-logs/$fuzzer.log"
  status=$(cat "$build/fuzz-logs/$fuzzer.status")
  if [ "$status" -ne 0 ]; then
    failed=1
    echo "autocat: $fuzzer failed (exit $status, seed $seed); the input is in $build/fuzz-artifacts/"
    for artifact in "$build/fuzz-artifacts/$fuzzer"-*; do
      [ -f "$artifact" ] || continue
      echo "== $artifact ($(stat -c %s "$artifact") bytes), base64:"
      head -c 65536 "$artifact" | base64 -w 0
      echo
    done
  fi
done
exit "$failed"
