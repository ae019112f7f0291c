#!/usr/bin/env python3
"""The prediction model's forecast of mark time and speed-up on 2-, 4- and
8-node machines (issue 57; docs/numa.md, "Forecast"): model figures, not
measurements.

For bh-st and bh-pt it takes heap snapshots here (SGC_SNAPSHOT) and the
heap's accesses per node under each placement as tools/dev/numa_nodes.py
measured them on fake nodes (scanned bytes per node; run it, or give its
saved output with --shares), and asks sgc-predict for the mark time on a
machine of N nodes with the profile's latencies (the Origin 2000's by
default: 270 ns local, 590 remote, 230 ns occupancy per node), with and
without BMB:

  tools/analysis/numa_forecast.py -b build [--shares numa_nodes.txt]
      [--profile tools/predict/profiles/o2k.profile] [--nodes 2,4,8]
      [--cpus-per-node 2,8]

Speed-ups are over one GC thread on a one-node machine of the same
profile (all accesses local), the mark time of the last snapshot taken.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

PROGRAMS = {"bh-st": ["-m", "st"], "bh-pt": ["-m", "pt"]}
BH_ARGS = ["-t", "2", "-n", "16384", "-s", "10"]  # as numa_nodes.py's runs
PLACEMENTS = ["firsttouch", "interleave", "local"]


def run(cmd, env=None):
    done = subprocess.run(cmd, env=dict(os.environ, **(env or {})), capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(cmd)} failed: {done.stderr[-500:]}")
    return done.stdout


def shares_from(text):
    """numa_nodes.py's lines: (program, nodes, placement) -> scanned MiB per node."""
    out = {}
    for m in re.finditer(r"^(bh-\w+) nodes=(\d+) placement=(\w+) bmb=\d: (\{.*\})$", text, re.M):
        out[(m.group(1), int(m.group(2)), m.group(3))] = json.loads(m.group(4))["scanned_mib"]
    return out


def predict(tool, snap, profile, p, args):
    r = json.loads(run([tool, "-j", "-p", str(p)] + args + [snap, profile]))
    point = r["points"][0]
    return point["mark_ns"], point["limit"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-b", "--build", default="build")
    ap.add_argument("--profile", default=os.path.join(os.path.dirname(__file__), "..", "predict",
                                                      "profiles", "o2k.profile"))
    ap.add_argument("--nodes", default="2,4,8")
    ap.add_argument("--cpus-per-node", default="2,8", help="GC threads per node (O2K had 2)")
    ap.add_argument("--shares", help="numa_nodes.py's saved output (default: run it)")
    a = ap.parse_args()
    nodes = [int(n) for n in a.nodes.split(",")]
    per_node = [int(c) for c in a.cpus_per_node.split(",")]
    tool = os.path.join(a.build, "tools", "predict", "sgc-predict")
    if a.shares:
        text = open(a.shares).read()
    else:
        text = run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "dev", "numa_nodes.py"),
                    "--build", a.build, "--nodes", a.nodes, "--bmb", "0"])
    shares = shares_from(text)
    binary = os.path.join(a.build, "bench", "bench-bh-sgc")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, mode in PROGRAMS.items():
            d = os.path.join(tmp, name)
            os.mkdir(d)
            run([binary] + mode + BH_ARGS, {"SGC_SNAPSHOT": d, "SGC_SNAPSHOT_LIMIT": "8"})
            snap = os.path.join(d, max(os.listdir(d), key=lambda f: int(f.split("-")[-1][:-5])))
            serial, _ = predict(tool, snap, a.profile, 1, ["-N", "1"])
            for n in nodes:
                for placement in PLACEMENTS:
                    v = shares.get((name, n, placement))
                    if v is None or not sum(v):
                        continue
                    for bmb in (False, True):
                        args = ["-N", str(n), "-V", ",".join(str(x) for x in v)] + (["-B"] if bmb else [])
                        cells = []
                        for c in per_node:
                            t, limit = predict(tool, snap, a.profile, c * n, args)
                            cells.append((c * n, t, serial / t, limit))
                        rows.append((name, n, placement, bmb, v, cells))
            print(f"{name}: one GC thread, one node: {serial / 1e6:.3f} ms ({os.path.basename(snap)})")
    print()
    print("| program | nodes | placement | BMB | heap per node (MiB scanned) | "
          + " | ".join(f"P={c}/node: ms, speed-up, limit" for c in per_node) + " |")
    print("|---|---|---|---|---|" + "---|" * len(per_node))
    for name, n, placement, bmb, v, cells in rows:
        print(f"| {name} | {n} | {placement} | {'on' if bmb else 'off'} | {' / '.join(f'{x:g}' for x in v)} | "
              + " | ".join(f"P={p}: {t / 1e6:.2f} ms, {s:.2f}x, {limit}" for p, t, s, limit in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
