#!/bin/sh
# preload_mixed.sh CC LIBSGC
#
# sgc preloaded in place of libgc.so.1 must never let a program run two
# collectors: a program that imports a GC_ function sgc does not provide
# (one of libgc's functions LIBSGC lacks, found with nm, imported but never
# called) would bind it to bdwgc's.  Requires: start-up fails with a message naming the function;
# SGC_PRELOAD_CHECK=warn only warns and the program runs; a program whose
# imports sgc all provides runs silently on sgc (its SGC_STATS summary
# appears).  The programs are compiled against bdwgc's gc.h and -lgc.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if bdwgc's development files are missing.
set -u
CC=${1:?usage: preload_mixed.sh CC /path/to/libsgc.so}
LIB=${2:?usage: preload_mixed.sh CC /path/to/libsgc.so}
case "$LIB" in /*) ;; *) LIB="$(pwd)/$LIB" ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/preload.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL [preload_mixed] $*"; exit 1; }

LIBGC=$(ldconfig -p 2>/dev/null | awk '/libgc\.so\.1 .*x86-64/ {print $NF; exit}')
[ -n "$LIBGC" ] || LIBGC=$(ldconfig -p 2>/dev/null | awk '/libgc\.so\.1/ {print $NF; exit}')
if [ -z "$LIBGC" ]; then
  echo "[preload_mixed] SKIP: libgc.so.1 is not installed"
  exit 77
fi
nm -D --defined-only "$LIBGC" | awk '$2 == "T" && $3 ~ /^GC_/ {print $3}' | sort -u >"$TMP/bdwgc"
nm -D --defined-only "$LIB" | awk '$3 ~ /^GC_/ {print $3}' | sort -u >"$TMP/sgc"
MISSING=$(comm -23 "$TMP/bdwgc" "$TMP/sgc" | head -1)
LINK_MIXED="-lgc"
if [ -z "$MISSING" ]; then
  # sgc defines every function libgc.so.1 does (since GC_incr_bytes_*):
  # the mixed program links a stand-in libgc.so.1 that has one more.
  MISSING=GC_only_in_this_libgc
  mkdir "$TMP/standin"
  cat >"$TMP/standin.c" <<C
#include <stdlib.h>
void GC_init(void) {}
void *GC_malloc(size_t n) { return calloc(1, n); }
void $MISSING(void) {}
C
  "$CC" -O2 -shared -fPIC -Wl,-soname,libgc.so.1 "$TMP/standin.c" -o "$TMP/standin/libgc.so.1" ||
    fail "cannot build the stand-in libgc"
  ln -s libgc.so.1 "$TMP/standin/libgc.so"
  LINK_MIXED="-L$TMP/standin -Wl,-rpath,$TMP/standin -lgc"
  echo "[preload_mixed] sgc defines every function libgc.so.1 does; a stand-in libgc.so.1 has $MISSING"
fi
# Declared here rather than through gc.h, whose prototype of the chosen
# function could differ (and the test would then be skipped).
cat >"$TMP/mixed.c" <<C
#include <stddef.h>
#include <stdio.h>
extern void GC_init(void);
extern void *GC_malloc(size_t);
extern void $MISSING(void); /* only its address is used */
int main(int argc, char **argv) {
  GC_init();
  void *p = GC_malloc(32);
  if (argc > 5) $MISSING(); /* imported, never called */
  printf("ran %d\n", p != NULL);
  return 0;
}
C
cat >"$TMP/plain.c" <<'C'
#include <gc.h>
#include <stdio.h>
int main(void) {
  GC_INIT();
  void *p = GC_MALLOC(32);
  GC_gcollect();
  printf("ran %d\n", p != NULL);
  return 0;
}
C
for prog in mixed plain; do
  link=-lgc
  [ $prog = mixed ] && link=$LINK_MIXED
  # shellcheck disable=SC2086
  if ! "$CC" -O2 "$TMP/$prog.c" -o "$TMP/$prog" $link 2>"$TMP/cc.err"; then
    echo "[preload_mixed] SKIP: cannot build against bdwgc: $(head -1 "$TMP/cc.err")"
    exit 77
  fi
done
"$TMP/mixed" >/dev/null 2>&1 || fail "the program does not run with bdwgc alone"

LD_PRELOAD="$LIB" "$TMP/mixed" >"$TMP/out" 2>"$TMP/err" && fail "mixed program ran: $(cat "$TMP/err")"
grep -q "sgc: fatal: .*$MISSING" "$TMP/err" || fail "no fatal message naming $MISSING: $(cat "$TMP/err")"
grep -q "ran" "$TMP/out" && fail "mixed program's main ran before the check"

SGC_PRELOAD_CHECK=warn LD_PRELOAD="$LIB" "$TMP/mixed" >"$TMP/out" 2>"$TMP/err" ||
  fail "SGC_PRELOAD_CHECK=warn: exit $?: $(cat "$TMP/err")"
grep -q "GC Warning: sgc: .*$MISSING" "$TMP/err" || fail "no warning naming $MISSING with SGC_PRELOAD_CHECK=warn"
grep -q "ran 1" "$TMP/out" || fail "SGC_PRELOAD_CHECK=warn: the program did not run"

SGC_STATS=1 LD_PRELOAD="$LIB" "$TMP/plain" >"$TMP/out" 2>"$TMP/err" || fail "plain program: exit $?: $(cat "$TMP/err")"
grep -q "ran 1" "$TMP/out" || fail "plain program did not run"
grep -q "warning\|fatal" "$TMP/err" && fail "plain program warned: $(cat "$TMP/err")"
grep -q "^sgc: 1 collections" "$TMP/err" || fail "plain program did not run on sgc: $(cat "$TMP/err")"
echo "[preload_mixed] ok: an import bound to bdwgc ($MISSING) stops start-up; warn mode runs; a clean program runs on sgc"
