#!/bin/sh
# predict_list.sh PREDICT_LIST_PROGRAM
#
# The fast predictor on a list (docs/prediction.md, "The fast predictor"):
# collections alternating 2 and 1 GC threads (SGC_MARKERS_CYCLE) over a
# 200,000-node list, under the built-in profile.  Each record's
# predicted_mark_ns (a hindsight figure from its own totals) must stay
# within 3 times its mark_ns, the median over the collections after the
# first two.  Before, the first mark with 2 GC threads was predicted as
# wide and measured with its idle helper's time, and the width learnt
# then charged every line the whole latency: predictions 10-20 times
# the marks.  A busy machine slows the marks, which only lowers the
# ratio.  Exit 77 with fewer than 2 usable CPUs (no helper runs).
set -u
PROG=${1:?usage: predict_list.sh PREDICT_LIST_PROGRAM}
TAG=predict_list
. "$(dirname "$0")/../lib/test_common.sh"
[ "$(nproc)" -ge 2 ] || { echo "[$TAG] SKIP: fewer than 2 usable CPUs"; exit 77; }
env -u SGC_PREDICT_PROFILE SGC_MARKERS_CYCLE=2,1 SGC_TRACE="$TMP/trace" "$PROG" >"$TMP/out" 2>&1 ||
  fail "the list program: $(tail -3 "$TMP/out")"
python3 - "$TMP/trace" <<'PY' || fail "predictions far from the list's marks"
import json, statistics, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
ratios = [r["predicted_mark_ns"] / r["mark_ns"] for r in recs if r["gc_no"] > 2 and r["mark_ns"] > 0]
assert len(ratios) >= 10, len(ratios)
median = statistics.median(ratios)
print(f"predicted / measured, median over {len(ratios)} collections: {median:.2f}")
assert median < 3, [round(x, 2) for x in ratios]
PY
echo "ok [$TAG]"
