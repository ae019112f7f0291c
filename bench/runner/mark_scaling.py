"""The mark speed-up by GC thread count in runs whose collections cycle
through 1, 2, 4, ... GC threads (experiment mark-scaling; thesis Figs 3.7
and 3.9 with every count paired within one run): a table and a figure."""

import os

from .gcstats import parse_cycle_speedups
from .plots import panels, save
from .results import group, ok_rows
from .tables import md_table
from .util import median


def counts_data(rows):
    """{(program, threads, variant): {count: ([speed-ups], [MB per GC])}}
    over the runs with more than two GC thread counts in their cycle (the
    1,2 cycles have their own section)."""
    data = {}
    for (prog, impl, t, gct, var), rs in group(rows).items():
        for r in ok_rows(rs):
            per = parse_cycle_speedups(r.get("cycle_speedups"))
            if len(per) <= 2:
                continue
            d = data.setdefault((prog, t, var), {})
            for c, (s, mb) in per.items():
                d.setdefault(c, ([], []))
                d[c][0].append(s)
                d[c][1].append(mb)
    return data


def section_mark_scaling(rows, out_dir, plt):
    data = counts_data(rows)
    if not data:
        return []
    counts = sorted({c for d in data.values() for c in d})
    body = []
    for (prog, t, var) in sorted(data):
        d = data[(prog, t, var)]
        runs = max(len(v[0]) for v in d.values())
        cells = []
        for c in counts:
            if c not in d:
                cells.append("-")
                continue
            s = d[c][0]
            cells.append(f"{median(s):.2f} ({min(s):.2f}–{max(s):.2f})" if c > 1
                         else "1")
        mbs = [f"{median(d[c][1]):.0f}" if c in d else "-" for c in counts]
        body.append([prog, t, var, runs] + cells + ["/".join(mbs)])
    hdr = (["program", "thr", "variant", "runs"] + [f"{c} GC thr" for c in counts]
           + ["marked MB/GC per count"])
    lines = ["### Mark speed-up by GC thread count, within each run (cf. Figs. 3.7, 3.9)\n",
             "Successive collections of each run take the GC thread counts of "
             "`SGC_MARKERS_CYCLE` in turn, so every count marks alike heaps in the same "
             "run.  Per run and count: marked bytes over mark time of that count's "
             "collections, over the same for the one-thread collections; the median over "
             "runs and the range.  `cycle-<variant>` is `SGC_MARK_VARIANT=<variant>` "
             "(Table 3.2's rows); `cycle-chase-lev` is opt with the Chase-Lev deque.  "
             "Marked MB/GC: the median per count, which shows whether the counts "
             "marked alike heaps.\n", md_table(hdr, body), ""]
    if plt is not None and plot_counts(plt, data, os.path.join(out_dir, "mark_scaling.png")):
        lines += ["![mark speed-up by GC thread count](mark_scaling.png)\n"]
    return lines


def plot_counts(plt, data, path):
    progs = sorted({k[0] for k in data})
    fig, axs = panels(plt, len(progs), 2, 5.2, 4)
    for ax, prog in zip(axs, progs):
        mx = 1
        for (p, t, var) in sorted(k for k in data if k[0] == prog):
            d = data[(p, t, var)]
            xs = sorted(d)
            mx = max(mx, xs[-1])
            ax.plot(xs, [median(d[x][0]) for x in xs], marker="o",
                    label=var.replace("cycle-", ""))
        ax.plot([1, mx], [1, mx], linestyle=":", color="grey", label="ideal")
        ax.set_xscale("log", base=2)
        ticks = sorted({x for k in data if k[0] == prog for x in data[k]})
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(x) for x in ticks])
        ax.set_title(f"{prog} (t={sorted(k[1] for k in data if k[0] == prog)[0]})")
        ax.set_xlabel("GC threads")
        ax.set_ylabel("mark speed-up over 1 GC thread")
        ax.legend(fontsize=7)
    return save(plt, fig, path,
                "Mark speed-up by GC thread count, paired within runs (cf. Figs. 3.7, 3.9)")
