#!/bin/sh
# leak_plain_preload.sh CC LIBSGC
#
# bdwgc's leak finder on a program built for libgc:
# tests/blackbox/leak_plain.c, built against bdwgc's gc.h and -lgc, run
# with GC_FIND_LEAK set (its own GC_set_find_leak call left out) and
# libsgc preloaded in libgc's place.
# sgc must report every GC_malloc object the program dropped without
# GC_free, once, in bdwgc's words ("object at ADDRESS of appr. SIZE bytes
# (composite|atomic)"), and nothing freed or kept.  Also in torture mode
# and with 4 GC threads.  The same program on bdwgc itself is run for
# comparison and only reported: bdwgc, conservative too, sometimes keeps
# one of the dropped objects.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if bdwgc's development files are missing.
set -u
CC=${1:?usage: leak_plain_preload.sh CC /path/to/libsgc.so}
LIB=${2:?usage: leak_plain_preload.sh CC /path/to/libsgc.so}
TAG=leak_plain_preload
. "$(dirname "$0")/../lib/preload_common.sh"
SRC="$(dirname "$0")/../blackbox/leak_plain.c"

if ! "$CC" -O2 "$SRC" -o "$TMP/leak_plain" -lgc -lpthread 2>"$TMP/cc.err"; then
  echo "[$TAG] SKIP: cannot build against bdwgc: $(head -1 "$TMP/cc.err")"
  exit 77
fi

watched "bdwgc" "$TMP/bdwgc.out" "$TMP/bdwgc.out" LEAK_PLAIN_ENV_ONLY=1 GC_FIND_LEAK=1 \
  "$TMP/leak_plain"
echo "[$TAG] bdwgc: $(tail -1 "$TMP/bdwgc.out")"

for setting in "X=1" "SGC_TORTURE=50" "SGC_MARKERS=4 SGC_ADAPTIVE=0"; do
  # shellcheck disable=SC2086
  rm -f "$TMP/trace"
  watched "sgc ($setting)" "$TMP/sgc.out" "$TMP/sgc.out" $setting SGC_TRACE="$TMP/trace" \
    LEAK_PLAIN_ENV_ONLY=1 GC_FIND_LEAK=1 LD_PRELOAD="$LIB" "$TMP/leak_plain" ||
    fail "sgc preloaded ($setting): exit $?: $(tail -5 "$TMP/sgc.out")"
  # The program sends its stderr to a file of its own: sgc's trace shows it ran.
  [ -s "$TMP/trace" ] || fail "sgc preloaded ($setting) did not collect: $(tail -3 "$TMP/sgc.out")"
  echo "[$TAG] sgc ($setting): $(grep '^leak_plain:' "$TMP/sgc.out")"
done
echo "[$TAG] PASS: leaks of GC_malloc objects found with sgc preloaded for libgc"
