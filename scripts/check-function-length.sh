#!/usr/bin/env bash
# check-function-length.sh LIMIT FILE...: fails when a function defined at
# the top level of a FILE (LLVM style: the definition starts in column 0 and
# its closing brace is a lone "}" in column 0) is longer than LIMIT lines,
# signature and lambdas included. The test codegen-function-length runs it
# on codegen/llvm: a translator's functions stay plain translations
# (docs/architecture.md).
set -euo pipefail
limit=${1:?usage: check-function-length.sh LIMIT FILE...}
shift
awk -v limit="$limit" '
  FNR == 1 { start = 0 }
  /^(namespace|using|#|\/\/|struct|class|enum)/ { start = 0; next }
  /^\};/ { start = 0; next }
  /^\}$/ {
    if (start) {
      n = FNR - start + 1
      if (n > limit) { printf "%s:%d: %s... is %d lines (at most %d)\n", FILENAME, start, substr(name, 1, 60), n, limit; bad = 1 }
      else if (n > most) { most = n; where = FILENAME ":" start }
    }
    start = 0; next
  }
  /^[A-Za-z_~]/ { if (!start) { start = FNR; name = $0 } }
  /;[[:space:]]*$/ { if (start == FNR && $0 !~ /\{/) start = 0 }
  END {
    if (bad) exit 1
    printf "function length: ok (longest %d lines, %s; at most %d)\n", most, where, limit
  }' "$@"
