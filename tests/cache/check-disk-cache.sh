#!/usr/bin/env bash
# The disk tier across processes: racing compiles of one cold key, a second
# `tilejit demo` that compiles nothing, the cache commands, refusal of an
# unsafe directory, and TILEJIT_CACHE=off leaving the disk alone. Faults:
# four warms racing on cold kernels, a FIFO and a 6 GiB file where an entry
# should be, a file size limit (a full disk as the writer sees it; a full
# tmpfs too where a user namespace may mount one), a read-only directory:
# every command succeeds with the right results and at most one warning.
# Entries are counted as kernels' (kernel_entries) where the runtime
# library's functions, stored beside them, would change the count.
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

warnings() { grep -c '^tilejit: warning: ' "$1" || true; }
entries() { find "$1" -maxdepth 1 -name '*.tjk' | wc -l; }
# Entries of kernels, not of the runtime library's functions (keys tilejit.*)
# stored beside them, in TILEJIT_CACHE_DIR.
kernel_entries() {
  "$tilejit" cache ls --json 2> /dev/null |
    python3 -c "import json,sys; print(sum(not e['key'].startswith('tilejit.') for e in json.load(sys.stdin)))"
}
temporaries() { find "$1" -maxdepth 1 -name '.tmp-*' | wc -l; }

# Four processes race on one cold key: all succeed without a warning, one
# entry, no leftovers.
compile=("$tilejit" compile "$root/ops/samples/softmax.tile" --kernel softmax --set T=f16 --json)
pids=()
for i in 1 2 3 4; do
  "${compile[@]}" > "$work/race$i.json" 2> "$work/race$i.err" & pids+=($!)
done
for i in 1 2 3 4; do
  wait "${pids[$((i - 1))]}" || fail "racing compile $i: $(cat "$work/race$i.err")"
  [ "$(warnings "$work/race$i.err")" = 0 ] || fail "racing compile $i warned: $(cat "$work/race$i.err")"
done
[ "$(kernel_entries)" = 1 ] || fail "not exactly one kernel entry: $("$tilejit" cache ls)"
[ "$(temporaries "$TILEJIT_CACHE_DIR")" = 0 ] || fail "temporary files left"
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
# Four processes warm the same cold kernels at once (each compiles and
# publishes what the others publish too): all succeed without a warning,
# one entry per kernel, no temporary file; the demo below runs from them.
"$tilejit" cache clear > /dev/null
pids=()
for i in 1 2 3 4; do
  "$tilejit" warm "$work/manifest.jsonl" > "$work/race-warm$i.txt" 2> "$work/race-warm$i.err" & pids+=($!)
done
for i in 1 2 3 4; do
  wait "${pids[$((i - 1))]}" || fail "racing warm $i: $(cat "$work/race-warm$i.err")"
  grep -q "warmed $kernels kernels in .*, 0 failed" "$work/race-warm$i.txt" || fail "racing warm $i: $(cat "$work/race-warm$i.txt")"
  [ "$(warnings "$work/race-warm$i.err")" = 0 ] || fail "racing warm $i warned: $(cat "$work/race-warm$i.err")"
done
[ "$(kernel_entries)" = "$kernels" ] || fail "racing warms left $(kernel_entries) entries for $kernels kernels"
[ "$(temporaries "$TILEJIT_CACHE_DIR")" = 0 ] || fail "racing warms left temporary files"
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
[ "$(entries "$TILEJIT_CACHE_DIR")" = 0 ] || fail "clear left entries"

# A FIFO, then a 6 GiB (sparse) file where the entry should be: refused
# before it is read (a FIFO would block, the big file would be read whole),
# with one warning; compiled; replaced by a valid entry.
"$tilejit" cache clear > /dev/null
"${compile[@]}" > /dev/null
entry=$(json <("$tilejit" cache ls --json) "[e['file'] for e in d if e['key'].startswith('softmax[')][0]")
for fault in fifo huge; do
  rm -f "$entry"
  if [ $fault = fifo ]; then mkfifo -m 600 "$entry"; says="a FIFO"; else
    truncate -s 6G "$entry"; chmod 600 "$entry"; says="6442450944 bytes, over the bound"; fi
  timeout 120 "${compile[@]}" > "$work/$fault.json" 2> "$work/$fault.err" || fail "compile over a $fault entry"
  [ "$(json "$work/$fault.json" "d['from_cache']")" = False ] || fail "a $fault entry was a hit"
  [ "$(warnings "$work/$fault.err")" = 1 ] || fail "$fault: not one warning: $(cat "$work/$fault.err")"
  grep -q "cache entry $entry ignored: .*$says" "$work/$fault.err" || fail "$fault: $(cat "$work/$fault.err")"
  if [ ! -f "$entry" ] || [ "$(stat -c %s "$entry")" -gt 1000000 ]; then fail "$fault entry not replaced"; fi
  "${compile[@]}" > "$work/$fault-again.json"
  [ "$(json "$work/$fault-again.json" "d['from_cache']")" = True ] || fail "$fault: the replacement is no hit"
done

# A full disk as the writer sees it: a file size limit far below an entry
# (SIGXFSZ ignored, so the write fails with EFBIG after a short write). The
# compile succeeds with one warning; no kernel entry and no temporary file is
# left (the runtime library's small entries fit).
"$tilejit" cache clear > /dev/null
(trap '' XFSZ; ulimit -f 16; exec "${compile[@]}") > "$work/fsize.json" 2> "$work/fsize.err" \
  || fail "compile under a file size limit: $(cat "$work/fsize.err")"
[ "$(json "$work/fsize.json" "d['tiling_key'].startswith('softmax[')")" = True ] || fail "fsize: $(cat "$work/fsize.json")"
[ "$(warnings "$work/fsize.err")" = 1 ] || fail "fsize: not one warning: $(cat "$work/fsize.err")"
grep -q "cannot write to the cache directory $TILEJIT_CACHE_DIR: File too large; kernels are compiled but not cached" "$work/fsize.err" \
  || fail "fsize: $(cat "$work/fsize.err")"
[ "$(kernel_entries)" = 0 ] || fail "fsize left a kernel entry: $("$tilejit" cache ls)"
[ "$(temporaries "$TILEJIT_CACHE_DIR")" = 0 ] || fail "fsize left temporary files: $(ls -A "$TILEJIT_CACHE_DIR")"
# A truly full file system, where this user may mount a small tmpfs in a
# namespace of its own (optional: CI containers often may not).
if unshare --user --map-root-user --mount true 2> /dev/null; then
  mkdir -m 700 "$work/tiny"
  rc=0
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare --user --map-root-user --mount bash -c '
    mount -t tmpfs -o size=64k,mode=700 tilejit-full "$1" || exit 99
    head -c 60000 /dev/zero > "$1/filler" 2>/dev/null || true
    shift; TILEJIT_CACHE_DIR=$0/c exec "$@"' "$work/tiny" "$work/tiny" "${compile[@]}" \
    > "$work/full.json" 2> "$work/full.err" || rc=$?
  if [ $rc = 99 ]; then echo "note: no tmpfs in a user namespace here; the full-disk mount check skipped"; else
    [ $rc = 0 ] || fail "compile on a full tmpfs: $(cat "$work/full.err")"
    [ "$(warnings "$work/full.err")" = 1 ] || fail "full tmpfs: not one warning: $(cat "$work/full.err")"
    grep -q "No space left on device; kernels are compiled but not cached" "$work/full.err" || fail "full tmpfs: $(cat "$work/full.err")"
  fi
else
  echo "note: no user namespaces here; the full-disk mount check skipped"
fi

# A read-only directory (mode 500, which root could still write) is only
# read: one warning, a stored kernel is still a hit, a new one is compiled
# and not stored.
"${compile[@]}" > /dev/null
chmod 500 "$TILEJIT_CACHE_DIR"
"${compile[@]}" > "$work/ro-hit.json" 2> "$work/ro-hit.err" || fail "compile in a read-only directory"
[ "$(json "$work/ro-hit.json" "d['from_cache']")" = True ] || fail "read-only directory: no hit"
[ "$(warnings "$work/ro-hit.err")" = 1 ] || fail "read-only: not one warning: $(cat "$work/ro-hit.err")"
grep -q "the cache directory $TILEJIT_CACHE_DIR is read-only (mode 500); kernels are loaded from it but not stored" "$work/ro-hit.err" \
  || fail "read-only: $(cat "$work/ro-hit.err")"
"$tilejit" compile "$root/ops/samples/softmax.tile" --kernel softmax --set T=f32 --json > "$work/ro-new.json" 2> "$work/ro-new.err" \
  || fail "new kernel in a read-only directory"
[ "$(warnings "$work/ro-new.err")" = 1 ] || fail "read-only new: not one warning: $(cat "$work/ro-new.err")"
[ "$(kernel_entries)" = 1 ] || fail "wrote into a read-only directory"
chmod 700 "$TILEJIT_CACHE_DIR"
"$tilejit" cache clear > /dev/null

# A group-writable directory is refused (with a message), and work goes on.
chmod 770 "$TILEJIT_CACHE_DIR"
"${compile[@]}" > /dev/null 2> "$work/err.txt" || fail "compile with a refused directory"
grep -q "refusing the cache directory" "$work/err.txt" || fail "no refusal message: $(cat "$work/err.txt")"
[ "$(entries "$TILEJIT_CACHE_DIR")" = 0 ] || fail "wrote into a refused directory"
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
