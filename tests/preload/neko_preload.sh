#!/bin/sh
# neko_preload.sh LIBSGC
#
# The Neko virtual machine (Debian's neko: libneko.so.2 links libgc.so.1,
# and its std library's threads register with it).  Compile
# tests/preload/neko/*.neko with nekoc and run them with bdwgc and with
# LIBSGC preloaded in its place, also in torture mode and with 4 GC
# threads, then the threaded program again in concurrent mode; every
# output must be bdwgc's (same_output in preload_common.sh), and bdwgc's
# must be the sums the programs compute.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if neko is not installed.
set -u
LIB=${1:?usage: neko_preload.sh /path/to/libsgc.so}
TAG=neko_preload
. "$(dirname "$0")/../lib/preload_common.sh"
NEKO=$(find_program neko) || exit 77
NEKOC=$(find_program nekoc) || exit 77
for name in churn threads; do
  cp "$(dirname "$0")/neko/$name.neko" "$TMP/" && (cd "$TMP" && "$NEKOC" "$name.neko" >/dev/null) ||
    fail "nekoc could not compile $name.neko"
done
cd "$TMP" || fail "no $TMP"
same_output churn 100 "$NEKO" churn
[ "$(cat churn.bdwgc)" = "971525 505050 1000 k2999/758" ] ||
  fail "churn computed something else with bdwgc: $(head -3 churn.bdwgc)"
same_output threads 100 "$NEKO" threads
[ "$(cat threads.bdwgc)" = "1395516 1395516 1395516 1395516" ] ||
  fail "threads computed something else with bdwgc: $(head -3 threads.bdwgc)"
watched "threads in concurrent mode" threads.concurrent threads.err \
  SGC_MODE=concurrent SGC_TORTURE=100 LD_PRELOAD="$LIB" "$NEKO" threads ||
  fail "threads in concurrent mode: exit $?: $(tail -3 threads.err)"
cmp -s threads.bdwgc threads.concurrent || fail "threads in concurrent mode: output differs"
echo "[$TAG] PASS"
