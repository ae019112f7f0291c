#!/bin/sh
# mark_overflow.sh STRESS_PROGRAM
#
# Mark stacks capped at 256 entries (SGC_MARK_STACK_LIMIT) overflow on the
# oracle's graphs: entries are dropped and the marked heap is rescanned
# until none was (mark/overflow.c).  The oracle must still find every
# reachable object intact, with one GC thread, with two (stealing
# between capped stacks) and with two on Chase-Lev deques, and SGC_STATS
# must report the rescans, or the run proved nothing.  With the rescans turned off the oracle fails 3 of
# 3 runs; with roots' ranges dropped like objects' entries, 3 of 3.
set -u
PROG=${1:?usage: mark_overflow.sh STRESS_PROGRAM}
TAG=mark_overflow
. "$(dirname "$0")/../lib/test_common.sh"

for run in "1 watermark" "2 watermark" "2 chase-lev"; do
  set -- $run
  env SGC_MARK_STACK_LIMIT=256 SGC_MARKERS=$1 SGC_MARK_DEQUE=$2 SGC_ADAPTIVE=0 SGC_STATS=1 \
    "$PROG" -r 20 -t 4 >"$TMP/out" 2>&1 || fail "$run: $(tail -3 "$TMP/out")"
  line=$(grep "rescans of the marked heap" "$TMP/out") ||
    fail "$run: no overflow reported: $(tail -3 "$TMP/out")"
  echo "[$TAG] $1 GC threads, $2: ${line#sgc: }"
done
echo "[$TAG] ok"
