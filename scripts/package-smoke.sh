#!/usr/bin/env bash
# Installs autocat as a user does, uses it, and leaves the machine as it was:
#  1. builds the Debian package (cpack) from a build directory and installs it
#     with apt-get; trains, indexes and searches with the installed `autocat`,
#     categorizes from Debian's python3, builds a C++ app with
#     find_package(autocat); then removes the package (also on failure);
#  2. `pip install .` into a virtual environment (Debian's build tools, no
#     network) and categorizes from there.
# usage: package-smoke.sh [BUILD_DIR]
#   BUILD_DIR (default build-package) is configured here if it is not yet,
#   with -DCMAKE_INSTALL_PREFIX=/usr -DAUTOCAT_BUILD_TESTS=OFF, and built.
# Exit 77 (skipped) without root or passwordless sudo.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(realpath -m "${1:-$source_dir/build-package}")

fail() {
  echo "package-smoke: $*" >&2
  exit 1
}

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! sudo -n true 2> /dev/null; then
    echo "package-smoke: SKIPPED: installing a package needs root or passwordless sudo"
    exit 77
  fi
  sudo_cmd=(sudo -n)
fi
apt_get=("${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=120)
package_installed() {
  dpkg-query -W -f='${Status}' autocat 2> /dev/null | grep -q 'ok installed'
}
if package_installed; then
  fail "the package autocat is already installed; this test installs and removes its own: remove it first (apt-get remove autocat)"
fi

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_INSTALL_PREFIX=/usr -DAUTOCAT_BUILD_TESTS=OFF -DAUTOCAT_BUILD_EXAMPLES=OFF \
    -DAUTOCAT_BUILD_BENCH=OFF > /dev/null
fi
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }
[ "$(cache CMAKE_INSTALL_PREFIX)" = /usr ] \
  || fail "$build_dir installs into $(cache CMAKE_INSTALL_PREFIX): a Debian package installs into /usr; configure with -DCMAKE_INSTALL_PREFIX=/usr"
[ "$(cache AUTOCAT_CRASH_POINTS)" = OFF ] \
  || fail "$build_dir obeys AUTOCAT_CRASH_AT (a test build), which a package must not ship; configure with -DAUTOCAT_BUILD_TESTS=OFF"
[ "$(cache AUTOCAT_BUILD_PYTHON)" = ON ] \
  || fail "$build_dir has no Python module; configure with -DAUTOCAT_BUILD_PYTHON=ON"
cmake --build "$build_dir"
started=$SECONDS

work=$(mktemp -d "${TMPDIR:-/tmp}/autocat_package_smoke.XXXXXX")
chmod 755 "$work" # apt's _apt user reads the .deb from here
installed=0
cleanup() {
  local status=$?
  if [ "$installed" -eq 1 ] || package_installed; then
    "${apt_get[@]}" remove --purge -y autocat > /dev/null || status=1
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== cpack: the Debian package"
cpack --config "$build_dir/CPackConfig.cmake" -B "$work/package" > "$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work"/package/autocat_*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then fail "cpack made no single autocat_*.deb"; fi
deb=${debs[0]}
echo "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"
dpkg-deb -f "$deb" Depends

# Nothing but autocat may be installed: its dependencies come from
# scripts/install-deps.sh, so removing it leaves the machine as it was.
others=$(apt-get install -s --no-install-recommends "$deb" 2> /dev/null \
  | awk '/^Inst / && $2 != "autocat" {printf " %s", $2}')
[ -z "$others" ] || fail "installing the package would also install:$others; run scripts/install-deps.sh first"
echo "== apt-get install $(basename "$deb")"
installed=1
"${apt_get[@]}" install -y --no-install-recommends "$deb" > "$work/apt.log" 2>&1 \
  || { cat "$work/apt.log"; fail "apt-get install failed"; }

cd "$work"
hash -r
[ "$(command -v autocat)" = /usr/bin/autocat ] || fail "autocat on PATH is '$(command -v autocat)', not /usr/bin/autocat"
for file in /usr/share/man/man1/autocat.1 /usr/include/autocat/autocat.h; do
  [ -f "$file" ] || fail "$file was not installed"
done
completion=$(bash -c 'source /usr/share/bash-completion/completions/autocat
  COMP_WORDS=(autocat sea); COMP_CWORD=1; _autocat; echo "${COMPREPLY[*]}"')
[ "$completion" = search ] || fail "bash completion of 'autocat sea' gave '$completion'"

echo "== autocat train, index, search --facets"
cat > train.jsonl << 'EOF'
{"id": "s1", "labels": ["sports"], "text": "The striker scored twice and the team won the league match."}
{"id": "s2", "labels": ["sports"], "text": "A late goal from the midfielder gave the club a cup victory."}
{"id": "s3", "labels": ["sports"], "text": "The goalkeeper saved a penalty in the final minute of the match."}
{"id": "s4", "labels": ["sports"], "text": "The coach praised the team after the league win on Saturday."}
{"id": "a1", "labels": ["astronomy"], "text": "The comet passed close to Jupiter and its moons tonight."}
{"id": "a2", "labels": ["astronomy"], "text": "A telescope shows the rings of Saturn and the moons of Jupiter."}
{"id": "a3", "labels": ["astronomy"], "text": "Astronomers observed a bright comet near the planet before dawn."}
{"id": "a4", "labels": ["astronomy"], "text": "The telescope photographed a distant galaxy and a comet."}
{"id": "c1", "labels": ["cooking"], "text": "Simmer the tomato sauce with garlic and basil for twenty minutes."}
{"id": "c2", "labels": ["cooking"], "text": "Bake the bread dough in a hot oven until the crust is golden."}
{"id": "c3", "labels": ["cooking"], "text": "Whisk the eggs with sugar and butter, then bake the cake."}
{"id": "c4", "labels": ["cooking"], "text": "Fry the onions and garlic in olive oil before adding the sauce."}
EOF
cat > inbox.jsonl << 'EOF'
{"id": "n1", "text": "Through the telescope the comet shone beside Jupiter and its moons."}
{"id": "n2", "text": "The team scored a late goal to win the cup match."}
{"id": "n3", "text": "Bake the cake with butter, eggs and sugar in a hot oven."}
EOF
autocat train --model model train.jsonl > train.log || { cat train.log; fail "autocat train failed"; }
autocat index --model model --db db inbox.jsonl > index.log || { cat index.log; fail "autocat index failed"; }
autocat search --db db --facets --json comet > search.json || fail "autocat search failed"
/usr/bin/python3 - search.json << 'EOF'
import json, sys
found = json.load(open(sys.argv[1]))
ids = [r["id"] for r in found["results"]]
facets = {f["category"]: f["count"] for f in found["facets"]}
assert ids == ["n1"] and facets == {"astronomy": 1}, f"search comet: {ids}, facets {facets}"
EOF

echo "== /usr/bin/python3: import autocat"
env -u PYTHONPATH /usr/bin/python3 - "$work/model" << 'EOF'
import sys, autocat, xapian
assert autocat.__file__.startswith("/usr/lib/python3/dist-packages/"), autocat.__file__
indexer = autocat.CategoryIndexer(sys.argv[1])
best = indexer.categorize("The striker scored a goal in the match.")[0][0]
assert best == "sports", best
doc = xapian.Document()
indexer.index("Bake the bread in the oven.", doc)
assert any(t.term.startswith(b"XC") for t in doc.termlist())
print("categorized:", best)
EOF

echo "== find_package(autocat): an application built against the package"
cmake -S "$source_dir/tests/install" -B app -G Ninja -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
  > app-configure.log || { cat app-configure.log; fail "configuring the application failed"; }
found=$(sed -n 's/^autocat_DIR:PATH=//p' app/CMakeCache.txt)
[[ "$found" == /usr/lib/*/cmake/autocat ]] || fail "find_package(autocat) found '$found', not the package's"
cmake --build app > app-build.log || { cat app-build.log; fail "building the application failed"; }
ldd app/consumer | grep -Eq '=> (/usr)?/lib/[^ ]*/libautocat\.so\.' \
  || fail "the application does not load the package's libautocat.so"
app/consumer model app.db
[ "$(pkg-config --modversion autocat)" = "$(dpkg-deb -f "$deb" Version)" ] \
  || fail "pkg-config --modversion autocat does not give the package's version"

echo "== apt-get remove autocat"
"${apt_get[@]}" remove --purge -y autocat > remove.log 2>&1 \
  || { cat remove.log; fail "apt-get remove failed"; }
installed=0
! package_installed || fail "autocat is still installed after apt-get remove"
for path in /usr/bin/autocat /usr/include/autocat /usr/lib/python3/dist-packages/autocat; do
  [ ! -e "$path" ] || fail "$path is left behind after apt-get remove"
done
package_seconds=$((SECONDS - started))

echo "== pip install . (a virtual environment, no network)"
/usr/bin/python3 -m venv --system-site-packages venv
# The extension is taken from BUILD_DIR, built for /usr/bin/python3 as the venv's is.
AUTOCAT_CMAKE_BUILD_DIR=$build_dir venv/bin/pip install --no-build-isolation --no-index \
  --no-cache-dir --disable-pip-version-check "$source_dir" > pip.log 2>&1 \
  || { cat pip.log; fail "pip install . failed"; }
env -u PYTHONPATH venv/bin/python - "$work/model" << 'EOF'
import sys, autocat
assert autocat.__file__.startswith(sys.prefix), autocat.__file__
best = autocat.CategoryIndexer(sys.argv[1]).categorize("The comet and Jupiter's moons.")[0][0]
assert best == "astronomy", best
print("categorized:", best)
EOF
# The console script runs the command-line tool installed with the module.
[ -x venv/bin/autocat ] || fail "pip install . did not install the autocat command (venv/bin/autocat)"
echo "The comet and Jupiter's moons." | env -u PYTHONPATH venv/bin/autocat classify \
  --model "$work/model" - > venv-classify.txt 2>&1 \
  || { cat venv-classify.txt; fail "venv/bin/autocat classify failed"; }
grep -q astronomy venv-classify.txt \
  || { cat venv-classify.txt; fail "venv/bin/autocat classify did not say astronomy"; }

echo "package-smoke: passed (package ${package_seconds} s, all $((SECONDS - started)) s after the build)"
