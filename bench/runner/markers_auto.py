"""SGC_MARKERS=auto (the default) against fixed GC thread counts and the
rule it replaced (SGC_MARKERS=rule; experiment markers-auto; the thesis's
Table 4.4, issue 56's target: auto never more than 5% slower than the
best fixed count, mark time per collection, paired)."""

from .gcstats import parse_markers_hist
from .results import group, ok_rows
from .tables import md_table, text_table
from .util import fmt_num, median


AUTO, FIXED, RULE = "markers-auto", "fixed", "markers-rule"
TARGET = 1.05


def mark_ms_per_gc(row):
    """A run's mark time per collection, ms; None without collections."""
    if row.get("mark_s") is None or not row.get("collections"):
        return None
    return row["mark_s"] / row["collections"] * 1e3


def per_round(rs):
    """{round: mark ms per collection} over the runs RS that passed."""
    return {r["run"]: v for r in ok_rows(rs) if (v := mark_ms_per_gc(r)) is not None}


def paired_to_best(side, fixed):
    """The median over rounds of SIDE's mark time per collection over the
    best (least) fixed count's in the same round; only rounds in which
    every fixed count ran.  None without such a round."""
    ratios = []
    for run, v in side.items():
        base = [f.get(run) for f in fixed.values()]
        if base and all(b for b in base):
            ratios.append(v / min(base))
    return median(ratios)


def hist_text(rs):
    """The collections per GC thread count over RS's runs, "1:40 2:10"."""
    total = {}
    for r in ok_rows(rs):
        for c, n in parse_markers_hist(r.get("markers_hist")).items():
            total[c] = total.get(c, 0) + n
    return " ".join(f"{c}:{n}" for c, n in sorted(total.items())) or "-"


def mb_per_gc(rs):
    return median([r["marked_bytes"] / r["collections"] / 1e6 for r in ok_rows(rs)
                   if r.get("marked_bytes") is not None and r.get("collections")])


def markers_auto_data(rows):
    """Per (program, threads) with auto runs: the counts, and each cell."""
    g = group(rows)
    out = []
    for (prog, impl, t, gct, var), auto_rs in g.items():
        if impl != "sgc" or var != AUTO or gct is not None:
            continue
        fixed_rs = {k[3]: v for k, v in g.items()
                    if k[:3] == (prog, impl, t) and k[4] == FIXED and k[3] is not None}
        if not fixed_rs:
            continue
        fixed = {n: per_round(rs) for n, rs in fixed_rs.items()}
        fixed_med = {n: median(list(v.values())) for n, v in fixed.items()}
        known = {n: m for n, m in fixed_med.items() if m is not None}
        best = min(known, key=known.get) if known else None
        auto = per_round(auto_rs)
        rule = per_round(g.get((prog, impl, t, None, RULE), []))
        auto_med, rule_med = median(list(auto.values())), median(list(rule.values()))
        out.append({
            "program": prog, "threads": t, "runs": len(auto), "fixed": fixed_med, "best": best,
            "auto": auto_med, "rule": rule_med,
            "auto_ratio": auto_med / known[best] if auto_med and best else None,
            "auto_paired": paired_to_best(auto, fixed),
            "rule_paired": paired_to_best(rule, fixed) if rule else None,
            "auto_hist": hist_text(auto_rs),
            "rule_hist": hist_text(g.get((prog, impl, t, None, RULE), [])),
            "mb_auto": mb_per_gc(auto_rs), "mb_best": mb_per_gc(fixed_rs[best]) if best else None,
        })
    return out


def markers_auto_table(rows, fmt="md"):
    data = markers_auto_data(rows)
    if not data:
        return None
    counts = sorted({n for d in data for n in d["fixed"]})
    ratio = lambda v: f"{v:.3f}" if v is not None else "-"
    header = (["program", "thr", "runs"] + [f"fixed {n} ms/GC" for n in counts]
              + ["rule ms/GC", "auto ms/GC", "best fixed", "auto/best", "auto/best paired",
                 "rule/best paired", "auto ≤ 1.05", "auto's GC thr (collections)",
                 "rule's GC thr", "MB/GC auto", "MB/GC best"])
    body = []
    for d in data:
        verdict = "-" if d["auto_paired"] is None else ("yes" if d["auto_paired"] <= TARGET else "NO")
        body.append([d["program"], d["threads"], d["runs"]]
                    + [fmt_num(d["fixed"].get(n)) for n in counts]
                    + [fmt_num(d["rule"]), fmt_num(d["auto"]),
                       d["best"] if d["best"] is not None else "-", ratio(d["auto_ratio"]),
                       ratio(d["auto_paired"]), ratio(d["rule_paired"]), verdict,
                       d["auto_hist"], d["rule_hist"], fmt_num(d["mb_auto"]),
                       fmt_num(d["mb_best"])])
    return (md_table if fmt == "md" else text_table)(header, body)


def section_markers_auto(rows):
    table = markers_auto_table(rows)
    if not table:
        return []
    return [
        "## SGC_MARKERS=auto against fixed GC thread counts (cf. Table 4.4)\n",
        "Mark time per collection (a run's summed `mark_ns` over its collections; "
        "median over runs, ms) with `SGC_MARKERS=auto` (the fast predictor picks each "
        "collection's GC threads; the default), with each fixed count (`SGC_MARKERS=n "
        "SGC_ADAPTIVE=0`) and with the rule auto replaced (`SGC_MARKERS=rule`: one GC "
        "thread per 256 KiB live, one alone after a list-shaped mark).  auto/best: "
        "auto's median over the best fixed count's; paired: the median over rounds "
        "of auto's figure over the least fixed figure of the same round (issue 56's "
        "target: at most 1.05 on every program).  GC thr: collections marked with "
        "each count, summed over the runs.  MB/GC: marked bytes per collection; where "
        "auto's and the best fixed count's differ, the runs marked unlike heaps.\n",
        table, ""]
