#!/usr/bin/env bash
# Training time of the selection options against scikit-learn's LinearSVC,
# in one ../shared/peers run on 20 Newsgroups bydate: autocat's default
# (every method cross-validated), `train --methods svm`, `train --methods
# svm,cnb` and `train --time-budget 5`, each with the method the model
# chose, beside sk-linsvc. Whole processes (reading included); results in
# OUT/results.md (train s, accuracy, peak RSS).
#
# usage: bench/train_budget.sh [OUT] [DATA]
#   OUT default build/peers/train-budget; DATA default
#   ../shared/data/20news-bydate.jsonl.gz
# Needs python3-sklearn (see ../shared/peers/README.md) and a built autocat
# (build/indexer/autocat, or AUTOCAT_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/peers/train-budget}
data=${2:-../shared/data/20news-bydate.jsonl.gz}
peers=../shared/peers
if ! /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
  echo "train_budget.sh: scikit-learn is missing for /usr/bin/python3; install the packages listed in $peers/README.md" >&2
  exit 1
fi
export AUTOCAT_BIN=${AUTOCAT_BIN:-$PWD/build/indexer/autocat}
[ -x "$AUTOCAT_BIN" ] || { echo "train_budget.sh: no autocat binary at $AUTOCAT_BIN; build first" >&2; exit 1; }
mkdir -p "$out"
# The peers' registry plus autocat's selection options.
/usr/bin/python3 - "$peers/systems.json" "$out/systems.json" <<'EOF'
import json, sys
registry = json.load(open(sys.argv[1]))
adapter = ["{python}", "{peers}/adapters/autocat.py", "--method", "default"]
for name, args, params in [
    ("autocat-methods-svm", "--methods svm", "autocat train --methods svm"),
    ("autocat-methods-svm-cnb", "--methods svm,cnb", "autocat train --methods svm,cnb"),
    ("autocat-budget5", "--time-budget 5", "autocat train --time-budget 5"),
]:
    registry["systems"][name] = {"cmd": adapter + ["--train-args", args], "params": params,
                                 "multilabel": True}
json.dump(registry, open(sys.argv[2], "w"), indent=1)
EOF
/usr/bin/python3 $peers/run.py "$data" --registry "$out/systems.json" --out "$out" \
  --systems "sk-linsvc,autocat-methods-svm,autocat-budget5,autocat-methods-svm-cnb,autocat-default"
