#!/usr/bin/env bash
# The scale benchmark in one command: N documents from the realistic
# generator (gen_corpus --model mixture, seed 1), training with the defaults
# (wall seconds, peak RSS, default method), exact kNN at k = 50 on one thread
# and the approximate mode that walks only the top 50 query terms (knn_search:
# docs/s, recall@50 against the exact neighbours, accuracy change), the k-d
# tree candidate pass (documents projected to 16 dimensions by truncated SVD,
# the two-step search with the product's defaults (first stage over each
# query term's pruned list, candidates rescored by exact cosine: docs/s,
# recall@50, accuracy change, the candidates k' and the cut), the k-d
# the 5,000 nearest by an exact k-d tree search re-ranked by exact cosine:
# docs/s and recall@50; a benchmark option, not a product search), and
# `autocat index` with the default method against plain Xapian TermGenerator
# in the same run (index_throughput, one thread each).
#
# Prints one JSON line last on stdout; progress goes to stderr and every
# step's output to a log in the --out directory.
#
# usage: bench/scale.sh --docs N [--out DIR] [--build DIR] [--no-build]
#   --out DIR    corpus, model and logs (default build/scale/N)
#   --build DIR  CMake build directory (default build/; configured if missing)
#   --no-build   use the binaries already in the build directory
# The 20 Newsgroups file the generator fits on is read from ../shared/data
# (or $AUTOCAT_SHARED_DATA_DIR).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: bench/scale.sh --docs N [--out DIR] [--build DIR] [--no-build]"
die() {
  echo "scale.sh: $*" >&2
  exit 1
}

docs="" out="" build="$here/build" do_build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --docs | --out | --build)
      [[ $# -ge 2 ]] || die "$1 needs a value ($usage)"
      case "$1" in
        --docs) docs=$2 ;;
        --out) out=$2 ;;
        --build) build=$2 ;;
      esac
      shift 2
      ;;
    --no-build)
      do_build=0
      shift
      ;;
    -h | --help)
      echo "$usage"
      exit 0
      ;;
    *) die "unknown option '$1' ($usage)" ;;
  esac
done
[[ -n "$docs" ]] || die "--docs N is required ($usage)"
# At least 20: a tenth of them (at least 2) are held out as test documents.
[[ "$docs" =~ ^[0-9]+$ && "$docs" -ge 20 && ${#docs} -le 10 ]] ||
  die "--docs needs a whole number of documents, at least 20, got '$docs'"
docs=$((10#$docs))

shared=${AUTOCAT_SHARED_DATA_DIR:-$here/../shared/data}
newsgroups=$shared/20news-bydate.jsonl.gz
[[ -f "$newsgroups" ]] ||
  die "$newsgroups not found: the generator fits on it (see ../shared/data/README.md, or set AUTOCAT_SHARED_DATA_DIR)"
export AUTOCAT_SHARED_DATA_DIR=$shared
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found: it measures peak RSS (apt-get install time)"
autocat=$build/indexer/autocat
check_binaries() {
  local binary
  for binary in "$autocat" "$build/bench/gen_corpus" "$build/bench/knn_search" \
    "$build/bench/index_throughput"; do
    [[ -x "$binary" ]] || die "$binary not found: build it (drop --no-build, or check --build)"
  done
}
[[ $do_build == 1 ]] || check_binaries  # before --out is created under a wrong --build

out=${out:-$build/scale/$docs}
mkdir -p "$out" || die "cannot create --out directory $out"
out=$(cd "$out" && pwd)

# run STEP LOG COMMAND...: COMMAND's output into LOG; on failure one line
# naming the step and the log, and exit 1.
run() {
  local step=$1 log=$2
  shift 2
  echo "scale.sh: $step ..." >&2
  local start end
  start=$(date +%s.%N)
  if ! "$@" > "$log" 2>&1; then
    die "step '$step' failed; read $log"
  fi
  end=$(date +%s.%N)
  echo "scale.sh: $step done in $(python3 -c "print(f'{$end - $start:.1f}')") s" >&2
}

# 1. Build.
if [[ $do_build == 1 ]]; then
  if [[ ! -f "$build/build.ninja" && ! -f "$build/Makefile" ]]; then
    generator=()
    command -v ninja > /dev/null && generator=(-G Ninja)
    run configure "$out/configure.log" cmake -S "$here" -B "$build" "${generator[@]}" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  run build "$out/build.log" cmake --build "$build" -j "$(nproc)" \
    --target autocat gen_corpus knn_search index_throughput
fi
check_binaries

# 2. Corpus: a tenth of it as test documents, at most 5,000.
test_fraction=$(python3 -c "print(min(5000, $docs / 10) / $docs)")
corpus=$out/corpus.jsonl
run generate "$out/generate.log" "$build/bench/gen_corpus" --documents "$docs" \
  --model mixture --test-fraction "$test_fraction" --seed 1 --input "$newsgroups" \
  --output "$corpus"
read -r train_docs test_docs < <(python3 - "$corpus" << 'PY'
import json, sys
counts = {'train': 0, 'test': 0}
for line in open(sys.argv[1]):
    split = json.loads(line).get('split')
    counts[split] = counts.get(split, 0) + 1
print(counts['train'], counts['test'])
PY
)
[[ $test_docs -gt 0 && $train_docs -gt 0 ]] ||
  die "step 'generate' gave $train_docs training and $test_docs test documents; read $out/generate.log"
echo "scale.sh: $train_docs training and $test_docs test documents" >&2

# 3. Training with the defaults.
model=$out/model
rm -rf "$model"
run train "$out/train.log" /usr/bin/time -f "%e %M" -o "$out/train.time" \
  "$autocat" train --model "$model" --split train --json --quiet "$corpus"
# train.log holds the JSON report (stdout) and whatever went to stderr.
read -r train_seconds train_rss_kb < "$out/train.time"

# 4. kNN at k = 50, one thread: exact default search, the top-50-terms mode,
# the two-step search (KnnTwoStepParams' and kKnnDefaultPruneLength's
# defaults) and the k-d tree candidate pass.
kd_dims=16 kd_candidates=5000
two_step_prune=2000 two_step_factor=10 two_step_terms=0
run knn_search "$out/knn_search.log" "$build/bench/knn_search" --model "$model" \
  --data "$corpus" --k 50 --terms 50 --repeat 3 --kd-projection svd --kd-dims $kd_dims \
  --kd-candidates $kd_candidates --kd-leaves 0 --two-step-prune $two_step_prune \
  --two-step-candidates $two_step_factor --two-step-terms $two_step_terms

# 5. autocat index (default method) against TermGenerator, one thread each.
run index_throughput "$out/index_throughput.log" "$build/bench/index_throughput" \
  --model "$model" --data "$corpus" --method default --threads 1 --runs 3 --dir "$out"

# 6. Opening the default model and classifying 10 test documents in a fresh
# process (warm page cache): the time and peak RSS an indexer pays to start.
python3 - "$corpus" "$out/open10.jsonl" << 'PY'
import json, sys
with open(sys.argv[2], 'w') as out:
    kept = 0
    for line in open(sys.argv[1]):
        if kept < 10 and json.loads(line).get('split') == 'test':
            out.write(line)
            kept += 1
PY
"$autocat" classify --model "$model" --json "$out/open10.jsonl" > /dev/null 2>&1  # warm the cache
run open_default "$out/open_default.log" /usr/bin/time -f "%e %M" -o "$out/open_default.time" \
  "$autocat" classify --model "$model" --json "$out/open10.jsonl"
read -r open_seconds open_rss_kb < "$out/open_default.time"
export open_seconds open_rss_kb

python3 - "$docs" "$train_docs" "$test_docs" "$train_seconds" "$train_rss_kb" \
  "$out/train.log" "$out/knn_search.log" "$out/index_throughput.log" "$kd_dims" \
  "$kd_candidates" "$two_step_prune" "$two_step_factor" "$two_step_terms" << 'PY'
import json, os, re, sys

docs, train_docs, test_docs = (int(v) for v in sys.argv[1:4])
train_seconds, rss_kb = float(sys.argv[4]), int(sys.argv[5])
train_log, knn_log, index_log = sys.argv[6:9]
kd_dims, kd_candidates = int(sys.argv[9]), int(sys.argv[10])
prune, factor, terms = int(sys.argv[11]), int(sys.argv[12]), int(sys.argv[13])

def fail(log, what):
    sys.exit(f"scale.sh: step 'report' found no {what} in {log}; read it")

text = open(train_log).read()
start = text.find('{')
try:
    report, _ = json.JSONDecoder().raw_decode(text[start:]) if start >= 0 else (None, 0)
except ValueError:
    report = None
if not report or 'default_method' not in report:
    fail(train_log, 'JSON report with default_method')

# knn_search rows: | k | search | docs/s | walked | candidates | identical | recall | accuracy |
rows = {}
for line in open(knn_log):
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    if len(cells) == 8 and cells[0] == '50':
        rows[cells[1]] = cells
exact = next((r for name, r in rows.items() if '(default)' in name), None)
approx = next((r for name, r in rows.items() if name.startswith('approximate: top 50')), None)
kd = rows.get(f'k-d tree candidates: svd D={kd_dims}, M={kd_candidates}, exact')
terms_name = 'all' if terms == 0 else str(terms)
two = rows.get(f"two-step: L={prune}, k'={factor}k, first-stage terms {terms_name}")
if not exact or not approx or not kd or not two:
    fail(knn_log, 'k = 50 rows for the default exact search, the top 50 terms, the two-step '
         'search and the k-d tree')

speeds = {}
for line in open(index_log):
    m = re.match(r'(\(\w+\)) .*median +[\d.]+ s +(\d+) docs/s', line)
    if m:
        speeds[m.group(1)] = float(m.group(2))
if '(a1)' not in speeds or '(c)' not in speeds:
    fail(index_log, 'docs/s for (a1) autocat on 1 thread and (c) TermGenerator')

print(json.dumps({
    'docs': docs,
    'train_docs': train_docs,
    'test_docs': test_docs,
    'train_seconds': train_seconds,
    'train_peak_rss_mb': round(rss_kb / 1024, 1),
    'default_method': report['default_method'],
    'knn_k': 50,
    'knn_exact_docs_per_s': float(exact[2]),
    'knn_exact_accuracy': float(exact[7]),
    'knn_approx_mode': 'top 50 query terms',
    'knn_approx_docs_per_s': float(approx[2]),
    'knn_approx_recall_at_k': float(approx[6]),
    'knn_approx_accuracy_delta': round(float(approx[7]) - float(exact[7]), 4),
    'knn_two_step_docs_per_s': float(two[2]),
    'knn_two_step_recall_at_k': float(two[6]),
    'knn_two_step_accuracy_change': round(float(two[7]) - float(exact[7]), 4),
    'knn_two_step_candidates': factor * 50,
    'knn_two_step_cut': f'first stage: {terms_name} query terms over pruned lists of '
                        f'{prune} postings',
    'kdtree_mode': f'svd to {kd_dims} dimensions, exact k-d tree top {kd_candidates}, '
                   'exact cosine re-rank',
    'kdtree_recall_at_k': float(kd[6]),
    'kdtree_docs_per_s': float(kd[2]),
    'index_threads': 1,
    'index_docs_per_s': speeds['(a1)'],
    'termgenerator_docs_per_s': speeds['(c)'],
    'open_default_seconds': float(os.environ['open_seconds']),
    'open_default_rss_mb': round(int(os.environ['open_rss_kb']) / 1024, 1),
}))
PY
