#!/usr/bin/env bash
# ctest: the API reference builds from the public headers without one
# Doxygen warning (an undocumented public class, function or member is one).
# usage: doxygen_test.sh DOXYGEN DOXYFILE WARNINGS_LOG
set -euo pipefail
doxygen=$1
doxyfile=$2
warnings=$3
if [ -z "$doxygen" ]; then
  echo "doxygen_test: doxygen (or python3, for its filter) was not found when this build was configured;" \
    "install it (scripts/install-deps.sh, Debian package doxygen) and configure again" >&2
  exit 1
fi
rm -f "$warnings"
(cd "$(dirname "$doxyfile")" && "$doxygen" "$doxyfile")
if [ -s "$warnings" ]; then
  echo "doxygen_test: $(grep -c 'warning:' "$warnings") Doxygen warning(s) on the public headers;" \
    "document what they name (a // comment above it, see docs/cpp.md):" >&2
  cat "$warnings" >&2
  exit 1
fi
echo "doxygen_test: ok, no warnings"
