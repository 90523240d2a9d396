#!/usr/bin/env bash
# ctest: the man page and bash completion generate_cli_docs.cmake writes from
# the built CLI: the man page has its EXAMPLES section, and the completion
# offers method names after --method, directories after --model and --db,
# and nothing (not file names) after --category.
# usage: cli_docs_test.sh AUTOCAT SOURCE_DIR
set -euo pipefail
autocat=$1
source_dir=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/autocat_cli_docs_test.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake -DAUTOCAT="$autocat" -DMAN_PAGE="$work/autocat.1" -DCOMPLETION="$work/completion" \
  -P "$source_dir/cmake/generate_cli_docs.cmake"
fail() { echo "cli_docs_test: $*" >&2; exit 1; }

grep -q '^\.SH EXAMPLES' "$work/autocat.1" || fail "the man page has no EXAMPLES section"
examples=$(sed -n '/^\.SH EXAMPLES/,/^\.SH EXIT/p' "$work/autocat.1")
for command in train index search learn forget relabel serve 'train .*add' recategorize; do
  grep -q "^autocat $command" <<< "$examples" || fail "EXAMPLES show no 'autocat $command'"
done

# Completes the words after `autocat`, the last one being completed, in a
# directory holding a file and a directory.
mkdir -p "$work/cwd/models.d"
touch "$work/cwd/mfile"
complete_words() {
  (cd "$work/cwd" && bash -c 'source "$1"; shift; COMP_WORDS=(autocat "$@")
    COMP_CWORD=$#; _autocat; echo "${COMPREPLY[*]}"' _ "$work/completion" "$@")
}
methods=$(complete_words classify --method '')
for method in knn rocchio nb bnb cnb svm logreg combo; do
  [[ " $methods " == *" $method "* ]] || fail "--method completes '$methods', no $method"
done
[ "$(complete_words index --method co)" = combo ] || fail "--method co: $(complete_words index --method co)"
[ "$(complete_words classify --model m)" = models.d ] \
  || fail "--model m completes '$(complete_words classify --model m)', not the directory alone"
[ "$(complete_words search --db m)" = models.d ] \
  || fail "--db m completes '$(complete_words search --db m)'"
[ -z "$(complete_words search --category m)" ] \
  || fail "--category m completes '$(complete_words search --category m)'"
# Other arguments still complete file names.
[ "$(complete_words classify --model models.d mf)" = mfile ] || fail "INPUT: no file names"
echo "cli_docs_test: ok"
