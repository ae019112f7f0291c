#!/usr/bin/env python3
"""The in-run 2-GC-thread mark speed-up of one program under two settings,
interleaved.

Runs BUILD/bench/PROGRAM with SGC_MARKERS=2 SGC_MARKERS_CYCLE=1,2 (its
collections alternate between 1 and 2 GC threads) and SGC_TRACE, side A
then side B, RUNS times, and prints each run's speed-up as the runner's
mark-cycle experiment computes it (bench/runner/gcstats.py markers_split:
the marked bytes over the mark time of the 2-thread collections, divided
by the same for the 1-thread ones), each side's median and the paired
B/A median.  A change that only makes one GC thread faster shows in the
1-thread rate, also printed with the 2-thread one (marked bytes over mark
time of those collections, the median over runs).

  tools/dev/cycle_ab.py [-n RUNS] [-a VAR=V] [-b VAR=V] [-A ARG] [-B ARG] [--build-b BUILD_B]
                    BUILD PROGRAM [ARGS...]
  tools/dev/cycle_ab.py -n 7 -B=-w build bench-markshape-sgc -s tree -n 500000 -c 100
  tools/dev/cycle_ab.py -n 7 -a SGC_MARK_SET=store -b SGC_MARK_SET=exchange build bench-gcbench-sgc -t 2

--build-b runs side B from another build (a change against the code
before it), -a/-b (repeatable) set a variable for one side, -A/-B (repeatable) add an
argument to one side's command line (written -B=-w when it starts with a
dash).  The runs take turns, so both sides
see the VM in the same phases: this VM's speed-ups move by 0.1 within
minutes, and only paired figures compare.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from runner.gcstats import markers_split, mark_rate  # noqa: E402


def one_run(a, build, trace, env, extra_args):
    env = dict(os.environ, SGC_TRACE=trace, SGC_MARKERS="2", SGC_MARKERS_CYCLE="1,2", **env)
    subprocess.run([os.path.join(build, "bench", a.program)] + a.args + extra_args, env=env,
                   stdout=subprocess.DEVNULL, check=True)
    with open(trace) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    os.unlink(trace)
    split = markers_split(recs)
    if not split:
        sys.exit("cycle_ab: a run made no collection with 1 or with 2 GC threads")
    one = mark_rate([r for r in recs if r.get("markers") == 1])
    two = mark_rate([r for r in recs if r.get("markers") == 2])
    return split["cycle_speedup"], one, two


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--runs", type=int, default=7)
    ap.add_argument("-a", dest="env_a", action="append", default=[], metavar="VAR=V")
    ap.add_argument("-b", dest="env_b", action="append", default=[], metavar="VAR=V")
    ap.add_argument("-A", dest="args_a", action="append", default=[], metavar="ARG")
    ap.add_argument("-B", dest="args_b", action="append", default=[], metavar="ARG")
    ap.add_argument("--build-b", metavar="BUILD_B",
                    help="side B runs this build's program (default: BUILD's)")
    ap.add_argument("build")
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    sides = [(dict(v.split("=", 1) for v in a.env_a), a.args_a),
             (dict(v.split("=", 1) for v in a.env_b), a.args_b)]
    builds = [a.build, a.build_b or a.build]
    runs = [[], []]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace")
        for _ in range(a.runs):
            for i, (env, extra) in enumerate(sides):
                runs[i].append(one_run(a, builds[i], trace, env, extra))
    for name, (env, extra), build, rows in zip("AB", sides, builds, runs):
        label = " ".join(([build] if a.build_b else []) + [f"{k}={v}" for k, v in env.items()]
                         + extra) or "(as given)"
        print(f"{name} {label}: in-run speed-up median {statistics.median(s for s, _, _ in rows):.3f}"
              f" (runs: {' '.join(f'{s:.3f}' for s, _, _ in rows)}); rate medians "
              f"{statistics.median(r for _, r, _ in rows):.2f} B/ns with 1 GC thread, "
              f"{statistics.median(r for _, _, r in rows):.2f} with 2")
    paired = statistics.median(b[0] / x[0] for x, b in zip(*runs))
    print(f"B/A paired median of the speed-ups: {paired:.3f}")


if __name__ == "__main__":
    main()
