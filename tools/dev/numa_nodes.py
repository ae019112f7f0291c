#!/usr/bin/env python3
"""Per-node statistics of bh-st and bh-pt under each NUMA placement on
simulated nodes (docs/numa.md): counters and memory, no timing.

  tools/dev/numa_nodes.py [--build build] [--nodes 2,4] [--threads 2]
                          [--bmb 0,1] [-- extra bench-bh arguments]

For every node count, placement, BMB setting and bh mode it runs
bench-bh-sgc once under SGC_NUMA_FAKE with SGC_TRACE and SGC_NUMA_PIN=1,
and prints from the trace, summed over the collections: heap bytes the GC
threads scanned per node (papers/002 Table 4's accesses per node), the
remote ratio and imbalance of those accesses, each GC thread's local
share, and pages in use per node at the last collection; from SGC_get_stats
(SGC_STATS's numa line) the fresh pages taken off their node and the mark
bytes per node.  Under fake nodes the kernel places nothing: these are
sgc's decisions and what marking would have touched where.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def imbalance(values):
    n = len(values)
    total = sum(values)
    if not n or not total:
        return 0.0
    mean = total / n
    return (sum((v - mean) ** 2 for v in values) / n) ** 0.5 / mean


def run(binary, env_extra, args):
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        env = dict(os.environ, SGC_TRACE=trace, SGC_STATS="1", **env_extra)
        done = subprocess.run([binary] + args, env=env, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{binary} {' '.join(args)} failed ({done.returncode}): {done.stderr[-800:]}")
        records = [json.loads(line) for line in open(trace)] if os.path.exists(trace) else []
        numa_line = next((l for l in done.stderr.splitlines() if l.startswith("sgc: numa:")), "")
        heap_line = next((l for l in done.stderr.splitlines() if " collections, pause" in l), "")
    return records, numa_line, heap_line


def summarise(records, nodes):
    scanned = [0] * nodes
    local = 0
    shares = {}
    pages = []
    for r in records:
        numa = r.get("numa")
        if not numa:
            continue
        for i, b in enumerate(numa["scanned_bytes"][:nodes]):
            scanned[i] += b
        local += numa["local_scanned_bytes"]
        pages = numa["pages_used"]
        for k, m in enumerate(r["mark_threads"]):
            s = shares.setdefault(k, [0, 0])
            s[0] += m.get("scanned_bytes", 0)
            s[1] += m.get("scanned_bytes", 0) * m.get("local_share", 0.0)
    total = sum(scanned)
    return {
        "collections": len(records),
        "scanned_mib": [round(b / 2**20, 1) for b in scanned],
        "remote_ratio": round(1 - local / total, 3) if total else 0.0,
        "imbalance": round(imbalance(scanned), 3),
        "local_share": [round(s[1] / s[0], 3) if s[0] else 0.0 for _, s in sorted(shares.items())],
        "pages_used_last": pages,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", default="2,4")
    ap.add_argument("--threads", type=int, default=2, help="bh threads (and GC threads)")
    ap.add_argument("--bmb", default="0,1")
    ap.add_argument("--placements", default="firsttouch,interleave,local")
    ap.add_argument("rest", nargs="*", help="more bench-bh arguments (default -n 16384 -s 10)")
    a = ap.parse_args()
    binary = os.path.join(a.build, "bench", "bench-bh-sgc")
    if not os.access(binary, os.X_OK):
        sys.exit(f"no {binary}: build the benches first")
    extra = a.rest or ["-n", "16384", "-s", "10"]
    for nodes in [int(n) for n in a.nodes.split(",")]:
        for placement in a.placements.split(","):
            for bmb in a.bmb.split(","):
                for mode in ("st", "pt"):
                    env = {"SGC_NUMA_FAKE": str(nodes), "SGC_NUMA_PLACEMENT": placement,
                           "SGC_BMB": bmb, "SGC_NUMA_PIN": "1", "SGC_MARKERS": str(a.threads),
                           "SGC_ADAPTIVE": "0"}
                    records, numa_line, heap_line = run(
                        binary, env, ["-m", mode, "-t", str(a.threads)] + extra)
                    s = summarise(records, nodes)
                    print(f"bh-{mode} nodes={nodes} placement={placement} bmb={bmb}: "
                          + json.dumps(s))
                    print("   ", numa_line.replace("sgc: numa: ", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
