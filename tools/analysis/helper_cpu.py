#!/usr/bin/env python3
"""Counts the parallel collections whose GC threads were starved of CPU.

Runs one benchmark program RUNS times with SGC_TRACE and reads each
collection's mark_threads: a helper counts as starved when the CPU time it
got (cpu_ns) is under half the time it was present (busy_ns + idle_ns),
which is what a helper woken onto the collector's CPU looks like.  Also
prints how late the helpers that joined a mark did so (SGC_TRACE's join_ns),
how many of them were pre-woken, how many missed a mark they were meant
for, the join times' 10/50/75/90/99th percentiles for pre-woken helpers
and for the others, and the helpers' idle time per collection on average.  Last, the share
of the machine's CPU time the hypervisor stole meanwhile (/proc/stat):
on a contended VM the helpers' tails grow for any build alike.

  tools/analysis/helper_cpu.py [-n RUNS] BUILD PROGRAM [ARGS...]
  tools/analysis/helper_cpu.py -n 10 /tmp/build bench-gcbench-sgc -t 1

Needs a build whose trace has cpu_ns (commit b178852 and later).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def cpu_ticks():
    """(steal, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[7] if len(v) > 7 else 0), sum(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--runs", type=int, default=10)
    ap.add_argument("build")
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    parallel = starved = joined = missed = prewoken = 0
    late_ns = idle_ns = 0
    joins = {True: [], False: []}  # join_ns by whether the helper was pre-woken
    steal0, total0 = cpu_ticks()
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace")
        for _ in range(a.runs):
            env = dict(os.environ, SGC_TRACE=trace)
            subprocess.run([os.path.join(a.build, "bench", a.program)] + a.args, env=env,
                           stdout=subprocess.DEVNULL, check=True)
            with open(trace) as f:
                for line in f:
                    rec = json.loads(line)
                    if rec["markers"] < 2:
                        continue
                    parallel += 1
                    helpers = rec["mark_threads"][1:rec["markers"]]
                    collector = rec["mark_threads"][0]
                    present = collector["busy_ns"] + collector["idle_ns"]
                    for h in helpers:
                        if h["busy_ns"] + h["idle_ns"] == 0:
                            missed += 1  # found the phase over, or never woke in time
                            continue
                        joined += 1
                        prewoken += h.get("prewoken", False)
                        # join_ns since 2026-11-22; before, the collector's
                        # presence minus the helper's
                        late_ns += h.get("join_ns", present - h["busy_ns"] - h["idle_ns"])
                        if "join_ns" in h:
                            joins[bool(h.get("prewoken"))].append(h["join_ns"] / 1e3)
                    idle_ns += sum(h["idle_ns"] for h in helpers)
                    if any(h["cpu_ns"] * 2 < h["busy_ns"] + h["idle_ns"] for h in helpers):
                        starved += 1
            os.unlink(trace)
    print(f"{a.program} {' '.join(a.args)}: {starved} of {parallel} parallel collections "
          f"had a helper on a CPU for under half its presence ({a.runs} runs)")
    if joined:
        print(f"helpers that joined ({joined}; {prewoken} of them pre-woken) did so "
              f"{late_ns / joined / 1e3:.1f} us after the mark began, on average; {missed} "
              f"missed their mark")
    for woken, label in ((True, "pre-woken"), (False, "not pre-woken")):
        v = sorted(joins[woken])
        if v:
            q = " / ".join(f"{v[int(p * (len(v) - 1))]:.1f}" for p in (0.1, 0.5, 0.75, 0.9, 0.99))
            print(f"join us, {label} ({len(v)}): p10 / 50 / 75 / 90 / 99 = {q}")
    if parallel:
        print(f"helpers idled {idle_ns / parallel / 1e3:.1f} us per parallel collection")
    steal1, total1 = cpu_ticks()
    if total1 > total0:
        print(f"CPU time stolen by the hypervisor meanwhile: "
              f"{100 * (steal1 - steal0) / (total1 - total0):.1f}%")


if __name__ == "__main__":
    sys.exit(main())
