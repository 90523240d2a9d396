#!/usr/bin/env bash
# Runs autocat beside the peer classifiers of ../shared/peers (scikit-learn,
# liblinear, fastText, Lucene) on the same splits, scored by one scorer, in
# one run: 20 Newsgroups bydate, Reuters-21578 ModApte and the 20 Newsgroups
# Subject lines (bench/newsgroups_subjects.py). Results go to OUT/<set>/results.md.
#
# usage: bench/run_peers.sh [OUT]     (default OUT: build/peers)
# Needs the peers' Debian packages (see ../shared/peers/README.md):
#   apt-get install python3-sklearn python3-numpy python3-scipy fasttext \
#     liblinear-tools liblucene8-java openjdk-17-jdk-headless
#   ../shared/peers/lucene/build.sh
# and a built autocat (build/indexer/autocat, or AUTOCAT_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/peers}
peers=../shared/peers
data=../shared/data
if ! /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
  echo "run_peers.sh: scikit-learn is missing for /usr/bin/python3; install the packages listed in $peers/README.md" >&2
  exit 1
fi
export AUTOCAT_BIN=${AUTOCAT_BIN:-$PWD/build/indexer/autocat}
[ -x "$AUTOCAT_BIN" ] || { echo "run_peers.sh: no autocat binary at $AUTOCAT_BIN; build first" >&2; exit 1; }
autocat='autocat-default,autocat-svm,autocat-logreg,autocat-cnb,autocat-nb,autocat-knn,autocat-combo,autocat-rocchio'
/usr/bin/python3 $peers/run.py $data/20news-bydate.jsonl.gz --out "$out/20news-bydate" \
  --systems "sk-*,liblinear-s1,liblinear-s4,ft-e25-ng2,lucene-knn30-bm25,$autocat"
/usr/bin/python3 $peers/run.py $data/reuters21578-modapte.jsonl --out "$out/reuters" \
  --systems "sk-mnb-a0.01,sk-cnb,sk-linsvc,sk-logreg,liblinear-s1,liblinear-s4,ft-e25-ng2,lucene-knn30-bm25,$autocat"
mkdir -p "$out"
python3 bench/newsgroups_subjects.py "$out/ng_subjects.jsonl"
/usr/bin/python3 $peers/run.py "$out/ng_subjects.jsonl" --out "$out/subjects" \
  --systems "sk-mnb-a0.01,sk-cnb,sk-linsvc,sk-logreg,liblinear-s1,ft-e25-ng2,lucene-knn30-bm25,$autocat"
