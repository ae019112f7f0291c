#!/bin/sh
# goo_preload.sh LIBSGC
#
# GOO's interpreter (Debian's goo: g2c links libgc.so.1) writes one byte
# past the end of some GC_malloc objects, which bdwgc's padding absorbs;
# unpadded, its start-up crashes (issue 59).  Run a few expressions and
# GOO's own test suite with bdwgc and with LIBSGC preloaded in its place,
# also in torture mode and with 4 GC threads, and require identical output;
# SGC_STATS=1 must show that sgc collected (same_output in
# preload_common.sh).
#
# Exit 77 (ctest SKIP_RETURN_CODE) if goo is not installed.
set -u
LIB=${1:?usage: goo_preload.sh /path/to/libsgc.so}
TAG=goo_preload
. "$(dirname "$0")/../lib/preload_common.sh"
GOO=$(find_program goo) || exit 77

cat >"$TMP/session.goo" <<'GOO'
(+ 1 2)
(df fib (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(fib 20)
(dv v (fab <vec> 5000))
(len v)
(cat "garbage " "collected " "strings")
(use tests)
(run-all-tests)
GOO
# goo reads the session on standard input; same_output's runs have none.
same_output session 100 sh -c "exec \"$GOO\" <\"$TMP/session.goo\""
grep -q "goo/user 0=> 6765" "$TMP/session.bdwgc" || fail "the session did not run: $(head -5 "$TMP/session.bdwgc")"
grep -q "Tautology completed" "$TMP/session.bdwgc" ||
  fail "goo's test suite did not run: $(tail -5 "$TMP/session.bdwgc")"
echo "[$TAG] PASS"
