#!/bin/sh
# Long adversarial runs, outside the default test suite: the reachability
# oracle under every marking variant, both sweeps, every page policy, 1 to
# 8 GC threads, per-thread, per-CPU and flip caches, mark stacks that
# overflow, and torture mode, plus
# the threads test under torture; concurrent cycles under each barrier
# and beside other settings, custom kinds' mark procedures in them (run
# once per object, with stacks that overflow),
# system calls into the heap beside the mprotect barrier's steps,
# NUMA placements on fake nodes.
# Usage: tools/ci/stress.sh [ROUNDS]   (default 400; about 12 minutes on 2 cores)
# STRESS_BUILD=build-address tools/ci/stress.sh 100 runs the same in a build
# tools/ci/sanitize.sh made, as it is (with that script's ASAN_OPTIONS or
# UBSAN_OPTIONS set by the caller).
set -e
cd "$(dirname "$0")/../.."
ROUNDS=${1:-400}
BUILD=${STRESS_BUILD:-build}
if [ "$BUILD" = build ]; then sh tools/ci/test.sh -R unit_ >/dev/null; fi
[ -x "$BUILD/tests/bb_oracle_stress" ] || { echo "$0: no $BUILD/tests/bb_oracle_stress" >&2; exit 2; }
B=$BUILD/tests
fail=0
run() {
  printf '%-70s' "$*"
  if env "$@" >/tmp/sgc-stress.$$ 2>&1; then echo ok; else echo FAIL; tail -5 /tmp/sgc-stress.$$; fail=1; fi
}
for variant in opt simple noopt no-slo no-nsb; do
  for markers in 1 2 8; do
    run SGC_MARK_VARIANT=$variant SGC_MARKERS=$markers SGC_ADAPTIVE=0 $B/bb_oracle_stress -r $ROUNDS -t 4
  done
done
for markers in 2 8; do
  run SGC_MARK_SET=exchange SGC_MARKERS=$markers SGC_ADAPTIVE=0 $B/bb_oracle_stress -r $ROUNDS -t 4
done
run SGC_MARKERS_CYCLE=1,2,8 GC_FREE_SPACE_DIVISOR=40 $B/bb_oracle_stress -r $ROUNDS -t 4
for variant in opt noopt no-slo no-nsb; do
  run SGC_MARK_DEQUE=chase-lev SGC_MARK_VARIANT=$variant SGC_MARKERS=4 SGC_ADAPTIVE=0 $B/bb_oracle_stress -r $ROUNDS -t 4
done
for policy in ps al lps; do
  run SGC_PAGE_POLICY=$policy SGC_SWEEP=parallel $B/bb_oracle_stress -r $ROUNDS -t 6
  # collections very often against refills on the page path without heap_lock
  run SGC_PAGE_POLICY=$policy GC_FREE_SPACE_DIVISOR=40 $B/bb_oracle_stress -r $ROUNDS -t 6
  # a collection at every second refill, the others without heap_lock
  run SGC_PAGE_POLICY=$policy SGC_TORTURE=2 $B/bb_oracle_stress -r $((ROUNDS / 10 + 1)) -t 6
done
run SGC_TORTURE=1 $B/bb_oracle_stress -r $((ROUNDS / 20 + 1)) -o 2000 -t 4
run SGC_TORTURE=3 SGC_MARKERS=8 SGC_ADAPTIVE=0 SGC_SWEEP=parallel $B/bb_oracle_stress -r $((ROUNDS / 10 + 1)) -t 4
run SGC_TORTURE=1 THREADS_ROUNDS=5 THREADS_MANY=50 $B/bb_threads
run SGC_EXTRA_BYTES=1 $B/bb_oracle_stress -r $ROUNDS -t 4
# per-CPU caches (rseq) and flip mode, also against frequent collections
# and torture, with more threads than CPUs so threads migrate and preempt
run SGC_LAB=cpu $B/bb_oracle_stress -r $ROUNDS -t 6
run SGC_LAB=cpu GC_FREE_SPACE_DIVISOR=40 SGC_SWEEP=parallel $B/bb_oracle_stress -r $ROUNDS -t 6
run SGC_LAB=cpu SGC_TORTURE=2 $B/bb_oracle_stress -r $((ROUNDS / 20 + 1)) -t 6
run SGC_LAB=flip $B/bb_oracle_stress -r $ROUNDS -t 8
run SGC_LAB=flip GC_FREE_SPACE_DIVISOR=40 $B/bb_oracle_stress -r $ROUNDS -t 8
# mark stacks and deques capped so they overflow: entries dropped, the
# marked heap rescanned (mark/overflow.c), every variant of both
for variant in opt simple no-slo; do
  run SGC_MARK_STACK_LIMIT=256 SGC_MARK_VARIANT=$variant SGC_MARKERS=4 SGC_ADAPTIVE=0 $B/bb_oracle_stress -r $ROUNDS -t 4
done
run SGC_MARK_STACK_LIMIT=256 SGC_MARK_DEQUE=chase-lev SGC_MARKERS=4 SGC_ADAPTIVE=0 $B/bb_oracle_stress -r $ROUNDS -t 4
run SGC_MARK_STACK_LIMIT=256 SGC_TORTURE=2 SGC_MARKERS=2 SGC_ADAPTIVE=0 $B/bb_oracle_stress -r $((ROUNDS / 10 + 1)) -t 4
for prewake in 0 1; do
  run SGC_PREWAKE_US=$prewake SGC_MARKERS=2 SGC_ADAPTIVE=0 GC_FREE_SPACE_DIVISOR=40 $B/bb_oracle_stress -r $ROUNDS -t 4
done
# concurrent cycles (docs/concurrent.md) under each write barrier, with
# cycles started very early and at torture turns
for barrier in uffd mprotect full; do
  run SGC_MODE=concurrent SGC_BARRIER=$barrier SGC_MARKERS=2 $B/bb_oracle_stress -r $ROUNDS -t 4
  run SGC_MODE=concurrent SGC_BARRIER=$barrier SGC_CONCURRENT_TRIGGER=1 GC_FREE_SPACE_DIVISOR=10 $B/bb_oracle_stress -r $ROUNDS -t 6
  run SGC_MODE=concurrent SGC_BARRIER=$barrier SGC_TORTURE=4 SGC_MARKERS=3 $B/bb_oracle_stress -r $((ROUNDS / 10 + 1)) -o 2000 -t 3
done
# concurrent cycles beside other settings (a hunt found Simple marking's
# deal racing with assisting threads' steals, history.md), and custom
# kinds' mark procedures, which wait for the finish
run SGC_MODE=concurrent SGC_MARK_VARIANT=simple SGC_MARKERS=3 SGC_ADAPTIVE=0 $B/bb_oracle_stress -r $ROUNDS -t 4
run SGC_MODE=concurrent SGC_LAB=cpu SGC_SWEEP=parallel $B/bb_oracle_stress -r $ROUNDS -t 6
run SGC_MODE=concurrent SGC_MARK_DEQUE=chase-lev SGC_PAGE_POLICY=ps $B/bb_oracle_stress -r $ROUNDS -t 4
for i in 1 2 3; do
  run SGC_MODE=concurrent SGC_CONCURRENT_HOLD_MS=500 $B/bb_concurrent mark_proc
  run SGC_MODE=concurrent SGC_TORTURE=3 $B/bb_custom_kinds
done
# mark procedures run once per object however many GC threads race to
# mark it, with stacks that overflow, and beside concurrent cycles
for env in "SGC_MARKERS=4 SGC_MARK_DEQUE=chase-lev SGC_MARK_STACK_LIMIT=256" \
           "SGC_MARKERS=3 SGC_MARK_STACK_LIMIT=256" "SGC_MODE=concurrent SGC_MARKERS=2"; do
  for i in 1 2 3; do run $env SGC_ADAPTIVE=0 CUSTOM_PROCS_FAN=1 $B/bb_custom_procs_shared; done
done
# system calls into the heap beside the mprotect barrier's faults,
# collects and arms, on one CPU with threads waking to preempt the others
# (a call once failed with EFAULT in about 1 run of 40 on a loaded machine)
for mode in collects cycles; do
  run SGC_BARRIER=mprotect $B/unit/unit_barrier_syscalls $mode $((ROUNDS / 20 + 1)) 2
done
for i in 1 2 3 4 5; do run SGC_BARRIER=mprotect $B/bb_barrier_syscalls; done
# NUMA placements on fake nodes (docs/numa.md), black-listing off
for placement in interleave local; do
  run SGC_NUMA_FAKE=4 SGC_NUMA_PLACEMENT=$placement SGC_BMB=1 SGC_MARKERS=4 $B/bb_oracle_stress -r $ROUNDS -t 6
done
run SGC_BLACKLIST=0 GC_FREE_SPACE_DIVISOR=40 $B/bb_oracle_stress -r $ROUNDS -t 4
rm -f /tmp/sgc-stress.$$
if [ $fail = 0 ]; then echo "stress: all passed"; else echo "stress: FAILURES"; exit 1; fi
