#!/bin/sh
# markers_cycle.sh STRESS_PROGRAM
#
# SGC_MARKERS_CYCLE=1,2 makes successive collections mark with 1, 2, 1,
# 2, ... GC threads (mark/parallel.c), whatever SGC_MARKERS says and with
# the adaptive choice off: the trace's "markers" must follow the list
# exactly, from the first collection on, and so must a three-entry list.
# A malformed list is ignored with a warning naming it.
set -u
PROG=${1:?usage: markers_cycle.sh STRESS_PROGRAM}
TAG=markers_cycle
. "$(dirname "$0")/../lib/test_common.sh"

# check CYCLE: the oracle under SGC_MARKERS_CYCLE=CYCLE, then its trace.
check() {
  env SGC_MARKERS_CYCLE="$1" SGC_MARKERS=1 GC_FREE_SPACE_DIVISOR=40 SGC_TRACE="$TMP/trace" \
    "$PROG" -r 20 -t 3 >"$TMP/out" 2>&1 || fail "$1: $(tail -3 "$TMP/out")"
  python3 - "$TMP/trace" "$1" <<'PY' || fail "cycle $1: markers do not follow it"
import json, sys
cycle = [int(x) for x in sys.argv[2].split(",")]
recs = [json.loads(line) for line in open(sys.argv[1])]
assert len(recs) >= 2 * len(cycle), f"only {len(recs)} collections"
for i, rec in enumerate(recs):
    want = cycle[i % len(cycle)]
    assert rec["markers"] == want, f"collection {rec['gc_no']}: {rec['markers']} markers, want {want}"
    assert len(rec["mark_threads"]) >= want, rec["mark_threads"]
PY
}
check 1,2
check 2,1,3

env SGC_MARKERS_CYCLE=1,x "$PROG" -r 1 -t 1 >"$TMP/bad" 2>&1 || fail "malformed cycle: $(tail -3 "$TMP/bad")"
grep -q "SGC_MARKERS_CYCLE=1,x" "$TMP/bad" || fail "no warning for SGC_MARKERS_CYCLE=1,x: $(cat "$TMP/bad")"
echo "[$TAG] ok"
