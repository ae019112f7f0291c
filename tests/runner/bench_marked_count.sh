#!/bin/sh
# The benchmarks' count of marked objects (bench/bench_marked.h,
# BENCH_COUNT_MARKED=1), which the runner's mark-objects experiment divides
# by each collector's mark time: it must count what each collector itself
# says it marked.  Under sgc the walk's objects and bytes against the sum
# of the trace's marked_objects and marked_bytes; under bdwgc (where its
# benchmark builds exist) the walk's bytes against the sum of its
# GC_PRINT_STATS "In-use heap" figures.  Both within 0.5%: a walk at the
# wrong moment (before the marks are set, after they are cleared) or of
# the wrong objects misses by far more.
# Usage: bench_marked_count.sh BIN_DIR WORK_DIR
set -e
bin=$1 work=$2
py=/usr/bin/python3
[ -x "$py" ] || { echo "skip: no $py"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
args="-t 2 -n 4"
BENCH_COUNT_MARKED=1 SGC_MARKERS=1 SGC_TRACE="$work/trace.jsonl" \
  "$bin/bench-cky-sgc" $args > "$work/sgc.out"
"$py" - "$work/sgc.out" "$work/trace.jsonl" <<'PY'
import json, sys
res = dict(kv.split("=", 1) for kv in open(sys.argv[1]).read().split("RESULT", 1)[1].split())
objects, nbytes = int(res["marked_objects_enum"]), int(res["marked_bytes_enum"])
recs = [json.loads(l) for l in open(sys.argv[2])]
t_obj = sum(r["marked_objects"] for r in recs)
t_bytes = sum(r["marked_bytes"] for r in recs)
print(f"sgc: {len(recs)} collections; walk {objects} objects {nbytes} bytes; trace {t_obj} objects {t_bytes} bytes")
if not recs or not t_obj:
    sys.exit("sgc: no collection traced")
for name, a, b in (("objects", objects, t_obj), ("bytes", nbytes, t_bytes)):
    if abs(a - b) > 0.005 * b:
        sys.exit(f"sgc: the walk's {name} ({a}) differ from the trace's ({b}) by over 0.5%")
PY
if [ -x "$bin/bench-cky-bdwgc" ]; then
  BENCH_COUNT_MARKED=1 GC_MARKERS=1 GC_PRINT_STATS=1 \
    "$bin/bench-cky-bdwgc" $args > "$work/bdwgc.out" 2> "$work/bdwgc.err"
  "$py" - "$work/bdwgc.out" "$work/bdwgc.err" <<'PY'
import re, sys
res = dict(kv.split("=", 1) for kv in open(sys.argv[1]).read().split("RESULT", 1)[1].split())
objects, nbytes = int(res["marked_objects_enum"]), int(res["marked_bytes_enum"])
inuse = [(int(m.group(1)) + int(m.group(2))) * 1024
         for m in re.finditer(r"In-use heap: \d+% \((\d+) KiB pointers \+ (\d+) KiB other\)",
                              open(sys.argv[2]).read())]
print(f"bdwgc: {len(inuse)} collections; walk {objects} objects {nbytes} bytes; In-use heap {sum(inuse)} bytes")
if not inuse or not objects:
    sys.exit("bdwgc: no collection logged")
# In-use heap is logged in whole KiB per kind: up to 2 KiB a collection short.
if abs(nbytes - sum(inuse)) > 0.005 * sum(inuse) + 2048 * len(inuse):
    sys.exit(f"bdwgc: the walk's bytes ({nbytes}) differ from In-use heap ({sum(inuse)}) by over 0.5%")
PY
else
  echo "bdwgc's benchmark builds absent: sgc checked alone"
fi
