#!/usr/bin/env bash
# ctest: no #include climbs from a lower layer to a higher one and no files
# include each other in a circle (scripts/check_layers.py holds the layer
# order). Also checks that the check catches both: on a copy of the tree with
# one upward include planted, and one with a circle planted, it must fail.
# usage: layers_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
check="$source_dir/scripts/check_layers.py"
work=$(mktemp -d "${TMPDIR:-/tmp}/autocat_layers_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "layers_test: $*" >&2; exit 1; }

python3 "$check" "$source_dir" || fail "the source tree breaks the layer order (above)"

copy_tree() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  cp -r "$source_dir/classify" "$source_dir/plugin" "$source_dir/indexer" "$work/tree/"
}

copy_tree
echo '#include "classify/train/trainer.h"' >> "$work/tree/classify/io/atomic_file.cc"
if python3 "$check" "$work/tree" > "$work/out"; then
  fail "an io file including a train header passed the check"
fi
grep -q 'classify/io/atomic_file.cc: io layer includes classify/train/trainer.h' "$work/out" ||
  fail "the upward include is not named: $(cat "$work/out")"

copy_tree
echo '#include "classify/corpus/weighting.h"' >> "$work/tree/classify/corpus/training_collection.h"
echo '#include "classify/corpus/training_collection.h"' >> "$work/tree/classify/corpus/weighting.h"
if python3 "$check" "$work/tree" > "$work/out"; then
  fail "two files including each other passed the check"
fi
grep -q 'in a circle: classify/corpus/training_collection -> classify/corpus/weighting' "$work/out" ||
  fail "the circle is not named: $(cat "$work/out")"
echo "layers_test: OK"
