#!/usr/bin/env bash
# Mutation audit of classify/: applies each mutation of a list to a copy of
# the sources' file, rebuilds, runs the fast tests (the real-data suites
# excluded) and records whether a test failed ("killed") or all passed
# ("SURVIVED"). The file is restored after each mutation, also on Ctrl-C.
#
# usage: scripts/mutate.sh [--source DIR] [--build DIR] [--only ID,ID...]
#                          [--skip ID,ID...] [MUTATIONS.tsv]
#   MUTATIONS.tsv  lines "id<TAB>file<TAB>old<TAB>new" (default
#                  scripts/mutations.tsv); `old` must occur exactly once in
#                  the file; "\n" in old/new stands for a line break.
#   --source DIR   tree to mutate and build (default: this checkout)
#   --build DIR    its build directory (default DIR/build-mutate, built -O0
#                  without debug info: each mutation recompiles and relinks
#                  fastest, and the fast tests stay fast)
# Results: one line per mutation on stdout and in BUILD/mutation-results.tsv.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
source_dir="$here"
build_dir=""
only=""
skip=""
list="$here/scripts/mutations.tsv"
while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_dir="$(cd "$2" && pwd)"; shift 2 ;;
    --build) build_dir="$2"; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --skip) skip=",$2,"; shift 2 ;;
    *) list="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; shift ;;
  esac
done
build_dir="${build_dir:-$source_dir/build-mutate}"
results="$build_dir/mutation-results.tsv"
jobs=2

cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 \
  -DAUTOCAT_WERROR=OFF -DAUTOCAT_BUILD_BENCH=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null

run_tests() {
  (cd "$build_dir" && ctest -j "$jobs" -E '^(NewsgroupsTest|ReutersTest)$' --timeout 300 \
    --stop-on-failure > "$build_dir/mutation-ctest.log" 2>&1)
}

echo "== baseline (no mutation)"
cmake --build "$build_dir" -j "$jobs" > "$build_dir/mutation-build.log" 2>&1 ||
  { echo "autocat: mutate: the unmutated tree does not build ($build_dir/mutation-build.log)"; exit 1; }
run_tests ||
  { echo "autocat: mutate: the unmutated tree fails its tests ($build_dir/mutation-ctest.log)"; exit 1; }

backup=""
target=""
# A plain copy, not cp -p: the restored file must look newer than the object
# built from the mutation, or the next build would keep that object.
restore() { if [ -n "$backup" ]; then cp "$backup" "$target"; rm -f "$backup"; backup=""; fi; }
trap restore EXIT INT TERM

printf 'id\tfile\tresult\tseconds\tfirst failing test\n' > "$results"
killed=0 survived=0 total=0
while IFS=$'\t' read -r id file old new; do
  case "$id" in ''|'#'*) continue ;; esac
  if [ -n "$only" ] && [[ "$only" != *",$id,"* ]]; then continue; fi
  if [ -n "$skip" ] && [[ "$skip" == *",$id,"* ]]; then continue; fi
  target="$source_dir/$file"
  backup="$(mktemp)"
  cp -p "$target" "$backup"
  start=$(date +%s)
  if ! python3 - "$target" "$old" "$new" <<'PY'
import sys
path, old, new = sys.argv[1], sys.argv[2].replace("\\n", "\n"), sys.argv[3].replace("\\n", "\n")
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"{path}: {text.count(old)} occurrences of {old!r}, need exactly 1")
open(path, "w").write(text.replace(old, new))
PY
  then
    result="BAD-MUTATION" first=""
  elif ! cmake --build "$build_dir" -j "$jobs" > "$build_dir/mutation-build.log" 2>&1; then
    result="no-build" first=""
  elif run_tests; then
    result="SURVIVED" first=""
  else
    result="killed"
    first="$(grep -m1 -oE '\*\*\*(Failed|Timeout|Exception)|Test +#[0-9]+: [A-Za-z0-9_.]+ \.+\*\*\*' \
      "$build_dir/mutation-ctest.log" | head -1 | sed -E 's/Test +#[0-9]+: //; s/ \.+\*\*\*//')"
  fi
  restore
  seconds=$(( $(date +%s) - start ))
  total=$((total + 1))
  case "$result" in killed|no-build) killed=$((killed + 1)) ;; SURVIVED) survived=$((survived + 1)) ;; esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$file" "$result" "$seconds" "$first" | tee -a "$results"
done < "$list"
cmake --build "$build_dir" -j "$jobs" > /dev/null 2>&1 || true
echo "== $total mutations: $killed killed, $survived survived (details: $results)"
