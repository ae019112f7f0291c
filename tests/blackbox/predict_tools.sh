#!/bin/sh
# predict_tools.sh STRESS_PROGRAM SGC_PREDICT SGC_CALIBRATE SOURCE_DIR
#
# The prediction end to end (docs/prediction.md), on a many-threaded
# program: SGC_MARKERS=auto records a choice and a prediction for every
# collection, never more markers than it chose nor than the CPUs, and
# one alone when GC threads would join after the mark is over;
# SGC_SNAPSHOT writes as many snapshots as SGC_SNAPSHOT_LIMIT allows,
# which sgc-predict reads under the shipped profiles and a quick
# calibration of this host.  No timing is checked.
set -u
PROG=${1:?usage: predict_tools.sh STRESS_PROGRAM SGC_PREDICT SGC_CALIBRATE SOURCE_DIR}
PREDICT=$2
CALIBRATE=$3
SRC=$4
TAG=predict_tools
. "$(dirname "$0")/../lib/test_common.sh"

env SGC_MARKERS=auto GC_FREE_SPACE_DIVISOR=40 SGC_TRACE="$TMP/trace" "$PROG" -r 10 -t 3 \
  >"$TMP/out" 2>&1 || fail "SGC_MARKERS=auto: $(tail -3 "$TMP/out")"
python3 - "$TMP/trace" "$(nproc)" <<'PY' || fail "SGC_MARKERS=auto's records"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
assert recs, "no collections"
for r in recs:
    assert 1 <= r["auto_markers"] <= int(sys.argv[2]), r
    assert r["markers"] <= r["auto_markers"], r
    assert r["predicted_mark_ns"] > 0, r
    assert r["snapshot_ns"] == 0, r
PY

# GC threads that would join a mark only after it is over (join_ns and
# prewake_join_ns 1 s: sleeping or pre-woken) gain it nothing, misses and all: auto marks alone from the first
# collection (the model once let the misses be shared from the mark's
# start, and took every CPU for such heaps).  Misses dominate this
# profile, so it is the misses' share that decides.
printf 'join_ns 1e9\nprewake_join_ns 1e9\nmarker_ns 1\nread_miss_ns 200\nread_overlap_ns 0\nmarker_miss_ns 0\nobject_ns 1\nword_ns 0.1\n' \
  >"$TMP/late.profile"
env SGC_MARKERS=auto SGC_PREDICT_PROFILE="$TMP/late.profile" GC_FREE_SPACE_DIVISOR=40 \
  SGC_TRACE="$TMP/trace_late" "$PROG" -r 4 -t 3 >"$TMP/out" 2>&1 ||
  fail "SGC_MARKERS=auto, late joins: $(tail -3 "$TMP/out")"
python3 - "$TMP/trace_late" <<'PY' || fail "SGC_MARKERS=auto took GC threads that join after the mark"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
assert recs, "no collections"
assert all(r["auto_markers"] == 1 for r in recs), [r["auto_markers"] for r in recs]
PY

mkdir "$TMP/snap"
env SGC_SNAPSHOT="$TMP/snap" SGC_SNAPSHOT_LIMIT=2 GC_FREE_SPACE_DIVISOR=40 SGC_TRACE="$TMP/trace2" \
  "$PROG" -r 6 -t 3 >"$TMP/out" 2>&1 || fail "SGC_SNAPSHOT: $(tail -3 "$TMP/out")"
count=$(ls "$TMP/snap" | grep -c '\.snap$')
[ "$count" -eq 2 ] || fail "SGC_SNAPSHOT_LIMIT=2 wrote $count snapshots"
"$CALIBRATE" -q -o "$TMP/host.profile" >"$TMP/out" 2>&1 || fail "sgc-calibrate: $(tail -3 "$TMP/out")"
for snap in "$TMP"/snap/*.snap; do
  for profile in "$SRC/tools/predict/profiles/e10k.profile" "$SRC/tools/predict/profiles/o2k.profile" \
                 "$TMP/host.profile"; do
    "$PREDICT" -j -m 128 "$snap" "$profile" >"$TMP/json" 2>"$TMP/err" ||
      fail "sgc-predict $snap $profile: $(cat "$TMP/err")"
    python3 - "$TMP/json" <<'PY' || fail "sgc-predict's output for $snap under $profile"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["objects"] > 0 and r["t1_ns"] > 0 and r["tinf_ns"] > 0 and r["misses"] > 0, r
pts = r["points"]
assert pts[0]["p"] == 1 and abs(pts[0]["speedup"] - 1) < 1e-9, pts[0]
assert pts[-1]["p"] == 128 and all(p["speedup"] > 0 for p in pts), pts[-1]
names = {"work", "critical path", "joining", "steals", "misses", "extra misses", "contention"}
assert all(p["limit"] in names for p in pts), pts
assert r["limit"] in names | {"nothing"}, r["limit"]
PY
  done
done
# The NUMA forecast: all of the heap on node 0 of 2 is slower at 8
# markers than the same heap interleaved, and BMB never makes it slower.
o2k="$SRC/tools/predict/profiles/o2k.profile"
for args in "-N 2 -V 1,0" "-N 2 -V 1,0 -B" "-N 2" "-N 2 -B"; do
  # shellcheck disable=SC2086 # ARGS are several options
  "$PREDICT" -j -p 8 $args "$snap" "$o2k" >"$TMP/numa.json" 2>"$TMP/err" ||
    fail "sgc-predict $args: $(cat "$TMP/err")"
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["points"][0]["mark_ns"])' \
    "$TMP/numa.json" >>"$TMP/numa.ns"
done
python3 - "$TMP/numa.ns" <<'PY' || fail "NUMA forecast: $(tr '\n' ' ' <"$TMP/numa.ns")"
import sys
one, one_bmb, even, even_bmb = (float(x) for x in open(sys.argv[1]))
assert even < one and one_bmb <= one and even_bmb <= even, (one, one_bmb, even, even_bmb)
PY
"$PREDICT" -N 2 -V 1,0,0 "$snap" "$o2k" >/dev/null 2>&1 && fail "sgc-predict took 3 shares for 2 nodes"
"$PREDICT" "$TMP/out" "$TMP/host.profile" >"$TMP/bad" 2>&1 && fail "sgc-predict took a text file"
grep -q "not an sgc heap snapshot" "$TMP/bad" || fail "no clear message: $(cat "$TMP/bad")"
echo "[$TAG] ok"
