#!/bin/sh
# Builds sgc, its tests and benchmarks with a sanitizer and runs the test
# suite (not part of tools/test.sh or CI: each takes 5-6 minutes on the
# 2-core VM).
#
#   tools/sanitize.sh undefined   # UBSan, every check fatal
#   tools/sanitize.sh address     # AddressSanitizer (leak checks off)
#   tools/sanitize.sh address -R bb_threads     # extra ctest arguments
#
# The build goes to build-undefined/ or build-address/.  The collector
# reads stacks and data segments word by word, redzones included, so that
# one read is not instrumented (scanned_word, src/common.h); ASan still
# checks everything else sgc reads and writes, and the heaps it keeps
# with malloc.  Tests left out, and why:
#   both: fastpath_no_atomics reads the fast paths' machine code, where
#     the sanitizer adds calls; unit_own_roots counts the bytes of static
#     roots, and the sanitizer's runtime has megabytes of its own.
#   address only:
#     bb_waiters_unsignalled: a thread cancelled inside GC_do_blocking
#       trips a CHECK inside ASan itself (asan_thread.cpp, while unwinding);
#     bb_coroutines*: ASan does not support swapcontext (its own warning);
#     bb_crystal_preload, bb_nix_preload: those programs crash in ASan's
#       start-up when its runtime comes in behind libsgc.so rather than
#       first (preloading libasan.so ahead of libsgc.so, nix's eval runs);
#     bench_runner_smoke: it preloads jemalloc and mimalloc into the
#       instrumented benchmarks;
#     bb_compat_api*, unit_free_span_marks*: they check that dropped
#       objects die, and ASan's larger frames keep stale pointers to them
#       (conservative retention, not a fault);
#     bb_stale_kinds_torture: 120 s are not enough for it instrumented.
set -eu
cd "$(dirname "$0")/.."
kind=${1:?usage: $0 undefined|address [ctest arguments]}
shift
case $kind in
undefined)
  flags="-fsanitize=undefined -fno-sanitize-recover=all"
  skip='^(fastpath_no_atomics|unit_own_roots)$'
  export UBSAN_OPTIONS=print_stacktrace=1
  ;;
address)
  flags="-fsanitize=address -fno-omit-frame-pointer"
  skip='^(fastpath_no_atomics|unit_own_roots|bb_waiters_unsignalled|bb_coroutines.*|bb_crystal_preload|bb_nix_preload|bench_runner_smoke|bb_compat_api.*|unit_free_span_marks.*|bb_stale_kinds_torture)$'
  # Leak checks would report the heap sgc never frees at exit; the
  # preload tests put libsgc.so, and with it libasan, behind the program.
  export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
  ;;
*) echo "$0: unknown sanitizer '$kind' (undefined or address)" >&2; exit 2 ;;
esac
GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
cmake -S . -B "build-$kind" $GEN -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
cmake --build "build-$kind" -j2
ctest --test-dir "build-$kind" --output-on-failure -j2 -E "$skip" "$@"
