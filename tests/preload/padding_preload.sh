#!/bin/sh
# padding_preload.sh CC LIBSGC SGC_INCLUDE
#
# A program built for libgc may rely on bdwgc's byte of padding past every
# object (goo writes it).  tests/preload/padding/past_end.c, built
# against bdwgc's gc.h and -lgc, writes one byte past objects of every
# size-class boundary and checks their neighbours.  Requires, with LIBSGC
# standing in for libgc: the neighbours intact when preloaded (also with
# 4 GC threads and in torture mode) and when loaded under libgc's name;
# GC_size, GC_realloc and the padding of uncollectable, typed and
# GC_generic_malloc_many objects as bdwgc answers them, and none without
# interior pointers (GC_set_all_interior_pointers(0)); SGC_EXTRA_BYTES=0
# still unpadded (the explicit setting wins), and a program linked with
# -lsgc unpadded by default.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if bdwgc's development files are missing.
set -u
CC=${1:?usage: padding_preload.sh CC /path/to/libsgc.so SGC_INCLUDE}
LIB=${2:?usage: padding_preload.sh CC /path/to/libsgc.so SGC_INCLUDE}
INCLUDE=${3:?usage: padding_preload.sh CC /path/to/libsgc.so SGC_INCLUDE}
TAG=padding_preload
. "$(dirname "$0")/../lib/preload_common.sh"
SRC="$(dirname "$0")/padding/past_end.c"

if ! "$CC" -O2 "$SRC" -o "$TMP/past_end" -lgc 2>"$TMP/cc.err"; then
  echo "[$TAG] SKIP: cannot build against bdwgc: $(head -1 "$TMP/cc.err")"
  exit 77
fi
LIBDIR=$(dirname "$LIB")
"$CC" -O2 -I"$INCLUDE" "$SRC" -o "$TMP/past_end_sgc" -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lsgc ||
  fail "cannot build against sgc"

# run LABEL OUT COMMAND...: COMMAND's output in OUT (stderr in OUT.err).
run() {
  label=$1 out=$2
  shift 2
  watched "$label" "$out" "$out.err" "$@" || fail "$label: exit $?: $(cat "$out" "$out.err" | tail -3)"
}

run "poke with bdwgc" "$TMP/poke.bdwgc" "$TMP/past_end" poke

for setting in "SGC_MARKERS=4 SGC_ADAPTIVE=0" SGC_TORTURE=3 SGC_STATS=1; do
  # shellcheck disable=SC2086
  run "poke with sgc preloaded ($setting)" "$TMP/poke.sgc" $setting LD_PRELOAD="$LIB" "$TMP/past_end" poke
done
grep -q "^sgc: [1-9][0-9]* collections" "$TMP/poke.sgc.err" ||
  fail "poke did not run on sgc: $(head -3 "$TMP/poke.sgc.err")"
for mode in sizes sizes-no-interior; do
  run "$mode with bdwgc" "$TMP/$mode.bdwgc" "$TMP/past_end" $mode
  run "$mode with sgc preloaded" "$TMP/$mode.sgc" LD_PRELOAD="$LIB" "$TMP/past_end" $mode
  cmp -s "$TMP/$mode.bdwgc" "$TMP/$mode.sgc" ||
    fail "$mode: GC_size differs from bdwgc's: $(diff "$TMP/$mode.bdwgc" "$TMP/$mode.sgc" | head -8)"
done
grep -qx "GC_malloc(16): 16" "$TMP/sizes-no-interior.bdwgc" ||
  fail "bdwgc pads without interior pointers: $(head -5 "$TMP/sizes-no-interior.bdwgc")"

# Under libgc's name (a copy of LIBSGC found first as libgc.so.1).
mkdir "$TMP/as_libgc"
cp "$LIB" "$TMP/as_libgc/libgc.so.1"
run "poke with sgc as libgc.so.1" "$TMP/poke.named" SGC_STATS=1 LD_LIBRARY_PATH="$TMP/as_libgc" \
  "$TMP/past_end" poke
grep -q "^sgc: [1-9][0-9]* collections" "$TMP/poke.named.err" ||
  fail "sgc as libgc.so.1 did not collect: $(head -3 "$TMP/poke.named.err")"
run "sizes with sgc as libgc.so.1" "$TMP/sizes.named" LD_LIBRARY_PATH="$TMP/as_libgc" "$TMP/past_end" sizes
cmp -s "$TMP/sizes.bdwgc" "$TMP/sizes.named" ||
  fail "sizes with sgc as libgc.so.1 differ from bdwgc's: $(diff "$TMP/sizes.bdwgc" "$TMP/sizes.named" | head -8)"

# The explicit setting wins: unpadded, the write lands on a neighbour.
SGC_EXTRA_BYTES=0 LD_PRELOAD="$LIB" "$TMP/past_end" poke >"$TMP/poke.zero" 2>&1 &&
  fail "SGC_EXTRA_BYTES=0: no neighbour damaged: $(cat "$TMP/poke.zero")"
SGC_EXTRA_BYTES=0 LD_PRELOAD="$LIB" "$TMP/past_end" sizes >"$TMP/sizes.zero" 2>&1 ||
  fail "sizes with SGC_EXTRA_BYTES=0: exit $?"
grep -qx "GC_malloc(16): 16" "$TMP/sizes.zero" || fail "SGC_EXTRA_BYTES=0 padded: $(head -5 "$TMP/sizes.zero")"
# Linked with -lsgc: unpadded by default.
run "sizes linked with -lsgc" "$TMP/sizes.linked" "$TMP/past_end_sgc" sizes
grep -qx "GC_malloc(16): 16" "$TMP/sizes.linked" ||
  fail "a program linked with -lsgc is padded: $(head -5 "$TMP/sizes.linked")"
echo "[$TAG] PASS: padded as bdwgc when preloaded and as libgc.so.1; unpadded with -lsgc and SGC_EXTRA_BYTES=0"
