#!/bin/sh
# The benchmark runner end to end at tiny sizes: every program against every
# implementation this machine has, 1 and 2 threads.  bench/run.py exits
# non-zero when a run fails its self-check, crashes, or when a deterministic
# program's result hash differs between implementations or thread counts;
# then the report must exist and count every run as passed.
# Usage: bench_smoke.sh REPO BIN_DIR OUT_DIR
set -e
repo=$1 bin=$2 out=$3
py=/usr/bin/python3
[ -x "$py" ] || { echo "skip: no $py"; exit 77; }
impls=sgc,glibc
[ -x "$bin/bench-gcbench-bdwgc" ] && impls=$impls,bdwgc
for peer in jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4 mimalloc:libmimalloc.so.2; do
  if ldconfig -p 2>/dev/null | grep -q "${peer#*:} "; then impls=$impls,${peer%%:*}; fi
done
rm -rf "$out"
"$py" "$repo/bench/run.py" --smoke --impls "$impls" --bin-dir "$bin" --out "$out"
runs=$(tail -n +2 "$out/results.csv" | wc -l)
grep -q "^$runs of $runs runs passed" "$out/report.md" || {
  echo "report.md does not count $runs of $runs runs as passed" >&2; exit 1; }
echo "bench_smoke: $runs runs with $impls, all passed"
