"""What can be run: implementations, programs, sgc's run-time variants, and the
experiments (programs x impls x threads x GC threads x variants) they expand to."""

import os


# Implementations.  kind "gc": bench-<bin>-<name>; kind "malloc": the
# bench-<bin>-malloc binary with an optional LD_PRELOAD library.
IMPLS = {
    "sgc": {"kind": "gc", "suffix": "sgc", "stats": "sgc", "markers_env": "SGC_MARKERS"},
    "bdwgc": {"kind": "gc", "suffix": "bdwgc", "stats": "bdwgc", "markers_env": "GC_MARKERS"},
    # bdwgc's incremental mode (its environment variable), for the pauses
    # of issue 54
    "bdwgc-incr": {"kind": "gc", "suffix": "bdwgc", "stats": "bdwgc", "markers_env": "GC_MARKERS",
                   "env": {"GC_ENABLE_INCREMENTAL": "1"}},
    "glibc": {"kind": "malloc", "suffix": "malloc", "preload": None},
    "jemalloc": {"kind": "malloc", "suffix": "malloc", "preload": "libjemalloc.so.2"},
    "tcmalloc": {"kind": "malloc", "suffix": "malloc", "preload": "libtcmalloc_minimal.so.4"},
    "mimalloc": {"kind": "malloc", "suffix": "malloc", "preload": "libmimalloc.so.2"},
}


MALLOC_PEERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]


# Debian packages that provide each peer (for the messages and headline.sh).
PEER_PACKAGES = {
    "bdwgc": "libgc-dev",
    "jemalloc": "libjemalloc2",
    "tcmalloc": "libtcmalloc-minimal4",
    "mimalloc": "libmimalloc2.0",
}


def sizes(smoke, headline, full=None):
    """A program's arguments per size profile: the full matrix runs the
    headline's sizes unless told otherwise."""
    return {"smoke": smoke, "headline": headline, "full": headline if full is None else full}


def shape_program(smoke, headline):
    """One of bench/shapes.c's shapes: a collector program with no malloc
    build and no hash, rated in mops."""
    return {"bin": "shapes", "metric": "mops", "malloc": False, "hash": False,
            "args": sizes(smoke, headline)}


# Programs: binary stem, arguments per size profile, the headline metric,
# whether a malloc build exists, whether the program's `hash` must agree
# across runs of the same arguments, and optionally the only "impls" that
# run it.  The thread count goes to THREAD_FLAG.

PROGRAMS = {
    "gcbench": {
        "bin": "gcbench", "metric": "mops", "malloc": False, "hash": True,
        "args": sizes(["-S", "14", "-L", "12", "-M", "12", "-A", "50000"], []),
    },
    "alloc-free": {
        "bin": "alloc", "metric": "mops", "malloc": True, "hash": False,
        "args": sizes(["-m", "free", "-r", "3"], ["-m", "free", "-r", "100"]),
    },
    # 4 times the rounds: runs of 0.3 s rather than 0.08 s, for the 2-thread
    # speed-up, which short runs leave to the machine's transients
    "alloc-free-long": {
        "bin": "alloc", "metric": "mops", "malloc": True, "hash": False,
        "args": sizes(["-m", "free", "-r", "3"], ["-m", "free", "-r", "400"]),
    },
    # the fast paths alone (bench/fastpath.c): each round's 1,000 objects
    # stay in L1; mops counts an allocation and its free as one
    "fastpath": {
        "bin": "fastpath", "metric": "mops", "malloc": True, "hash": False,
        "args": sizes(["-r", "100"], []),
    },
    # 256-byte objects: a size class past GC_free's inline clearing, and
    # pages of 16 objects (the fresh-page order shows; docs/benchmarks/targets.md)
    "alloc-free-256": {
        "bin": "alloc", "metric": "mops", "malloc": True, "hash": False,
        "args": sizes(["-m", "free", "-s", "256", "-n", "20000", "-r", "3"],
                      ["-m", "free", "-s", "256", "-n", "20000", "-r", "100"]),
    },
    # the same with pointer-free objects, which sgc does not clear: next to
    # alloc-free-256, what the zeroing GC_MALLOC promises costs (the malloc
    # builds run plain malloc under -k atomic)
    "alloc-free-256-atomic": {
        "bin": "alloc", "metric": "mops", "malloc": True, "hash": False,
        "args": sizes(["-m", "free", "-s", "256", "-n", "20000", "-r", "3", "-k", "atomic"],
                      ["-m", "free", "-s", "256", "-n", "20000", "-r", "100", "-k", "atomic"]),
    },
    "alloc-drop": {
        "bin": "alloc", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-m", "drop", "-r", "3"], ["-m", "drop", "-r", "100"]),
    },
    # typed objects (gc_typed.h): bdwgc serves them under its allocation
    # lock, sgc from thread-local caches
    "alloc-typed-free": {
        "bin": "alloc", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-k", "typed", "-m", "free", "-r", "3"],
                      ["-k", "typed", "-m", "free", "-r", "100"]),
    },
    "alloc-typed-drop": {
        "bin": "alloc", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-k", "typed", "-m", "drop", "-r", "3"],
                      ["-k", "typed", "-m", "drop", "-r", "100"]),
    },
    # C++'s plain new and delete from every thread (bench/cppnew.cc):
    # libsgccpp and bdwgc's libgccpp against the malloc peers
    "cppnew": {
        "bin": "cppnew", "metric": "mops", "malloc": True, "hash": True,
        "args": sizes(["-n", "20000"], ["-n", "2000000"]),
    },
    "unfair": {
        "bin": "unfair", "metric": "mops", "malloc": True, "hash": False,
        "args": sizes(["-r", "2", "-k", "1024"], ["-r", "10"]),
    },
    "unfair-drop": {
        "bin": "unfair", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-m", "drop", "-r", "2", "-k", "1024"], ["-m", "drop", "-r", "10"]),
    },
    "bh-st": {
        "bin": "bh", "metric": "mops", "malloc": False, "hash": True,
        "args": sizes(["-m", "st", "-n", "2000", "-s", "2"],
                      ["-m", "st", "-n", "16384", "-s", "8"],
                      full=["-m", "st"]),
    },
    "bh-pt": {
        "bin": "bh", "metric": "mops", "malloc": False, "hash": True,
        "args": sizes(["-m", "pt", "-n", "2000", "-s", "2"],
                      ["-m", "pt", "-n", "16384", "-s", "8"],
                      full=["-m", "pt"]),
    },
    # bh with 40 steps: ten collections a run rather than two, for the
    # mark speed-up experiments
    "bh-st-long": {
        "bin": "bh", "metric": "mops", "malloc": False, "hash": True,
        "args": sizes(["-m", "st", "-n", "2000", "-s", "2"], ["-m", "st", "-s", "40"]),
    },
    "bh-pt-long": {
        "bin": "bh", "metric": "mops", "malloc": False, "hash": True,
        "args": sizes(["-m", "pt", "-n", "2000", "-s", "2"], ["-m", "pt", "-s", "40"]),
    },
    "cky": {
        "bin": "cky", "metric": "mops", "malloc": False, "hash": True,
        "args": sizes(["-n", "3"], ["-n", "50"], full=[]),
    },
    "cube": {
        "bin": "cube", "metric": "mops", "malloc": False, "hash": True,
        "args": sizes(["-i", "3"], ["-i", "100"], full=[]),
    },
    "matmul": {
        "bin": "matmul", "metric": "gflops", "malloc": False, "hash": True,
        "args": sizes(["-n", "100", "-r", "2"], ["-n", "500"], full=[]),
    },
    "mark-list": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-s", "list", "-n", "20000", "-c", "3"], ["-s", "list"]),
    },
    "mark-tiny": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-s", "tiny", "-c", "3"], ["-s", "tiny", "-c", "200"]),
    },
    # the tiny shape in a heap grown by 1 GiB first: a collection's cost
    # must follow the live data, not the heap's size
    "mark-tiny-1g": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-s", "tiny", "-c", "3", "-H", "64"],
                      ["-s", "tiny", "-c", "200", "-H", "1024"]),
    },
    "mark-wide": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-s", "wide", "-n", "20000", "-c", "3"], ["-s", "wide"]),
    },
    # a gcbench-sized binary tree (16 MiB) built once and marked 100 times:
    # the mark speed-up on a wide heap with no mutator between collections
    "mark-tree": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-s", "tree", "-n", "20000", "-c", "3"],
                      ["-s", "tree", "-n", "500000", "-c", "100"]),
    },
    # the same tree of a kind marked by a mark procedure (GC_new_kind,
    # GC_MARK_AND_PUSH), as a language runtime marks its own objects
    "mark-proc": {
        "bin": "markshape", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-s", "proc", "-n", "20000", "-c", "3"],
                      ["-s", "proc", "-n", "500000", "-c", "100"]),
    },
    # shapes where sgc lost to bdwgc by a wide margin (bench/shapes.c)
    "shape-grow": shape_program(["-s", "grow", "-n", "2", "-r", "2"], ["-s", "grow"]),
    "shape-threads": shape_program(["-s", "threads", "-T", "50", "-n", "500"], ["-s", "threads"]),
    "shape-finalizers": shape_program(["-s", "finalizers", "-n", "20000"], ["-s", "finalizers"]),
    "shape-large": shape_program(["-s", "large", "-n", "200", "-r", "4"], ["-s", "large"]),
    "shape-ramp": shape_program(["-s", "ramp", "-n", "8", "-r", "1"], ["-s", "ramp"]),
    "shape-weak": shape_program(["-s", "weak", "-n", "20000"], ["-s", "weak"]),
    # structures dropped and counted back through disappearing links: how
    # many a collection failed to reclaim (bench/retention.c; lower is better)
    "retention": {
        "bin": "retention", "metric": "retained_pct", "malloc": False, "hash": False,
        "args": sizes(["-r", "3"], []),
    },
    "bursty": {
        "bin": "bursty", "metric": "mops", "malloc": False, "hash": False,
        "args": sizes(["-r", "5"], ["-r", "50"], full=[]),
    },
    # independent sleepers, each with a small live set of its own (issue 53)
    "sleepers": {
        "bin": "sleepers", "metric": "bursts_per_s", "malloc": False, "hash": False,
        "args": sizes(["-d", "0.5"], ["-d", "3"], full=[]),
    },
    # ... keeping about 10 MB over all threads whatever their number (-K):
    # the heap then shows what the allocator holds per thread (issue 53)
    "sleepers-same-live": {
        "bin": "sleepers", "metric": "bursts_per_s", "malloc": False, "hash": False,
        "args": sizes(["-d", "0.5", "-K", "10000"], ["-d", "3", "-K", "100000"], full=["-K", "100000"]),
    },
    # ... with bursts of one object: the rate this machine's sleeps allow
    # when allocating costs next to nothing, the floor under every
    # allocator's sleepers figure (issue 53's 1.5x target at 50 threads)
    "sleepers-floor": {
        "bin": "sleepers", "metric": "bursts_per_s", "malloc": False, "hash": False,
        "args": sizes(["-d", "0.5", "-b", "1"], ["-d", "3", "-b", "1"], full=["-b", "1"]),
    },
    # ... waiting on condition variables of their own with timeouts instead
    # (an idle server worker; threads/cond_waits.c)
    "sleepers-cond": {
        "bin": "sleepers", "metric": "bursts_per_s", "malloc": False, "hash": False,
        "args": sizes(["-d", "0.5", "-w", "cond"], ["-d", "3", "-w", "cond"], full=[]),
    },
    # a server holding a large live heap, every request's latency (issue 54;
    # bench/latency.c): 256 MiB and 1 GiB live
    **{f"latency-{name}": {"bin": "latency", "metric": "requests_per_s", "malloc": False,
                           "hash": False,
                           "args": sizes(["-m", smoke_mib, "-d", "0.3"], ["-m", mib, "-d", seconds])}
       for name, smoke_mib, mib, seconds in (("256m", "8", "256", "10"), ("1g", "16", "1024", "20"))},
    # The machine's own ceiling (bench/ceiling.c): loops that share nothing,
    # built without a collector, so run with glibc only ("impls").
    "ceiling-compute": {
        "bin": "ceiling", "metric": "mops", "malloc": True, "impls": ["glibc"], "hash": False,
        "args": sizes(["-m", "compute", "-s", "100000"], ["-m", "compute"]),
    },
    "ceiling-chase": {
        "bin": "ceiling", "metric": "mops", "malloc": True, "impls": ["glibc"], "hash": False,
        "args": sizes(["-m", "chase", "-n", "65536"], ["-m", "chase"]),
    },
    "ceiling-gather": {
        "bin": "ceiling", "metric": "mops", "malloc": True, "impls": ["glibc"], "hash": False,
        "args": sizes(["-m", "gather", "-n", "65536"], ["-m", "gather"]),
    },
    "ceiling-stream": {
        "bin": "ceiling", "metric": "mops", "malloc": True, "impls": ["glibc"], "hash": False,
        "args": sizes(["-m", "stream", "-n", "4096", "-s", "100000"], ["-m", "stream"]),
    },
}
CEILING = ["ceiling-compute", "ceiling-chase", "ceiling-gather", "ceiling-stream"]
ALLOC_PROGRAMS = ["alloc-free", "alloc-free-long", "alloc-free-256", "alloc-free-256-atomic", "alloc-drop",
                  "alloc-typed-free", "alloc-typed-drop", "fastpath"]


THREAD_FLAG = "-t"


def usable_cpus():
    """The CPUs this process may run on (its affinity mask)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def pow2_upto(n):
    out, x = [], 1
    while x < n:
        out.append(x)
        x *= 2
    return out + [n]


# 1, 2, 4, ... up to the usable CPUs: the GC thread counts that the
# "mark-scaling" experiment's collections take in turn
CYCLE_POW2 = ",".join(str(n) for n in pow2_upto(usable_cpus()))


# sgc variants: environment settings.  Peers always run as "default".
VARIANTS = {
    "default": {},
    # marking (thesis Table 3.2)
    "simple": {"SGC_MARK_VARIANT": "simple"},
    "noopt": {"SGC_MARK_VARIANT": "noopt"},
    "no-slo": {"SGC_MARK_VARIANT": "no-slo"},
    "no-nsb": {"SGC_MARK_VARIANT": "no-nsb"},
    "opt": {"SGC_MARK_VARIANT": "opt"},
    "chase-lev": {"SGC_MARK_VARIANT": "opt", "SGC_MARK_DEQUE": "chase-lev"},
    # collections alternating 1 and 2 GC threads within each run
    # (SGC_MARKERS_CYCLE): the mark speed-up paired milliseconds apart;
    # GC threads setting marks with a plain store (default) or the atomic
    # exchange (SGC_MARK_SET)
    "cycle-store": {"SGC_MARK_VARIANT": "opt", "SGC_MARKERS_CYCLE": "1,2"},
    "cycle-exchange": {"SGC_MARK_VARIANT": "opt", "SGC_MARKERS_CYCLE": "1,2",
                       "SGC_MARK_SET": "exchange"},
    # collections cycling through 1, 2, 4, ... up to the CPUs, per marking
    # variant (Table 3.2) and with the Chase-Lev deque: Figs 3.7 / 3.9 with
    # every GC thread count paired within one run
    **{f"cycle-{v}": {"SGC_MARK_VARIANT": v, "SGC_MARKERS_CYCLE": CYCLE_POW2}
       for v in ("simple", "noopt", "no-slo", "no-nsb", "opt")},
    "cycle-chase-lev": {"SGC_MARK_VARIANT": "opt", "SGC_MARK_DEQUE": "chase-lev",
                        "SGC_MARKERS_CYCLE": CYCLE_POW2},
    # free-page policy (thesis ch. 2)
    "ps": {"SGC_PAGE_POLICY": "ps"},
    "al": {"SGC_PAGE_POLICY": "al"},
    "lps1": {"SGC_PAGE_POLICY": "lps", "SGC_LPS_K": "1"},
    "lps1.5": {"SGC_PAGE_POLICY": "lps", "SGC_LPS_K": "1.5"},
    "lps2": {"SGC_PAGE_POLICY": "lps", "SGC_LPS_K": "2"},
    "lps3": {"SGC_PAGE_POLICY": "lps", "SGC_LPS_K": "3"},
    # allocation buffers (papers/001)
    "lab-thread": {"SGC_LAB": "thread"},
    "lab-cpu": {"SGC_LAB": "cpu"},
    "lab-flip": {"SGC_LAB": "flip"},
    # issue 53: the heap grown by 2 MiB steps, not whole 4 MiB chunks
    "step-2m": {"SGC_HEAP_STEP": "2m"},
    # a collection every 50 refills (tests' torture mode)
    "torture": {"SGC_TORTURE": "50"},
    # concurrent cycles (issue 54, docs/concurrent.md): the best barrier,
    # and each barrier (docs/barriers.md)
    "concurrent": {"SGC_MODE": "concurrent"},
    **{f"concurrent-{b}": {"SGC_MODE": "concurrent", "SGC_BARRIER": b}
       for b in ("uffd", "softdirty", "mprotect", "full")},
    # GC thread counts: chosen each collection by the fast predictor
    # (SGC_MARKERS=auto, the default, named so it stays the same), by the
    # rule it replaced (SGC_MARKERS=rule), or pinned (the run's gc_threads,
    # choosing off: what "fixed" means in Table 4.4)
    "markers-auto": {"SGC_MARKERS": "auto"},
    "markers-rule": {"SGC_MARKERS": "rule"},
    "fixed": {"SGC_ADAPTIVE": "0"},
    # sweeping
    "sweep-lazy": {"SGC_SWEEP": "lazy"},
    "sweep-parallel": {"SGC_SWEEP": "parallel"},
}


# The matrix.  Each experiment expands to programs x impls x threads x
# gc_threads x variants (variants apply to sgc; peers run once as default).
# threads: a list or "pow2" (1, 2, 4, ... up to the usable CPUs);
# gc_threads: a list (None = the implementation's default), "pow2", or
# "same" (as many GC threads as application threads, the thesis setting).
# Add rows here.
APPS = ["gcbench", "bh-st", "bh-pt", "cky", "cube", "matmul"]


EXPERIMENTS = {
    # Fig 3.5 (GC vs user time) and the sgc/bdwgc comparison
    "apps": {"programs": APPS, "impls": ["sgc", "bdwgc"], "threads": [1, 2, 4],
             "gc_threads": [1, 2], "variants": ["default"]},
    # issue 4's single-thread target in objects marked per second as well
    # as bytes: the collectors count an object's bytes differently
    # (bench/bench_marked.h); the count's walk lengthens the runs
    "mark-objects": {"programs": ["gcbench", "bh-pt", "cky", "cube"], "impls": ["sgc", "bdwgc"],
                     "threads": [2], "gc_threads": [1], "variants": ["default"],
                     "count_marked": True},
    # Fig 3.7 / 3.9: mark speed-up per marking variant
    "mark": {"programs": ["bh-st-long", "bh-pt-long", "cky", "cube"], "impls": ["sgc"],
             "threads": [2], "gc_threads": [1, 2], "variants": ["simple", "noopt", "no-slo", "no-nsb", "opt"]},
    # Table 2.1 / Fig 2.4: allocation throughput
    "alloc": {"programs": ["alloc-free", "alloc-free-256", "alloc-drop"],
              "impls": ["sgc", "bdwgc"] + MALLOC_PEERS, "threads": [1, 2, 4, 8],
              "gc_threads": [None], "variants": ["ps", "al", "lps1", "lps1.5"]},
    # issue 5's 2-thread target: longer runs, with the ceiling (add
    # --experiment ceiling) and the malloc peers in the same rounds
    "alloc-scaling": {"programs": ["alloc-free-long"], "impls": ["sgc"] + MALLOC_PEERS,
                      "threads": [1, 2], "gc_threads": [None],
                      "variants": ["lps1.5", "lps1", "ps", "al"]},
    # 256-byte objects cleared (GC_MALLOC) and not (GC_MALLOC_ATOMIC)
    # against mimalloc, which clears neither
    "alloc-256": {"programs": ["alloc-free-256", "alloc-free-256-atomic"],
                  "impls": ["sgc", "mimalloc"], "threads": "pow2", "gc_threads": [None],
                  "variants": ["lps1.5"]},
    # the fast paths against the malloc peers, one thread, in L1
    "fastpath": {"programs": ["fastpath"], "impls": ["sgc"] + MALLOC_PEERS, "threads": [1],
                 "gc_threads": [None], "variants": ["default"]},
    # typed objects against bdwgc (SPEC §4: its global lock)
    "alloc-typed": {"programs": ["alloc-typed-free", "alloc-typed-drop"], "impls": ["sgc", "bdwgc"],
                    "threads": [1, 2, 4], "gc_threads": [None], "variants": ["default"]},
    # C++ programs' plain new and delete (libsgccpp, libgccpp, malloc)
    "cpp-new": {"programs": ["cppnew"], "impls": ["sgc", "bdwgc"] + MALLOC_PEERS,
                "threads": [1, 2], "gc_threads": [None], "variants": ["default"]},
    # Fig 2.5: memory consumption under unfair usage
    "unfair": {"programs": ["unfair", "unfair-drop"], "impls": ["sgc", "bdwgc"] + MALLOC_PEERS,
               "threads": [1, 2, 4, 8], "gc_threads": [None],
               "variants": ["ps", "al", "lps1", "lps1.5", "lps2", "lps3"]},
    # Figs 2.6-2.8: applications' run time and memory per free-page policy
    "policies": {"programs": ["matmul", "bh-pt", "cky"], "impls": ["sgc"], "threads": [1, 2],
                 "gc_threads": [None], "variants": ["ps", "al", "lps1", "lps1.5"]},
    # papers/001: per-CPU vs per-thread buffers with hundreds of threads
    "bursty": {"programs": ["bursty"], "impls": ["sgc", "bdwgc"], "threads": [200, 500, 1000],
               "gc_threads": [None], "variants": ["lab-thread", "lab-cpu", "lab-flip"]},
    # heap against thread count when most threads sleep (issue 53)
    "sleepers": {"programs": ["sleepers", "sleepers-same-live", "sleepers-cond", "sleepers-floor"],
                 "impls": ["sgc", "bdwgc"], "threads": [50, 500, 2000],
                 "program_threads": {"sleepers-floor": [50]},
                 "gc_threads": [None], "variants": ["lab-thread", "lab-cpu", "lab-flip", "step-2m"]},
    # flip mode must also pick per-thread caches where they are better
    "lab-gcbench": {"programs": ["gcbench"], "impls": ["sgc"], "threads": [1, 2],
                    "gc_threads": [None], "variants": ["lab-thread", "lab-cpu", "lab-flip"]},
    # thesis setting: as many GC threads as application threads, 1..CPUs
    "scaling": {"programs": APPS, "impls": ["sgc", "bdwgc"], "threads": "pow2",
                "gc_threads": "same", "variants": ["default"]},
    # realloc growth, 2,000 threads, 1,000,000 finalizers or weak links,
    # large objects of random and of steadily growing sizes
    # (bench/shapes.c)
    "shapes": {"programs": ["shape-grow", "shape-threads", "shape-finalizers", "shape-weak",
                           "shape-large", "shape-ramp"],
               "impls": ["sgc", "bdwgc"], "threads": [1], "gc_threads": [None],
               "variants": ["default"]},
    # list-shaped and tiny heaps: more GC threads must never mark slower
    # (bdwgc issues #320, #453); a wide heap for contrast
    "markshape": {"programs": ["mark-list", "mark-tiny", "mark-tiny-1g", "mark-wide", "mark-tree",
                               "mark-proc"],
                  "impls": ["sgc", "bdwgc"],
                  "threads": [1], "gc_threads": [1, 2, 4], "variants": ["default"]},
    # the thesis's watermark stack vs a Chase-Lev deque (issue 4)
    "deque": {"programs": ["gcbench", "bh-pt-long", "cky", "cube"], "impls": ["sgc"],
              "threads": [2], "gc_threads": [1, 2], "variants": ["opt", "chase-lev"]},
    # the mark speed-up within each run: collections alternate between 1
    # and 2 GC threads (issue 4's 1.85x target), per way of setting marks;
    # mark-tree is the same wide shape with no mutator between collections
    "mark-cycle": {"programs": ["gcbench", "bh-pt-long", "cky", "cube", "mark-tree"], "impls": ["sgc"],
                   "threads": [2], "gc_threads": [2], "variants": ["cycle-store", "cycle-exchange"]},
    # what the machine gives threads that share nothing, for the speed-ups
    # above; run it in the same invocation (--experiment deque --experiment
    # ceiling) so that both see the same neighbours
    "ceiling": {"programs": CEILING, "impls": ["glibc"], "threads": "pow2",
                "gc_threads": [None], "variants": ["default"]},
    # Larger machines (bench/README.md, "On a larger machine"):
    # Figs 3.7 / 3.9 with 1 to all CPUs as GC threads, every count in each
    # run, the application threads one per CPU
    "mark-scaling": {"programs": ["gcbench", "bh-pt-long", "cky", "cube"], "impls": ["sgc"],
                     "threads": "max", "gc_threads": [None],
                     "variants": ["cycle-simple", "cycle-noopt", "cycle-no-slo", "cycle-no-nsb",
                                  "cycle-opt", "cycle-chase-lev"]},
    # list-shaped and tiny heaps with up to all CPUs as GC threads
    "markshape-scaling": {"programs": ["mark-list", "mark-tiny", "mark-tiny-1g", "mark-wide",
                                       "mark-tree", "mark-proc"],
                          "impls": ["sgc", "bdwgc"], "threads": [1], "gc_threads": "pow2",
                          "variants": ["default"]},
    # Table 2.1 / Fig 2.4 to twice the CPUs (more threads than cores)
    "alloc-scaling-many": {"programs": ["alloc-free", "alloc-free-256"],
                           "impls": ["sgc"] + MALLOC_PEERS, "threads": "pow2x2",
                           "gc_threads": [None], "variants": ["ps", "al", "lps1", "lps1.5"]},
    # bdwgc's GC_malloc/GC_free apart: its allocation lock makes many
    # threads slow, so fewer runs of it (--runs)
    "alloc-bdwgc-many": {"programs": ["alloc-free"], "impls": ["bdwgc"], "threads": "pow2x2",
                         "gc_threads": [None], "variants": ["default"]},
    # Fig 2.5 and Figs 2.6-2.8 to all CPUs
    "unfair-scaling": {"programs": ["unfair", "unfair-drop"],
                       "impls": ["sgc", "bdwgc"] + MALLOC_PEERS, "threads": "pow2",
                       "gc_threads": [None],
                       "variants": ["ps", "al", "lps1", "lps1.5", "lps2", "lps3"]},
    "policies-scaling": {"programs": ["matmul", "bh-pt", "cky"], "impls": ["sgc"],
                         "threads": "pow2", "gc_threads": [None],
                         "variants": ["ps", "al", "lps1", "lps1.5"]},
    # issue 58: sgc keeps no more of what a program drops than bdwgc, in
    # every mode (bench/retention.c)
    "retention": {"programs": ["retention"], "impls": ["sgc", "bdwgc"], "threads": [1, 4],
                  "gc_threads": [None, 4],
                  "variants": ["default", "torture", "lab-cpu", "ps", "al", "lps1.5"]},
    # stop-the-world against concurrent cycles under each kernel barrier,
    # bdwgc and its incremental mode (issue 54; thesis Fig. 5.2, Tables
    # 5.1-5.2); a cycle's SGC_TRACE record (its finish) holds its start
    # pause as start_pause_ns.  The manual barrier is left out: these
    # programs do not report their stores.
    "concurrent": {"programs": APPS, "impls": ["sgc", "bdwgc", "bdwgc-incr"], "threads": [1, 2],
                   "gc_threads": [None],
                   "variants": ["default", "concurrent-uffd", "concurrent-softdirty",
                                "concurrent-mprotect", "concurrent-full"]},
    # issue 54: request latency and throughput with a large live heap,
    # stop-the-world and concurrent per barrier, against bdwgc and its
    # incremental mode
    "latency": {"programs": ["latency-256m", "latency-1g"], "impls": ["sgc", "bdwgc", "bdwgc-incr"],
                "threads": [2], "gc_threads": [None],
                "variants": ["default", "concurrent-uffd", "concurrent-softdirty", "concurrent-mprotect"]},
    # Table 4.4: SGC_MARKERS=auto against each fixed GC thread count
    # (choosing off) and the rule it replaced (SGC_MARKERS=rule), every
    # program of issue 56 with 2 mutator threads (markshape takes one); "unpinned":
    # variants run once with no GC thread count set, beside the product
    # (--gc-threads 1,2,4,8,16 or "pow2" for more fixed counts)
    "markers-auto": {"programs": ["gcbench", "bh-pt", "cky", "cube", "mark-list", "mark-tiny"],
                     "impls": ["sgc"], "threads": [2],
                     "program_threads": {"mark-list": [1], "mark-tiny": [1]},
                     "gc_threads": [1, 2], "variants": ["fixed"],
                     "unpinned": ["markers-auto", "markers-rule"]},
    # lazy vs parallel sweep
    "sweep": {"programs": ["gcbench", "cky", "cube"], "impls": ["sgc"], "threads": [2],
              "gc_threads": [None], "variants": ["sweep-lazy", "sweep-parallel"]},
}


FULL = ["apps", "mark", "alloc", "alloc-typed", "unfair", "bursty", "sleepers", "lab-gcbench", "sweep", "markshape",
        "policies", "deque", "mark-cycle", "ceiling"]  # "scaling", "*-scaling*": bigger machines


HEADLINE = {"programs": ["gcbench", "alloc-free", "bh-st", "bh-pt", "cky", "cube", "matmul"],
            "impls": ["sgc", "bdwgc"], "threads": [1, 2], "gc_threads": [None],
            "variants": ["default"]}


SMOKE = {"programs": list(PROGRAMS), "impls": [i for i in IMPLS if i != "bdwgc-incr"], "threads": [1, 2],
         "gc_threads": [None], "variants": ["default"]}


class Config:
    def __init__(self, experiment, program, impl, threads, gc_threads, variant):
        self.experiment = experiment
        self.program = program
        self.impl = impl
        self.threads = threads
        self.gc_threads = gc_threads
        self.variant = variant

    def key(self):
        return (self.program, self.impl, self.threads, self.gc_threads, self.variant)

    def label(self):
        g = "-" if self.gc_threads is None else self.gc_threads
        return f"{self.program} {self.impl} t={self.threads} gct={g} {self.variant}"


def thread_list(spec):
    """A list; "pow2": 1, 2, 4, ... up to the CPUs this process may use;
    "pow2x2": the same up to twice them; "max": the CPUs alone."""
    if spec == "pow2":
        return pow2_upto(usable_cpus())
    if spec == "pow2x2":
        return pow2_upto(2 * usable_cpus())
    if spec == "max":
        return [usable_cpus()]
    return list(spec)


def expand(exp_name, exp, programs=None, impls=None, threads=None, gc_threads=None):
    out = []
    for prog in exp["programs"]:
        if programs and prog not in programs:
            continue
        for impl in exp["impls"]:
            if impls and impl not in impls:
                continue
            kind = IMPLS[impl]["kind"]
            if kind == "malloc" and not PROGRAMS[prog]["malloc"]:
                continue
            if impl not in PROGRAMS[prog].get("impls", [impl]):
                continue
            variants = exp["variants"] if impl == "sgc" else ["default"]
            for t in thread_list(exp.get("program_threads", {}).get(prog, exp["threads"])):
                if threads and t not in threads:
                    continue
                if kind != "gc":
                    gcts = [None]
                elif gc_threads:
                    gcts = gc_threads
                elif exp["gc_threads"] == "same":
                    gcts = [t]
                else:
                    gcts = thread_list(exp["gc_threads"])
                if impl == "sgc":
                    out += [Config(exp_name, prog, impl, t, None, v) for v in exp.get("unpinned", [])]
                for g in gcts:
                    for v in variants:
                        out.append(Config(exp_name, prog, impl, t, g, v))
    # de-duplicate (a peer appears once per (prog, threads, gct))
    seen, uniq = set(), []
    for c in out:
        if c.key() not in seen:
            seen.add(c.key())
            uniq.append(c)
    return uniq
