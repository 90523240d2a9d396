#!/usr/bin/env bash
# ctest: libautocat.so exports the public API only: every dynamic symbol it
# defines is an autocat:: name (or its typeinfo/vtable), none is
# autocat::internal, and the entry points an application calls are there.
# usage: exports_test.sh LIBAUTOCAT_SO
set -euo pipefail
library=$1
fail() { echo "exports_test: $*" >&2; exit 1; }

symbols=$(nm -D --defined-only -C "$library" | sed 's/^[0-9a-f]* [A-Za-z] //')
[ -n "$symbols" ] || fail "$library exports nothing"
foreign=$(grep -v -E '^(autocat::|typeinfo for autocat::|typeinfo name for autocat::|vtable for autocat::)' \
  <<< "$symbols" || true)
[ -z "$foreign" ] || fail "exported names outside autocat::: $(head -5 <<< "$foreign")"
internal=$(grep -E 'autocat::(internal|cli)::' <<< "$symbols" || true)
[ -z "$internal" ] || fail "internal names exported: $(head -5 <<< "$internal")"
for name in 'autocat::CategoryIndexer::CategoryIndexer' 'autocat::CategoryIndexer::index' \
  'autocat::category_counts' 'autocat::configure_query_parser' 'autocat::category_term' \
  'typeinfo for autocat::Error' 'typeinfo for autocat::InvalidArgumentError' \
  'vtable for autocat::CategoryFacetSpy'; do
  grep -q -F "$name" <<< "$symbols" || fail "$library does not export $name"
done
echo "exports_test: OK: $(wc -l <<< "$symbols") names, all public autocat::"
