"""The report's figures (matplotlib, when it can be imported)."""

from .matrix import IMPLS
from .results import agg, group
from .tables import alloc_series, speedup_data


def get_plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception:  # noqa: BLE001 - any import problem means "no plots"
        return None


def panels(plt, n, ncol, width, height):
    """A figure of N panels, NCOL to a row (WIDTH x HEIGHT inches each);
    the grid's unused cells are hidden.  Returns (figure, the N axes)."""
    ncol = min(ncol, n)
    nrow = (n + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(width * ncol, height * nrow), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n]


def save(plt, fig, path, title=None):
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


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
    fig, axs = panels(plt, len(progs), 4, 3.4 if len(progs) > 1 else 4, 3.6)
    for ax, prog in zip(axs, progs):
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
    axs[0].legend(fontsize=8)
    return save(plt, fig, path, "Run time split into user and GC (stopped) time (cf. thesis Fig. 3.5)")


def collector_label(d):
    """A concurrent_rows entry's collector: sgc's variant (its default
    named "stop"), else the peer."""
    return d["variant"].replace("default", "stop") if d["impl"] == "sgc" else d["impl"]


def plot_concurrent(plt, data, path):
    """Fig 5.2: each program's run time under every collector over sgc stop
    mode's (report.concurrent_rows), a panel per thread count."""
    threads = sorted({d["threads"] for d in data})
    fig, axs = panels(plt, len(threads), 2, 7, 3.6)
    for ax, t in zip(axs, threads):
        rows = [d for d in data if d["threads"] == t and d["ratio"] is not None]
        progs, configs = [], []
        for d in rows:
            if d["program"] not in progs:
                progs.append(d["program"])
            c = collector_label(d)
            if c not in configs:
                configs.append(c)
        width = 0.8 / max(1, len(configs))
        for i, c in enumerate(configs):
            ys = []
            for prog in progs:
                v = [d["ratio"] for d in rows if d["program"] == prog and collector_label(d) == c]
                ys.append(v[0] if v else 0)
            ax.bar([x + i * width for x in range(len(progs))], ys, width, label=c)
        ax.axhline(1.0, color="black", linewidth=0.6)
        # bdwgc's incremental mode ran up to 15.5 times stop mode's time
        # on two CPUs: on a linear axis the other bars were slivers.
        if max((d["ratio"] for d in rows), default=1) > 4:
            ax.set_yscale("log")
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(progs))])
        ax.set_xticklabels(progs, fontsize=8)
        ax.set_ylabel("run time / sgc stop")
        ax.set_title(f"{t} thread{'s' if t != 1 else ''}")
        ax.legend(fontsize=7)
    return save(plt, fig, path, "Run time over sgc stop mode's (cf. thesis Fig. 5.2)")


def plot_speedup(plt, rows, path):
    """Fig 3.7: mark-phase speed-up (marked bytes / mark time) vs GC threads,
    relative to one GC thread of the same implementation and variant."""
    data = speedup_data(rows)
    if not data:
        return False
    progs = sorted({k[0] for k in data})
    fig, axs = panels(plt, len(progs), 3, 4.6, 3.8)
    for ax, prog in zip(axs, progs):
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
    return save(plt, fig, path, "Mark-phase speed-up vs GC threads (cf. thesis Fig. 3.7)")


def plot_lines(ax, series):
    """One line per label of SERIES ({label: {threads: value}}) against
    the thread counts."""
    for label in sorted(series):
        xs = sorted(series[label])
        ax.plot(xs, [series[label][x] for x in xs], marker="o", label=label)
    ax.set_xticks(sorted({t for v in series.values() for t in v}))
    ax.set_xlabel("threads")


def plot_alloc(plt, rows, path, programs):
    ss = [(p, alloc_series(rows, p)) for p in programs]
    ss = [(p, s) for p, s in ss if s]
    if not ss:
        return False
    fig, axs = panels(plt, len(ss), len(ss), 5.5, 4)
    for ax, (prog, series) in zip(axs, ss):
        plot_lines(ax, series)
        ax.set_ylabel("M allocations / s (all threads)")
        ax.set_title(prog)
        ax.legend(fontsize=7)
    return save(plt, fig, path, "Allocation throughput (cf. thesis Fig. 2.4 / Table 2.1)")


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
    plot_lines(ax, series)
    ax.set_ylabel("peak RSS (MB)")
    ax.legend(fontsize=6)
    ax.set_title("Memory consumption, unfair benchmark (cf. thesis Fig. 2.5)")
    return save(plt, fig, path)
