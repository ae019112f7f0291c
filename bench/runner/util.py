"""Small helpers every part of the runner uses: paths, logging, numbers."""

import os
import statistics


# bench/runner/util.py -> the repository root
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg):
    print(msg, flush=True)


def show_path(p):
    """Path relative to the repository when inside it, else absolute."""
    p = os.path.abspath(p)
    return os.path.relpath(p, REPO) if p.startswith(REPO + os.sep) else p


def gct_label(g):
    return "default" if g is None else str(int(g))


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


def to_float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
