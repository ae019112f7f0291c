#!/usr/bin/env python3
"""The layering rule of src/ (docs/design.md, "Layers"): a folder includes
only headers of its own folder or of folders in layers below it.

  tools/ci/check_layers.py              check; exit 1 on an include that breaks
                                     the rule and is not in the baseline
  tools/ci/check_layers.py --graph      print the folder graph: edges with counts,
                                     upward edges, and cycles (strongly
                                     connected folders)
  tools/ci/check_layers.py --write-baseline
                                     record today's upward includes as known

The baseline (tools/layers_baseline.txt) lists the upward includes still
to be removed, one "file -> header" a line; the check fails on any upward
include not listed, and on a listed one that is gone (so the list only
shrinks and always says what is left).
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "src")
BASELINE = os.path.join(ROOT, "tools", "ci", "layers_baseline.txt")

# Bottom to top.  Folders on one row share a layer and may include each
# other only if listed in SAME_LAYER_OK; "." is src/ itself (common.h).
LAYERS = [
    [".", "base", "os"],   # messages, settings, OS calls, common types
    ["heap"],              # chunks, pages, headers, size classes, locks
    ["barrier"],           # write barriers of the concurrent collector
    ["alloc"],             # free lists, page stores, caches, large objects
    ["mark"],              # the marker: stacks, stealing, termination
    ["sweep"],             # sweeping pages marked by the last collection
    ["threads"],           # registry, stop-the-world, suspend
    ["roots"],             # static, thread and dynamic roots
    ["stats"],             # counters, traces, summaries
    ["collect"],           # the collection cycle, finalization, weak links
    ["api"],               # bdwgc's gc.h surface and sgc.h
]
LEVEL = {folder: i for i, row in enumerate(LAYERS) for folder in row}
PUBLIC = {"gc"}  # include/gc/*.h: the public headers, below everything

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    rel = os.path.relpath(path, SRC)
    d = os.path.dirname(rel)
    return d.split(os.sep)[0] if d else "."


def includes():
    """Yields (source file relative to src/, its folder, included header, its folder)."""
    for dirpath, _, names in os.walk(SRC):
        for name in sorted(names):
            if not name.endswith((".c", ".h", ".cc")):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            src_folder = folder_of(path)
            for inc in INCLUDE.findall(text):
                head = inc.split("/")[0] if "/" in inc else None
                if head is None:
                    # "x.h": a header of the same folder, or src/ or include/.
                    same = os.path.join(dirpath, inc)
                    inc_folder = src_folder if os.path.exists(same) else "."
                    if not os.path.exists(same) and not os.path.exists(os.path.join(SRC, inc)):
                        continue  # include/ (gc.h, sgc.h): public
                elif head in PUBLIC:
                    continue
                else:
                    inc_folder = head
                yield os.path.relpath(path, SRC), src_folder, inc, inc_folder


def upward(edges):
    bad = []
    for f, sf, inc, inf in edges:
        if sf == inf:
            continue
        if sf not in LEVEL or inf not in LEVEL:
            bad.append((f, inc, "folder not in any layer"))
        elif LEVEL[inf] > LEVEL[sf]:
            bad.append((f, inc, "%s is not below %s" % (inf, sf)))
    return bad


def cycles(graph):
    """Tarjan's strongly connected components with more than one folder."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    edges = list(includes())
    bad = upward(edges)
    if "--graph" in sys.argv:
        counts = defaultdict(int)
        graph = defaultdict(set)
        for _, sf, _, inf in edges:
            if sf != inf:
                counts[(sf, inf)] += 1
                graph[sf].add(inf)
        print("folder edges (includes):")
        for (a, b), n in sorted(counts.items()):
            mark = "" if LEVEL.get(b, 99) <= LEVEL.get(a, -1) else "   <- upward"
            print("  %-8s -> %-8s %3d%s" % (a, b, n, mark))
        comps = cycles(graph)
        files_in = {f for f, sf, _, _ in edges if any(sf in c for c in comps)}
        print("cycles: %d" % len(comps))
        for c in comps:
            print("  " + " <-> ".join(c))
        print("files in folders on a cycle: %d" % len(files_in))
        print("upward includes: %d" % len(bad))
        return 0
    lines = sorted("%s -> %s" % (f, inc) for f, inc, _ in bad)
    if "--write-baseline" in sys.argv:
        with open(BASELINE, "w") as out:
            out.write("# Upward includes still to be removed (tools/ci/check_layers.py).\n")
            out.writelines(l + "\n" for l in lines)
        print("wrote %d upward includes to %s" % (len(lines), BASELINE))
        return 0
    known = set()
    if os.path.exists(BASELINE):
        with open(BASELINE) as f:
            known = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    new = [b for b in bad if "%s -> %s" % (b[0], b[1]) not in known]
    gone = sorted(known - set(lines))
    for f, inc, why in new:
        print("src/%s includes %s: %s (docs/design.md, Layers)" % (f, inc, why))
    for g in gone:
        print("%s: no longer included; remove it from %s" % (g, os.path.relpath(BASELINE, ROOT)))
    print("layers: %d upward includes, %d known, %d new, %d fixed but listed"
          % (len(bad), len(known), len(new), len(gone)))
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
