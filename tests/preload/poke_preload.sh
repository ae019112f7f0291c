#!/bin/sh
# poke_preload.sh LIBSGC
#
# GNU poke's compiler and virtual machine run on bdwgc (Debian's poke
# links libpoke.so.0, which links libgc.so.1).  Run tests/preload/poke/churn.pk
# (strings, arrays, structs, closures; 300 values kept through the
# churn) with bdwgc and with LIBSGC preloaded in its place, also in
# torture mode and with 4 GC threads, and require identical output;
# SGC_STATS=1 must show that sgc collected (same_output in
# preload_common.sh).
#
# Exit 77 (ctest SKIP_RETURN_CODE) if poke is not installed.
set -u
LIB=${1:?usage: poke_preload.sh /path/to/libsgc.so}
TAG=poke_preload
. "$(dirname "$0")/../lib/preload_common.sh"
POKE=$(find_program poke) || exit 77
same_output churn 50 "$POKE" -q --quiet -L "$(cd "$(dirname "$0")" && pwd)/poke/churn.pk"
echo "[$TAG] PASS"
