#!/usr/bin/env python3
"""Batch-steal variants of `alloc -m free`, interleaved within each round.

Runs BUILD's bench-alloc-sgc (a build of tools/experiments/steal_variants.diff,
whose switches pick the variant) under each variant, and mimalloc's malloc
build, in turn, ROUNDS times, at each thread count, for 16- and 256-byte
objects; prints each configuration's median M/s and the medians of the
ratios within rounds against `lent` (the landed behaviour) and mimalloc.

  tools/experiment.sh steal_variants bcf6708
  tools/experiments/steal_variants.py [-r ROUNDS] [-t 1,2,16] [-b BASE_LIBDIR] \\
      [-m LIBMIMALLOC] [-s SECONDS] /tmp/sgc-experiment-steal_variants

Variants: lent (default: a robbed thread that was using its batches makes
the shortfall up from fresh pages), batch (steals as before lent batches),
none (no batch steals at all: unfair's memory is then unbounded),
lent-noruns (fresh pages one at a time, not in runs per page store); with
-b, base: BASE_LIBDIR's libsgc (LD_LIBRARY_PATH) under the same binaries.
"""
import argparse, os, statistics, subprocess, sys, time

p = argparse.ArgumentParser()
p.add_argument("build")
p.add_argument("-r", "--rounds", type=int, default=9)
p.add_argument("-t", "--threads", default="1,2")
p.add_argument("-b", "--base-lib")
p.add_argument("-m", "--mimalloc", default="libmimalloc.so.2")
p.add_argument("-s", "--seconds", type=float, default=1e9, help="stop starting rounds after this")
a = p.parse_args()
bench = os.path.join(a.build, "bench")
configs = {"lent": {}, "batch": {"SGC_EXP_STEAL": "batch"}, "none": {"SGC_EXP_STEAL": "none"},
           "lent-noruns": {"SGC_EXP_RUNS": "0"}}
if a.base_lib:
    configs["base"] = {"LD_LIBRARY_PATH": os.path.abspath(a.base_lib)}
configs["mimalloc"] = None
works = {"16B": ["-m", "free", "-r", "100"],
         "256B": ["-m", "free", "-s", "256", "-n", "20000", "-r", "100"]}
threads = [int(x) for x in a.threads.split(",")]


def run(cfg, work, t):
    env = dict(os.environ)
    if configs[cfg] is None:
        prog = os.path.join(bench, "bench-alloc-malloc")
        env["LD_PRELOAD"] = a.mimalloc
    else:
        prog = os.path.join(bench, "bench-alloc-sgc")
        env.update(configs[cfg])
    out = subprocess.run([prog, "-t", str(t)] + works[work], env=env, capture_output=True,
                         text=True, timeout=120).stdout
    for line in out.splitlines():
        if line.startswith("RESULT"):
            fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            return float(fields["mops"])
    sys.exit(f"steal_variants: no RESULT from {cfg} {work} -t {t}")


res = {}
deadline = time.time() + a.seconds
for r in range(a.rounds):
    if time.time() > deadline:
        break
    for work in works:
        for t in threads:
            for cfg in configs:
                res.setdefault((work, t), {}).setdefault(cfg, []).append(run(cfg, work, t))

def paired(x, y):
    return statistics.median(u / v for u, v in zip(x, y))

for (work, t), d in res.items():
    print(f"{work} {t} thr, {len(d['lent'])} rounds: M/s " +
          ", ".join(f"{c} {statistics.median(v):.0f}" for c, v in d.items()))
    print("  over lent: " + ", ".join(f"{c} {paired(v, d['lent']):.2f}" for c, v in d.items() if c != "lent"))
    print("  over mimalloc: " + ", ".join(f"{c} {paired(v, d['mimalloc']):.2f}" for c, v in d.items() if c != "mimalloc"))
