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

  tools/dev/threads_vs_procs.py [-n ROUNDS] [-t T] [-f FIELD] [-s TIMEFIELD] [-a] [-e VAR=VALUE] BUILD PROGRAM [ARGS...]
  tools/dev/threads_vs_procs.py -n 9 /tmp/build bench-alloc-sgc -m free -r 400
  tools/dev/threads_vs_procs.py -n 9 -e LD_PRELOAD=/lib/x86_64-linux-gnu/libmimalloc.so.2 \\
      /tmp/build bench-alloc-malloc -m free -r 400

PROGRAM must take -t and print the bench_common.h RESULT line.

With -s TIMEFIELD (alloc: -s alloc_s) the processes' side is measured as
the threads' side is: all their work (FIELD x TIMEFIELD each) over the
longest TIMEFIELD, rather than the sum of their rates.  A summed rate
credits a process that finished early with its own short time, while the
threads' rate waits for the slowest thread; on this VM one CPU often runs
a program up to a quarter slower than the other, so the sum overstates
what the processes achieved together.

With -a each round also runs one copy with -t 1 alone, and the report adds
both sides' speed-ups over it (paired within the round): the processes'
is what the machine gives this program with nothing shared, the ceiling
for the threads' (gcbench's 2-client time target of 1.3x one client is a
speed-up of 2 / 1.3 = 1.54).  The sides take turns going first.
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


def round_order(round_no, sides):
    """The order SIDES run in round ROUND_NO: rotated one place a round, so
    that over len(SIDES) rounds each side runs first once."""
    k = round_no % len(sides)
    return sides[k:] + sides[:k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--rounds", type=int, default=9)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-f", "--field", default="mops")
    ap.add_argument("-s", "--span", metavar="TIMEFIELD",
                    help="combine the processes as work over the longest TIMEFIELD")
    ap.add_argument("-e", "--env", action="append", default=[], help="VAR=VALUE for every run")
    ap.add_argument("-a", "--alone", action="store_true",
                    help="also run one copy alone each round; report speed-ups over it")
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

    def alone():
        r = subprocess.run(cmd + ["-t", "1"], env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"threads_vs_procs: {' '.join(cmd)} -t 1 exited {r.returncode}:\n" + r.stderr)
        return field_of(r.stdout, a.field)

    runs = {"threads": threads, "processes": procs}
    if a.alone:
        runs["alone"] = alone
    values = {side: [] for side in runs}
    for r in range(a.rounds):
        got = {side: runs[side]() for side in round_order(r, list(runs))}
        for side in runs:
            values[side].append(got[side])
    tv, pv = values["threads"], values["processes"]
    ratios = [t / p for t, p in zip(tv, pv)]

    def listing(xs, fmt="{:.0f}"):
        return " ".join(fmt.format(x) for x in xs)

    print(f"{a.threads} threads: median {a.field} {statistics.median(tv):.1f}  ({listing(tv)})")
    combined = f"work / longest {a.span}" if a.span else "summed"
    print(f"{a.threads} processes: median {combined} {a.field} {statistics.median(pv):.1f}  "
          f"({listing(pv)})")
    print(f"threads / processes: median of {a.rounds} paired ratios {statistics.median(ratios):.3f}"
          f"  ({listing(ratios, '{:.2f}')})")
    if a.alone:
        one = values["alone"]
        print(f"1 alone: median {a.field} {statistics.median(one):.1f}  ({listing(one)})")
        for side, xs in (("threads", tv), ("processes", pv)):
            up = [x / o for x, o in zip(xs, one)]
            print(f"{a.threads} {side} over 1 alone: median of {a.rounds} paired speed-ups "
                  f"{statistics.median(up):.3f}  ({listing(up, '{:.2f}')})")

if __name__ == "__main__":
    main()
