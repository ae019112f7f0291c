"""Reading a run's output: the program's RESULT line, sgc's SGC_TRACE (one JSON
object per collection) and bdwgc's GC_PRINT_STATS log (see bench/run.py's
docstring for the lines used)."""

import json
import math
import re
import statistics


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


def mark_rate(recs):
    """Marked bytes per mark nanosecond over the collections RECS; None
    when they took no mark time."""
    ns = sum(r.get("mark_ns", 0) for r in recs)
    return sum(r.get("marked_bytes", 0) for r in recs) / ns if ns else None


def markers_split(recs):
    """For a run whose collections used different GC thread counts
    (SGC_MARKERS_CYCLE): the mark rate of those with the most over the rate
    of those with one, and each side's marked bytes per collection; None
    unless the run has both."""
    one = [r for r in recs if r.get("markers") == 1]
    most = max((r.get("markers", 1) for r in recs), default=1)
    many = [r for r in recs if most > 1 and r.get("markers") == most]
    if not one or not many:
        return None

    r1, rn = mark_rate(one), mark_rate(many)
    if not r1 or not rn:
        return None
    split = {"cycle_speedup": rn / r1,
             "cycle_mb_per_gc_1": sum(r.get("marked_bytes", 0) for r in one) / len(one) / 1e6,
             "cycle_mb_per_gc_n": sum(r.get("marked_bytes", 0) for r in many) / len(many) / 1e6}
    split.update(busy_decomposition(one, many, most))
    return split


def markers_rates(recs):
    """For a run whose collections cycled through several GC thread counts
    (SGC_MARKERS_CYCLE=1,2,4,...): per count, the mark rate over that of the
    collections with one GC thread, and the marked MB per collection, as
    "count:speed-up:MB;..." (column cycle_speedups); None unless the run
    has one-thread collections and at least one other count."""
    by_count = {}
    for r in recs:
        by_count.setdefault(r.get("markers", 1), []).append(r)

    base = mark_rate(by_count.get(1, []))
    if not base or len(by_count) < 2:
        return None
    parts = []
    for c in sorted(by_count):
        rc = mark_rate(by_count[c])
        if rc:
            mb = sum(r.get("marked_bytes", 0) for r in by_count[c]) / len(by_count[c]) / 1e6
            parts.append(f"{c}:{rc / base:.4f}:{mb:.2f}")
    return ";".join(parts)


def parse_markers_hist(text):
    """The column markers_hist back as {count: collections}."""
    out = {}
    for part in (text or "").split(";"):
        c, _, n = part.partition(":")
        if c.isdigit() and n.isdigit():
            out[int(c)] = int(n)
    return out


def parse_cycle_speedups(text):
    """The column cycle_speedups back as {count: (speed-up, MB per GC)}."""
    out = {}
    for part in (text or "").split(";"):
        f = part.split(":")
        if len(f) == 3:
            out[int(f[0])] = (float(f[1]), float(f[2]))
    return out


def busy_totals(rs):
    """Over collections RS: marked bytes, mark time, the GC threads' busy
    time summed, and the busiest thread's busy time summed; None when a
    record lacks its per-thread busy times (an older trace)."""
    marked = mark = busy = busiest = 0
    for r in rs:
        threads = r.get("mark_threads")
        if not threads or any("busy_ns" not in t for t in threads):
            return None
        marked += r.get("marked_bytes", 0)
        mark += r.get("mark_ns", 0)
        busy += sum(t["busy_ns"] for t in threads)
        busiest += max(t["busy_ns"] for t in threads)
    return (marked, mark, busy, busiest) if marked and mark and busy else None


def busy_decomposition(one, many, n):
    """Where the N-thread side of a cycled run loses against N x the
    1-thread rate, as three factors whose product is exact:
      speed-up = N x (1 - outside_n) / (1 - outside_1) / (busy_ratio x imbalance)
    busy_ratio: the GC threads' busy time per marked byte, N threads over 1
    (more work per byte: memory shared by the cores, lines moving between
    them, time the VM takes away); imbalance: the busiest thread's busy time
    over the mean thread's; outside: the share of the mark time in which
    the busiest thread was not busy (waking, stealing, termination)."""
    t1, tn = busy_totals(one), busy_totals(many)
    if not t1 or not tn:
        return {}
    (b1, m1, s1, x1), (bn, mn, sn, xn) = t1, tn
    return {"cycle_busy_ratio": (sn / bn) / (s1 / b1),
            "cycle_imbalance": xn / (sn / n),
            "cycle_outside_1": 1 - x1 / m1,
            "cycle_outside_n": 1 - xn / mn}


def parse_sgc_trace(path, by_markers=False):
    """BY_MARKERS: also split the collections by GC thread count
    (markers_split), for runs under SGC_MARKERS_CYCLE."""
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
    # A concurrent cycle's record (its finish) carries its start's pause
    # too: both are pauses the program waited for.
    starts = [r["start_pause_ns"] / 1e9 for r in recs if r.get("start_pause_ns")]
    summary = summarize_gcs(
        [r.get("pause_ns", 0) / 1e9 for r in recs],
        [r.get("mark_ns", 0) / 1e9 for r in recs],
        [r.get("marked_bytes", 0) for r in recs],
        [r.get("heap_bytes", 0) for r in recs],
        [r.get("live_bytes", 0) for r in recs],
        stop=[r.get("stop_ns", 0) / 1e9 for r in recs],
        sweep=[r.get("sweep_ns", 0) / 1e9 for r in recs],
        markers=max([r.get("markers", 0) for r in recs], default=None), start_pauses=starts)
    # Collector time before each stop (clearing the marks, waking the GC
    # threads), outside the pauses since sgc does it with the world running.
    if recs and "prestop_ns" in recs[-1]:
        summary["prestop_s"] = sum(r.get("prestop_ns", 0) for r in recs) / 1e9
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
    # Load balance of parallel marking: the share of the GC threads' time in
    # parallel collections spent idle (stealing or detecting termination).
    par = [r for r in recs if r.get("markers", 1) > 1 and "mark_idle_ns" in r]
    present = sum(r["markers"] * r.get("mark_ns", 0) for r in par)
    if present:
        summary["mark_idle_share"] = sum(r["mark_idle_ns"] for r in par) / present
    # How many collections marked with each GC thread count ("1:12;2:3"):
    # what SGC_MARKERS=auto or the adaptive rule chose
    counts = {}
    for r in recs:
        counts[r.get("markers", 1)] = counts.get(r.get("markers", 1), 0) + 1
    if counts:
        summary["markers_hist"] = ";".join(f"{c}:{n}" for c, n in sorted(counts.items()))
    if by_markers:
        summary.update(markers_split(recs) or {})
        rates = markers_rates(recs)
        if rates:
            summary["cycle_speedups"] = rates
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
    def flush_incremental(c):
        # Incremental mode prints no "Complete collection" for a collection
        # it finished incrementally: its world-stopped marking is the pause
        # (its smaller incremental stops are not printed, so bdwgc's pauses
        # here are if anything too short).
        if c is not None and c.get("stopped"):
            pauses.append(c["mark"])
            marks.append(c["mark"])
            marked.append(c["marked"])
            heaps.append(c["heap"])
            lives.append(c["marked"])

    with f:
        for line in f:
            line = line.strip()
            m = RE_BDW_START.match(line)
            if m:
                flush_incremental(cur)
                cur = {"mark": 0.0, "marked": 0, "heap": 0}
                continue
            m = RE_BDW_MARK.match(line)
            if m and cur is not None:
                cur["mark"] = int(m.group(1)) / 1e3 + int(m.group(2)) / 1e9
                cur["stopped"] = True
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
        flush_incremental(cur)
    markers = gc_threads if gc_threads else (min(nproc, 16) if nproc else None)
    return summarize_gcs(pauses, marks, marked, heaps, lives, markers=markers)


def nearest_rank(values, q):
    """The Q-quantile of VALUES by nearest rank: the smallest value with at
    least a share Q of them at or below it (with fewer than 100 pauses,
    the 99th percentile is the worst)."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * q)) - 1]


def summarize_gcs(pauses, marks, marked, heaps, lives, stop=None, sweep=None, markers=None,
                  start_pauses=None):
    """PAUSES: one per collection (a concurrent cycle's finish); START_PAUSES:
    concurrent cycles' start pauses, counted in the pause figures but not
    as collections."""
    n = len(pauses)
    mark_s = sum(marks)
    mb = sum(marked)
    every = list(pauses) + list(start_pauses or [])
    return {
        "collections": n,
        "gc_s": sum(every),
        "mark_s": mark_s,
        "stop_s": sum(stop) if stop else None,
        "sweep_s": sum(sweep) if sweep else None,
        "max_pause_ms": max(every) * 1e3 if every else 0.0,
        "mean_pause_ms": sum(every) / len(every) * 1e3 if every else 0.0,
        "p99_pause_ms": nearest_rank(every, 0.99) * 1e3 if every else 0.0,
        "heap_bytes": max(heaps) if heaps else None,
        "live_bytes": max(lives) if lives else None,
        "marked_bytes": mb,
        "mark_mb_per_s": mb / mark_s / 1e6 if mark_s > 0 else None,
        "markers_used": markers,
    }
