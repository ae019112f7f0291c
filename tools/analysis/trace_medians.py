#!/usr/bin/env python3
"""Per-collection medians of SGC_TRACE fields for two builds, interleaved.

Runs PROGRAM from BUILD_A and BUILD_B in turn RUNS times with SGC_TRACE
and prints, for each build, the median over runs of: collections, the
per-collection medians of prestop_ns, stop_ns, mark_ns and pause_ns (in
us; the first collection is left out, it marks a heap still being built),
and, over concurrent cycles only (SGC_MODE=concurrent), of a cycle's
start pause and its finish's rescan of written pages (start_pause_ns,
finish_rescan_ns; nan where no cycle ran),
the run's summed pauses and its wall time; then the paired B/A medians of
wall time and of summed pauses.  Where tools/dev/ab.sh sums one field over a
run (what a run pays in all), this shows what a typical collection costs,
which a change in the number of collections does not blur.

  tools/analysis/trace_medians.py [-n RUNS] [-a VAR=V] [-b VAR=V] BUILD_A BUILD_B PROGRAM [ARGS...]
  SGC_MARKERS=2 tools/analysis/trace_medians.py -n 9 /tmp/base build bench-gcbench-sgc -t 2

-a and -b (repeatable) set a variable for one side only, so one build
can be compared with itself under two settings:
  tools/analysis/trace_medians.py -a SGC_MARKERS=1 -b SGC_MARKERS=16 B B bench-markshape-sgc -s tiny -c 200
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

FIELDS = ("prestop_ns", "stop_ns", "mark_ns", "pause_ns")
CYCLE_FIELDS = ("start_pause_ns", "finish_rescan_ns")  # concurrent records only


def one_run(build, program, args, trace, extra_env):
    env = dict(os.environ, SGC_TRACE=trace, **extra_env)
    out = subprocess.run([os.path.join(build, "bench", program)] + args, env=env,
                         capture_output=True, text=True, check=True).stdout
    wall = next(float(tok[7:]) for tok in out.split() if tok.startswith("wall_s="))
    with open(trace) as f:
        recs = [json.loads(line) for line in f][1:]
    os.unlink(trace)
    row = {"collections": len(recs), "wall_s": wall,
           "pause_sum_ms": sum(r["pause_ns"] for r in recs) / 1e6}
    cycles = [r for r in recs if r.get("concurrent")]
    for k, pool in [(k, recs) for k in FIELDS] + [(k, cycles) for k in CYCLE_FIELDS]:
        vals = [r[k] for r in pool if k in r]
        row[k] = statistics.median(vals) / 1e3 if vals else float("nan")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--runs", type=int, default=9)
    ap.add_argument("-a", dest="env_a", action="append", default=[], metavar="VAR=V",
                    help="a variable for side A only")
    ap.add_argument("-b", dest="env_b", action="append", default=[], metavar="VAR=V",
                    help="a variable for side B only")
    ap.add_argument("build_a")
    ap.add_argument("build_b")
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    sides = [(a.build_a, dict(v.split("=", 1) for v in a.env_a)),
             (a.build_b, dict(v.split("=", 1) for v in a.env_b))]
    runs = [[], []]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace")
        for _ in range(a.runs):
            for i, (build, env) in enumerate(sides):
                runs[i].append(one_run(build, a.program, a.args, trace, env))
    cols = ("collections",) + FIELDS + CYCLE_FIELDS + ("pause_sum_ms", "wall_s")
    print("side build " + " ".join(c.replace("_ns", "_us") for c in cols) + " (medians)")
    for name, (build, env), rows in zip("AB", sides, runs):
        label = build + "".join(f" {k}={v}" for k, v in env.items())
        print(name + " " + label + " "
              + " ".join(f"{statistics.median(r[c] for r in rows):.4g}" for c in cols))
    pa, pb = runs
    wall = statistics.median(y["wall_s"] / x["wall_s"] for x, y in zip(pa, pb))
    pause = statistics.median(y["pause_sum_ms"] / x["pause_sum_ms"] for x, y in zip(pa, pb)
                              if x["pause_sum_ms"])
    print(f"B/A paired medians: wall {wall:.3f}, summed pauses {pause:.3f}")


if __name__ == "__main__":
    sys.exit(main())
