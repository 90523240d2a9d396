#!/usr/bin/env bash
# Command 1: install what is missing, build, and run the demo end to end:
# train on examples/data/train.jsonl, index the unlabelled documents of
# examples/data/inbox with their categories, then search filtered by a
# category and print facet counts; then the same through the C++ API and
# from Python.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
mkdir -p build
echo "autocat: building (log in build/build.log)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAUTOCAT_BUILD_TESTS=OFF \
  -DAUTOCAT_BUILD_EXAMPLES=ON -DAUTOCAT_BUILD_BENCH=OFF > build/build.log 2>&1 ||
  { cat build/build.log; exit 1; }
# autocat_cli_docs: the man page and bash completion, so that
# `cmake --install build` works right after the demo.
cmake --build build --target autocat search_app autocat_python autocat_cli_docs \
  >> build/build.log 2>&1 ||
  { cat build/build.log; exit 1; }

autocat=build/indexer/autocat
demo=build/demo
rm -rf "$demo"
mkdir -p "$demo"

echo
echo "== 1. Train on the labelled example corpus"
"$autocat" train --model "$demo/model" examples/data/train.jsonl

echo
echo "== 2. Index the unlabelled documents in examples/data/inbox with their categories"
"$autocat" index --model "$demo/model" --db "$demo/index" examples/data/inbox

echo
echo "== 3. Search 'night season hours' with facet counts per category"
"$autocat" search --db "$demo/index" --facets --limit 3 night season hours

echo
echo "== 4. The same search filtered to category astronomy; then a Chinese query (CJK n-grams, as stock Xapian)"
"$autocat" search --db "$demo/index" --category astronomy --facets night season hours
"$autocat" search --db "$demo/index" 月球

echo
echo "== 5. The same through the C++ API (examples/search_app.cc)"
build/examples/search_app "$demo/model" "$demo/app-index"

echo
echo "== 6. The same from Python, next to python3-xapian (examples/search_app.py)"
PYTHONPATH=build/python /usr/bin/python3 examples/search_app.py "$demo/model" "$demo/py-index"
