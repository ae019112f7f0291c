# Sourced by the tests that run a bdwgc client with libsgc.so preloaded
# (tests/preload/*_preload.sh, tests/blackbox/trace_file.sh).  The caller
# sets TAG (the test's name) and LIB (libsgc.so); this makes LIB absolute
# and sets up TMP and fail() (test_common.sh).  TESTS_LIB is this folder:
# a caller in tests/KIND/ need not set it.
: "${TESTS_LIB:=$(dirname "$0")/../lib}"
case "$LIB" in /*) ;; *) LIB="$(pwd)/$LIB" ;; esac
. "$TESTS_LIB/test_common.sh"

# find_program NAME...: the path of the first NAME installed, or exit 77
# (ctest's SKIP_RETURN_CODE) when none is.
find_program() {
  for name in "$@"; do
    command -v "$name" 2>/dev/null && return 0
  done
  echo "[$TAG] SKIP: $1 is not installed" >&2
  exit 77
}

. "$TESTS_LIB/wait_for.sh"

# watched LABEL OUT ERR COMMAND...: runs COMMAND (environment assignments
# first, through env) with its output in OUT and ERR, and returns its
# status; past PRELOAD_WATCH_S seconds (default 120, times the speed
# factor: wait_for.sh) it prints what each
# of its threads is doing (gdb's backtraces where gdb is installed, else
# the kernel's wait channels), kills it and returns 124.  A hang then
# fails the test with a diagnosis, well inside ctest's timeout.
watched() {
  label=$1 out=$2 err=$3
  shift 3
  if [ "$out" = "$err" ]; then
    env "$@" >"$out" 2>&1 &
  else
    env "$@" >"$out" 2>"$err" &
  fi
  wait_for $! "${PRELOAD_WATCH_S:-120}" print_threads
}

# print_threads PID: what each thread of PID is doing (for watched).
print_threads() {
  echo "[$TAG] $label: still running after ${PRELOAD_WATCH_S:-120} s x$wf_factor; its threads:"
  if command -v gdb >/dev/null 2>&1; then
    gdb -p "$1" -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E "^(Thread|#)"
  else
    for task in /proc/"$1"/task/*; do
      echo "  $(cat "$task/comm" 2>/dev/null) $(cat "$task/wchan" 2>/dev/null)"
    done
  fi
}

# same_output NAME TORTURE COMMAND...
# Runs COMMAND with bdwgc, then with LIB preloaded three ways: plainly
# (SGC_STATS=1 must show that sgc collected), in torture mode (a
# collection every TORTURE refills) and with 4 GC threads marking.  Every
# run's standard output must equal bdwgc's (standard output and error).
same_output() {
  name=$1
  torture=$2
  shift 2
  watched "$name with bdwgc" "$TMP/$name.bdwgc" "$TMP/$name.bdwgc" "$@" ||
    fail "$name with bdwgc: exit $?"
  watched "$name with sgc" "$TMP/$name.sgc" "$TMP/$name.err" SGC_STATS=1 LD_PRELOAD="$LIB" "$@" ||
    fail "$name with sgc: exit $?: $(tail -3 "$TMP/$name.err")"
  cmp -s "$TMP/$name.bdwgc" "$TMP/$name.sgc" ||
    fail "$name: output differs: $(diff "$TMP/$name.bdwgc" "$TMP/$name.sgc" | head -5)"
  grep -q "^sgc: [1-9][0-9]* collections" "$TMP/$name.err" ||
    fail "$name: sgc did not collect: $(cat "$TMP/$name.err")"
  watched "$name in torture mode" "$TMP/$name.torture" "$TMP/$name.err" \
    SGC_TORTURE="$torture" LD_PRELOAD="$LIB" "$@" ||
    fail "$name in torture mode: exit $?: $(tail -3 "$TMP/$name.err")"
  cmp -s "$TMP/$name.bdwgc" "$TMP/$name.torture" || fail "$name in torture mode: output differs"
  watched "$name with 4 GC threads" "$TMP/$name.markers" "$TMP/$name.err" \
    SGC_MARKERS=4 SGC_ADAPTIVE=0 LD_PRELOAD="$LIB" "$@" ||
    fail "$name with 4 GC threads: exit $?: $(tail -3 "$TMP/$name.err")"
  cmp -s "$TMP/$name.bdwgc" "$TMP/$name.markers" || fail "$name with 4 GC threads: output differs"
  echo "[$TAG] $name: identical output with sgc, in torture mode and with 4 GC threads"
}
