#!/usr/bin/env bash
# The disk tier across processes: racing compiles of one cold key, a second
# `tilejit demo` that compiles nothing, the cache commands, refusal of an
# unsafe directory, and TILEJIT_CACHE=off leaving the disk alone.
# Usage: check-disk-cache.sh TILEJIT_BINARY SOURCE_ROOT
set -euo pipefail
tilejit=$1
root=$2
work=$(mktemp -d)
trap 'chmod -R u+rwx "$work"; rm -rf "$work"' EXIT
export TILEJIT_CACHE_DIR=$work/cache
unset TILEJIT_CACHE
fail() { echo "FAIL: $*" >&2; exit 1; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# Two processes race on one cold key: both succeed, one entry, no leftovers.
compile=("$tilejit" compile "$root/ops/samples/softmax.tile" --kernel softmax --set T=f16 --json)
"${compile[@]}" > "$work/a.json" & a=$!
"${compile[@]}" > "$work/b.json" & b=$!
wait $a || fail "first racing compile"
wait $b || fail "second racing compile"
[ "$(ls "$TILEJIT_CACHE_DIR" | grep -c '\.tjk$')" = 1 ] || fail "not exactly one entry: $(ls -a "$TILEJIT_CACHE_DIR")"
! ls -a "$TILEJIT_CACHE_DIR" | grep -q '^\.tmp-' || fail "temporary files left"
[ "$(stat -c %a "$TILEJIT_CACHE_DIR")" = 700 ] || fail "directory mode $(stat -c %a "$TILEJIT_CACHE_DIR")"
"${compile[@]}" > "$work/c.json"
[ "$(json "$work/c.json" "d['from_cache']")" = True ] || fail "third compile did not come from the disk"

# A demo records the kernels it used; `warm` compiles them ahead of time
# (after a clear); a second demo process then compiles nothing and gets the
# same results.
"$tilejit" demo --json --record "$work/manifest.jsonl" > "$work/demo1.json"
kernels=$(wc -l < "$work/manifest.jsonl")
[ "$kernels" -ge 5 ] || fail "the manifest lists $kernels kernels"
"$tilejit" cache clear > /dev/null
"$tilejit" warm "$work/manifest.jsonl" > "$work/warm.txt" || fail "warm: $(cat "$work/warm.txt")"
grep -q "warmed $kernels kernels in .*: $kernels compiled, 0 from disk, 0 failed" "$work/warm.txt" \
  || fail "warm: $(cat "$work/warm.txt")"
"$tilejit" warm "$work/manifest.jsonl" > "$work/warm2.txt"
grep -q ": 0 compiled, $kernels from disk, 0 failed" "$work/warm2.txt" || fail "warm again: $(cat "$work/warm2.txt")"
"$tilejit" demo --json > "$work/demo2.json"
[ "$(json "$work/demo1.json" "all(w['passed'] for w in d)")" = True ] || fail "first demo failed"
[ "$(json "$work/demo2.json" "all(w['passed'] for w in d)")" = True ] || fail "second demo failed"
[ "$(json "$work/demo2.json" "sum(w['compiled'] for w in d)")" = 0 ] || fail "second demo compiled: $(cat "$work/demo2.json")"
[ "$(json "$work/demo1.json" "[w['max_abs_err'] for w in d]")" = "$(json "$work/demo2.json" "[w['max_abs_err'] for w in d]")" ] || fail "results differ"

# The cache commands.
"$tilejit" cache stats --json > "$work/stats.json"
[ "$(json "$work/stats.json" "d['entries'] > 1 and d['bytes'] > 0")" = True ] || fail "stats: $(cat "$work/stats.json")"
"$tilejit" cache ls --json > "$work/ls.json"
[ "$(json "$work/ls.json" "len(d)")" = "$(json "$work/stats.json" "d['entries']")" ] || fail "ls and stats disagree"
"$tilejit" cache clear > /dev/null
[ "$(ls "$TILEJIT_CACHE_DIR" | grep -c '\.tjk$' || true)" = 0 ] || fail "clear left entries"

# A group-writable directory is refused (with a message), and work goes on.
chmod 770 "$TILEJIT_CACHE_DIR"
"${compile[@]}" > /dev/null 2> "$work/err.txt" || fail "compile with a refused directory"
grep -q "refusing the cache directory" "$work/err.txt" || fail "no refusal message: $(cat "$work/err.txt")"
[ "$(ls "$TILEJIT_CACHE_DIR" | grep -c '\.tjk$' || true)" = 0 ] || fail "wrote into a refused directory"
chmod 700 "$TILEJIT_CACHE_DIR"

# Dumps of the stored stages work on hits.
"${compile[@]}" > /dev/null # publish again (cleared above)
TILEJIT_DUMP=tile-opt,llvm-opt TILEJIT_DUMP_DIR=$work/dumps "${compile[@]}" > "$work/d.json"
[ "$(json "$work/d.json" "d['from_cache']")" = True ] || fail "dump run was not a hit"
ls "$work/dumps" | grep -q 'tile-opt' || fail "no tile-opt dump on a hit: $(ls "$work/dumps")"
ls "$work/dumps" | grep -q '\.opt\.ll$' || fail "no llvm-opt dump on a hit: $(ls "$work/dumps")"

# TILEJIT_CACHE=read loads but never writes.
mkdir -m 700 "$work/ro"
TILEJIT_CACHE=read TILEJIT_CACHE_DIR=$work/ro "${compile[@]}" > /dev/null
[ -z "$(ls -A "$work/ro")" ] || fail "TILEJIT_CACHE=read wrote: $(ls -A "$work/ro")"

# TILEJIT_CACHE=off: nothing created, nothing written.
TILEJIT_CACHE=off TILEJIT_CACHE_DIR=$work/off "${compile[@]}" > /dev/null
[ ! -e "$work/off" ] || fail "TILEJIT_CACHE=off created a directory"
# TILEJIT_PERF_MAP: a cold compile and a disk hit both name their kernel's
# functions, with the tiling key, in /tmp/perf-PID.map for `perf report`.
for run in cold hit; do
  [ $run = hit ] || "$tilejit" cache clear > /dev/null
  TILEJIT_PERF_MAP=1 "${compile[@]}" > /dev/null & p=$!
  wait $p || fail "compile with TILEJIT_PERF_MAP ($run)"
  map=/tmp/perf-$p.map
  grep -Eq '^[0-9a-f]+ [0-9a-f]+ tilejit:softmax\[BN=1024,T=f16\]@.*:program$' "$map" \
    || fail "no program line in $map ($run): $(cat "$map" 2>&1)"
  grep -Eq '^[0-9a-f]+ [0-9a-f]+ tilejit:.*:grid$' "$map" || fail "no grid line ($run)"
  rm -f "$map"
done
echo "disk cache checks passed"
