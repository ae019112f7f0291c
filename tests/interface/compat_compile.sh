#!/bin/sh
# compat_compile.sh CC [INCLUDE_DIR LIBRARY_FILE]
#
# Builds tests/interface/compat_compile.c, unchanged, twice (#include <gc.h>
# and #include <gc/gc.h>) and runs both.  With INCLUDE_DIR and LIBRARY_FILE
# it builds against that gc.h and library (sgc: include/ and libsgc.so);
# without them against the system's bdwgc (-lgc).  Compilation happens at
# test time so that an incompatible header fails this test only.
set -u
CC=${1:-cc}
INC=${2:-}
LIB=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/compat.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ -n "$INC" ]; then
    CFLAGS="-I$INC"
    LDFLAGS="$LIB -Wl,-rpath,$(dirname "$LIB") -lpthread"
else
    CFLAGS=""
    LDFLAGS="-lgc -lpthread"
fi

status=0
for variant in plain subdir; do
    def=""
    [ "$variant" = subdir ] && def="-DCOMPAT_GC_SUBDIR"
    exe="$TMP/compat_$variant"
    # -Werror=implicit-function-declaration: a function missing from gc.h
    # must fail here, not link by accident.
    if ! $CC -std=gnu11 -O2 -Wall -Werror=implicit-function-declaration \
        $def $CFLAGS "$HERE/compat_compile.c" -o "$exe" $LDFLAGS \
        >"$TMP/cc.log" 2>&1; then
        echo "FAIL [compat_compile] $variant variant does not compile:"
        cat "$TMP/cc.log"
        status=1
        continue
    fi
    if [ -s "$TMP/cc.log" ]; then
        echo "[compat_compile] $variant variant compiler output:"
        cat "$TMP/cc.log"
    fi
    if ! "$exe"; then
        echo "FAIL [compat_compile] $variant variant failed at run time"
        status=1
    fi
done
# sgc's headers, every one, under strict ISO C and C++ (a program built
# with -std=c11 has no POSIX sigset_t; gc.h once failed there).
if [ -n "$INC" ]; then
    hdrs="gc.h gc/gc.h gc/gc_mark.h gc/gc_typed.h gc/gc_gcj.h gc/gc_inline.h gc/gc_disclaim.h
          gc/javaxfc.h gc/gc_version.h gc/gc_tiny_fl.h gc/gc_pthread_redirects.h gc/gc_config_macros.h gc/gc_backptr.h"
    for h in $hdrs; do echo "#include <$h>"; done >"$TMP/all.h"
    printf '#include "all.h"\nint main(void) { return 0; }\n' >"$TMP/strict.c"
    printf '#include "all.h"\n#include <gc_cpp.h>\n#include <gc_allocator.h>\nint main() { return 0; }\n' >"$TMP/strict.cc"
    for std in c99 c11 c17; do
        if ! ${CC} -std=$std -Wall -Wextra -pedantic -Werror -I"$INC" -c "$TMP/strict.c" -o "$TMP/strict.o" >"$TMP/strict.log" 2>&1; then
            echo "FAIL [compat_compile] sgc's headers under -std=$std -pedantic:"
            head -20 "$TMP/strict.log"
            status=1
        fi
    done
    CXX=${CXX:-c++}
    for std in c++98 c++11 c++17 c++20; do
        if ! $CXX -std=$std -Wall -Wextra -pedantic -Werror -I"$INC" -c "$TMP/strict.cc" -o "$TMP/strict.o" >"$TMP/strict.log" 2>&1; then
            echo "FAIL [compat_compile] sgc's headers under -std=$std -pedantic:"
            head -20 "$TMP/strict.log"
            status=1
        fi
    done
fi
exit $status
