# Sourced by the tests that run a bdwgc client with libsgc.so preloaded
# (ecl_preload.sh, guile_preload.sh).  The caller sets TAG (the test's
# name) and LIB (libsgc.so); this makes LIB absolute and sets up TMP and
# fail().
case "$LIB" in /*) ;; *) LIB="$(pwd)/$LIB" ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/$TAG.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL [$TAG] $*"; exit 1; }

# find_program NAME...: the path of the first NAME installed, or exit 77
# (ctest's SKIP_RETURN_CODE) when none is.
find_program() {
  for name in "$@"; do
    command -v "$name" 2>/dev/null && return 0
  done
  echo "[$TAG] SKIP: $1 is not installed" >&2
  exit 77
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
  "$@" >"$TMP/$name.bdwgc" 2>&1 || fail "$name with bdwgc: exit $?"
  SGC_STATS=1 LD_PRELOAD="$LIB" "$@" >"$TMP/$name.sgc" 2>"$TMP/$name.err" ||
    fail "$name with sgc: exit $?: $(tail -3 "$TMP/$name.err")"
  cmp -s "$TMP/$name.bdwgc" "$TMP/$name.sgc" ||
    fail "$name: output differs: $(diff "$TMP/$name.bdwgc" "$TMP/$name.sgc" | head -5)"
  grep -q "^sgc: [1-9][0-9]* collections" "$TMP/$name.err" ||
    fail "$name: sgc did not collect: $(cat "$TMP/$name.err")"
  SGC_TORTURE=$torture LD_PRELOAD="$LIB" "$@" >"$TMP/$name.torture" 2>"$TMP/$name.err" ||
    fail "$name in torture mode: exit $?: $(tail -3 "$TMP/$name.err")"
  cmp -s "$TMP/$name.bdwgc" "$TMP/$name.torture" || fail "$name in torture mode: output differs"
  SGC_MARKERS=4 SGC_ADAPTIVE=0 LD_PRELOAD="$LIB" "$@" >"$TMP/$name.markers" 2>"$TMP/$name.err" ||
    fail "$name with 4 GC threads: exit $?: $(tail -3 "$TMP/$name.err")"
  cmp -s "$TMP/$name.bdwgc" "$TMP/$name.markers" || fail "$name with 4 GC threads: output differs"
  echo "[$TAG] $name: identical output with sgc, in torture mode and with 4 GC threads"
}
