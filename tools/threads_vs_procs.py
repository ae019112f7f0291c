#!/usr/bin/env python3
"""What a benchmark's threads lose to sharing one process.

Each round runs the program once with -t T (T threads in one process) and
T copies of it with -t 1 side by side (T processes, nothing shared but the
machine), in alternating order, and compares the RESULT field FIELD (a
throughput, default mops): the threads' value over the sum of the
processes' values.  Both sides load the machine alike at the same moment,
so the ratio cancels the drift that makes separate speed-up measurements
noisy here; what it leaves is the cost of sharing an address space and
the allocator's shared state: 1.00 when threads share nothing they touch.

  tools/threads_vs_procs.py [-n ROUNDS] [-t T] [-f FIELD] [-e VAR=VALUE] BUILD PROGRAM [ARGS...]
  tools/threads_vs_procs.py -n 9 /tmp/build bench-alloc-sgc -m free -r 400
  tools/threads_vs_procs.py -n 9 -e LD_PRELOAD=/lib/x86_64-linux-gnu/libmimalloc.so.2 \\
      /tmp/build bench-alloc-malloc -m free -r 400

PROGRAM must take -t and print the bench_common.h RESULT line.

With -s TIMEFIELD (alloc: -s alloc_s) the processes' side is measured as
the threads' side is: all their work (FIELD x TIMEFIELD each) over the
longest TIMEFIELD, rather than the sum of their rates.  A summed rate
credits a process that finished early with its own short time, while the
threads' rate waits for the slowest thread; on this VM one CPU often runs
a program up to a quarter slower than the other, so the sum overstates
what the processes achieved together.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def field_of(out, field):
    m = re.search(r"^RESULT .*\b" + re.escape(field) + r"=([0-9.eE+-]+)", out, re.M)
    if not m:
        sys.exit(f"threads_vs_procs: no {field}= in the RESULT line:\n{out}")
    return float(m.group(1))


def combine_processes(rates, times=None):
    """The processes' joint rate: their rates summed, or with TIMES, all
    their work (rate x time each) over the longest time."""
    if times is None:
        return sum(rates)
    return sum(r * t for r, t in zip(rates, times)) / max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--rounds", type=int, default=9)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-f", "--field", default="mops")
    ap.add_argument("-s", "--span", metavar="TIMEFIELD",
                    help="combine the processes as work over the longest TIMEFIELD")
    ap.add_argument("-e", "--env", action="append", default=[], help="VAR=VALUE for every run")
    ap.add_argument("build")
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    cmd = [os.path.join(a.build, "bench", a.program)] + a.args

    def threads():
        r = subprocess.run(cmd + ["-t", str(a.threads)], env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"threads_vs_procs: {' '.join(cmd)} -t {a.threads} exited {r.returncode}:\n"
                     + r.stderr)
        return field_of(r.stdout, a.field)

    def procs():
        ps = [subprocess.Popen(cmd + ["-t", "1"], env=env, stdout=subprocess.PIPE, text=True)
              for _ in range(a.threads)]
        outs = [p.communicate()[0] for p in ps]
        if any(p.returncode for p in ps):
            sys.exit("threads_vs_procs: a process failed")
        rates = [field_of(o, a.field) for o in outs]
        times = [field_of(o, a.span) for o in outs] if a.span else None
        return combine_processes(rates, times)

    ratios, tv, pv = [], [], []
    for r in range(a.rounds):
        if r % 2:
            p = procs()
            t = threads()
        else:
            t = threads()
            p = procs()
        tv.append(t)
        pv.append(p)
        ratios.append(t / p)
    print(f"{a.threads} threads: median {a.field} {statistics.median(tv):.1f}  "
          f"({' '.join(f'{x:.0f}' for x in tv)})")
    combined = f"work / longest {a.span}" if a.span else "summed"
    print(f"{a.threads} processes: median {combined} {a.field} {statistics.median(pv):.1f}  "
          f"({' '.join(f'{x:.0f}' for x in pv)})")
    print(f"threads / processes: median of {a.rounds} paired ratios {statistics.median(ratios):.3f}"
          f"  ({' '.join(f'{x:.2f}' for x in ratios)})")


if __name__ == "__main__":
    main()
