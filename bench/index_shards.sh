#!/usr/bin/env bash
# N `autocat index` processes at once, each writing its own shard from its own
# part of the 20 Newsgroups test split (dealt round-robin), for N = 1, 2, 4:
# wall time and each process's time, three runs each (issue 11, item 5).
#
# usage: bench/index_shards.sh MODEL_DIR WORK_DIR [AUTOCAT_BINARY]
set -euo pipefail
model=${1:?usage: index_shards.sh MODEL_DIR WORK_DIR [AUTOCAT_BINARY]}
work=${2:?usage: index_shards.sh MODEL_DIR WORK_DIR [AUTOCAT_BINARY]}
here=$(cd "$(dirname "$0")/.." && pwd)
autocat=${3:-$here/build/indexer/autocat}
data=$here/../shared/data/20news-bydate.jsonl.gz
mkdir -p "$work"
cd "$work"
python3 - "$data" <<'PY'
import gzip, json, sys
lines = [l for l in gzip.open(sys.argv[1], 'rt') if json.loads(l).get('split') == 'test']
for n in (1, 2, 4):
    for p in range(n):
        with open(f'part{n}_{p}.jsonl', 'w') as f:
            f.writelines(lines[p::n])
print(f'{len(lines)} test documents')
PY
for n in 1 2 4; do
  for run in 1 2 3; do
    rm -rf shard${n}_*
    start=$(date +%s.%N)
    for p in $(seq 0 $((n - 1))); do
      /usr/bin/time -f "%e" -o time${n}_${p} "$autocat" index --model "$model" \
        --db shard${n}_${p} --threads 1 --quiet part${n}_${p}.jsonl > /dev/null &
    done
    wait
    end=$(date +%s.%N)
    echo "processes=$n run=$run wall_s=$(echo "$end - $start" | bc)" \
      "per_process_s=$(cat time${n}_* | tr '\n' ' ')"
  done
done
