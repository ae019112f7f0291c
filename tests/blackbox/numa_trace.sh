#!/bin/sh
# numa_trace.sh STRESS_PROGRAM
#
# The NUMA statistics as a user reads them (docs/numa.md): under
# SGC_NUMA_FAKE=2 with local placement and BMB, every SGC_TRACE line has a
# "numa" object (2 nodes, scanned bytes per node adding up, local bytes
# no more than them, remote ratio and imbalance in range, pages per node)
# and every GC thread its node and local share; the SGC_STATS summary has
# its numa line with both nodes' mark bytes placed.  Without fake nodes
# (this machine has one) neither appears.
set -u
PROG=${1:?usage: numa_trace.sh STRESS_PROGRAM}
TAG=numa_trace
. "$(dirname "$0")/../lib/test_common.sh"

env SGC_NUMA_FAKE=2 SGC_NUMA_PLACEMENT=local SGC_BMB=1 SGC_MARKERS=2 SGC_ADAPTIVE=0 \
  SGC_STATS=1 SGC_TRACE="$TMP/fake.json" "$PROG" -r 4 -t 2 >"$TMP/out" 2>&1 ||
  fail "the run under fake nodes failed: $(tail -3 "$TMP/out")"
grep -q "^sgc: numa: 2 nodes (fake), placement local, BMB on" "$TMP/out" ||
  fail "no numa line in the SGC_STATS summary: $(grep '^sgc:' "$TMP/out" | head -5)"
python3 - "$TMP/fake.json" <<'PY' || fail "the trace's numa fields are wrong"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
assert recs, "no collections"
for r in recs:
    n = r["numa"]
    assert n["nodes"] == 2 and n["fake"] and n["placement"] == "local" and n["bmb"], n
    assert len(n["scanned_bytes"]) == 2 and len(n["pages_used"]) == 2, n
    assert 0 <= n["local_scanned_bytes"] <= sum(n["scanned_bytes"]), n
    assert 0 <= n["remote_ratio"] <= 1 and 0 <= n["imbalance"] <= 1.0001, n
    assert sum(n["pages_used"]) > 0, n
    threads = sum(m["scanned_bytes"] for m in r["mark_threads"])
    assert threads == sum(n["scanned_bytes"]), (threads, n)
    for m in r["mark_threads"]:
        assert m["node"] in (0, 1) and 0 <= m["local_share"] <= 1, m
assert any(sum(r["numa"]["scanned_bytes"]) for r in recs), "nothing scanned in any collection"
PY

env SGC_STATS=1 SGC_TRACE="$TMP/one.json" "$PROG" -r 2 -t 2 >"$TMP/out" 2>&1 ||
  fail "the run on one node failed: $(tail -3 "$TMP/out")"
grep -q "^sgc: numa:" "$TMP/out" && fail "a numa line on one node"
grep -q '"numa"' "$TMP/one.json" && fail "a numa object in the trace on one node"
echo "[$TAG] PASS"
