"""report.md from a results.csv, and one report pooling several.

The report is a sequence of sections; each section function takes the runs'
rows and returns its Markdown lines, empty when the runs have nothing for
it (an alloc-only invocation has no pause table, a deque one no allocation
table)."""

import json
import os
import time

from .mark_scaling import section_mark_scaling
from .markers_auto import section_markers_auto
from .matrix import ALLOC_PROGRAMS, CEILING, IMPLS
from .plots import get_plt, plot_alloc, plot_concurrent, plot_gc_user, plot_speedup, plot_unfair
from .results import agg, agg_extra, group, hash_mismatches, ok_rows, read_csv, status_of, write_csv
from .tables import (all_configs_table, alloc_peer_ratios, alloc_series, comparison_rows,
                     headline_table, mark_object_rate_rows, mark_rate_rows, md_table,
                     paired_ratio, paired_speedup, speedup_data, thread_time_ratios)
from .util import REPO, fmt_num, gct_label, log, median, to_float


def table_section(heading, prose, headers, body):
    """A section of one table: HEADING, a paragraph, the table of BODY's
    rows; empty when BODY is."""
    if not body:
        return []
    return [heading, prose, md_table(headers, body), ""]


def section_header(meta):
    m = meta.get("machine", {})
    return [
        "# sgc benchmark report\n",
        f"- date: {meta.get('date', '?')}",
        f"- machine: {m.get('nproc', '?')} CPUs ({m.get('nproc_usable', '?')} usable), "
        f"{m.get('cpu', '?')}, {m.get('mem_gib', '?')} GiB, NUMA nodes: "
        f"{m.get('numa_nodes', '?')}",
        f"- system: {m.get('os', '?')}, kernel {m.get('kernel', '?')}, {m.get('gcc', '')}",
        f"- load average at start: {m.get('loadavg', '?')}",
        f"- peers: bdwgc (libgc1 {m.get('libgc', '?')}"
        + (f", loaded from {m['libgc_path']}" if m.get("libgc_path") else "")
        + "); malloc peers by LD_PRELOAD",
        f"- sgc commit: {m.get('git_commit', '?')}"
        + (" (with uncommitted changes)" if m.get("git_dirty") else ""),
        f"- command: `{meta.get('command', '?')}`",
        f"- mode: {meta.get('mode', '?')}, runs per configuration: {meta.get('runs', '?')}, "
        f"size profile: {meta.get('profile', '?')}",
        "",
        "Each number is the median over the runs that passed their self-check; "
        "'±x%' is half the (max-min) range relative to the median.  `wall s` is the "
        "program's timed region, `GC s` the sum of stop-the-world pauses "
        "(sgc: `pause_ns` of SGC_TRACE, and a concurrent cycle's `start_pause_ns`; "
        "bdwgc: 'Complete collection took' of GC_PRINT_STATS), RSS the peak resident set of the process.  Ratios "
        "compare implementations measured in this same invocation, runs interleaved.\n",
    ]


def section_status(rows):
    n_ok = sum(1 for r in rows if r["status"] == "ok")
    lines = [f"## Status\n\n{n_ok} of {len(rows)} runs passed.\n"]
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
    return lines


def section_versus_bdwgc(rows):
    comp = [c for c in comparison_rows(rows) if c[3] == "default" and c[5]]
    if not comp:
        return []
    return ["## sgc vs bdwgc\n", "sgc/bdwgc < 1 means sgc is faster.\n",
            headline_table(rows, fmt="md"), ""]


def section_figures(rows, out_dir, plt):
    if plt is None:
        return ["_matplotlib is not available (run with /usr/bin/python3 and "
                "apt-get install python3-matplotlib): no plots._\n"]
    lines = []
    if plot_gc_user(plt, rows, os.path.join(out_dir, "gc_user_time.png")):
        lines.append("## Run time: user vs GC (cf. Fig. 3.5)\n")
        lines.append("![user vs GC time](gc_user_time.png)\n")
    if plot_speedup(plt, rows, os.path.join(out_dir, "mark_speedup.png")):
        lines.append("## Mark-phase speed-up (cf. Fig. 3.7)\n")
        lines.append("Speed-up = (marked bytes / mark time) relative to 1 GC thread of the "
                     "same implementation and variant.\n")
        lines.append("![mark speed-up](mark_speedup.png)\n")
    return lines


def section_speedup(rows):
    sp = speedup_data(rows)
    if not sp or not any(v[1][0] or v[1][1] for v in sp.values()):
        return []
    hdr = ["program", "impl", "thr", "variant"]
    gts = sorted({x for d in sp.values() for x in d})
    more = [x for x in gts if x > 1]
    hdr += [f"mark speed-up g={x}" for x in gts] + [f"GC speed-up g={x}" for x in gts]
    hdr += [f"paired mark speed-up g={x}" for x in more] + [f"marked MB/GC g={x}" for x in gts]
    hdr += [f"GC threads idle g={x}" for x in more]
    g = group(rows)
    body = []
    for k in sorted(sp):
        d = sp[k]
        b_speed, b_gc, _ = d[1]
        row = [k[0], k[1], k[2], k[3]]
        row += [f"{d[x][0] / b_speed:.2f}" if x in d and d[x][0] and b_speed else "-" for x in gts]
        row += [f"{b_gc / d[x][1]:.2f}" if x in d and d[x][1] and b_gc else "-" for x in gts]
        if any(v != "-" for v in row[4:]):
            paired = [paired_speedup(g, k, x) if x in d else None for x in more]
            row += [f"{p:.2f}" if p else "-" for p in paired]
            row += [fmt_num(d[x][2] / 1e6) if x in d and d[x][2] else "-" for x in gts]
            idle = [agg(g.get((k[0], k[1], k[2], x, k[3]), []), "mark_idle_share") for x in more]
            row += [f"{i * 100:.1f}%" if i is not None else "-" for i in idle]
            body.append(row)
    return ["### Speed-up table\n",
            "Mark and GC speed-up: ratios of the medians over runs.  Paired: the median over "
            "rounds of the ratio within a round (the runner runs every configuration once "
            "per round, so a round's g=1 and g=2 runs are minutes apart at most; a pooled "
            "report pairs only runs of the same source).  "
            "Marked MB/GC: the median run's marked bytes per collection.  Where it differs "
            "between GC thread counts the runs marked different heaps (cube's collections "
            "lock into phase with its iterations, at their start or part-way through), and "
            "the speed-up compares unlike work: fixed costs per collection weigh more on "
            "the smaller heap.  GC threads idle: the share of the GC threads' time in "
            "parallel collections spent stealing or detecting termination (`mark_idle_ns` "
            "over markers x `mark_ns` in `SGC_TRACE`).\n",
            md_table(hdr, body), ""]


def fmt_form(v, form="{:.2f}"):
    """V in FORM, or a dash when there is no value."""
    return form.format(v) if v is not None else "-"


def section_cycle(rows):
    """The mark speed-up within each run (experiment mark-cycle)."""
    body = []
    for (prog, impl, t, gct, var), rs in group(rows).items():
        vals = [r["cycle_speedup"] for r in ok_rows(rs) if r.get("cycle_speedup")]
        if not vals:
            continue
        body.append([prog, t, gct_label(gct), var, len(vals), f"{median(vals):.2f}",
                     f"{min(vals):.2f}–{max(vals):.2f}", fmt_num(agg(rs, "cycle_mb_per_gc_1")),
                     fmt_num(agg(rs, "cycle_mb_per_gc_n")), fmt_form(agg(rs, "cycle_busy_ratio")),
                     fmt_form(agg(rs, "cycle_imbalance"), "{:.3f}"),
                     fmt_form(agg(rs, "cycle_outside_1"), "{:.1%}"),
                     fmt_form(agg(rs, "cycle_outside_n"), "{:.1%}")])
    return table_section(
        "### Mark speed-up within each run\n",
        "Collections alternate between 1 GC thread and the most the run has "
        "(`SGC_MARKERS_CYCLE=1,2`), so each pair of neighbouring collections marks "
        "alike heaps milliseconds apart, where the table above pairs whole runs "
        "seconds or minutes apart.  Per run: the marked bytes over the mark time of "
        "the collections with the most GC threads, divided by the same for those "
        "with one; the median over runs and its range.  Marked MB/GC: each side's "
        "mean, median over runs.  `cycle-store` sets marks with a plain store (the "
        "default), `cycle-exchange` with the atomic exchange (`SGC_MARK_SET`).  "
        "The last four columns say where the speed-up falls short of n, the most "
        "GC threads: each is taken per run over its collections of each side, "
        "where their product is exact, speed-up = n x (1 - outside most) / "
        "(1 - outside 1) / (busy/byte x slowest/mean), and shown as the median "
        "over runs.  busy/byte: the GC "
        "threads' busy time (`busy_ns`, not stealing or detecting termination) "
        "per marked byte, n threads over 1: above 1, each byte cost more "
        "(memory both cores use, lines moving between them, time the VM gave "
        "elsewhere).  slowest/mean: the busiest thread's busy time over the "
        "mean thread's (imbalance).  outside: the share of the mark time in "
        "which the busiest thread was not busy (waking, stealing, termination).\n",
        ["program", "thr", "GC thr", "variant", "runs", "in-run mark speed-up", "range",
         "marked MB/GC 1 GC thr", "marked MB/GC most", "busy/byte most/1", "slowest/mean",
         "outside 1", "outside most"],
        body)


def section_mark_rate(rows):
    return table_section(
        "### Mark rate against bdwgc\n",
        "Marked bytes / mark time (median MB/s) with the same GC thread count; "
        "sgc/bdwgc > 1 means sgc marks faster.  bdwgc's mark time ('World-stopped "
        "marking') includes stopping and restarting the world and sgc's `mark_ns` does "
        "not, so the last column divides sgc's marked bytes by its whole pauses "
        "and the time before each stop (`prestop_ns`: clearing the marks, which "
        "sgc does with the world running, and waking GC threads) instead (stop, "
        "mark, finalisation, restart and that: more than bdwgc's figure counts).  "
        "The two heaps differ (collection points, heap sizes), so this "
        "compares rates, not work.  Nor do the bytes weigh alike: bdwgc counts "
        "its objects' sizes, which add a byte to every request (interior "
        "pointers to one past the end), so a 16-byte object fills 32 bytes of "
        "its heap and 16 of sgc's; where objects are that small (markshape's "
        "list and tiny heaps mark 2.0x the bytes in bdwgc, its tree and wide "
        "heaps 1.5x), compare the wall times of \"sgc vs bdwgc\", which collect "
        "the same objects.  The last column is sgc/bdwgc paired: the "
        "median over rounds of the ratio within a round.\n",
        ["program", "thr", "GC thr", "sgc MB/s", "sgc MB/s over pauses", "bdwgc MB/s",
         "sgc/bdwgc", "sgc over pauses/bdwgc", "sgc/bdwgc paired"],
        mark_rate_rows(rows))


def section_mark_objects(rows):
    return table_section(
        "### Objects marked per second against bdwgc\n",
        "Marked objects / mark time (median, millions per second) with the same GC "
        "thread count, the objects counted alike under both collectors: a walk of "
        "the marked objects after each collection (`BENCH_COUNT_MARKED=1`, "
        "bench/bench_marked.h; outside either collector's mark time).  Unlike the "
        "byte rates above, this does not count bdwgc's extra byte per object; the "
        "last three columns give the bytes each collector counts per marked object "
        "(bdwgc's walk matches its 'In-use heap' figures, sgc's its trace's "
        "marked bytes).  bdwgc's mark time includes stopping and restarting the "
        "world and sgc's does not, so the second rate, as above, divides by sgc's "
        "whole pauses and the time before each stop.  Paired: the median over "
        "rounds of sgc/bdwgc within a round.\n",
        ["program", "thr", "GC thr", "sgc Mobj/s", "sgc Mobj/s over pauses", "bdwgc Mobj/s",
         "sgc/bdwgc", "sgc over pauses/bdwgc", "sgc/bdwgc paired", "sgc B/obj", "bdwgc B/obj",
         "B/obj bdwgc/sgc"],
        mark_object_rate_rows(rows))




def alloc_peer_lines(rows, program, threads):
    """sgc's throughput over each peer's that ran, paired within rounds."""
    ratios = {peer: alloc_peer_ratios(rows, program, peer) for peer in ("mimalloc", "bdwgc")}
    ratios = {peer: r for peer, r in ratios.items() if r}
    if not ratios:
        return []
    labels = sorted({lab for r in ratios.values() for lab in r})
    head = [f"/ {peer} {t} thr" for peer in ratios for t in threads]
    body = [[lab] + [fmt_form(r.get(lab, {}).get(t)) for r in ratios.values() for t in threads]
            for lab in labels]
    return [f"**{program}**, sgc against its peers: sgc's throughput over the peer's in the "
            "same round, the median over rounds\n", md_table(["sgc"] + head, body), ""]


def section_alloc(rows, out_dir, plt):
    alloc_progs = [p for p in ALLOC_PROGRAMS if alloc_series(rows, p)]
    if not alloc_progs:
        return []
    lines = ["## Allocation throughput (cf. Table 2.1)\n"]
    for p in alloc_progs:
        s = alloc_series(rows, p)
        up = alloc_series(rows, p, paired=True)
        # alloc's mops_p10 (bench/alloc.c): the speed-up with the VM's slow
        # stretches left out, where the runs report it
        up10 = alloc_series(rows, p, paired=True, col="mops_p10")
        ts = sorted({t for v in s.values() for t in v})
        more = [t for t in ts if t > 1]
        more10 = more if any(up10.get(lab, {}).get(t) for lab in up10 for t in more) else []
        lines.append(f"**{p}**: million allocations per second over all threads, and the "
                     "speed-up over 1 thread (paired: the median over rounds of the ratio "
                     "within a round)"
                     + ("; p10: the same speed-up of `mops_p10`, the rate at each thread's "
                        "10th-percentile round time" if more10 else "") + "\n")
        fmt_up = lambda d, lab, t: f"{d[lab][t]:.2f}" if d.get(lab, {}).get(t) else "-"
        lines.append(md_table(["implementation"] + [f"{t} thr" for t in ts]
                              + [f"{t} thr / 1" for t in more]
                              + [f"{t} thr / 1, p10" for t in more10],
                              [[lab] + [fmt_num(s[lab].get(t)) for t in ts]
                               + [fmt_up(up, lab, t) for t in more]
                               + [fmt_up(up10, lab, t) for t in more10] for lab in sorted(s)]))
        lines.append("")
        lines += alloc_peer_lines(rows, p, ts)
    if plt is not None and plot_alloc(plt, rows, os.path.join(out_dir, "alloc_throughput.png"),
                                      alloc_progs):
        lines.append("![allocation throughput](alloc_throughput.png)\n")
    return lines


def section_thread_time(rows):
    """Each program's wall time with T threads over its time with 1, as a
    ratio of medians and paired within rounds: the figure of issue 4's
    gcbench target (2 clients in at most 1.3x the time of 1)."""
    body = []
    g = group(rows)
    for key in sorted(g, key=lambda k: (k[0], k[1], k[2], str(k[3]), k[4])):
        prog, impl, t, gct, var = key
        if t == 1 or prog in ALLOC_PROGRAMS or prog in CEILING or prog.startswith("unfair"):
            continue
        ratios = thread_time_ratios(g, key)
        if not ratios:
            continue
        base, wall, paired = ratios
        body.append([prog, impl, t, gct_label(gct), var, fmt_num(base), fmt_num(wall),
                     f"{wall / base:.2f}", f"{paired:.2f}" if paired else "-"])
    return table_section(
        "## Time with more threads\n",
        "Wall time with T threads over the time with 1 (the ratio of the medians, and "
        "the median over rounds of the ratio within a round).  gcbench's clients each "
        "do the whole benchmark, so its ratio is the time of T times the work (issue 4's "
        "target: at most 1.3 with 2 clients on 2 cores); bh, cky, cube and matmul share "
        "one problem among their threads, so theirs is the inverse of a speed-up.\n",
        ["program", "impl", "thr", "GC thr", "variant", "wall s 1 thr", "wall s",
         "time / 1 thr", "paired"],
        body)


def section_ceiling(rows):
    """The machine's ceiling (bench/ceiling.c) next to the speed-ups above."""
    body = []
    g = group(rows)
    for prog in CEILING:
        keys = {k[2]: k for k in g if k[0] == prog}
        base = keys.get(1) and agg(g[keys[1]], "mops")
        if not base:
            continue
        for t in sorted(keys):
            speed = agg(g[keys[t]], "mops")
            if t > 1 and speed:
                paired = paired_ratio(g, keys[t], keys[1], "mops")
                body.append([prog, t, fmt_num(base), fmt_num(speed), f"{speed / base:.2f}",
                             f"{paired:.2f}" if paired else "-"])
    return table_section(
        "## Machine ceiling\n",
        "Loops that share nothing and take no lock (`bench/ceiling.c`; compute: registers "
        "only; chase: one dependent cache miss per step along a random cycle through "
        "shared nodes (128 MiB at the default size), the access pattern of marking; "
        "gather: the same cycle followed at 16 places at once, so 16 misses are in "
        "flight, as the marker's prefetch window keeps them; "
        "stream: sequential reads), each thread doing the work of one, run in this "
        "invocation's rounds.  A parallel speed-up measured in the same rounds can be "
        "expected to stay at or below these.\n",
        ["loop", "thr", "M steps/s 1 thr", "M steps/s", "speed-up", "paired speed-up"],
        body)


def section_unfair(rows, out_dir, plt):
    if not any(r["program"].startswith("unfair") for r in rows):
        return []
    body = []
    for (prog, impl, t, gct, var), rs in group(rows).items():
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
    lines = ["## Unfair benchmark: memory (cf. Fig. 2.5)\n",
             md_table(["program", "impl", "variant", "thr", "peak RSS MB",
                       "peak heap MB", "small pages consumed MB (a)",
                       "remote page ratio", "wall s"], body), ""]
    if plt is not None and plot_unfair(plt, rows, os.path.join(out_dir, "unfair_memory.png")):
        lines.append("![unfair memory](unfair_memory.png)\n")
    return lines


def section_bursty(rows):
    if not any(r["program"] == "bursty" for r in rows):
        return []
    body = []
    for (prog, impl, t, gct, var), rs in group(rows).items():
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
    return ["## Bursty threads (cf. papers/001, VolanoMark)\n",
            md_table(["impl", "variant", "threads", "M allocs/s", "collections",
                      "unused in caches KB (median per collection)",
                      "mean pause ms", "max pause ms", "heap MB", "peak RSS MB",
                      "status"], body), ""]


def section_sleepers(rows):
    body = []
    for (prog, impl, t, gct, var), rs in group(rows).items():
        if not prog.startswith("sleepers"):
            continue
        ceiling = agg_extra(rs, "ceiling_bursts_per_s")
        body.append([prog, impl, var, t, fmt_num(agg(rs, "metric")), fmt_num(ceiling),
                     fmt_num(agg_extra(rs, "sleep_overrun")), fmt_num(agg(rs, "collections")),
                     fmt_num(agg_extra(rs, "peak_heap_mb")), fmt_num(agg_extra(rs, "kept_mb") or agg_extra(rs, "kept_mb_approx")),
                     fmt_num(agg_extra(rs, "worst_burst_ms")), fmt_num(agg_extra(rs, "p99_burst_ms")),
                     status_of(rs)])
    if not body:
        return []
    return ["## Sleeping threads with their own live sets (issue 53)\n",
            "`ceiling bursts/s`: the rate if bursts cost nothing, from each run's own sleep "
            "schedule (sum over threads of bursts / seconds of sleep asked for); no allocator "
            "can pass it.  `oversleep`: seconds asleep over seconds asked for.  "
            "`sleepers-floor`: bursts of one object, what the sleeps alone allow on this "
            "machine when allocating costs next to nothing.\n",
            md_table(["program", "impl", "variant", "threads", "bursts/s", "ceiling bursts/s",
                      "oversleep", "collections", "peak heap MB",
                      "kept MB", "worst burst ms", "p99 burst ms", "status"], body), ""]


def section_latency(rows):
    body = []
    for (prog, impl, t, gct, var), rs in group(rows).items():
        if not prog.startswith("latency"):
            continue
        body.append([prog, impl, var, t, fmt_num(agg(rs, "metric")),
                     fmt_num(agg_extra(rs, "p50_us")), fmt_num(agg_extra(rs, "p99_us")),
                     fmt_num(agg_extra(rs, "p999_us")), fmt_num(agg_extra(rs, "max_us")),
                     fmt_num(agg(rs, "collections")), status_of(rs)])
    if not body:
        return []
    return ["## Request latency with a large live heap (issue 54)\n",
            md_table(["program", "impl", "variant", "threads", "requests/s", "p50 µs", "p99 µs",
                      "p99.9 µs", "max µs", "collections", "status"], body), ""]


def section_pauses(rows):
    """Table 5.1-like: pauses and the time to stop the world."""
    pause_rows = []
    for (prog, impl, t, gct, var), rs in group(rows).items():
        if IMPLS.get(impl, {}).get("kind") != "gc" or agg(rs, "collections") is None:
            continue
        # Time to stop the world: sgc's stop_ns (signal sent to every
        # thread acknowledged); bdwgc's log does not give it.
        stops = [r["stop_s"] / r["collections"] * 1e6 for r in ok_rows(rs)
                 if r.get("stop_s") is not None and r.get("collections")]
        pause_rows.append([prog, impl, t, gct_label(gct), var,
                           fmt_num(agg(rs, "collections")), fmt_num(agg(rs, "mean_pause_ms")),
                           fmt_num(agg(rs, "p99_pause_ms")), fmt_num(agg(rs, "max_pause_ms")),
                           fmt_num(median(stops)) if stops else "-"])
    return table_section(
        "## Pause times (cf. Table 5.1)\n",
        "Average, 99th-percentile (nearest rank over a run's pauses, a concurrent "
        "cycle's start and finish each counted: with under 100 pauses it is the "
        "worst) and worst stop-the-world pause per run (median over runs), ms, "
        "and the mean time to stop the world per collection (from the first stop "
        "signal until every thread has acknowledged it; threads waiting in sgc for "
        "its lock or in GC_pthread_join are not signalled; sgc only).\n",
        ["program", "impl", "thr", "GC thr", "variant", "collections", "mean pause ms",
         "p99 pause ms", "max pause ms", "mean stop µs"],
        pause_rows)


def concurrent_rows(rows):
    """Fig. 5.2 and Tables 5.1-5.2's analogue: for each program and thread
    count run in sgc's stop mode and in some concurrent configuration,
    every collector's run time over stop mode's (median of the per-round
    ratios, as paired_ratio takes them), pauses and peak RSS.  The latency
    programs run for a fixed time (their wall time says nothing): their
    own section gives their rates."""
    g = group(rows)
    out = []
    for base_key in list(g):
        prog, impl, t, gct, var = base_key
        if impl != "sgc" or var != "default" or gct is not None or prog.startswith("latency"):
            continue
        peers = [k for k in g if k[0] == prog and k[2] == t and k[3] is None
                 and (k[4].startswith("concurrent") or k[1] != "sgc")]
        if not any(k[4].startswith("concurrent") or k[1] == "bdwgc-incr" for k in peers):
            continue
        for k in [base_key] + peers:
            rs = g[k]
            ratio = 1.0 if k == base_key else paired_ratio(g, k, base_key, "wall_s")
            rss = agg(rs, "peak_rss_kb")
            out.append({"program": prog, "threads": t, "impl": k[1], "variant": k[4],
                        "wall_s": agg(rs, "wall_s"), "ratio": ratio,
                        "mean_pause_ms": agg(rs, "mean_pause_ms"),
                        "p99_pause_ms": agg(rs, "p99_pause_ms"),
                        "max_pause_ms": agg(rs, "max_pause_ms"),
                        "rss_mb": rss / 1024 if rss is not None else None,
                        "status": status_of(rs)})
    return out


def section_concurrent(rows, out_dir, plt):
    data = concurrent_rows(rows)
    if not data:
        return []
    body = [[d["program"], d["threads"], d["impl"], d["variant"], fmt_num(d["wall_s"]),
             fmt_num(d["ratio"]), fmt_num(d["mean_pause_ms"]), fmt_num(d["p99_pause_ms"]),
             fmt_num(d["max_pause_ms"]), fmt_num(d["rss_mb"]), d["status"]] for d in data]
    lines = ["## Concurrent collection against stop mode (cf. Fig. 5.2, Tables 5.1-5.2)\n",
             "`/ stop`: the run's wall time over sgc stop mode's in the same round, the "
             "median over rounds (< 1: faster than stop mode).  Pauses as in the pause "
             "table below (a concurrent cycle's start and finish each a pause); "
             "bdwgc-incr is bdwgc with `GC_ENABLE_INCREMENTAL=1`.\n",
             md_table(["program", "thr", "impl", "variant", "wall s", "/ stop", "mean pause ms",
                       "p99 pause ms", "max pause ms", "peak RSS MB", "status"], body), ""]
    if plt is not None and plot_concurrent(plt, data, os.path.join(out_dir, "concurrent_time.png")):
        lines.append("![run time over stop mode's](concurrent_time.png)\n")
    return lines


def write_report(out_dir, rows, meta):
    plt = get_plt()
    lines = (section_header(meta) + section_status(rows) + section_versus_bdwgc(rows)
             + section_figures(rows, out_dir, plt) + section_speedup(rows) + section_cycle(rows)
             + section_mark_scaling(rows, out_dir, plt) + section_markers_auto(rows)
             + section_mark_rate(rows) + section_mark_objects(rows) + section_thread_time(rows)
             + section_ceiling(rows)
             + section_alloc(rows, out_dir, plt)
             + section_unfair(rows, out_dir, plt) + section_bursty(rows) + section_sleepers(rows) + section_latency(rows)
             + section_concurrent(rows, out_dir, plt) + section_pauses(rows))
    lines += ["## All configurations\n", all_configs_table(rows), "",
              "Raw data: `results.csv` (one row per run; columns in bench/README.md); "
              "logs of every run in `logs/` (in copies kept under docs/benchmarks/results, "
              "packed as `logs.tar.xz`: `tools/analysis/keep_report.sh`).\n"]
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines))



def merge_reports(dirs, out):
    """One report over the runs of several (--report-only A,B,... --out OUT):
    the medians of configurations measured in more than one invocation pool
    all their runs, which is what a noisy machine needs for a tighter
    figure.  The sources' metadata is listed, not merged."""
    rows, sources, metas = [], [], []
    for i, d in enumerate(dirs):
        # Runs renumbered source by source (the i-th source's run r becomes
        # 1000 i + r), so that pairing by round stays within one source.
        src_rows = read_csv(os.path.join(d, "results.csv"))
        for r in src_rows:
            r["run"] = 1000 * i + r["run"]
        rows += src_rows
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
