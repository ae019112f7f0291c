#!/bin/sh
# Which GC_ functions a program or library imports that sgc does not
# provide: the names sgc's start-up check (api/preload_check.c) would stop
# on when it is preloaded in place of libgc.so.1.  Exit status 1 if any.
#
#   tools/analysis/check_imports.sh LIBSGC ELF_FILE...
#   tools/analysis/check_imports.sh build/src/libsgc.so /usr/bin/w3m
set -u
LIB=${1:?usage: check_imports.sh LIBSGC ELF_FILE...}
shift
[ $# -gt 0 ] || { echo "usage: check_imports.sh LIBSGC ELF_FILE..." >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/imports.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
nm -D --defined-only "$LIB" | awk '$3 ~ /^GC_/ {print $3}' | sort -u >"$TMP/provided"
status=0
for f in "$@"; do
  nm -D --undefined-only "$f" 2>/dev/null | awk '$2 ~ /^GC_/ {print $2}' | sort -u >"$TMP/imported"
  missing=$(comm -23 "$TMP/imported" "$TMP/provided" | tr '\n' ' ')
  echo "$f: $(wc -l <"$TMP/imported") GC_ imports; not in sgc: ${missing:-none}"
  [ -n "$missing" ] && status=1
done
exit $status
