#!/bin/sh
# crystal_preload.sh LIBSGC
#
# A compiler on bdwgc whose programs run fibers: Debian's Crystal links
# libgc.so.1, and so do the programs it builds.  Crystal moves
# GC_stackbottom to the running fiber's stack on every switch and pushes
# the other fibers' stacks from GC_set_push_other_roots.  Build
# tests/preload/crystal/fibers.cr with the compiler running on bdwgc and on
# LIBSGC preloaded in its place (the compiler allocates some 180 MB
# and forks its code generators; SGC_STATS=1 must show sgc collected);
# then run what sgc's compiler built with bdwgc, with sgc, in torture
# mode and with 4 GC threads (same_output), and what bdwgc's compiler
# built with sgc, and require the same output every time.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if crystal is not installed.
set -u
LIB=${1:?usage: crystal_preload.sh /path/to/libsgc.so}
TAG=crystal_preload
. "$(dirname "$0")/../lib/preload_common.sh"
CRYSTAL=$(find_program crystal) || exit 77
SRC="$(cd "$(dirname "$0")" && pwd)/crystal/fibers.cr"

watched "build with bdwgc" "$TMP/build.bdwgc" "$TMP/build.bdwgc" \
  CRYSTAL_CACHE_DIR="$TMP/cache.bdwgc" "$CRYSTAL" build "$SRC" -o "$TMP/bin.bdwgc" ||
  fail "build with bdwgc: exit $?: $(tail -3 "$TMP/build.bdwgc")"
watched "build with sgc" "$TMP/build.sgc" "$TMP/build.err" SGC_STATS=1 LD_PRELOAD="$LIB" \
  CRYSTAL_CACHE_DIR="$TMP/cache.sgc" "$CRYSTAL" build "$SRC" -o "$TMP/bin.sgc" ||
  fail "build with sgc: exit $?: $(grep -v '^sgc:' "$TMP/build.err" | tail -3)"
# The compiler's own summary (its children, cc among them, print theirs
# with no collection).
grep -q "^sgc: [1-9][0-9]* collections" "$TMP/build.err" ||
  fail "the compiler on sgc did not collect: $(head -3 "$TMP/build.err")"
echo "[$TAG] built with the compiler on bdwgc and on sgc"

same_output fibers 50 "$TMP/bin.sgc"
watched "bdwgc's build with sgc" "$TMP/other.out" "$TMP/other.err" LD_PRELOAD="$LIB" \
  "$TMP/bin.bdwgc" || fail "bdwgc's build with sgc: exit $?: $(tail -3 "$TMP/other.err")"
cmp -s "$TMP/fibers.bdwgc" "$TMP/other.out" || fail "bdwgc's build with sgc: output differs"
echo "[$TAG] PASS"
