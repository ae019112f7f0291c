#!/bin/sh
# nix_preload.sh LIBSGC
#
# Nix's expression evaluator runs on bdwgc (Debian's nix-bin links
# libgc.so.1: GC_malloc_many, uncollectable objects, its own roots with
# GC_add_roots, no shared-library data roots).  Evaluate bench/nix/eval.nix
# (at a tenth of its size)
# strictly to JSON with bdwgc and with LIBSGC preloaded in its place,
# also in torture mode and with 4 GC threads, and require identical
# output; SGC_STATS=1 must show that sgc collected (same_output in
# preload_common.sh).  GC_INITIAL_HEAP_SIZE keeps the heap small, or Nix
# would first grow it to hundreds of megabytes and never collect.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if nix-instantiate is not installed.
set -u
LIB=${1:?usage: nix_preload.sh /path/to/libsgc.so}
TAG=nix_preload
. "$(dirname "$0")/../lib/preload_common.sh"
NIX=$(find_program nix-instantiate) || exit 77
SRC="$(cd "$(dirname "$0")/../.." && pwd)/bench/nix/eval.nix"
mkdir -p "$TMP/store" "$TMP/home"
# (NIX_CONFIG: no build users, which a machine without Nix's daemon
# lacks and would warn about on standard error.)
same_output eval 50 GC_INITIAL_HEAP_SIZE=1000000 HOME="$TMP/home" XDG_CACHE_HOME="$TMP/home" \
  NIX_CONFIG="build-users-group =" "$NIX" --eval --strict --json --store "$TMP/store" \
  --arg n 20000 "$SRC"
echo "[$TAG] PASS"
