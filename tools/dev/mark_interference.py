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

Two more settings in each round compare two GC threads with what the
machine gives two markers that share nothing:
  twin    : a second copy of the program (SGC_MARKERS=1) on CPU 1, started
            with it; the ratio printed is both copies' rates over "alone"
            (two processes' speed-up);
  threads : the program alone with SGC_MARKERS=2 SGC_ADAPTIVE=0 on CPUs 0
            and 1 (two GC threads' speed-up over one);
and "threads / twin" is what two GC threads on one heap keep of two
processes.  The copies overlap only while both mark, so use a program
that marks most of its run (bench-markshape-sgc -s tree or -s wide);
for one that allocates between collections "twin" overstates the machine.

  tools/dev/mark_interference.py [-n RUNS] BUILD PROGRAM [ARGS...]
  tools/dev/mark_interference.py -n 7 /tmp/build bench-bh-sgc -m pt -t 1 -s 20

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


def program_command(a, cpus):
    return ["taskset", "-c", cpus, os.path.join(a.build, "bench", a.program)] + a.args


def run_twin(a, trace):
    """Both copies' rates summed: each copy marks with one GC thread on a
    CPU of its own, started together."""
    other = trace + ".twin"
    procs = [subprocess.Popen(program_command(a, cpu), stdout=subprocess.DEVNULL,
                              env=dict(os.environ, SGC_TRACE=t, SGC_MARKERS="1"))
             for cpu, t in (("0", trace), ("1", other))]
    if any(p.wait() for p in procs):
        sys.exit("mark_interference: a twin run failed")
    rates = [mark_rate(trace), mark_rate(other)]
    return sum(rates) if all(rates) else None


def run_threads(a, trace):
    env = dict(os.environ, SGC_TRACE=trace, SGC_MARKERS="2", SGC_ADAPTIVE="0")
    subprocess.run(program_command(a, "0,1"), env=env, stdout=subprocess.DEVNULL, check=True)
    return mark_rate(trace)


def run_once(a, trace, neighbour_args):
    neighbour = None
    if neighbour_args:
        neighbour = subprocess.Popen(
            ["taskset", "-c", "1", os.path.join(a.build, "bench", "bench-ceiling-malloc")]
            + neighbour_args, stdout=subprocess.DEVNULL)
        time.sleep(0.7)  # stream builds its 128 MiB first
    try:
        env = dict(os.environ, SGC_TRACE=trace, SGC_MARKERS="1")
        subprocess.run(program_command(a, "0"), env=env, stdout=subprocess.DEVNULL, check=True)
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
    rates = {name: [] for name in [*NEIGHBOURS, "twin", "threads"]}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace")
        for _ in range(a.runs):
            for name, args in NEIGHBOURS.items():
                rates[name].append(run_once(a, trace, args))
            rates["twin"].append(run_twin(a, trace))
            rates["threads"].append(run_threads(a, trace))
    alone = rates["alone"]
    for name, rs in rates.items():
        ratios = [r / b for r, b in zip(rs, alone) if r and b]
        print(f"{name:8s} mark rate median {statistics.median(rs):7.0f} MB/s"
              f"  (runs: {' '.join(f'{r:.0f}' for r in rs)})"
              + ("" if name == "alone" else f"  paired ratio to alone {statistics.median(ratios):.2f}"))
    kept = [t / w for t, w in zip(rates["threads"], rates["twin"]) if t and w]
    print(f"threads / twin: paired median {statistics.median(kept):.3f}"
          f"  (runs: {' '.join(f'{k:.3f}' for k in kept)})")


if __name__ == "__main__":
    main()
