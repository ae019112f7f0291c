#!/usr/bin/python3
"""sgc benchmark runner.

Run with Debian's /usr/bin/python3 (it has python3-matplotlib); the
pyenv `python3` on PATH may not.

  /usr/bin/python3 bench/run.py --headline        # sgc vs bdwgc, 1 and 2 threads (~2 min)
  /usr/bin/python3 bench/run.py --full            # the whole matrix (EXPERIMENTS below)
  /usr/bin/python3 bench/run.py --smoke           # tiny sizes, 1 run: does everything work?
  /usr/bin/python3 bench/run.py --experiment alloc --runs 5
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
import csv
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ----------------------------------------------------------------------------
# Implementations.  kind "gc": bench-<bin>-<name>; kind "malloc": the
# bench-<bin>-malloc binary with an optional LD_PRELOAD library.
# ----------------------------------------------------------------------------
IMPLS = {
    "sgc": {"kind": "gc", "suffix": "sgc", "stats": "sgc", "markers_env": "SGC_MARKERS"},
    "bdwgc": {"kind": "gc", "suffix": "bdwgc", "stats": "bdwgc", "markers_env": "GC_MARKERS"},
    "glibc": {"kind": "malloc", "suffix": "malloc", "preload": None},
    "jemalloc": {"kind": "malloc", "suffix": "malloc", "preload": "libjemalloc.so.2"},
    "tcmalloc": {"kind": "malloc", "suffix": "malloc", "preload": "libtcmalloc_minimal.so.4"},
    "mimalloc": {"kind": "malloc", "suffix": "malloc", "preload": "libmimalloc.so.2"},
}
MALLOC_PEERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
# Debian packages that provide each peer (for the messages and headline.sh).
PEER_PACKAGES = {
    "bdwgc": "libgc-dev",
    "jemalloc": "libjemalloc2",
    "tcmalloc": "libtcmalloc-minimal4",
    "mimalloc": "libmimalloc2.0",
}

# ----------------------------------------------------------------------------
# Programs: binary stem, arguments per size profile, the flag that takes the
# thread count, the headline metric, whether a malloc build exists, whether
# the program's `hash` must agree across runs of the same arguments.
# ----------------------------------------------------------------------------
PROGRAMS = {
    "gcbench": {
        "bin": "gcbench", "metric": "mops", "malloc": False, "hash": True,
        "args": {"smoke": ["-S", "14", "-L", "12", "-M", "12", "-A", "50000"],
                 "headline": [], "full": []},
    },
    "alloc-free": {
        "bin": "alloc", "metric": "mops", "malloc": True, "hash": False,
        "args": {"smoke": ["-m", "free", "-r", "3"],
                 "headline": ["-m", "free", "-r", "100"],
                 "full": ["-m", "free", "-r", "100"]},
    },
    # 256-byte objects: a size class past GC_free's inline clearing, and
    # pages of 16 objects (the fresh-page order shows; see README)
    "alloc-free-256": {
        "bin": "alloc", "metric": "mops", "malloc": True, "hash": False,
        "args": {"smoke": ["-m", "free", "-s", "256", "-n", "20000", "-r", "3"],
                 "headline": ["-m", "free", "-s", "256", "-n", "20000", "-r", "100"],
                 "full": ["-m", "free", "-s", "256", "-n", "20000", "-r", "100"]},
    },
    "alloc-drop": {
        "bin": "alloc", "metric": "mops", "malloc": False, "hash": False,
        "args": {"smoke": ["-m", "drop", "-r", "3"],
                 "headline": ["-m", "drop", "-r", "100"],
                 "full": ["-m", "drop", "-r", "100"]},
    },
    "unfair": {
        "bin": "unfair", "metric": "mops", "malloc": True, "hash": False,
        "args": {"smoke": ["-r", "2", "-k", "1024"], "headline": ["-r", "10"],
                 "full": ["-r", "10"]},
    },
    "unfair-drop": {
        "bin": "unfair", "metric": "mops", "malloc": False, "hash": False,
        "args": {"smoke": ["-m", "drop", "-r", "2", "-k", "1024"],
                 "headline": ["-m", "drop", "-r", "10"], "full": ["-m", "drop", "-r", "10"]},
    },
    "bh-st": {
        "bin": "bh", "metric": "mops", "malloc": False, "hash": True,
        "args": {"smoke": ["-m", "st", "-n", "2000", "-s", "2"],
                 "headline": ["-m", "st", "-n", "16384", "-s", "8"],
                 "full": ["-m", "st"]},
    },
    "bh-pt": {
        "bin": "bh", "metric": "mops", "malloc": False, "hash": True,
        "args": {"smoke": ["-m", "pt", "-n", "2000", "-s", "2"],
                 "headline": ["-m", "pt", "-n", "16384", "-s", "8"],
                 "full": ["-m", "pt"]},
    },
    "cky": {
        "bin": "cky", "metric": "mops", "malloc": False, "hash": True,
        "args": {"smoke": ["-n", "3"], "headline": ["-n", "50"], "full": []},
    },
    "cube": {
        "bin": "cube", "metric": "mops", "malloc": False, "hash": True,
        "args": {"smoke": ["-i", "3"], "headline": ["-i", "100"], "full": []},
    },
    "matmul": {
        "bin": "matmul", "metric": "gflops", "malloc": False, "hash": True,
        "args": {"smoke": ["-n", "100", "-r", "2"], "headline": ["-n", "500"], "full": []},
    },
    "mark-list": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": {"smoke": ["-s", "list", "-n", "20000", "-c", "3"],
                 "headline": ["-s", "list"], "full": ["-s", "list"]},
    },
    "mark-tiny": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": {"smoke": ["-s", "tiny", "-c", "3"],
                 "headline": ["-s", "tiny", "-c", "200"], "full": ["-s", "tiny", "-c", "200"]},
    },
    "mark-wide": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": {"smoke": ["-s", "wide", "-n", "20000", "-c", "3"],
                 "headline": ["-s", "wide"], "full": ["-s", "wide"]},
    },
    "bursty": {
        "bin": "bursty", "metric": "mops", "malloc": False, "hash": False,
        "args": {"smoke": ["-r", "5"], "headline": ["-r", "50"], "full": []},
    },
}
THREAD_FLAG = "-t"

# ----------------------------------------------------------------------------
# sgc variants: environment settings.  Peers are always run as "default".
# ----------------------------------------------------------------------------
VARIANTS = {
    "default": {},
    # marking (thesis Table 3.2)
    "simple": {"SGC_MARK_VARIANT": "simple"},
    "noopt": {"SGC_MARK_VARIANT": "noopt"},
    "no-slo": {"SGC_MARK_VARIANT": "no-slo"},
    "no-nsb": {"SGC_MARK_VARIANT": "no-nsb"},
    "opt": {"SGC_MARK_VARIANT": "opt"},
    "chase-lev": {"SGC_MARK_VARIANT": "opt", "SGC_MARK_DEQUE": "chase-lev"},
    # free-page policy (thesis ch. 2)
    "ps": {"SGC_PAGE_POLICY": "ps"},
    "al": {"SGC_PAGE_POLICY": "al"},
    "lps1": {"SGC_PAGE_POLICY": "lps", "SGC_LPS_K": "1"},
    "lps1.5": {"SGC_PAGE_POLICY": "lps", "SGC_LPS_K": "1.5"},
    "lps2": {"SGC_PAGE_POLICY": "lps", "SGC_LPS_K": "2"},
    # allocation buffers (papers/001)
    "lab-thread": {"SGC_LAB": "thread"},
    "lab-cpu": {"SGC_LAB": "cpu"},
    "lab-flip": {"SGC_LAB": "flip"},
    # sweeping
    "sweep-lazy": {"SGC_SWEEP": "lazy"},
    "sweep-parallel": {"SGC_SWEEP": "parallel"},
}

# ----------------------------------------------------------------------------
# The matrix.  Each experiment expands to programs x impls x threads x
# gc_threads x variants (variants apply to sgc; peers run once as default).
# threads: a list or "pow2" (1, 2, 4, ... up to the usable CPUs);
# gc_threads: a list (None = the implementation's default), "pow2", or
# "same" (as many GC threads as application threads, the thesis setting).
# Add rows here.
# ----------------------------------------------------------------------------
APPS = ["gcbench", "bh-st", "bh-pt", "cky", "cube", "matmul"]
EXPERIMENTS = {
    # Fig 3.5 (GC vs user time) and the sgc/bdwgc comparison
    "apps": {"programs": APPS, "impls": ["sgc", "bdwgc"], "threads": [1, 2, 4],
             "gc_threads": [1, 2], "variants": ["default"]},
    # Fig 3.7 / 3.9: mark speed-up per marking variant
    "mark": {"programs": ["bh-st", "bh-pt", "cky", "cube"], "impls": ["sgc"], "threads": [2],
             "gc_threads": [1, 2], "variants": ["simple", "noopt", "no-slo", "no-nsb", "opt"]},
    # Table 2.1 / Fig 2.4: allocation throughput
    "alloc": {"programs": ["alloc-free", "alloc-free-256", "alloc-drop"],
              "impls": ["sgc", "bdwgc"] + MALLOC_PEERS, "threads": [1, 2, 4, 8],
              "gc_threads": [None], "variants": ["ps", "al", "lps1", "lps1.5"]},
    # Fig 2.5: memory consumption under unfair usage
    "unfair": {"programs": ["unfair", "unfair-drop"], "impls": ["sgc", "bdwgc"] + MALLOC_PEERS,
               "threads": [1, 2, 4, 8], "gc_threads": [None],
               "variants": ["ps", "al", "lps1", "lps1.5", "lps2"]},
    # Figs 2.6-2.8: applications' run time and memory per free-page policy
    "policies": {"programs": ["matmul", "bh-pt", "cky"], "impls": ["sgc"], "threads": [1, 2],
                 "gc_threads": [None], "variants": ["ps", "al", "lps1", "lps1.5"]},
    # papers/001: per-CPU vs per-thread buffers with hundreds of threads
    "bursty": {"programs": ["bursty"], "impls": ["sgc", "bdwgc"], "threads": [200, 500, 1000],
               "gc_threads": [None], "variants": ["lab-thread", "lab-cpu", "lab-flip"]},
    # flip mode must also pick per-thread caches where they are better
    "lab-gcbench": {"programs": ["gcbench"], "impls": ["sgc"], "threads": [1, 2],
                    "gc_threads": [None], "variants": ["lab-thread", "lab-cpu", "lab-flip"]},
    # thesis setting: as many GC threads as application threads, 1..CPUs
    "scaling": {"programs": APPS, "impls": ["sgc", "bdwgc"], "threads": "pow2",
                "gc_threads": "same", "variants": ["default"]},
    # list-shaped and tiny heaps: more GC threads must never mark slower
    # (bdwgc issues #320, #453); a wide heap for contrast
    "markshape": {"programs": ["mark-list", "mark-tiny", "mark-wide"], "impls": ["sgc", "bdwgc"],
                  "threads": [1], "gc_threads": [1, 2, 4], "variants": ["default"]},
    # the thesis's watermark stack vs a Chase-Lev deque (issue 4)
    "deque": {"programs": ["gcbench", "bh-pt", "cky", "cube"], "impls": ["sgc"], "threads": [2],
              "gc_threads": [1, 2], "variants": ["opt", "chase-lev"]},
    # lazy vs parallel sweep
    "sweep": {"programs": ["gcbench", "cky", "cube"], "impls": ["sgc"], "threads": [2],
              "gc_threads": [None], "variants": ["sweep-lazy", "sweep-parallel"]},
}
FULL = ["apps", "mark", "alloc", "unfair", "bursty", "lab-gcbench", "sweep", "markshape",
        "policies", "deque"]  # "scaling": for bigger machines

HEADLINE = {"programs": ["gcbench", "alloc-free", "bh-st", "bh-pt", "cky", "cube", "matmul"],
            "impls": ["sgc", "bdwgc"], "threads": [1, 2], "gc_threads": [None],
            "variants": ["default"]}
SMOKE = {"programs": list(PROGRAMS), "impls": list(IMPLS), "threads": [1, 2],
         "gc_threads": [None], "variants": ["default"]}

CSV_COLUMNS = [
    "experiment", "program", "impl", "threads", "gc_threads", "variant", "run", "status",
    "exit_code", "check", "wall_s", "proc_wall_s", "user_s", "sys_s", "gc_s", "mark_s",
    "stop_s", "sweep_s", "max_pause_ms", "mean_pause_ms", "peak_rss_kb", "collections",
    "gc_count", "heap_bytes", "live_bytes", "marked_bytes", "mark_mb_per_s", "markers_used",
    "pages_consumed", "remote_ratio", "cache_kb", "metric_name", "metric", "mops", "hash", "extra", "args", "env", "command", "log",
]
NUMERIC = {
    "threads", "gc_threads", "run", "exit_code", "wall_s", "proc_wall_s", "user_s", "sys_s",
    "gc_s", "mark_s", "stop_s", "sweep_s", "max_pause_ms", "mean_pause_ms", "peak_rss_kb",
    "collections", "gc_count", "heap_bytes", "live_bytes", "marked_bytes", "mark_mb_per_s",
    "markers_used", "pages_consumed", "remote_ratio", "cache_kb", "metric", "mops",
}


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------
def log(msg):
    print(msg, flush=True)


_lib_cache = {}


def find_library(soname):
    """Absolute path of a shared library by soname, or None."""
    if soname in _lib_cache:
        return _lib_cache[soname]
    path = None
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    try:
        if not ldconfig:
            raise OSError("no ldconfig")
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True,
                             timeout=10).stdout
        for line in out.splitlines():
            line = line.strip()
            if line.startswith(soname + " ") and "=>" in line:
                cand = line.split("=>", 1)[1].strip()
                if "x86-64" in line or "64" in line or path is None:
                    path = cand
                    break
    except (OSError, subprocess.SubprocessError):
        pass
    if path is None:
        for d in ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                  "/usr/local/lib"]:
            cand = os.path.join(d, soname)
            if os.path.exists(cand):
                path = cand
                break
    _lib_cache[soname] = path
    return path


def gct_label(g):
    return "default" if g is None else str(int(g))


def show_path(p):
    """Path relative to the repository when inside it, else absolute."""
    p = os.path.abspath(p)
    return os.path.relpath(p, REPO) if p.startswith(REPO + os.sep) else p


def fmt_num(v, digits=3):
    if v is None or v == "":
        return "-"
    if isinstance(v, str):
        return v
    if v == 0:
        return "0"
    if float(v).is_integer() and abs(v) >= 1:
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.{digits}g}"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread_pct(xs):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return None
    m = statistics.median(xs)
    return 100.0 * (max(xs) - min(xs)) / m if m else None


# ----------------------------------------------------------------------------
# statistics parsers
# ----------------------------------------------------------------------------
def parse_sgc_trace(path):
    recs = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass  # a truncated last line after a crash
    except OSError:
        return None
    summary = summarize_gcs(
        [r.get("pause_ns", 0) / 1e9 for r in recs],
        [r.get("mark_ns", 0) / 1e9 for r in recs],
        [r.get("marked_bytes", 0) for r in recs],
        [r.get("heap_bytes", 0) for r in recs],
        [r.get("live_bytes", 0) for r in recs],
        stop=[r.get("stop_ns", 0) / 1e9 for r in recs],
        sweep=[r.get("sweep_ns", 0) / 1e9 for r in recs],
        markers=max([r.get("markers", 0) for r in recs], default=None))
    # Page-policy counters (cumulative; thesis Fig 2.5): pages consumed and
    # the share of pages a thread got that another thread consumed first.
    if recs and "pages_taken" in recs[-1]:
        last = recs[-1]
        summary["pages_consumed"] = last.get("pages_consumed")
        taken = last.get("pages_taken") or 0
        summary["remote_ratio"] = (last.get("remote_pages", 0) / taken) if taken else 0.0
    # papers/001's waste: free bytes left in allocation caches at collections.
    caches = [r["cache_bytes"] for r in recs if "cache_bytes" in r]
    if caches:
        summary["cache_kb"] = statistics.median(caches) / 1024
    return summary


_MS_NS = r"(\d+) ms (\d+) ns"
RE_BDW_START = re.compile(r"^--> Marking for collection #(\d+)")
RE_BDW_MARK = re.compile(r"^World-stopped marking took " + _MS_NS)
RE_BDW_HEAP = re.compile(r"^GC #(\d+) freed (-?\d+) bytes, heap (\d+) KiB")
RE_BDW_INUSE = re.compile(r"^In-use heap: \d+% \((\d+) KiB pointers \+ (\d+) KiB other\)")
RE_BDW_COMPLETE = re.compile(r"^Complete collection took " + _MS_NS)
RE_BDW_NPROC = re.compile(r"^Number of processors: (\d+)")


def parse_bdwgc_stats(path, gc_threads):
    pauses, marks, marked, heaps, lives = [], [], [], [], []
    nproc = None
    cur = None
    try:
        f = open(path, errors="replace")
    except OSError:
        return None
    with f:
        for line in f:
            line = line.strip()
            m = RE_BDW_START.match(line)
            if m:
                cur = {"mark": 0.0, "marked": 0, "heap": 0}
                continue
            m = RE_BDW_MARK.match(line)
            if m and cur is not None:
                cur["mark"] = int(m.group(1)) / 1e3 + int(m.group(2)) / 1e9
                continue
            m = RE_BDW_HEAP.match(line)
            if m and cur is not None:
                cur["heap"] = int(m.group(3)) * 1024
                continue
            m = RE_BDW_INUSE.match(line)
            if m and cur is not None:
                cur["marked"] = (int(m.group(1)) + int(m.group(2))) * 1024
                continue
            m = RE_BDW_COMPLETE.match(line)
            if m:
                pauses.append(int(m.group(1)) / 1e3 + int(m.group(2)) / 1e9)
                c = cur or {"mark": 0.0, "marked": 0, "heap": 0}
                marks.append(c["mark"])
                marked.append(c["marked"])
                heaps.append(c["heap"])
                lives.append(c["marked"])
                cur = None
                continue
            m = RE_BDW_NPROC.match(line)
            if m:
                nproc = int(m.group(1))
    markers = gc_threads if gc_threads else (min(nproc, 16) if nproc else None)
    return summarize_gcs(pauses, marks, marked, heaps, lives, markers=markers)


def summarize_gcs(pauses, marks, marked, heaps, lives, stop=None, sweep=None, markers=None):
    n = len(pauses)
    mark_s = sum(marks)
    mb = sum(marked)
    return {
        "collections": n,
        "gc_s": sum(pauses),
        "mark_s": mark_s,
        "stop_s": sum(stop) if stop else None,
        "sweep_s": sum(sweep) if sweep else None,
        "max_pause_ms": max(pauses) * 1e3 if n else 0.0,
        "mean_pause_ms": sum(pauses) / n * 1e3 if n else 0.0,
        "heap_bytes": max(heaps) if heaps else None,
        "live_bytes": max(lives) if lives else None,
        "marked_bytes": mb,
        "mark_mb_per_s": mb / mark_s / 1e6 if mark_s > 0 else None,
        "markers_used": markers,
    }


def parse_result_line(path):
    res = None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("RESULT "):
                    res = {}
                    for tok in line.split()[1:]:
                        if "=" in tok:
                            k, v = tok.split("=", 1)
                            res[k] = v
    except OSError:
        pass
    return res


def to_float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


# ----------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------
class Config:
    def __init__(self, experiment, program, impl, threads, gc_threads, variant):
        self.experiment = experiment
        self.program = program
        self.impl = impl
        self.threads = threads
        self.gc_threads = gc_threads
        self.variant = variant

    def key(self):
        return (self.program, self.impl, self.threads, self.gc_threads, self.variant)

    def label(self):
        g = "-" if self.gc_threads is None else self.gc_threads
        return f"{self.program} {self.impl} t={self.threads} gct={g} {self.variant}"


def pow2_upto(n):
    out, x = [], 1
    while x < n:
        out.append(x)
        x *= 2
    return out + [n]


def thread_list(spec):
    """A list, or "pow2": 1, 2, 4, ... up to the CPUs this process may use."""
    if spec == "pow2":
        try:
            n = len(os.sched_getaffinity(0))
        except AttributeError:
            n = os.cpu_count() or 1
        return pow2_upto(n)
    return list(spec)


def expand(exp_name, exp, programs=None, impls=None, threads=None, gc_threads=None):
    out = []
    for prog in exp["programs"]:
        if programs and prog not in programs:
            continue
        for impl in exp["impls"]:
            if impls and impl not in impls:
                continue
            kind = IMPLS[impl]["kind"]
            if kind == "malloc" and not PROGRAMS[prog]["malloc"]:
                continue
            variants = exp["variants"] if impl == "sgc" else ["default"]
            for t in thread_list(exp["threads"]):
                if threads and t not in threads:
                    continue
                if kind != "gc":
                    gcts = [None]
                elif gc_threads:
                    gcts = gc_threads
                elif exp["gc_threads"] == "same":
                    gcts = [t]
                else:
                    gcts = thread_list(exp["gc_threads"])
                for g in gcts:
                    for v in variants:
                        out.append(Config(exp_name, prog, impl, t, g, v))
    # de-duplicate (a peer appears once per (prog, threads, gct))
    seen, uniq = set(), []
    for c in out:
        if c.key() not in seen:
            seen.add(c.key())
            uniq.append(c)
    return uniq


def binary_for(cfg, bin_dir):
    return os.path.join(bin_dir, f"bench-{PROGRAMS[cfg.program]['bin']}-{IMPLS[cfg.impl]['suffix']}")


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("SGC_") or k.startswith("GC_") or k == "LD_PRELOAD":
            del env[k]
    return env


def run_one(cfg, run_idx, profile, bin_dir, logs_dir, timeout, with_stats):
    row = {c: "" for c in CSV_COLUMNS}
    row.update(experiment=cfg.experiment, program=cfg.program, impl=cfg.impl,
               threads=cfg.threads, gc_threads="" if cfg.gc_threads is None else cfg.gc_threads,
               variant=cfg.variant, run=run_idx)
    impl = IMPLS[cfg.impl]
    binary = binary_for(cfg, bin_dir)
    args = list(PROGRAMS[cfg.program]["args"][profile]) + [THREAD_FLAG, str(cfg.threads)]
    env_extra = {}
    if cfg.impl == "sgc":
        env_extra.update(VARIANTS[cfg.variant])
    if impl["kind"] == "gc" and cfg.gc_threads is not None:
        env_extra[impl["markers_env"]] = str(cfg.gc_threads)
    tag = "{}_{}_t{}_g{}_{}_r{}".format(cfg.program, cfg.impl, cfg.threads,
                                        "d" if cfg.gc_threads is None else cfg.gc_threads,
                                        cfg.variant, run_idx)
    prefix = os.path.join(logs_dir, tag)
    if with_stats and impl["kind"] == "gc":
        if impl["stats"] == "sgc":
            env_extra["SGC_TRACE"] = prefix + ".trace.jsonl"
        else:
            env_extra["GC_PRINT_STATS"] = "1"
    if impl["kind"] == "malloc" and impl.get("preload"):
        lib = find_library(impl["preload"])
        if not lib:
            row["status"] = "missing-peer"
            row["extra"] = f"{impl['preload']} not found (apt-get install {PEER_PACKAGES.get(cfg.impl, '?')})"
            return row
        env_extra["LD_PRELOAD"] = lib
    # the recorded environment excludes the per-run trace path
    shown_env = {k: v for k, v in env_extra.items() if k != "SGC_TRACE"}
    row["env"] = " ".join(f"{k}={v}" for k, v in sorted(shown_env.items()))
    row["args"] = " ".join(args)
    row["command"] = " ".join([f"{k}={shlex.quote(v)}" for k, v in sorted(shown_env.items())] +
                              [shlex.quote(show_path(binary))] +
                              [shlex.quote(a) for a in args])
    row["log"] = os.path.relpath(prefix, logs_dir)
    if not os.access(binary, os.X_OK):
        row["status"] = "missing-binary"
        return row

    env = clean_env()
    env.update(env_extra)
    with open(prefix + ".out", "w") as fo, open(prefix + ".err", "w") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary] + args, stdout=fo, stderr=fe, env=env,
                             start_new_session=True, cwd=logs_dir)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        wall = time.monotonic() - t0
        p.returncode = status  # already reaped
    row["proc_wall_s"] = round(wall, 6)
    row["user_s"] = round(ru.ru_utime, 6)
    row["sys_s"] = round(ru.ru_stime, 6)
    row["peak_rss_kb"] = ru.ru_maxrss
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        row["exit_code"] = -sig
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = str(sig)
        row["status"] = "timeout" if timed_out.is_set() else f"crashed-{signame}"
    else:
        row["exit_code"] = os.WEXITSTATUS(status)

    res = parse_result_line(prefix + ".out")
    if res:
        row["check"] = res.get("check", "")
        row["wall_s"] = to_float(res.get("wall_s"))
        row["hash"] = res.get("hash", "")
        row["gc_count"] = to_float(res.get("gc_count"))
        mname = PROGRAMS[cfg.program]["metric"]
        row["metric_name"] = mname
        row["metric"] = to_float(res.get(mname))
        row["mops"] = to_float(res.get("mops"))
        skip = {"prog", "impl", "threads", "wall_s", "check", "hash", "gc_count", "mops", mname,
                "peak_rss_kb", "heap_bytes"}
        row["extra"] = " ".join(f"{k}={v}" for k, v in res.items() if k not in skip)
        # The program's own VmHWM: rusage's ru_maxrss of the child also counts
        # the forked copy of this Python process before exec (~17 MB here).
        if to_float(res.get("peak_rss_kb")):
            row["peak_rss_kb"] = to_float(res.get("peak_rss_kb"))
        if res.get("heap_bytes") not in (None, "0"):
            row["heap_bytes"] = to_float(res.get("heap_bytes"))
    if not row["status"]:
        if res is None:
            row["status"] = "no-result" if row["exit_code"] == 0 else f"error-exit-{row['exit_code']}"
        elif res.get("check") != "ok":
            row["status"] = "check-failed"
        elif row["exit_code"] != 0:
            row["status"] = f"error-exit-{row['exit_code']}"
        else:
            row["status"] = "ok"
    if row["wall_s"] in ("", None):
        row["wall_s"] = row["proc_wall_s"]

    stats = None
    if with_stats and impl["kind"] == "gc":
        if impl["stats"] == "sgc":
            stats = parse_sgc_trace(prefix + ".trace.jsonl")
        else:
            stats = parse_bdwgc_stats(prefix + ".err", cfg.gc_threads)
    if stats:
        for k, v in stats.items():
            if v is None:
                continue
            if k == "heap_bytes" and not v:
                continue
            row[k] = round(v, 9) if isinstance(v, float) else v
    return row


# ----------------------------------------------------------------------------
# machine description
# ----------------------------------------------------------------------------
def machine_info():
    info = {}
    info["date"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    info["hostname"] = platform.node()
    info["nproc"] = os.cpu_count()
    try:
        info["nproc_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["nproc_usable"] = os.cpu_count()
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cpu"] = cpu or platform.processor() or "unknown"
    info["kernel"] = platform.release()
    info["os"] = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["mem_gib"] = round(int(line.split()[1]) / 1048576, 1)
    except OSError:
        pass
    try:
        nodes = [d for d in os.listdir("/sys/devices/system/node") if re.match(r"node\d+$", d)]
        info["numa_nodes"] = len(nodes)
    except OSError:
        info["numa_nodes"] = None
    def cmd(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    info["gcc"] = cmd(["gcc", "--version"]).split("\n")[0]
    info["libgc"] = cmd(["dpkg-query", "-W", "-f=${Version}", "libgc1"])
    info["git_commit"] = cmd(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    info["git_dirty"] = bool(cmd(["git", "-C", REPO, "status", "--porcelain", "--", "src", "include", "bench"]))
    info["loadavg"] = cmd(["cat", "/proc/loadavg"])
    return info


# ----------------------------------------------------------------------------
# CSV
# ----------------------------------------------------------------------------
def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in CSV_COLUMNS})


def read_csv(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for k in NUMERIC:
                if k in r:
                    r[k] = to_float(r[k]) if r[k] != "" else None
            for k in ("threads", "run"):
                if r.get(k) is not None:
                    r[k] = int(r[k])
            if r.get("gc_threads") is not None:
                r["gc_threads"] = int(r["gc_threads"])
            rows.append(r)
    return rows


# ----------------------------------------------------------------------------
# aggregation
# ----------------------------------------------------------------------------
def group(rows):
    """(program, impl, threads, gc_threads, variant) -> list of rows, in first-seen order."""
    g = {}
    for r in rows:
        k = (r["program"], r["impl"], r["threads"], r["gc_threads"], r["variant"])
        g.setdefault(k, []).append(r)
    return g


def ok_rows(rs):
    return [r for r in rs if r["status"] == "ok"]


def agg(rs, col):
    return median([r.get(col) for r in ok_rows(rs)])


def status_of(rs):
    bad = [r["status"] for r in rs if r["status"] != "ok"]
    if not bad:
        return "ok"
    return ",".join(sorted(set(bad))) + (f" ({len(bad)}/{len(rs)})" if len(bad) < len(rs) else "")


def hash_mismatches(rows):
    """Programs whose result hash must not depend on implementation or threads."""
    by = {}
    for r in rows:
        if r["status"] != "ok" or not r.get("hash") or not PROGRAMS.get(r["program"], {}).get("hash"):
            continue
        args = re.sub(r"(^| )-t \d+", "", r.get("args") or "").strip()
        by.setdefault((r["program"], args), {}).setdefault(r["hash"], []).append(r)
    out = []
    for (prog, args), hs in by.items():
        if len(hs) > 1:
            out.append((prog, args, {h: sorted({f"{x['impl']} t={x['threads']}" for x in v})
                                     for h, v in hs.items()}))
    return out


# ----------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------
def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def text_table(header, rows):
    cols = [header] + [[str(x) for x in r] for r in rows]
    w = [max(len(c[i]) for c in cols) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w[i]) for i, h in enumerate(header)),
             "  ".join("-" * w[i] for i in range(len(header)))]
    for r in cols[1:]:
        lines.append("  ".join(x.rjust(w[i]) if i else x.ljust(w[i]) for i, x in enumerate(r)))
    return "\n".join(lines)


def med_spread(rs, col, digits=3):
    vals = [r.get(col) for r in ok_rows(rs)]
    m = median(vals)
    if m is None:
        return "-"
    s = spread_pct(vals)
    return fmt_num(m, digits) + (f" ±{s / 2:.0f}%" if s is not None else "")


def comparison_rows(rows, a="sgc", b="bdwgc"):
    """Per (program, threads, gc_threads, variant of a): a vs b medians."""
    g = group(rows)
    keys = []
    for (prog, impl, t, gct, var) in g:
        if impl == a and (prog, t, gct, var) not in keys:
            keys.append((prog, t, gct, var))
    out = []
    for prog, t, gct, var in keys:
        ra = g.get((prog, a, t, gct, var), [])
        rb = g.get((prog, b, t, gct, "default"), [])
        out.append((prog, t, gct, var, ra, rb))
    return out


def headline_table(rows, fmt="text"):
    header = ["program", "thr", "GC thr", "sgc wall s", "bdwgc wall s", "sgc/bdwgc", "sgc GC s",
              "bdwgc GC s", "sgc max pause ms", "bdwgc max pause ms", "sgc RSS MB",
              "bdwgc RSS MB", "status"]
    body = []
    for prog, t, gct, var, ra, rb in comparison_rows(rows):
        if var != "default":
            continue
        wa, wb = agg(ra, "wall_s"), agg(rb, "wall_s")
        ratio = f"{wa / wb:.2f}" if wa and wb else "-"
        rss = lambda rs: fmt_num(agg(rs, "peak_rss_kb") / 1024, 3) if agg(rs, "peak_rss_kb") else "-"
        st = []
        if status_of(ra) != "ok":
            st.append("sgc: " + status_of(ra) if ra else "sgc: not run")
        if status_of(rb) != "ok":
            st.append("bdwgc: " + status_of(rb) if rb else "bdwgc: not run")
        body.append([prog, t, gct_label(gct), med_spread(ra, "wall_s"), med_spread(rb, "wall_s"), ratio,
                     fmt_num(agg(ra, "gc_s")), fmt_num(agg(rb, "gc_s")),
                     fmt_num(agg(ra, "max_pause_ms")), fmt_num(agg(rb, "max_pause_ms")),
                     rss(ra), rss(rb), "; ".join(st) or "ok"])
    return (text_table if fmt == "text" else md_table)(header, body)


def all_configs_table(rows):
    header = ["program", "impl", "thr", "GC thr", "variant", "runs ok", "wall s (±half-range)",
              "GC s", "mark s", "collections", "max pause ms", "mean pause ms", "peak RSS MB",
              "heap MB", "metric", "status"]
    body = []
    for (prog, impl, t, gct, var), rs in group(rows).items():
        rss = agg(rs, "peak_rss_kb")
        heap = agg(rs, "heap_bytes")
        mname = PROGRAMS.get(prog, {}).get("metric", "mops")
        body.append([prog, impl, t, gct_label(gct), var,
                     f"{len(ok_rows(rs))}/{len(rs)}", med_spread(rs, "wall_s"),
                     fmt_num(agg(rs, "gc_s")), fmt_num(agg(rs, "mark_s")),
                     fmt_num(agg(rs, "collections")), fmt_num(agg(rs, "max_pause_ms")),
                     fmt_num(agg(rs, "mean_pause_ms")),
                     fmt_num(rss / 1024) if rss else "-", fmt_num(heap / 1048576) if heap else "-",
                     f"{fmt_num(agg(rs, 'metric'))} {mname}" if agg(rs, "metric") is not None else "-",
                     status_of(rs)])
    return md_table(header, body)


# ----------------------------------------------------------------------------
# plots
# ----------------------------------------------------------------------------
def get_plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception:  # noqa: BLE001 - any import problem means "no plots"
        return None


def plot_gc_user(plt, rows, path):
    """Fig 3.5: run time split into GC and user time, per program."""
    g = group(rows)
    cfgs = [k for k in g if k[4] == "default" and IMPLS.get(k[1], {}).get("kind") == "gc"
            and agg(g[k], "wall_s") is not None and agg(g[k], "gc_s") is not None]
    if not cfgs:
        return False
    progs = []
    for k in cfgs:
        if k[0] not in progs:
            progs.append(k[0])
    ncol = min(4, len(progs))
    nrow = (len(progs) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(max(4, 3.4 * ncol), 3.6 * nrow), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(progs):]:
        ax.axis("off")
    for ax, prog in zip(flat, progs):
        ks = sorted([k for k in cfgs if k[0] == prog],
                    key=lambda k: (k[2], -1 if k[3] is None else k[3], k[1]))
        labels, gcs, users = [], [], []
        for k in ks:
            w, gc = agg(g[k], "wall_s"), agg(g[k], "gc_s")
            gc = min(gc, w)
            labels.append(f"{k[1]}\nt{k[2]}" + ("" if k[3] is None else f"/g{k[3]}"))
            gcs.append(gc)
            users.append(w - gc)
        x = range(len(ks))
        ax.bar(x, users, label="User", color="#4c72b0")
        ax.bar(x, gcs, bottom=users, label="GC", color="#dd8452")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_title(prog)
        ax.set_ylabel("seconds")
    flat[0].legend(fontsize=8)
    fig.suptitle("Run time split into user and GC (stopped) time (cf. thesis Fig. 3.5)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def speedup_data(rows):
    """(program, impl, threads, variant) -> {gc_threads: (mark speed, gc_s)} (medians)."""
    g = group(rows)
    out = {}
    for (prog, impl, t, gct, var), rs in g.items():
        if gct is None:
            continue
        speed = agg(rs, "mark_mb_per_s")
        gcs = agg(rs, "gc_s")
        out.setdefault((prog, impl, t, var), {})[int(gct)] = (speed, gcs)
    return {k: v for k, v in out.items() if len(v) >= 2 and 1 in v}


def mark_rate_rows(rows):
    """Rows (program, threads, GC threads, sgc MB/s, bdwgc MB/s, ratio) where both
    implementations ran the default variant with an explicit GC thread count."""
    g = group(rows)
    out = []
    for (prog, impl, t, gct, var), rs in g.items():
        if impl != "sgc" or var != "default" or gct is None:
            continue
        peer = g.get((prog, "bdwgc", t, gct, var))
        s_rate = agg(rs, "mark_mb_per_s")
        b_rate = agg(peer, "mark_mb_per_s") if peer else None
        if s_rate and b_rate:
            out.append([prog, t, gct, fmt_num(s_rate), fmt_num(b_rate), f"{s_rate / b_rate:.2f}"])
    return out


def plot_speedup(plt, rows, path):
    """Fig 3.7: mark-phase speed-up (marked bytes / mark time) vs GC threads,
    relative to one GC thread of the same implementation and variant."""
    data = speedup_data(rows)
    if not data:
        return False
    progs = sorted({k[0] for k in data})
    ncol = min(3, len(progs))
    nrow = (len(progs) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 3.8 * nrow), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(progs):]:
        ax.axis("off")
    for ax, prog in zip(flat, progs):
        mx = 1
        for k in sorted(k for k in data if k[0] == prog):
            d = data[k]
            base = d[1][0]
            if not base:
                continue
            xs = sorted(d)
            ys = [(d[x][0] / base) if d[x][0] else float("nan") for x in xs]
            mx = max(mx, max(xs))
            lab = k[1] + (f" {k[3]}" if k[3] != "default" else "") + f" (t={k[2]})"
            ax.plot(xs, ys, marker="o", label=lab)
        ax.plot([1, mx], [1, mx], linestyle=":", color="grey", label="ideal")
        ax.set_xticks(sorted({x for k in data if k[0] == prog for x in data[k]}))
        ax.set_title(prog)
        ax.set_xlabel("GC threads")
        ax.set_ylabel("mark speed-up")
        ax.legend(fontsize=6)
    fig.suptitle("Mark-phase speed-up vs GC threads (cf. thesis Fig. 3.7)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def alloc_series(rows, program):
    """label -> {threads: median mops} for the alloc program."""
    g = group(rows)
    series = {}
    for (prog, impl, t, gct, var), rs in g.items():
        if prog != program or gct is not None:
            continue
        v = agg(rs, "mops")
        if v is None:
            continue
        label = impl if var == "default" else f"{impl} {var}"
        series.setdefault(label, {})[t] = v
    return series


def plot_alloc(plt, rows, path, programs):
    ss = [(p, alloc_series(rows, p)) for p in programs]
    ss = [(p, s) for p, s in ss if s]
    if not ss:
        return False
    fig, axes = plt.subplots(1, len(ss), figsize=(5.5 * len(ss), 4), squeeze=False)
    for ax, (prog, series) in zip(axes[0], ss):
        for label in sorted(series):
            xs = sorted(series[label])
            ax.plot(xs, [series[label][x] for x in xs], marker="o", label=label)
        ax.set_xticks(sorted({t for v in series.values() for t in v}))
        ax.set_xlabel("threads")
        ax.set_ylabel("M allocations / s (all threads)")
        ax.set_title(prog)
        ax.legend(fontsize=7)
    fig.suptitle("Allocation throughput (cf. thesis Fig. 2.4 / Table 2.1)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_unfair(plt, rows, path):
    g = group(rows)
    series = {}
    for (prog, impl, t, gct, var), rs in g.items():
        if not prog.startswith("unfair") or gct is not None:
            continue
        v = agg(rs, "peak_rss_kb")
        if v is None:
            continue
        label = f"{prog} {impl}" + ("" if var == "default" else f" {var}")
        series.setdefault(label, {})[t] = v / 1024
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label in sorted(series):
        xs = sorted(series[label])
        ax.plot(xs, [series[label][x] for x in xs], marker="o", label=label)
    ax.set_xticks(sorted({t for v in series.values() for t in v}))
    ax.set_xlabel("threads")
    ax.set_ylabel("peak RSS (MB)")
    ax.legend(fontsize=6)
    ax.set_title("Memory consumption, unfair benchmark (cf. thesis Fig. 2.5)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ----------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------
def write_report(out_dir, rows, meta):
    plt = get_plt()
    lines = []
    lines.append("# sgc benchmark report\n")
    lines.append(f"- date: {meta.get('date', '?')}")
    m = meta.get("machine", {})
    lines.append(f"- machine: {m.get('nproc', '?')} CPUs ({m.get('nproc_usable', '?')} usable), "
                 f"{m.get('cpu', '?')}, {m.get('mem_gib', '?')} GiB, NUMA nodes: "
                 f"{m.get('numa_nodes', '?')}")
    lines.append(f"- system: {m.get('os', '?')}, kernel {m.get('kernel', '?')}, {m.get('gcc', '')}")
    lines.append(f"- load average at start: {m.get('loadavg', '?')}")
    lines.append(f"- peers: bdwgc (libgc1 {m.get('libgc', '?')}); malloc peers by LD_PRELOAD")
    lines.append(f"- sgc commit: {m.get('git_commit', '?')}"
                 + (" (with uncommitted changes)" if m.get("git_dirty") else ""))
    lines.append(f"- command: `{meta.get('command', '?')}`")
    lines.append(f"- mode: {meta.get('mode', '?')}, runs per configuration: {meta.get('runs', '?')}, "
                 f"size profile: {meta.get('profile', '?')}")
    lines.append("")
    lines.append("Each number is the median over the runs that passed their self-check; "
                 "'±x%' is half the (max-min) range relative to the median.  `wall s` is the "
                 "program's timed region, `GC s` the sum of stop-the-world pauses "
                 "(sgc: `pause_ns` of SGC_TRACE; bdwgc: 'Complete collection took' of "
                 "GC_PRINT_STATS), RSS the peak resident set of the process.  Ratios "
                 "compare implementations measured in this same invocation, runs interleaved.\n")

    n_ok = sum(1 for r in rows if r["status"] == "ok")
    lines.append(f"## Status\n\n{n_ok} of {len(rows)} runs passed.\n")
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        shown = {}
        for r in bad:
            k = (r["program"], r["impl"], r["threads"], r["gc_threads"], r["variant"], r["status"])
            shown.setdefault(k, r)
        lines.append(md_table(["program", "impl", "thr", "GC thr", "variant", "status", "reproduce"],
                              [[k[0], k[1], k[2], gct_label(k[3]), k[4], k[5],
                                f"`{r.get('command', '')}`" if r.get("command") else r.get("extra", "")]
                               for k, r in shown.items()]))
        lines.append("")
    mism = hash_mismatches(rows)
    if mism:
        lines.append("**Result hash mismatch** (these programs must compute the same result "
                     "for any implementation and thread count):\n")
        for prog, args, hs in mism:
            lines.append(f"- {prog} `{args}`: " + "; ".join(f"{h}: {', '.join(v)}" for h, v in hs.items()))
        lines.append("")
    elif any(r.get("hash") for r in rows):
        lines.append("Result hashes agree across implementations and thread counts for every "
                     "deterministic program.\n")

    comp = [c for c in comparison_rows(rows) if c[3] == "default" and c[5]]
    if comp:
        lines.append("## sgc vs bdwgc\n")
        lines.append("sgc/bdwgc < 1 means sgc is faster.\n")
        lines.append(headline_table(rows, fmt="md"))
        lines.append("")

    if plt is None:
        lines.append("_matplotlib is not available (run with /usr/bin/python3 and "
                     "apt-get install python3-matplotlib): no plots._\n")
    else:
        if plot_gc_user(plt, rows, os.path.join(out_dir, "gc_user_time.png")):
            lines.append("## Run time: user vs GC (cf. Fig. 3.5)\n")
            lines.append("![user vs GC time](gc_user_time.png)\n")
        if plot_speedup(plt, rows, os.path.join(out_dir, "mark_speedup.png")):
            lines.append("## Mark-phase speed-up (cf. Fig. 3.7)\n")
            lines.append("Speed-up = (marked bytes / mark time) relative to 1 GC thread of the "
                         "same implementation and variant.\n")
            lines.append("![mark speed-up](mark_speedup.png)\n")

    sp = speedup_data(rows)
    if sp and any(v[1][0] or v[1][1] for v in sp.values()):
        hdr = ["program", "impl", "thr", "variant"]
        gts = sorted({x for d in sp.values() for x in d})
        hdr += [f"mark speed-up g={x}" for x in gts] + [f"GC speed-up g={x}" for x in gts]
        body = []
        for k in sorted(sp):
            d = sp[k]
            b_speed, b_gc = d[1]
            row = [k[0], k[1], k[2], k[3]]
            row += [f"{d[x][0] / b_speed:.2f}" if x in d and d[x][0] and b_speed else "-" for x in gts]
            row += [f"{b_gc / d[x][1]:.2f}" if x in d and d[x][1] and b_gc else "-" for x in gts]
            if any(v != "-" for v in row[4:]):
                body.append(row)
        lines.append("### Speed-up table\n")
        lines.append(md_table(hdr, body))
        lines.append("")

    rate = mark_rate_rows(rows)
    if rate:
        lines.append("### Mark rate against bdwgc\n")
        lines.append("Marked bytes / mark time (median MB/s) with the same GC thread count; "
                     "sgc/bdwgc > 1 means sgc marks faster.  The two heaps differ (collection "
                     "points, heap sizes), so this compares rates, not work.\n")
        lines.append(md_table(["program", "thr", "GC thr", "sgc MB/s", "bdwgc MB/s", "sgc/bdwgc"],
                              rate))
        lines.append("")

    alloc_progs = [p for p in ("alloc-free", "alloc-free-256", "alloc-drop")
                   if alloc_series(rows, p)]
    if alloc_progs:
        lines.append("## Allocation throughput (cf. Table 2.1)\n")
        for p in alloc_progs:
            s = alloc_series(rows, p)
            ts = sorted({t for v in s.values() for t in v})
            lines.append(f"**{p}**: million allocations per second over all threads\n")
            lines.append(md_table(["implementation"] + [f"{t} thr" for t in ts],
                                  [[lab] + [fmt_num(s[lab].get(t)) for t in ts] for lab in sorted(s)]))
            lines.append("")
        if plt is not None and plot_alloc(plt, rows, os.path.join(out_dir, "alloc_throughput.png"),
                                          alloc_progs):
            lines.append("![allocation throughput](alloc_throughput.png)\n")

    if any(r["program"].startswith("unfair") for r in rows):
        lines.append("## Unfair benchmark: memory (cf. Fig. 2.5)\n")
        g = group(rows)
        body = []
        for (prog, impl, t, gct, var), rs in g.items():
            if not prog.startswith("unfair"):
                continue
            ph = median([to_float(dict(x.split("=", 1) for x in (r.get("extra") or "").split()
                                       if "=" in x).get("peak_heap_bytes")) for r in ok_rows(rs)])
            rss = agg(rs, "peak_rss_kb")
            consumed = agg(rs, "pages_consumed")
            remote = agg(rs, "remote_ratio")
            body.append([prog, impl, var, t, fmt_num(rss / 1024) if rss else "-",
                         fmt_num(ph / 1048576) if ph else "-",
                         fmt_num(consumed * 4096 / 1048576) if consumed else "-",
                         fmt_num(remote) if remote is not None else "-",
                         fmt_num(agg(rs, "wall_s"))])
        lines.append(md_table(["program", "impl", "variant", "thr", "peak RSS MB",
                               "peak heap MB", "small pages consumed MB (a)",
                               "remote page ratio", "wall s"], body))
        lines.append("")
        if plt is not None and plot_unfair(plt, rows, os.path.join(out_dir, "unfair_memory.png")):
            lines.append("![unfair memory](unfair_memory.png)\n")

    if any(r["program"] == "bursty" for r in rows):
        lines.append("## Bursty threads (cf. papers/001, VolanoMark)\n")
        g = group(rows)
        body = []
        for (prog, impl, t, gct, var), rs in g.items():
            if prog != "bursty":
                continue
            rss = agg(rs, "peak_rss_kb")
            heap = agg(rs, "heap_bytes")
            cache = agg(rs, "cache_kb")
            body.append([impl, var, t, fmt_num(agg(rs, "mops")), fmt_num(agg(rs, "collections")),
                         fmt_num(cache) if cache is not None else "-",
                         fmt_num(agg(rs, "mean_pause_ms")), fmt_num(agg(rs, "max_pause_ms")),
                         fmt_num(heap / 1048576) if heap else "-", fmt_num(rss / 1024) if rss else "-",
                         status_of(rs)])
        lines.append(md_table(["impl", "variant", "threads", "M allocs/s", "collections",
                               "unused in caches KB (median per collection)",
                               "mean pause ms", "max pause ms", "heap MB", "peak RSS MB",
                               "status"], body))
        lines.append("")

    # Pause times (Table 5.1-like)
    g = group(rows)
    pause_rows = []
    for (prog, impl, t, gct, var), rs in g.items():
        if IMPLS.get(impl, {}).get("kind") != "gc" or agg(rs, "collections") is None:
            continue
        # Time to stop the world: sgc's stop_ns (signal sent to every
        # thread acknowledged); bdwgc's log does not give it.
        stops = [r["stop_s"] / r["collections"] * 1e6 for r in ok_rows(rs)
                 if r.get("stop_s") is not None and r.get("collections")]
        pause_rows.append([prog, impl, t, gct_label(gct), var,
                           fmt_num(agg(rs, "collections")), fmt_num(agg(rs, "mean_pause_ms")),
                           fmt_num(agg(rs, "max_pause_ms")),
                           fmt_num(median(stops)) if stops else "-"])
    if pause_rows:
        lines.append("## Pause times (cf. Table 5.1)\n")
        lines.append("Average and worst stop-the-world pause per run (median over runs), ms, "
                     "and the mean time to stop the world per collection (from the collection's "
                     "start until every thread has acknowledged its stop signal; sgc only).\n")
        lines.append(md_table(["program", "impl", "thr", "GC thr", "variant", "collections",
                               "mean pause ms", "max pause ms", "mean stop µs"], pause_rows))
        lines.append("")

    lines.append("## All configurations\n")
    lines.append(all_configs_table(rows))
    lines.append("")
    lines.append("Raw data: `results.csv` (one row per run; columns in bench/README.md); "
                 "logs of every run in `logs/`.\n")
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines))


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------
def parse_list(s, conv=str):
    return [conv(x) for x in s.split(",") if x] if s else None


def merge_reports(dirs, out):
    """One report over the runs of several (--report-only A,B,... --out OUT):
    the medians of configurations measured in more than one invocation pool
    all their runs, which is what a noisy machine needs for a tighter
    figure.  The sources' metadata is listed, not merged."""
    rows, sources, metas = [], [], []
    for d in dirs:
        rows += read_csv(os.path.join(d, "results.csv"))
        meta_path = os.path.join(d, "meta.json")
        m = {}
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                m = json.load(f)
        metas.append(m)
        sources.append({"dir": d, "command": m.get("command"), "date": m.get("date"),
                        "commit": m.get("machine", {}).get("git_commit")})
    if not out:
        out = os.path.join(REPO, "bench", "out", time.strftime("%Y%m%d-%H%M%S") + "-merged")
    os.makedirs(out, exist_ok=True)
    write_csv(os.path.join(out, "results.csv"), rows)
    meta = dict(metas[0])  # the machine and date of the first; commits of all
    meta["command"] = "bench/run.py --report-only " + ",".join(dirs)
    meta["mode"] = "merged: " + "; ".join(
        f"{s['dir']} ({s['commit']}, {s['command']})" for s in sources)
    meta["runs"] = "pooled"
    meta["machine"] = dict(meta.get("machine", {}),
                           git_commit=",".join(dict.fromkeys(str(s["commit"]) for s in sources)),
                           git_dirty=False)
    meta["sources"] = sources
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    write_report(out, rows, meta)
    log(f"merged {len(rows)} runs of {len(dirs)} reports; report: {os.path.join(out, 'report.md')}")
    return 0


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
        exps, profile, runs, mname = [("headline", HEADLINE)], "headline", 5, "headline"
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

    bin_dir = a.bin_dir or os.path.join(a.build_dir, "bench")
    cfgs = []
    for n, e in exps:
        cfgs += expand(n, e, progs, impls, threads, gc_threads)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = a.out or os.path.join(REPO, "bench", "out", stamp)
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
                row = run_one(c, r, profile, bin_dir, logs_dir, a.timeout, not a.no_stats)
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
    write_csv(csv_path, rows)
    rows = read_csv(csv_path)
    write_report(out_dir, rows, meta)
    elapsed = time.monotonic() - t_start
    log("")
    if a.headline:
        log("Medians over %d runs (±: half the max-min range); sgc/bdwgc < 1: sgc faster" % runs)
    if any(r["impl"] == "sgc" for r in rows) and any(r["impl"] == "bdwgc" for r in rows):
        log(headline_table(rows))
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
