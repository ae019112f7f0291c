#!/bin/sh
# trace_file.sh LIBSGC COLLECTING_PROGRAM FORKING_PROGRAM
#
# SGC_TRACE in a tree of processes, as with sgc preloaded into a compiler
# that runs cc and ld: a process that never collects must leave the file
# alone (it is opened at a process's first collection; opening it at
# start-up truncated what an earlier process had written), and "%p" in
# the name gives each process, forked children included, a file of its
# own.  Every line written must be one JSON object, and the lines come in
# collection order (gc_no one more than the line before's).
set -u
LIB=${1:?usage: trace_file.sh LIBSGC COLLECTING_PROGRAM FORKING_PROGRAM}
COLLECTS=${2:?}
FORKS=${3:?}
TAG=trace_file
. "$(dirname "$0")/../lib/preload_common.sh"

check_json() {
  python3 - "$@" <<'PY' || fail "$1: not one JSON object per line, in collection order"
import json, sys
for path in sys.argv[1:]:
    last = None
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            assert "gc_no" in record and "pause_ns" in record
            assert last is None or record["gc_no"] == last + 1, (path, last, record["gc_no"])
            last = record["gc_no"]
PY
}

# A collecting program, then one that never collects (with sgc preloaded).
SGC_TRACE="$TMP/one.json" LD_PRELOAD="$LIB" sh -c "\"$COLLECTS\" >/dev/null && /bin/true" ||
  fail "the programs failed"
lines=$(wc -l <"$TMP/one.json" 2>/dev/null || echo 0)
[ "$lines" -gt 0 ] || fail "the trace is empty: a later process that never collected truncated it"
check_json "$TMP/one.json"
echo "[$TAG] $lines collections traced, kept through a later process"

# %p: the forking program's parent and children, one file each.
SGC_TRACE="$TMP/fork.%p.json" "$FORKS" >/dev/null || fail "$FORKS failed"
files=$(ls "$TMP"/fork.*.json 2>/dev/null | wc -l)
[ "$files" -ge 2 ] || fail "SGC_TRACE with %p: $files file(s), want one per collecting process"
ls "$TMP"/fork.%p.json >/dev/null 2>&1 && fail "SGC_TRACE: %p was not replaced"
check_json "$TMP"/fork.*.json
echo "[$TAG] %p: $files processes traced to files of their own"
echo "[$TAG] PASS"
