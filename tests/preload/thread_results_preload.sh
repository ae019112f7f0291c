#!/bin/sh
# thread_results_preload.sh CC LIBSGC
#
# Issue 51's thread cases with sgc preloaded in place of libgc.so.1: the
# programs are built against bdwgc's own gc.h and -lgc, so sgc's
# pthread_join, pthread_detach, sigwait, the signal masks and signalfd
# reach them only by being preloaded (tests/blackbox/thread_results.c:
# results of plain pthread_create threads survive collections until
# joined; tests/blackbox/sigwait_thread.c and signalfd_thread.c: a thread
# waiting for every signal does not hold a collection up).
#
# Exit 77 (ctest SKIP_RETURN_CODE) if bdwgc's development files are missing.
set -u
CC=${1:?usage: thread_results_preload.sh CC /path/to/libsgc.so}
LIB=${2:?usage: thread_results_preload.sh CC /path/to/libsgc.so}
case "$LIB" in /*) ;; *) LIB="$(pwd)/$LIB" ;; esac
DIR=$(cd "$(dirname "$0")/../blackbox" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/thread_results.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL [thread_results_preload] $*"; exit 1; }

if [ ! -f /usr/include/gc.h ] || ! ldconfig -p 2>/dev/null | grep -q 'libgc\.so '; then
  echo "[thread_results_preload] SKIP: bdwgc's development files are not installed"
  exit 77
fi
for prog in thread_results sigwait_thread signalfd_thread; do
  "$CC" -O2 "$DIR/$prog.c" -o "$TMP/$prog" -lgc -lpthread ||
    fail "cannot build $prog against bdwgc's gc.h"
done
env LD_PRELOAD="$LIB" "$TMP/thread_results" >"$TMP/out" 2>&1 ||
  fail "thread_results: $(tail -3 "$TMP/out")"
for mode in pthread_sigmask sigprocmask; do
  env LD_PRELOAD="$LIB" "$TMP/sigwait_thread" "$mode" >"$TMP/out" 2>&1 ||
    fail "sigwait_thread $mode: $(tail -3 "$TMP/out")"
  env LD_PRELOAD="$LIB" "$TMP/signalfd_thread" "$mode" >"$TMP/out" 2>&1 ||
    fail "signalfd_thread $mode: $(tail -3 "$TMP/out")"
done
echo "[thread_results_preload] ok"
