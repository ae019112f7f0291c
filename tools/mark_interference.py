#!/usr/bin/env python3
"""How much one GC thread's marking slows down when the other CPU runs a
loop that shares nothing with it: which resource two markers would compete
for.

Runs one benchmark program with SGC_MARKERS=1 pinned to CPU 0, alone and
beside each of bench/ceiling.c's loops pinned to CPU 1 (compute: registers
only; stream: sequential reads of 128 MiB, memory bandwidth), RUNS rounds
in turn, and prints each setting's median mark rate (marked bytes / mark
time over the run, from SGC_TRACE) and its paired ratio to "alone" (the
median over rounds of the ratio within a round).  A marker that loses
little beside compute but much beside stream is bound by the memory
system, which two markers share just as the loops do: the report's
"Machine ceiling" gives stream's own 2-thread speed-up.

  tools/mark_interference.py [-n RUNS] BUILD PROGRAM [ARGS...]
  tools/mark_interference.py -n 7 /tmp/build bench-bh-sgc -m pt -t 1 -s 20

Needs 2 CPUs, BUILD/bench/PROGRAM and BUILD/bench/bench-ceiling-malloc.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

NEIGHBOURS = {
    "alone": None,
    # more steps than any measured run lasts; killed when the run ends
    "compute": ["-m", "compute", "-s", "100000000000"],
    "stream": ["-m", "stream", "-s", "100000000000"],
}


def mark_rate(trace):
    marked = mark_ns = 0
    with open(trace) as f:
        for line in f:
            rec = json.loads(line)
            marked += rec["marked_bytes"]
            mark_ns += rec["mark_ns"]
    return marked / mark_ns * 1e3 if mark_ns else None  # MB/s


def run_once(a, trace, neighbour_args):
    neighbour = None
    if neighbour_args:
        neighbour = subprocess.Popen(
            ["taskset", "-c", "1", os.path.join(a.build, "bench", "bench-ceiling-malloc")]
            + neighbour_args, stdout=subprocess.DEVNULL)
        time.sleep(0.7)  # stream builds its 128 MiB first
    try:
        env = dict(os.environ, SGC_TRACE=trace, SGC_MARKERS="1")
        subprocess.run(["taskset", "-c", "0", os.path.join(a.build, "bench", a.program)] + a.args,
                       env=env, stdout=subprocess.DEVNULL, check=True)
    finally:
        if neighbour:
            neighbour.kill()
            neighbour.wait()
    return mark_rate(trace)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--runs", type=int, default=5)
    ap.add_argument("build")
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0):
        sys.exit("mark_interference: needs CPUs 0 and 1")
    rates = {name: [] for name in NEIGHBOURS}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace")
        for _ in range(a.runs):
            for name, args in NEIGHBOURS.items():
                rates[name].append(run_once(a, trace, args))
    alone = rates["alone"]
    for name, rs in rates.items():
        ratios = [r / b for r, b in zip(rs, alone) if r and b]
        print(f"{name:8s} mark rate median {statistics.median(rs):7.0f} MB/s"
              f"  (runs: {' '.join(f'{r:.0f}' for r in rs)})"
              + ("" if name == "alone" else f"  paired ratio to alone {statistics.median(ratios):.2f}"))


if __name__ == "__main__":
    main()
