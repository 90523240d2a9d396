#!/usr/bin/env bash
# The cost of a first learn on a model, then of the first classification
# with each method named, each in a fresh process: wall time and peak RSS
# (/usr/bin/time -v). The model directory is copied first for each method,
# so every run starts from the trained model with an empty journal.
#
#   bench/first_learn.sh AUTOCAT MODEL_DIR LEARN.jsonl QUERY.jsonl [METHOD...]
#
# LEARN.jsonl: the documents learned (autocat learn); QUERY.jsonl: the
# documents classified after. Prints one line per method:
#   method learn_s learn_rss_mb classify_s classify_rss_mb
set -euo pipefail
autocat=$1 model=$2 learn=$3 query=$4
shift 4
methods=("$@")
[ ${#methods[@]} -gt 0 ] || methods=(nb rocchio)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
measure() {  # prints "seconds rss_mb" of the command
  /usr/bin/time -v "$@" >"$work/out" 2>"$work/time" || { cat "$work/time" >&2; exit 1; }
  awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]}
              /Maximum resident/ {rss = $2 / 1024}
              END {printf "%.2f %.0f", s, rss}' "$work/time"
}
echo "method learn_s learn_rss_mb classify_s classify_rss_mb"
for method in "${methods[@]}"; do
  rm -rf "$work/model"
  cp -a "$model" "$work/model"
  learned=$(measure "$autocat" learn --model "$work/model" "$learn")
  if [ "$method" = default ]; then
    classified=$(measure "$autocat" classify --model "$work/model" "$query")
  else
    classified=$(measure "$autocat" classify --model "$work/model" --method "$method" "$query")
  fi
  echo "$method $learned $classified"
done
