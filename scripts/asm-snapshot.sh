#!/usr/bin/env bash
# Writes the assembly of every built-in kernel (at avx2 and avx512) and of
# every benchmark specialisation into DIR, so that a refactoring of the
# compiler can be checked to change no generated code:
#   scripts/asm-snapshot.sh before/ ; <change> ; scripts/asm-snapshot.sh after/
#   diff -r before after
# BUILD names the build folder (default: build).
set -euo pipefail
out=${1:?usage: scripts/asm-snapshot.sh DIR}
build=${BUILD:-build}
tj=$build/tools/tilejit
mkdir -p "$out/builtin" "$out/bench"
export TILEJIT_CACHE=off
for name in $("$tj" dump | awk 'NR > 1 { print $1 }'); do
  for target in avx2 avx512; do
    "$tj" dump "$name" --stage asm --target "$target" > "$out/builtin/$name.$target.s"
  done
done
TILEJIT_DUMP=asm TILEJIT_DUMP_DIR="$out/bench" \
  "$tj" bench --quick --samples 1 --no-peer -o /dev/null > "$out/bench.log" 2>&1 ||
  # With the cache off, the disk-hit case cannot hit: its failure is expected
  # and leaves the dumps of every case complete.
  echo "bench exited with $? (see $out/bench.log)"
# The symbol stems (tj_<hash of the tiling key>) change with every change of
# the compiler's sources: compare the code, not the stems.
find "$out" -name '*.s' -exec sed -i -E 's/tj_[0-9a-f]{16}/tj_STEM/g' {} +
echo "$(ls "$out/builtin" | wc -l) built-in, $(ls "$out/bench" | wc -l) benchmark dumps in $out"
