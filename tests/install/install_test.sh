#!/usr/bin/env bash
# ctest: installs the build tree into a temporary prefix, then builds and runs
# an out-of-tree app against it, once through CMake (find_package) and once
# through pkg-config, with a model trained by the installed CLI.
# usage: install_test.sh BUILD_DIR SOURCE_DIR [EXTRA_LINK_FLAGS]
set -euo pipefail
build_dir=$1
source_dir=$2
extra_flags=${3:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/autocat_install_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log"
libdir=$(ls -d "$prefix"/lib*/cmake/autocat | head -1)
libdir=${libdir%/cmake/autocat}
for file in "$prefix/include/autocat/autocat.h" "$prefix/include/autocat/version.h" \
            "$prefix/bin/autocat" "$prefix/share/man/man1/autocat.1" \
            "$prefix/share/bash-completion/completions/autocat" "$libdir/libautocat.a" \
            "$libdir/pkgconfig/autocat.pc"; do
  [ -e "$file" ] || { echo "install_test: $file was not installed" >&2; exit 1; }
done
soname=$(objdump -p "$libdir/libautocat.so" | awk '/SONAME/ {print $2}')
[[ "$soname" == libautocat.so.[0-9]* ]] || { echo "install_test: SONAME is '$soname'" >&2; exit 1; }
# Only public headers: every header installed includes only installed or system headers.
if grep -rhE '#include "(classify|plugin|indexer)/' "$prefix/include"; then
  echo "install_test: an installed header includes an internal one" >&2; exit 1
fi

grep -q '^\.SS autocat search' "$prefix/share/man/man1/autocat.1" \
  || { echo "install_test: the man page has no 'autocat search' section" >&2; exit 1; }
completion=$(bash -c 'source "$1"; COMP_WORDS=(autocat sea); COMP_CWORD=1; _autocat
  echo "${COMPREPLY[*]}"; COMP_WORDS=(autocat search --exa); COMP_CWORD=2; _autocat
  echo "${COMPREPLY[*]}"' _ "$prefix/share/bash-completion/completions/autocat")
[ "$completion" = $'search\n--exact' ] \
  || { echo "install_test: bash completion gave '$completion'" >&2; exit 1; }

"$prefix/bin/autocat" train --model "$work/model" "$source_dir/examples/data/train.jsonl" > /dev/null

echo "== CMake: find_package(autocat CONFIG REQUIRED)"
cmake -S "$source_dir/tests/install" -B "$work/cmake-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXE_LINKER_FLAGS="$extra_flags" > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/cmake-build/consumer" "$work/model" "$work/cmake.db"

echo "== pkg-config --cflags --libs autocat"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046,SC2086
c++ -std=c++17 -o "$work/consumer-pc" "$source_dir/tests/install/consumer.cc" \
  $(pkg-config --cflags --libs autocat) -Wl,-rpath,"$libdir" $extra_flags
"$work/consumer-pc" "$work/model" "$work/pc.db"
echo "== pkg-config --static (libautocat.a)"
# shellcheck disable=SC2046,SC2086
c++ -std=c++17 -o "$work/consumer-static" "$source_dir/tests/install/consumer.cc" \
  -Wl,-Bstatic -lautocat -Wl,-Bdynamic $(pkg-config --cflags --libs --static autocat | sed 's/-lautocat//') $extra_flags
ldd "$work/consumer-static" | grep -q libautocat && { echo "install_test: static app needs libautocat.so" >&2; exit 1; }
"$work/consumer-static" "$work/model" "$work/static.db"
python_dir=$(ls -d "$prefix"/lib/python3*/dist-packages 2>/dev/null | head -1 || true)
if [ -n "$python_dir" ]; then
  echo "== the installed Python module"
  # Under ASan: AUTOCAT_PYTHON_ENVIRONMENT="LD_PRELOAD=...|ASAN_OPTIONS=..." (cmake/AutocatPackageTests.cmake).
  IFS='|' read -r -a python_environment <<< "${AUTOCAT_PYTHON_ENVIRONMENT:-}"
  env "${python_environment[@]}" PYTHONPATH="$python_dir" /usr/bin/python3 -c 'import sys, autocat, xapian
doc = xapian.Document()
print("ok:", autocat.CategoryIndexer(sys.argv[1]).index("A comet passed close to Jupiter.", doc))
assert any(t.term.startswith(b"XC") for t in doc.termlist())' "$work/model"
fi
echo "install_test: passed"
