"""The report's tables: sgc against bdwgc, mark speed-ups and rates,
allocation series, and every configuration."""


from .matrix import PROGRAMS
from .results import agg, group, ok_rows, status_of
from .util import fmt_num, gct_label, median, spread_pct


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


def speedup_data(rows):
    """(program, impl, threads, variant) -> {gc_threads: (mark speed, gc_s,
    marked bytes per collection)} (medians)."""
    g = group(rows)
    out = {}
    for (prog, impl, t, gct, var), rs in g.items():
        if gct is None:
            continue
        speed = agg(rs, "mark_mb_per_s")
        gcs = agg(rs, "gc_s")
        per_gc = median([r["marked_bytes"] / r["collections"] for r in ok_rows(rs)
                         if r.get("marked_bytes") is not None and r.get("collections")])
        out.setdefault((prog, impl, t, var), {})[int(gct)] = (speed, gcs, per_gc)
    return {k: v for k, v in out.items() if len(v) >= 2 and 1 in v}


def paired_ratio(g, key, base_key, col):
    """The median over rounds of COL in configuration KEY divided by COL in
    BASE_KEY (keys of G, the rows grouped by group()), both from the same
    round (run number): the machine drifts between rounds, and a ratio
    within a round cancels the drift that a ratio of medians keeps.  None
    without a round that has both."""
    base = {r["run"]: r.get(col) for r in ok_rows(g.get(base_key, []))}
    return median([r[col] / base[r["run"]] for r in ok_rows(g.get(key, []))
                   if r.get(col) and base.get(r["run"])])


def thread_time_ratios(g, key):
    """Configuration KEY against the same with one thread: (median wall
    time with one thread, median wall time of KEY, paired ratio of the
    two), or None when either side has no run that passed."""
    prog, impl, _, gct, var = key
    base_key = (prog, impl, 1, gct, var)
    base, wall = agg(g.get(base_key, []), "wall_s"), agg(g.get(key, []), "wall_s")
    if not base or not wall:
        return None
    return base, wall, paired_ratio(g, key, base_key, "wall_s")


def paired_speedup(g, key, gct, col="mark_mb_per_s"):
    """GCT GC threads against one, paired by round (see paired_ratio)."""
    prog, impl, t, var = key
    return paired_ratio(g, (prog, impl, t, gct, var), (prog, impl, t, 1, var), col)


def rates_against_bdwgc(rows, rate_col, amount_col):
    """For each sgc configuration of the default variant with an explicit
    GC thread count whose bdwgc peer ran too: (key, sgc's runs, bdwgc's
    runs, sgc's median RATE_COL, sgc's AMOUNT_COL over its whole pauses
    and the time before each stop in millions per second, bdwgc's median
    RATE_COL, sgc/bdwgc of RATE_COL paired within rounds).  bdwgc's mark
    time ("World-stopped marking") includes stopping and restarting the
    world; sgc's mark_ns does not, so the second rate divides by sgc's
    whole pauses (stop, mark, finalisation, restart) plus the time before
    each stop (clearing the marks, which sgc does with the world running,
    and waking GC threads), which counts more than bdwgc's figure does:
    the comparison that cannot flatter sgc."""
    g = group(rows)
    for (prog, impl, t, gct, var), rs in g.items():
        if impl != "sgc" or var != "default" or gct is None:
            continue
        key, peer_key = (prog, impl, t, gct, var), (prog, "bdwgc", t, gct, var)
        peer = g.get(peer_key, [])
        s_rate, b_rate = agg(rs, rate_col), agg(peer, rate_col)
        if not s_rate or not b_rate:
            continue
        s_pause_rate = median([r[amount_col] / (r["gc_s"] + (r.get("prestop_s") or 0)) / 1e6
                               for r in ok_rows(rs) if r.get(amount_col) and r.get("gc_s")])
        yield key, rs, peer, s_rate, s_pause_rate, b_rate, paired_ratio(g, key, peer_key, rate_col)


def ratio_cells(s_rate, s_pause_rate, b_rate, paired):
    return [f"{s_rate / b_rate:.2f}", f"{s_pause_rate / b_rate:.2f}" if s_pause_rate else "-",
            f"{paired:.2f}" if paired else "-"]


def mark_rate_rows(rows):
    """Rows (program, threads, GC threads, sgc MB/s, sgc MB/s over its whole
    pauses, bdwgc MB/s, the two ratios of medians, and the first ratio
    paired within rounds) where both implementations ran the default
    variant with an explicit GC thread count (rates_against_bdwgc)."""
    out = []
    for key, _, _, s_rate, s_pause_rate, b_rate, paired in rates_against_bdwgc(
            rows, "mark_mb_per_s", "marked_bytes"):
        prog, _, t, gct, _ = key
        out.append([prog, t, gct, fmt_num(s_rate), fmt_num(s_pause_rate), fmt_num(b_rate)]
                   + ratio_cells(s_rate, s_pause_rate, b_rate, paired))
    return out


def bytes_per_object(rs):
    """The median over RS's runs of the walked bytes per walked object."""
    return median([r["marked_bytes_enum"] / r["marked_objects_enum"] for r in ok_rows(rs)
                   if r.get("marked_objects_enum")])


def mark_object_rate_rows(rows):
    """As mark_rate_rows, in millions of objects per second, from runs that
    counted their marked objects (BENCH_COUNT_MARKED, the mark-objects
    experiment), then the bytes each collector counts per marked object
    and bdwgc's over sgc's.  The objects are counted the same way under
    both collectors, so the ratio is free of bdwgc's extra byte per object
    that the byte rates carry."""
    out = []
    for key, rs, peer, s_rate, s_pause_rate, b_rate, paired in rates_against_bdwgc(
            rows, "mark_mobj_per_s", "marked_objects_enum"):
        prog, _, t, gct, _ = key
        s_size, b_size = bytes_per_object(rs), bytes_per_object(peer)
        out.append([prog, t, gct, f"{s_rate:.2f}", f"{s_pause_rate:.2f}" if s_pause_rate else "-",
                    f"{b_rate:.2f}"] + ratio_cells(s_rate, s_pause_rate, b_rate, paired)
                   + [f"{s_size:.1f}" if s_size else "-", f"{b_size:.1f}" if b_size else "-",
                      f"{b_size / s_size:.2f}" if s_size and b_size else "-"])
    return out


def alloc_peer_ratios(rows, program, peer):
    """sgc label -> {threads: sgc's mops over PEER's (an implementation
    run with its default variant) in the same round, the median over
    rounds} for the alloc program: issue 5's targets (at least 0.8x
    mimalloc, 2x bdwgc) as a paired figure."""
    g = group(rows)
    out = {}
    for (prog, impl, t, gct, var), rs in g.items():
        if prog != program or impl != "sgc" or gct is not None:
            continue
        v = paired_ratio(g, (prog, impl, t, gct, var), (prog, peer, t, None, "default"), "mops")
        if v is not None:
            out.setdefault("sgc" if var == "default" else f"sgc {var}", {})[t] = v
    return out


def alloc_series(rows, program, paired=False, col="mops"):
    """label -> {threads: median COL} for the alloc program; with PAIRED,
    label -> {threads: COL against 1 thread, paired by round}."""
    g = group(rows)
    series = {}
    for (prog, impl, t, gct, var), rs in g.items():
        if prog != program or gct is not None:
            continue
        if paired:
            v = paired_ratio(g, (prog, impl, t, gct, var), (prog, impl, 1, gct, var), col)
        else:
            v = agg(rs, col)
        if v is None:
            continue
        label = impl if var == "default" else f"{impl} {var}"
        series.setdefault(label, {})[t] = v
    return series
