#!/usr/bin/python3
"""sgc benchmark runner.

Run with Debian's /usr/bin/python3 (it has python3-matplotlib); the
pyenv `python3` on PATH may not.

  /usr/bin/python3 bench/run.py --headline        # sgc vs bdwgc, 1 and 2 threads (~2 min)
  /usr/bin/python3 bench/run.py --full            # the whole matrix (EXPERIMENTS in runner/matrix.py)
  /usr/bin/python3 bench/run.py --smoke           # tiny sizes, 1 run: does everything work?
  /usr/bin/python3 bench/run.py --experiment alloc --runs 5
  /usr/bin/python3 bench/run.py --experiment markers-auto --runs 10 --predict-profile host.profile
                                                  # auto vs fixed GC threads (Table 4.4)
  /usr/bin/python3 bench/run.py --report-only bench/out/20250101-120000
  /usr/bin/python3 bench/run.py --report-only A,B,C --out bench/out/pooled   # runs pooled
  /usr/bin/python3 bench/run.py --list            # print the matrix without running it

Every run is a fresh process.  Measured per run: the program's own timed
region (RESULT wall_s), the process wall time and user/sys time (os.wait4
rusage of that child), peak RSS (the program's VmHWM from its RESULT line;
the child's ru_maxrss only when the program printed none, because
ru_maxrss also counts the forked copy of this Python process), and GC
statistics:

* sgc: the run gets SGC_TRACE=<file>; sgc writes one JSON object per
  collection (gc_no, reason, pause_ns, stop_ns, mark_ns, sweep_ns,
  marked_bytes, marked_objects, heap_bytes, live_bytes, markers, ...).
  gc_s = sum(pause_ns); max/mean pause from pause_ns; collections = lines;
  heap_bytes = max(heap_bytes); mark_s = sum(mark_ns); marked_bytes = sum.
* bdwgc (libgc 8.2.2): the run gets GC_PRINT_STATS=1 and we parse stderr.
  Lines used (N = integer; "A ms B ns" means A milliseconds + B nanoseconds):
    "--> Marking for collection #N after N allocated bytes"  starts a record
    "World-stopped marking took A ms B ns (N ms in average)"  -> mark time
        (includes stopping and restarting the world)
    "GC #N freed N bytes, heap N KiB (+ N KiB unmapped + N KiB internal)"
        -> heap_bytes (the heap KiB)
    "In-use heap: N% (X KiB pointers + Y KiB other)"  -> marked/live bytes
        = (X + Y) KiB
    "Complete collection took A ms B ns"  -> pause (the world-stopped mark
        plus finalisation and sweep start, during which the allocation lock
        is held, so no thread can allocate)
    "Number of processors: N"  -> default marker count (when GC_MARKERS
        is not set)
  gc_s = sum of "Complete collection" times; collections = number of them.
* malloc peers (glibc, jemalloc, tcmalloc, mimalloc): no GC statistics;
  the allocator is chosen with LD_PRELOAD on the bench-*-malloc binary.

Output: bench/out/<timestamp>/results.csv (one row per run), meta.json
(machine, command), report.md with PNG plots, and logs/ (stdout, stderr,
trace of every run).
"""

import argparse
import datetime
import json
import os
import signal
import sys
import time

from runner.markers_auto import markers_auto_table
from runner.execute import binary_for, find_library, machine_info, run_one
from runner.matrix import EXPERIMENTS, FULL, HEADLINE, IMPLS, PEER_PACKAGES, PROGRAMS, SMOKE, expand
from runner.report import merge_reports, write_report
from runner.results import group, hash_mismatches, read_csv, write_csv
from runner.tables import headline_table, thread_time_ratios
from runner.util import REPO, log, show_path


def parse_list(s, conv=str):
    return [conv(x) for x in s.split(",") if x] if s else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--headline", action="store_true", help="sgc vs bdwgc, 1 and 2 threads")
    mode.add_argument("--full", action="store_true", help="the whole matrix: " + ", ".join(FULL))
    mode.add_argument("--smoke", action="store_true", help="every program and impl, tiny sizes")
    mode.add_argument("--experiment", action="append", choices=sorted(EXPERIMENTS),
                      help="run one experiment of the matrix (repeatable)")
    mode.add_argument("--report-only", metavar="DIR[,DIR...]", help="regenerate DIR/report.md from DIR/results.csv; with several, one report over all their runs in --out")
    mode.add_argument("--list", action="store_true", help="print the matrix and exit")
    ap.add_argument("--runs", type=int, help="runs per configuration (default: headline 5, full 3, smoke 1)")
    ap.add_argument("--profile", choices=["smoke", "headline", "full"], help="size profile override")
    ap.add_argument("--programs", help="comma-separated subset of programs")
    ap.add_argument("--impls", help="comma-separated subset of implementations")
    ap.add_argument("--threads", help="comma-separated subset of thread counts")
    ap.add_argument("--gc-threads", help="comma-separated GC thread counts (replaces the experiments')")
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                    help="CMake build directory (binaries in BUILD/bench)")
    ap.add_argument("--bin-dir", help="directory with the bench-* binaries (overrides --build-dir)")
    ap.add_argument("--out", help="output directory (default bench/out/<timestamp>)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    ap.add_argument("--no-stats", action="store_true", help="do not collect GC statistics")
    ap.add_argument("--predict-profile", metavar="FILE",
                    help="SGC_PREDICT_PROFILE for every sgc run (sgc-calibrate's profile of this "
                         "machine, for SGC_MARKERS=auto; the runner clears the caller's SGC_*)")
    a = ap.parse_args(argv)

    if a.report_only:
        dirs = [d for d in a.report_only.split(",") if d]
        if len(dirs) > 1:
            return merge_reports(dirs, a.out)
        d = dirs[0]
        rows = read_csv(os.path.join(d, "results.csv"))
        meta = {}
        if os.path.exists(os.path.join(d, "meta.json")):
            with open(os.path.join(d, "meta.json")) as f:
                meta = json.load(f)
        write_report(d, rows, meta)
        log(f"report: {os.path.join(d, 'report.md')}")
        return 0

    if a.headline:
        # with the machine's ceiling in the same rounds, for the 2-thread figures
        exps, profile, runs, mname = [("headline", HEADLINE), ("ceiling", EXPERIMENTS["ceiling"])], \
            "headline", 5, "headline"
    elif a.full:
        exps, profile, runs, mname = [(n, EXPERIMENTS[n]) for n in FULL], "full", 3, "full"
    elif a.smoke:
        exps, profile, runs, mname = [("smoke", SMOKE)], "smoke", 1, "smoke"
    elif a.experiment:
        exps, profile, runs, mname = [(n, EXPERIMENTS[n]) for n in a.experiment], "full", 3, \
            "experiment " + ",".join(a.experiment)
    elif a.list:
        for n, e in [("headline", HEADLINE), ("smoke", SMOKE)] + list(EXPERIMENTS.items()):
            cfgs = expand(n, e)
            log(f"{n}: {len(cfgs)} configurations")
            for c in cfgs:
                log("   " + c.label())
        return 0
    else:
        ap.print_help()
        return 2
    if a.runs:
        runs = a.runs
    if a.profile:
        profile = a.profile
    progs, impls = parse_list(a.programs), parse_list(a.impls)
    threads = parse_list(a.threads, int)
    gc_threads = parse_list(a.gc_threads, int)
    for p in progs or []:
        if p not in PROGRAMS:
            ap.error(f"unknown program {p}; known: {', '.join(PROGRAMS)}")
    for i in impls or []:
        if i not in IMPLS:
            ap.error(f"unknown implementation {i}; known: {', '.join(IMPLS)}")

    # Absolute: every run executes with its logs folder as the working
    # directory, where a relative binary or SGC_TRACE path would point
    # elsewhere (a relative --out once left every sgc run without its
    # trace, and the report without sgc's GC columns).
    bin_dir = os.path.abspath(a.bin_dir or os.path.join(a.build_dir, "bench"))
    cfgs = []
    for n, e in exps:
        cfgs += expand(n, e, progs, impls, threads, gc_threads)
    sgc_env = {}
    if a.predict_profile:
        if not os.path.isfile(a.predict_profile):
            ap.error(f"--predict-profile {a.predict_profile}: no such file")
        sgc_env["SGC_PREDICT_PROFILE"] = os.path.abspath(a.predict_profile)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.abspath(a.out or os.path.join(REPO, "bench", "out", stamp))
    logs_dir = os.path.join(out_dir, "logs")
    os.makedirs(logs_dir, exist_ok=True)

    # availability report up front
    missing = set()
    for c in cfgs:
        if not os.access(binary_for(c, bin_dir), os.X_OK):
            missing.add(os.path.basename(binary_for(c, bin_dir)))
        pre = IMPLS[c.impl].get("preload")
        if pre and not find_library(pre):
            missing.add(f"{pre} (apt-get install {PEER_PACKAGES.get(c.impl)})")
    if missing:
        log("note: missing, reported as such in the results: " + ", ".join(sorted(missing)))

    meta = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": " ".join(["/usr/bin/python3", os.path.relpath(__file__, REPO)] +
                                (argv if argv is not None else sys.argv[1:])),
            "mode": mname, "profile": profile, "runs": runs, "bin_dir": bin_dir,
            "machine": machine_info()}
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    mi = meta["machine"]
    log(f"machine: {mi['nproc']} CPUs, {mi['cpu']}, kernel {mi['kernel']}; load {mi['loadavg']}")
    log(f"{len(cfgs)} configurations x {runs} runs -> {out_dir}")

    rows = []
    total = len(cfgs) * runs
    k = 0
    t_start = time.monotonic()
    csv_path = os.path.join(out_dir, "results.csv")
    try:
        for r in range(1, runs + 1):  # interleave: every configuration once per round
            for c in cfgs:
                k += 1
                row = run_one(c, r, profile, bin_dir, logs_dir, a.timeout, not a.no_stats, sgc_env)
                rows.append(row)
                w = row.get("wall_s")
                extra = ""
                if row.get("gc_s") not in ("", None):
                    extra = f" gc {row['gc_s']:.3f}s, {row.get('collections')} GCs"
                log(f"[{k}/{total}] {c.label()} run {r}: "
                    + (f"{w:.3f}s" if isinstance(w, float) else "-") + extra + f" {row['status']}")
                if k % 10 == 0:
                    write_csv(csv_path, rows)
    except KeyboardInterrupt:
        log("interrupted: writing what was measured")
    # what follows writes the files: an interrupt now (tools/dev/larger_machine.sh's
    # budget running out just as the last round ended) must not cut them
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    write_csv(csv_path, rows)
    rows = read_csv(csv_path)
    write_report(out_dir, rows, meta)
    elapsed = time.monotonic() - t_start
    log("")
    if a.headline:
        log("Medians over %d runs (±: half the max-min range); sgc/bdwgc < 1: sgc faster" % runs)
    if any(r["impl"] == "sgc" for r in rows) and any(r["impl"] == "bdwgc" for r in rows):
        log(headline_table(rows))
        g = group(rows)
        for impl in ("sgc", "bdwgc"):
            ratios = thread_time_ratios(g, ("gcbench", impl, 2, None, "default"))
            if ratios and ratios[2]:
                base, wall, paired = ratios
                log(f"gcbench, 2 clients' time over 1 client's, {impl}: {paired:.2f} paired "
                    f"within rounds, {wall / base:.2f} as a ratio of medians"
                    + (" (issue 4's target: at most 1.3)" if impl == "sgc" else ""))
    auto = markers_auto_table(rows, fmt="text")
    if auto:
        log("SGC_MARKERS=auto against fixed counts: mark ms per collection (medians); "
            "auto/best paired within rounds (issue 56's target: at most 1.05)")
        log(auto)
    mism = hash_mismatches(rows)
    for prog, args, hs in mism:
        log(f"RESULT HASH MISMATCH {prog} {args}: {hs}")
    bad = [r for r in rows if r["status"] != "ok"]
    log(f"\n{len(rows) - len(bad)}/{len(rows)} runs ok; {elapsed:.0f} s; "
        f"results: {show_path(csv_path)}; report: {show_path(os.path.join(out_dir, 'report.md'))}")
    shown = set()
    for r in bad:
        key = (r["program"], r["impl"], r["status"])
        if key in shown:
            continue
        shown.add(key)
        log(f"  {r['status']}: {r['program']} {r['impl']} t={r['threads']}: {r.get('command') or r.get('extra')}")
    return 0 if not bad and not mism else 1


if __name__ == "__main__":
    sys.exit(main())
