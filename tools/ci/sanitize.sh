#!/bin/sh
# Builds sgc, its tests and benchmarks with a sanitizer and runs the test
# suite (not part of tools/ci/test.sh or CI: each takes 5-6 minutes on the
# 2-core VM).
#
#   tools/ci/sanitize.sh undefined   # UBSan, every check fatal
#   tools/ci/sanitize.sh address     # AddressSanitizer (leak checks off)
#   tools/ci/sanitize.sh address -R bb_threads     # extra ctest arguments
#   tools/ci/sanitize.sh thread      # ThreadSanitizer, race reports only
#
# The build goes to build-undefined/ or build-address/.  The collector
# reads stacks and data segments word by word, redzones included, so that
# one read is not instrumented (scanned_word, src/mark/mark.c); ASan still
# checks everything else sgc reads and writes, and the heaps it keeps
# with malloc.  Tests left out, and why:
#   both: fastpath_no_atomics reads the fast paths' machine code, where
#     the sanitizer adds calls; unit_own_roots counts the bytes of static
#     roots, and the sanitizer's runtime has megabytes of its own;
#     bb_concurrent_start_pause wants a cycle's start pause shorter than
#     the barrier's arm before it, and the instrumented root scan is not
#     (2.6-4.2 ms against 1 under UBSan, 6 against 1 under ASan).
#   address only:
#     bb_waiters_unsignalled: a thread cancelled inside GC_do_blocking
#       trips a CHECK inside ASan itself (asan_thread.cpp, while unwinding);
#     bb_coroutines*: ASan does not support swapcontext (its own warning);
#     bb_crystal_preload, bb_nix_preload: those programs crash in ASan's
#       start-up when its runtime comes in behind libsgc.so rather than
#       first (preloading libasan.so ahead of libsgc.so, nix's eval runs);
#     bench_runner_smoke: it preloads jemalloc and mimalloc into the
#       instrumented benchmarks;
#     bb_compat_api*, unit_free_span_marks*, unit_release, bb_dead_stack*:
#       they check that dropped objects die, and ASan's larger frames keep
#       stale pointers to them (conservative retention, not a fault;
#       unit_release kept both 17 MiB structures, bb_dead_stack 20 of 20);
#     bb_stale_kinds_torture: 120 s are not enough for it instrumented;
#     bb_tiny_stacks*: ASan's frames overflow the 16 KiB stacks the test
#       collects on (in the GC thread count's prediction, 2026-11-30);
#     bb_gc_threads_idle: a bound on the GC threads' CPU time that the
#       instrumented code overruns (715 us a collection against 600);
#     bb_concurrent_heap_room: instrumented cycles fall further behind
#       the allocation, and the heap peaks at 80-84 MiB against stop
#       mode's 40 (the bound is twice; 68 uninstrumented, 2026-11-30).
# ThreadSanitizer cannot run the suite: it delivers a signal only at the
# thread's next intercepted call, so the registers and stack pointer a
# stopped thread reports are stale (the collector then misses what the
# thread has since allocated) and a thread spinning in user code never
# stops, nor does one waiting in pthread_mutex_lock or
# pthread_barrier_wait: a thread waiting at a test's barrier beside a
# collection (unit_sweep_owner, unit_page_path) or for heap_lock while
# GC_suspend_thread holds it (bb_thread_suspend) hangs the program.  The
# thread mode runs programs that finish under it anyway and prints each
# race report's first frame; it fails if any race is reported or any
# program fails, crashes or times out.  A race report can hang a program
# too: TSan's symbolizer calls dl_iterate_phdr, whose lock a collection
# holds while it stops the world from inside dl_iterate_phdr's callback
# (roots/roots.c), and the reporting thread, inside TSan's runtime, never
# stops (bb_oracle_stress, whose per-CPU caches hand objects between
# threads in rseq sequences TSan does not see: 3 of 5 runs here).
set -eu
cd "$(dirname "$0")/../.."
kind=${1:?usage: $0 undefined|address [ctest arguments]}
shift
case $kind in
undefined)
  flags="-fsanitize=undefined -fno-sanitize-recover=all"
  skip='^(fastpath_no_atomics|unit_own_roots|bb_oracle_stress_as_limited|bb_concurrent_start_pause)$'
  export UBSAN_OPTIONS=print_stacktrace=1
  ;;
address)
  flags="-fsanitize=address -fno-omit-frame-pointer"
  skip='^(fastpath_no_atomics|unit_own_roots|bb_waiters_unsignalled|bb_coroutines.*|bb_crystal_preload|bb_nix_preload|bench_runner_smoke|bb_compat_api.*|unit_free_span_marks.*|unit_release|bb_dead_stack.*|bb_stale_kinds_torture|bb_oracle_stress_as_limited|bb_tiny_stacks.*|bb_gc_threads_idle|bb_concurrent_start_pause|bb_concurrent_heap_room)$'
  # Leak checks would report the heap sgc never frees at exit; the
  # preload tests put libsgc.so, and with it libasan, behind the program.
  export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
  # bdwgc's suite preloads ASan's runtime ahead of libsgc.so: behind it,
  # sgc's pthread_create reaches libc's, ASan never learns of the GC
  # threads, and one started in a forked child (gctest) runs on a stack
  # glibc reuses from a parent's thread, its redzones still poisoned
  # (an unknown-crash in pthread_sigmask, 2026-11-30).
  SGC_PRELOAD_AHEAD=$(${CC:-cc} -print-file-name=libasan.so)
  export SGC_PRELOAD_AHEAD
  ;;
thread) flags="-fsanitize=thread" ;;
*) echo "$0: unknown sanitizer '$kind' (undefined, address or thread)" >&2; exit 2 ;;
esac
# Instrumented, the programs run several times slower than the machine's
# measured speed says: bdwgc's test_cpp and disclaim_test under torture
# passed 288 s (bb_bdwgc_suite's own limits, tools/ci/bdwgc_tests.sh).
export SGC_SPEED_FACTOR="${SGC_SPEED_FACTOR:-10}"
tools/ci/configure.sh "build-$kind" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSGC_TEST_TIMEOUT_SCALE=3 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
cmake --build "build-$kind" -j2
if [ "$kind" != thread ]; then
  exec ctest --test-dir "build-$kind" --output-on-failure -j2 -E "$skip" "$@"
fi
log=build-thread/races.log
: >"$log"
failed_programs=
for program in "bb_oracle_stress -r 10 -t 3" bb_api_basic bb_free_reuse bb_weak \
  bb_compat_extras bb_disclaim \
  bb_percpu_unique bb_custom_kinds bb_heap_bounded unit/unit_batch_steal unit/unit_batch_lent unit/unit_flip \
  unit/unit_store_stats unit/unit_release unit/unit_store_pages_reused \
  "bb_uncollectable_roots 2" unit/unit_uncollectable_cache; do
  echo "== $program" >>"$log"
  # $program unquoted on purpose: a binary and its arguments.
  status=0
  TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=0" timeout 120 \
    build-thread/tests/$program >>"$log" 2>&1 || status=$?
  # A race report alone exits 66 (TSan's exitcode); anything else, a
  # crash of TSan's own included, is a failure of its own.
  if [ "$status" -ne 0 ] && [ "$status" -ne 66 ]; then
    echo "== $program exited with status $status" >>"$log"
    failed_programs="$failed_programs
  $program (status $status)"
  fi
done
echo "races reported (first frame, count), all in $log:"
grep -A2 "WARNING: ThreadSanitizer" "$log" | sed -n 's/^    #0 \([^ ]*\) \([^ ]*\) .*/\1 \2/p' |
  sed 's|.*/\(src/\)|\1|; s|.*/\(tests/\)|\1|' | sort | uniq -c
if [ -n "$failed_programs" ]; then
  echo "$0: programs that failed or crashed under TSan (see $log):$failed_programs" >&2
  exit 1
fi
if grep -q "WARNING: ThreadSanitizer" "$log"; then
  echo "$0: data races reported (see $log)" >&2
  exit 1
fi
