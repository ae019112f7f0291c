"""results.csv (one row per run) and the aggregation of its rows by
configuration."""

import csv
import re

from .matrix import PROGRAMS
from .util import median, to_float


CSV_COLUMNS = [
    "experiment", "program", "impl", "threads", "gc_threads", "variant", "run", "status",
    "exit_code", "check", "wall_s", "proc_wall_s", "user_s", "sys_s", "gc_s", "mark_s",
    "stop_s", "sweep_s", "max_pause_ms", "mean_pause_ms", "p99_pause_ms", "peak_rss_kb",
    "collections", "gc_count", "heap_bytes", "live_bytes", "marked_bytes", "mark_mb_per_s",
    "marked_objects_enum", "marked_bytes_enum", "mark_mobj_per_s", "markers_used",
    "pages_consumed", "remote_ratio", "cache_kb", "mark_idle_share", "prestop_s",
    "cycle_speedup", "cycle_mb_per_gc_1",
    "cycle_mb_per_gc_n", "cycle_busy_ratio", "cycle_imbalance", "cycle_outside_1", "cycle_outside_n",
    "cycle_speedups", "markers_hist", "metric_name", "metric", "mops", "mops_p10", "hash", "extra", "args", "env", "command", "log",
]


NUMERIC = {
    "threads", "gc_threads", "run", "exit_code", "wall_s", "proc_wall_s", "user_s", "sys_s",
    "gc_s", "mark_s", "stop_s", "sweep_s", "max_pause_ms", "mean_pause_ms", "p99_pause_ms",
    "peak_rss_kb",
    "collections", "gc_count", "heap_bytes", "live_bytes", "marked_bytes", "mark_mb_per_s",
    "marked_objects_enum", "marked_bytes_enum", "mark_mobj_per_s", "markers_used",
    "pages_consumed", "remote_ratio", "cache_kb", "mark_idle_share", "metric",
    "mops", "mops_p10", "prestop_s", "cycle_speedup", "cycle_mb_per_gc_1", "cycle_mb_per_gc_n",
    "cycle_busy_ratio", "cycle_imbalance", "cycle_outside_1", "cycle_outside_n",
}


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


def extra_value(row, key):
    """A program's own RESULT field the runner keeps only in `extra`."""
    for item in (row.get("extra") or "").split():
        k, _, v = item.partition("=")
        if k == key:
            try:
                return float(v)
            except ValueError:
                return None
    return None


def agg_extra(rs, key):
    return median([extra_value(r, key) for r in ok_rows(rs)])


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
