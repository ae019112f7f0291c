#!/bin/sh
# settings_checked.sh STRESS_PROGRAM
#
# Every setting is checked (src/api/env.c): a value the README does not
# allow -- not a number, negative, out of range, trailing junk, an
# impossible size, a word it does not know -- is ignored with a warning
# that names the variable, and the program runs on with the default.  Before, SGC_MARKERS=-3 asked
# for 2^32 GC threads (a gcbench run started 1,023, the bound then, and marked
# with up to 112) and SGC_SPLIT_BYTES=abc turned the SLO variant off,
# both silently.  Valid values must not warn.
set -u
PROG=${1:?usage: settings_checked.sh STRESS_PROGRAM}
TAG=settings_checked
. "$(dirname "$0")/../lib/test_common.sh"

# bad VAR=VALUE: warns naming VAR=VALUE, and the run passes its oracle.
bad() {
  env GC_FREE_SPACE_DIVISOR=40 "$1" "$PROG" -r 2 -t 2 >"$TMP/out" 2>&1 ||
    fail "$1: the run failed: $(tail -3 "$TMP/out")"
  grep -qF "GC Warning: sgc: ignoring $1" "$TMP/out" || grep -qF "GC Warning: sgc: $1" "$TMP/out" ||
    fail "$1: no warning naming it: $(head -3 "$TMP/out")"
}
# good VAR=VALUE: no warning at all.
good() {
  env "$1" "$PROG" -r 2 -t 2 >"$TMP/out" 2>&1 || fail "$1: the run failed: $(tail -3 "$TMP/out")"
  if grep -q "GC Warning: sgc:" "$TMP/out"; then fail "$1: warned: $(grep 'GC Warning: sgc:' "$TMP/out")"; fi
}

for v in SGC_MARKERS=-3 SGC_MARKERS=abc SGC_MARKERS=99999999 GC_MARKERS=2x \
         SGC_SPLIT_BYTES=abc SGC_SPLIT_BYTES=-5 SGC_SPLIT_BYTES=10 \
         SGC_LPS_K=0.5 SGC_LPS_K=abc SGC_LPS_K=1.5x \
         SGC_INITIAL_HEAP_SIZE=-1 SGC_INITIAL_HEAP_SIZE=m SGC_INITIAL_HEAP_SIZE=4q \
         SGC_INITIAL_HEAP_SIZE=18446744073709551615 GC_INITIAL_HEAP_SIZE=18446744073705357312 \
         SGC_INITIAL_HEAP_SIZE=16777216g \
         SGC_MAXIMUM_HEAP_SIZE=99999999999999g GC_FREE_SPACE_DIVISOR=0 \
         SGC_TORTURE=-1 SGC_EXTRA_BYTES=300 SGC_ADAPTIVE=2 \
         SGC_STOP_SPIN_US=-1 SGC_PREWAKE_US=1e3 SGC_STATS=9 \
         SGC_SWEEP=eager SGC_MARK_VARIANT=fast SGC_MARK_DEQUE=abp SGC_MARK_SET=cas \
         SGC_PAGE_POLICY=lps2 SGC_PRELOAD_CHECK=maybe \
         SGC_MARK_STACK_LIMIT=abc SGC_MARK_STACK_LIMIT=-1 SGC_MARK_STACK_LIMIT=7 \
         SGC_SNAPSHOT_LIMIT=-1 SGC_PREDICT_PROFILE=/nonexistent SGC_MARKERS=automatic SGC_MARKERS=rules \
         SGC_NUMA_FAKE=65 SGC_NUMA_PLACEMENT=numa SGC_BMB=2 SGC_NUMA_PIN=yes; do
  bad "$v"
done
for v in SGC_MARKERS=0 SGC_MARKERS=3 GC_MARKERS=2 SGC_SPLIT_BYTES=0 SGC_SPLIT_BYTES=512 \
         SGC_LPS_K=1 SGC_LPS_K=2.5 SGC_INITIAL_HEAP_SIZE=8m SGC_INITIAL_HEAP_SIZE=8388608 \
         SGC_MAXIMUM_HEAP_SIZE=1g GC_FREE_SPACE_DIVISOR=5 SGC_ADAPTIVE=0 SGC_PREWAKE_US=0 \
         SGC_SWEEP=parallel SGC_MARK_VARIANT=no-opt SGC_MARK_DEQUE=chase-lev \
         SGC_MARK_SET=exchange SGC_PAGE_POLICY=al SGC_PRELOAD_CHECK=warn \
         SGC_MARK_STACK_LIMIT=100000 SGC_MARKERS=auto SGC_MARKERS=rule GC_MARKERS=auto SGC_SNAPSHOT_LIMIT=0 \
         SGC_NUMA_FAKE=2 SGC_NUMA_PLACEMENT=local \
         SGC_MARK_VARIANT=no-bmb; do
  good "$v"
done
# The suspend signal: a number or name of a signal a handler can catch
# and that no fault and not glibc uses (threads/stop_world.c).
for v in SGC_SUSPEND_SIGNAL=SIGKILL SGC_SUSPEND_SIGNAL=abc SGC_SUSPEND_SIGNAL=99 \
         SGC_SUSPEND_SIGNAL=32 SGC_SUSPEND_SIGNAL=SIGSEGV; do
  bad "$v"
done
for v in SGC_SUSPEND_SIGNAL=SIGUSR2 SGC_SUSPEND_SIGNAL=USR1 SGC_SUSPEND_SIGNAL=SIGRTMIN+4 \
         SGC_SUSPEND_SIGNAL=40; do
  good "$v"
done

# The ignored SGC_MARKERS leaves the default: no more GC threads mark than
# this process may use CPUs (the old code let a run mark with 112).
cpus=$(nproc)
env SGC_MARKERS=-3 SGC_ADAPTIVE=0 GC_FREE_SPACE_DIVISOR=40 SGC_TRACE="$TMP/trace" \
  "$PROG" -r 4 -t 2 >"$TMP/out" 2>&1 || fail "SGC_MARKERS=-3 with a trace: $(tail -3 "$TMP/out")"
python3 - "$TMP/trace" "$cpus" <<'PY' || fail "SGC_MARKERS=-3 did not fall back to the default"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
assert recs, "no collections"
most = max(r["markers"] for r in recs)
assert most == int(sys.argv[2]), f"{most} markers, want {sys.argv[2]} (the usable CPUs)"
PY
echo "[$TAG] ok"
