#!/bin/bash
# bdwgc's own test programs, run against sgc.
#
#   tools/ci/bdwgc_tests.sh [BUILD] [MODE...]
#
# Fetches bdwgc 8.2.2's source (Debian 12's orig tarball, the version
# libgc1 installs, checked against its SHA-256), builds its library and
# test programs in BUILD/bdwgc-tests (kept for later runs), and runs each
# program with BUILD/src/libsgc.so preloaded, so that every GC_ call goes
# to sgc (sgc stops at start-up if one would still reach bdwgc's library:
# SGC_PRELOAD_CHECK).  BUILD defaults to ./build.  MODEs (default: all):
#
#   default   the default settings
#   markers4  4 GC threads, never fewer (SGC_MARKERS=4 SGC_ADAPTIVE=0)
#   torture   a collection at every allocation slow path (SGC_TORTURE=1;
#             gctest, which allocates 730 MB, at every 16th: 25 s, where
#             every slow path did not end in 300 s and every 4th took 106 s)
#   cpu       per-CPU allocation caches and the parallel sweep
#             (SGC_LAB=cpu SGC_SWEEP=parallel)
#   ps        the private-pages policy (SGC_PAGE_POLICY=ps)
#   incremental  bdwgc's incremental mode, sgc's concurrent cycles
#             (GC_ENABLE_INCREMENTAL=1)
#
# A program passes when it exits 0 within its time limit and its output
# has no "FAIL"/"failed" line; each failure's log tail is printed.
# leaktest, threadleaktest and smashtest exercise bdwgc's leak finding
# and its debug-header checks: each also runs once on bdwgc itself, and
# sgc must report objects from the same allocation sites (file and line).
# Not the same number: at -O2 leaktest's array of pointers is dead before
# its last checks, and how many of its objects stale registers and stack
# words still hold varies (bdwgc reported 6, sgc 6 or 7 in 20 runs);
# bb_leak_find and bb_debug_smash check sgc's reports exactly.
#
# bdwgc's source comes through apt-get source (tools/ci/apt_fetch.sh: from
# the archive this machine's apt sources name, deb-src derived from them;
# no root needed); set SGC_BDWGC_TARBALL to a local copy instead.
#
# Each program's time limit below is for a quiet 2-core machine; it is
# multiplied by tools/ci/speed_factor.sh's factor, measured again before
# each mode, so a slow or busy machine gets longer limits.
# Exit status: 0 all passed, 1 a program failed, 2 a usage or build
# error, 77 the source could not be fetched (ctest counts it skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
[ $# -gt 0 ] && shift
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(default markers4 torture cpu ps incremental)
lib=$build/src/libsgc.so
[ -f "$lib" ] || { echo "$0: no $lib (build sgc first)" >&2; exit 2; }
# SGC_PRELOAD_AHEAD: libraries preloaded before libsgc.so (sanitize.sh puts
# ASan's runtime there, so that the threads sgc starts are ASan's threads),
# except for test_cpp: ahead of it, ASan's operator delete takes the place
# of gc_cpp's (as bdwgc's test_cpp.cc notes), and its GC_CHECKED_DELETE of
# an uncollectable object is a bad free to ASan.
preload_for() {
  if [ "$1" = test_cpp ]; then echo "$lib"; else echo "${SGC_PRELOAD_AHEAD:+$SGC_PRELOAD_AHEAD }$lib"; fi
}

version=8.2.2
sha256=f30107bcb062e0920a790ffffa56d9512348546859364c23a14be264b38836a0
work=$build/bdwgc-tests
src=$work/gc-$version
mkdir -p "$work"

if [ ! -f "$src/.libs/gctest" ]; then
  tarball=${SGC_BDWGC_TARBALL:-$work/libgc_$version.orig.tar.gz}
  if [ ! -f "$tarball" ]; then
    echo "$0: fetching libgc's source with apt-get source" >&2
    rm -rf "$work/apt" && mkdir -p "$work/apt"
    "$here/tools/ci/apt_fetch.sh" source libgc "$work/apt" ||
      { echo "$0: cannot fetch libgc's source: skipped (set SGC_BDWGC_TARBALL)" >&2; exit 77; }
    [ -f "$work/apt/libgc_$version.orig.tar.gz" ] ||
      { echo "$0: the archive's libgc is not $version: skipped (set SGC_BDWGC_TARBALL)" >&2; exit 77; }
    mv "$work/apt/libgc_$version.orig.tar.gz" "$tarball"
    rm -rf "$work/apt"
  fi
  echo "$sha256  $tarball" | sha256sum -c --quiet - ||
    { echo "$0: $tarball is not bdwgc $version's tarball" >&2; exit 2; }
  rm -rf "$src"
  tar -xzf "$tarball" -C "$work"
  echo "$0: building bdwgc $version's tests in $src" >&2
  (cd "$src" && ./configure -q --enable-threads=posix --enable-cplusplus --disable-static \
     >"$work/configure.log" 2>&1 &&
   make -j"$(nproc)" -s check TESTS= >"$work/make.log" 2>&1) ||
    { echo "$0: building bdwgc failed; see $work/*.log" >&2; tail -20 "$work/make.log" >&2; exit 2; }
fi
# tracetest (gc_backptr.h's backtraces), which bdwgc builds only with back
# pointers (KEEP_BACK_PTRS), as Debian's library is not: linked to libsgc.
if [ ! -f "$src/.libs/tracetest" ]; then
  cc -O2 -w -I"$src/include" "$src/tests/trace_test.c" -o "$src/.libs/tracetest" \
    -L"$build/src" -Wl,-rpath,"$build/src" -lsgc -lpthread ||
    { echo "$0: building tracetest failed" >&2; exit 2; }
fi

# name:time limit (s): every program bdwgc's `make check` runs, and
# tracetest.
# Torture mode collects at every slow path, except in the two GC_DEBUG
# programs, gctest and staticrootstest, which collect at every 16th:
# their objects carry debugging headers (collect/debug_alloc.c) and, since
# sgc pads preloaded clients' objects as bdwgc does, a byte more, so every
# slow path came with a collection of a heap five times larger than
# before, and staticrootstest ran 4.5 minutes (10 s before).
programs=(gctest:300 test_cpp:120 cordtest:60 disclaim_test:120 disclaim_weakmap_test:120
  hugetest:60 initsecondarythread_test:60 middletest:60 realloc_test:60 staticrootstest:120
  subthreadcreate_test:120 threadkey_test:60 threadleaktest:60 leaktest:60 smashtest:60
  tracetest:60)

mode_env() {
  case $1 in
  default) echo "" ;;
  markers4) echo "SGC_MARKERS=4 SGC_ADAPTIVE=0" ;;
  torture) echo "SGC_TORTURE=1" ;;
  cpu) echo "SGC_LAB=cpu SGC_SWEEP=parallel" ;;
  ps) echo "SGC_PAGE_POLICY=ps" ;;
  incremental) echo "GC_ENABLE_INCREMENTAL=1" ;;
  *) echo "$0: unknown mode $1" >&2; exit 2 ;;
  esac
}

for mode in "${modes[@]}"; do mode_env "$mode" >/dev/null || exit 2; done

failed=0 passed=0
logs=$work/logs
mkdir -p "$logs"

# The programs that include none of bdwgc's private headers must build,
# unchanged, against sgc's headers and library (issue 55); the others
# (gctest, test_cpp, the disclaim tests, subthread_create,
# initsecondarythread) need bdwgc's private headers.
for name in huge_test leak_test middle realloc_test smash_test threadkey_test thread_leak_test \
  trace_test; do
  if cc -O2 -w -DGC_THREADS -I"$here/include" -I"$here/include/gc" "$src/tests/$name.c" \
    -o "$work/sgc_$name" -L"$build/src" -Wl,-rpath,"$build/src" -lsgc -lpthread \
    >"$logs/$name.headers.log" 2>&1; then
    passed=$((passed + 1))
    printf 'PASS  %-26s builds against sgc'"'"'s headers\n' "$name"
  else
    failed=$((failed + 1))
    printf 'FAIL  %-26s does not build against sgc'"'"'s headers\n' "$name"
    tail -n 8 "$logs/$name.headers.log" | sed 's/^/      /'
  fi
done
# The allocation sites ("(FILE:LINE") a run's leak or smash reports name.
reported_objects() { grep -oE '\((tests/[A-Za-z_]+\.c:[0-9]+)' | sort -u; }
for name in leaktest threadleaktest smashtest; do
  bdwgc_found=$(cd "$src" && LD_LIBRARY_PATH="$src/.libs" timeout 120 ".libs/$name" 2>&1 |
                reported_objects)
  sgc_found=$(cd "$src" && LD_LIBRARY_PATH="$src/.libs" LD_PRELOAD="$(preload_for "$name")" timeout 120 \
              ".libs/$name" 2>&1 | reported_objects)
  if [ -n "$bdwgc_found" ] && [ "$bdwgc_found" = "$sgc_found" ]; then
    passed=$((passed + 1))
    printf 'PASS  %-26s sgc reports objects from bdwgc'"'"'s sites: %s\n' "$name" "$(echo $sgc_found)"
  else
    failed=$((failed + 1))
    printf 'FAIL  %-26s reports differ\n      bdwgc: %s\n      sgc:   %s\n' "$name" \
      "$(echo $bdwgc_found)" "$(echo $sgc_found)"
  fi
done
for mode in "${modes[@]}"; do
  factor=$("$here/tools/ci/speed_factor.sh")
  tenths=$(echo "$factor" | awk '{ t = int($1 * 10 + 0.5); print t < 10 ? 10 : t }')
  echo "mode $mode: time limits x$factor (tools/ci/speed_factor.sh)"
  for entry in "${programs[@]}"; do
    name=${entry%%:*} limit=$(((${entry##*:} * tenths + 9) / 10))
    read -r -a envs <<<"$(mode_env "$mode")"
    [ "$mode" = torture ] && { [ "$name" = gctest ] || [ "$name" = staticrootstest ]; } &&
      envs=(SGC_TORTURE=16)
    log=$logs/$name.$mode.log
    start=$(date +%s%N)
    set +e
    (cd "$src" && env LD_LIBRARY_PATH="$src/.libs" LD_PRELOAD="$(preload_for "$name")" "${envs[@]}" \
       timeout "$limit" ".libs/$name") >"$log" 2>&1
    status=$?
    set -e
    ms=$((($(date +%s%N) - start) / 1000000))
    if [ $status -eq 0 ] && ! grep -qiE '(^|[^a-z])(fail|failed)([^a-z]|$)' "$log"; then
      passed=$((passed + 1))
      printf 'PASS  %-26s %-9s %6d ms\n' "$name" "$mode" "$ms"
    else
      failed=$((failed + 1))
      printf 'FAIL  %-26s %-9s status %d (limit %d s)\n' "$name" "$mode" "$status" "$limit"
      tail -n 8 "$log" | sed 's/^/      /'
    fi
  done
done
echo "bdwgc $version's tests against sgc: $passed passed, $failed failed (logs in $logs)"
[ $failed -eq 0 ]
