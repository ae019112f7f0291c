#!/bin/sh
# The list heap per GC thread count, at 9defe8a (tries with 2 markers) and
# its parent e5f2dd1 (prevlib), and gcbench's mark time with 16 markers.
P=$(cd "$(dirname "$0")" && pwd)/prevlib
B=/tmp/wt-build
for M in 16 8; do
  echo "== list, 1 against $M GC threads, 9defe8a"
  python3 tools/analysis/trace_medians.py -n 7 -a SGC_MARKERS=1 -b SGC_MARKERS=$M $B $B bench-markshape-sgc -s list -t 1
  echo "== list, 1 against $M GC threads, e5f2dd1"
  python3 tools/analysis/trace_medians.py -n 7 -a LD_LIBRARY_PATH=$P -b LD_LIBRARY_PATH=$P -a SGC_MARKERS=1 -b SGC_MARKERS=$M $B $B bench-markshape-sgc -s list -t 1
done
echo "== gcbench -t 16, 16 GC threads, mark_ns summed: e5f2dd1 (A) against 9defe8a (B)"
SGC_MARKERS=16 bash tools/dev/ab.sh -n 7 -t -f mark_ns -a LD_LIBRARY_PATH=$P $B $B bench-gcbench-sgc -t 16
echo "== cube -t 16, 16 GC threads, mark_ns summed"
SGC_MARKERS=16 bash tools/dev/ab.sh -n 7 -t -f mark_ns -a LD_LIBRARY_PATH=$P $B $B bench-cube-sgc -t 16
