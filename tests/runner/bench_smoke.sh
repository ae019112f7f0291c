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
mkdir -p "$(dirname "$out")"
# Relative --out and --bin-dir, from another directory: the runs execute in
# their logs folder, and the runner must still find the binaries and give
# sgc a trace file it can open.
parent=$(cd "$(dirname "$out")" && pwd)
(cd "$parent" && "$py" "$repo/bench/run.py" --smoke --impls "$impls" \
   --bin-dir "$(realpath --relative-to="$parent" "$bin")" --out "$(basename "$out")")
runs=$(tail -n +2 "$out/results.csv" | wc -l)
grep -q "^$runs of $runs runs passed" "$out/report.md" || {
  echo "report.md does not count $runs of $runs runs as passed" >&2; exit 1; }
# Every sgc gcbench run collects at these sizes: its trace must have been
# read (a trace path the program could not open leaves the count empty).
"$py" - "$out/results.csv" <<'PY' || exit 1
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["impl"] == "sgc" and r["program"] == "gcbench"]
bad = [r["log"] for r in rows if not r["collections"] or not r["gc_s"]]
if not rows or bad:
    sys.exit(f"sgc gcbench runs without trace statistics: {bad or 'no runs'}")
# alloc's mops_p10 takes each thread's 10th-percentile round: with the
# smoke's 3 rounds its fastest, no slower than its mean round, and the
# rounds lie within the timed part, so mops_p10 cannot be below mops.
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["program"].startswith("alloc")]
bad = [r["log"] for r in rows
       if not r["mops_p10"] or float(r["mops_p10"]) < float(r["mops"]) * 0.999]
if not rows or bad:
    sys.exit(f"alloc runs with no mops_p10 or one below mops: {bad or 'no runs'}")
PY
echo "bench_smoke: $runs runs with $impls, all passed"
