#!/bin/sh
# markers_choice.sh PREDICT_LIST_PROGRAM
#
# Who chooses each collection's GC threads (SGC_MARKERS, SGC_ADAPTIVE;
# docs/settings.md), on a 2,000-node list (32 KB live, 16 collections):
#   - by default the fast predictor does (SGC_MARKERS=auto): every record
#     has its choice in auto_markers, 1 to the CPUs, and marks with no
#     more; so does a number, its maximum;
#   - SGC_MARKERS=rule (and bdwgc's GC_MARKERS=rule) is the old rule: no
#     auto_markers, and one GC thread per 256 KiB live, so 1 on this heap;
#   - SGC_ADAPTIVE=0 pins the count: every collection marks with the CPUs
#     on the same heap (the rule's 1 is the rule's, not the heap's);
#   - SGC_MARKERS=rule with SGC_ADAPTIVE=0 warns and keeps the rule;
#   - SGC_MARKERS=1: auto has nothing to choose, and records 1.
# Before SGC_MARKERS=auto was the default, the default run recorded
# auto_markers 0 and SGC_MARKERS=rule was ignored with a warning.
set -u
PROG=${1:?usage: markers_choice.sh PREDICT_LIST_PROGRAM}
TAG=markers_choice
. "$(dirname "$0")/../lib/test_common.sh"
cpus=$(nproc)

# run NAME [VAR=VALUE...]: the list with a trace in $TMP/NAME; no warning
# unless NAME ends in _warns.
run() {
  name=$1
  shift
  env -u SGC_MARKERS -u GC_MARKERS -u SGC_ADAPTIVE -u SGC_MARKERS_CYCLE -u SGC_PREDICT_PROFILE \
    SGC_TRACE="$TMP/$name" "$@" "$PROG" 2000 >"$TMP/$name.out" 2>&1 ||
    fail "$name: $(tail -3 "$TMP/$name.out")"
  case $name in
    *_warns) ;;
    *) if grep -q "GC Warning: sgc:" "$TMP/$name.out"; then
         fail "$name warned: $(grep 'GC Warning: sgc:' "$TMP/$name.out")"
       fi ;;
  esac
}

# check NAME KIND MOST: every record of NAME's trace against KIND (auto,
# rule, fixed) with at most MOST GC threads.
check() {
  python3 - "$TMP/$1" "$2" "$3" <<'PY' || fail "$1: not what $2 chooses"
import json, sys
path, kind, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
recs = [json.loads(line) for line in open(path)]
assert len(recs) >= 16, f"only {len(recs)} collections"
for r in recs:
    assert r["marked_bytes"] < 256 << 10, ("the list is not tiny", r["marked_bytes"])
    if kind == "auto":
        assert 1 <= r["auto_markers"] <= most, (r["gc_no"], r["auto_markers"], most)
        assert r["markers"] <= r["auto_markers"], (r["gc_no"], r["markers"], r["auto_markers"])
    else:
        assert r["auto_markers"] == 0, (r["gc_no"], kind, r["auto_markers"])
        want = 1 if kind == "rule" else most
        assert r["markers"] == want, (r["gc_no"], kind, r["markers"], want)
PY
}

run default
check default auto "$cpus"
run auto SGC_MARKERS=auto
check auto auto "$cpus"
run two SGC_MARKERS=2
check two auto 2
run one SGC_MARKERS=1
check one auto 1
run rule SGC_MARKERS=rule
check rule rule "$cpus"
run rule_bdwgc GC_MARKERS=rule
check rule_bdwgc rule "$cpus"
run fixed SGC_ADAPTIVE=0
check fixed fixed "$cpus"
run rule_fixed_warns SGC_MARKERS=rule SGC_ADAPTIVE=0
grep -qF "GC Warning: sgc: ignoring SGC_ADAPTIVE=0: SGC_MARKERS=rule" "$TMP/rule_fixed_warns.out" ||
  fail "SGC_MARKERS=rule SGC_ADAPTIVE=0: no warning: $(head -3 "$TMP/rule_fixed_warns.out")"
check rule_fixed_warns rule "$cpus"
echo "[$TAG] ok ($cpus CPUs)"
