#!/usr/bin/env python3
"""An unmodified bdwgc client timed on bdwgc and on sgc (LD_PRELOAD).

Each round runs COMMAND once as it is (on libgc.so.1) and once with
LD_PRELOAD=LIBSGC, the two taking turns going first, and records each
run's wall time, user + system CPU time and peak RSS (wait4's rusage of
that child).  Both runs of a round meet the machine in the same state, so the
median of the per-round ratios (sgc over bdwgc) is the figure to quote;
the medians of each side are printed too.  Every run's standard output
must equal the first bdwgc run's, or the comparison stops.

  tools/dev/preload_bench.py [-n ROUNDS] [-e VAR=VALUE] LIBSGC COMMAND [ARGS...]
  tools/dev/preload_bench.py -n 11 build/src/libsgc.so guile --no-auto-compile prog.scm
  tools/dev/preload_bench.py --guile-compile -n 11 build/src/libsgc.so

--guile-compile writes a Scheme file and times Guile's compiler compiling it
(the workload of tests/preload/guile_preload.sh's compile step, at a size
where the collector's share is visible).  --crystal frontend times Crystal's
compiler type-checking bench/crystal/stdlib.cr (much of its standard
library; `crystal build --no-codegen`), --crystal build the whole build
(LLVM code generation in forked processes and the link, where the
collector's share is small), each run with an empty cache.  -e settings
(repeatable) go to the sgc runs only, e.g. -e SGC_MARKERS=1.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SCHEME_TO_COMPILE = """
(define-module (bench sample) #:export (run))
(use-modules (srfi srfi-1) (ice-9 match))
(define (tree-insert tree k)
  (match tree
    (() (list k '() '()))
    ((key left right)
     (cond ((< k key) (list key (tree-insert left k) right))
           ((> k key) (list key left (tree-insert right k)))
           (else tree)))))
(define (run n)
  (let loop ((i 0) (tree '()))
    (if (= i n) (length (flatten tree))
        (loop (+ i 1) (tree-insert tree (modulo (* i 7919) 100003))))))
(define (flatten t) (match t (() '()) ((k l r) (append (flatten l) (list k) (flatten r)))))
"""

COMPILE_DRIVER = """
(use-modules (system base compile))
(let loop ((i 0))
  (when (< i 8)
    (compile-file (cadr (command-line)) #:output-file (caddr (command-line)))
    (loop (+ i 1))))
(display "compiled\\n")
"""


def run(cmd, env, out_path):
    """Wall time, CPU time (user + system) and peak RSS (KiB) of one run,
    from wait4's rusage of this child alone; and its standard output."""
    with open(out_path, "wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"preload_bench: {' '.join(cmd)} exited {proc.returncode}")
    with open(out_path, "rb") as f:
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--rounds", type=int, default=11)
    ap.add_argument("-e", "--env", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--guile-compile", action="store_true")
    ap.add_argument("--crystal", choices=["frontend", "build"])
    ap.add_argument("libsgc")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    lib = os.path.abspath(args.libsgc)
    tmp = tempfile.mkdtemp(prefix="preload_bench.")
    cmd = args.command
    if args.guile_compile:
        src, driver = os.path.join(tmp, "sample.scm"), os.path.join(tmp, "driver.scm")
        with open(src, "w") as f:
            f.write(SCHEME_TO_COMPILE)
        with open(driver, "w") as f:
            f.write(COMPILE_DRIVER)
        cmd = ["guile", "--no-auto-compile", driver, src, os.path.join(tmp, "sample.go")]
    if args.crystal:
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "crystal",
                           "stdlib.cr")
        cache = os.path.join(tmp, "crystal-cache")
        build = "--no-codegen" if args.crystal == "frontend" else "-o " + os.path.join(tmp, "stdlib")
        cmd = ["sh", "-c", f"rm -rf {cache}; CRYSTAL_CACHE_DIR={cache} exec crystal build {build} "
               f"{os.path.abspath(src)}"]
    if not cmd:
        ap.error("no command")
    base_env = dict(os.environ)
    base_env.pop("LD_PRELOAD", None)
    sgc_env = dict(base_env, LD_PRELOAD=lib)
    for setting in args.env:
        var, _, value = setting.partition("=")
        sgc_env[var] = value
    sides = {"bdwgc": [], "sgc": []}
    expected = None
    for r in range(args.rounds):
        order = ["bdwgc", "sgc"] if r % 2 == 0 else ["sgc", "bdwgc"]
        for side in order:
            wall, cpu, rss_kb, out = run(cmd, sgc_env if side == "sgc" else base_env,
                                         os.path.join(tmp, "out"))
            if expected is None and side == "bdwgc":
                expected = out
            if expected is not None and out != expected:
                sys.exit(f"preload_bench: round {r + 1}: {side}'s output differs from bdwgc's")
            sides[side].append((wall, cpu, rss_kb / 1024))
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"command: {' '.join(cmd)}")
    print(f"rounds: {args.rounds} (sides alternating first); sgc settings: {' '.join(args.env) or 'defaults'}")
    for name, index in (("wall s", 0), ("cpu s", 1), ("peak RSS MiB", 2)):
        b = [x[index] for x in sides["bdwgc"]]
        s = [x[index] for x in sides["sgc"]]
        ratios = [sv / bv for sv, bv in zip(s, b) if bv > 0]
        print(f"{name}: bdwgc median {statistics.median(b):.3f}, sgc median {statistics.median(s):.3f}, "
              f"sgc/bdwgc median of paired ratios {statistics.median(ratios):.3f} "
              f"(range {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
