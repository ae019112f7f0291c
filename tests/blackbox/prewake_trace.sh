#!/bin/sh
# prewake_trace.sh STRESS_PROGRAM
#
# The GC threads are woken before the world stops (SGC_PREWAKE_US,
# mark/parallel.c), and SGC_TRACE says for each helper how it came to the
# mark: "prewoken" (awake, waiting for the phase, when it began) and
# "join_ns" (from the phase's start to the helper's first work).  With 2
# GC threads and collections every few hundred KB (the oracle stress
# program, 4 threads):
#   - by default some helper must have been pre-woken (else the pre-wake
#     never works, and every helper is woken by the phase, 30-70 us late);
#   - with SGC_PREWAKE_US=0 none may be, while helpers still join;
#   - a helper that joined did so before its mark ended, and one that did
#     not join reports neither a join time nor a pre-wake;
#   - the trace's lines come in collection order (the threads flush it).
# Exit 77 (ctest SKIP_RETURN_CODE) with fewer than 2 usable CPUs: the
# pre-wake is off when the GC threads outnumber the CPUs.
set -u
PROG=${1:?usage: prewake_trace.sh STRESS_PROGRAM}
TAG=prewake_trace
. "$(dirname "$0")/../lib/test_common.sh"
[ "$(nproc)" -ge 2 ] || { echo "[$TAG] SKIP: fewer than 2 usable CPUs"; exit 77; }

# run NAME [VAR=VALUE...]: the stress program with a trace in $TMP/NAME.
run() {
  name=$1
  shift
  env SGC_MARKERS=2 SGC_ADAPTIVE=0 GC_FREE_SPACE_DIVISOR=40 SGC_TRACE="$TMP/$name" "$@" \
    "$PROG" -r 40 -t 4 >"$TMP/$name.out" 2>&1 || fail "$name: $(tail -3 "$TMP/$name.out")"
}

# count TRACE: "helpers joined prewoken" over its parallel marks, after
# checking each helper's record against its mark.
count() {
  python3 - "$1" <<'PY' || fail "$1: a helper's record contradicts its collection"
import json, sys
helpers = joined = prewoken = 0
last = None
with open(sys.argv[1]) as f:
    for line in f:
        rec = json.loads(line)
        # Four threads collecting and flushing the trace: lines in order.
        assert last is None or rec["gc_no"] == last + 1, ("order", last, rec["gc_no"])
        last = rec["gc_no"]
        for h in rec["mark_threads"][1:rec["markers"]]:
            helpers += 1
            if h["busy_ns"] + h["idle_ns"] == 0:
                # Never joined: no join time, no pre-wake to report.
                assert h["join_ns"] == 0 and not h["prewoken"], (rec["gc_no"], h)
                continue
            joined += 1
            prewoken += h["prewoken"]
            assert h["join_ns"] < rec["mark_ns"], (rec["gc_no"], h, rec["mark_ns"])
print(helpers, joined, prewoken)
PY
}

run default
set -- $(count "$TMP/default")
[ "$1" -gt 0 ] || fail "no collection marked with 2 GC threads"
[ "$3" -gt 0 ] || fail "no helper pre-woken in $2 parallel marks it joined"
echo "[$TAG] default: $3 of $2 helpers that joined were pre-woken"

run off SGC_PREWAKE_US=0
set -- $(count "$TMP/off")
[ "$2" -gt 0 ] || fail "SGC_PREWAKE_US=0: no helper joined any of $1 parallel marks"
[ "$3" -eq 0 ] || fail "SGC_PREWAKE_US=0: $3 helpers reported a pre-wake"
echo "[$TAG] SGC_PREWAKE_US=0: $2 helpers joined, none pre-woken"
echo "[$TAG] PASS"
