#!/usr/bin/env python3
"""Unit tests of the benchmark runner's arithmetic (bench/runner/): the
paired ratios, the speed-up and mark-rate tables, the trace summary and
pooled reports.  Hand-made rows and traces with known answers; no
benchmark runs.

  /usr/bin/python3 tests/runner/runner_unit.py
"""
import json
import os
import sys
import tempfile
import unittest

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(REPO, "bench"))

from runner import gcstats, mark_scaling, markers_auto, matrix, report, results, tables  # noqa: E402

for sub in ("analysis", "dev"):
    sys.path.insert(0, os.path.join(REPO, "tools", sub))
import callgrind_function  # noqa: E402
import threads_vs_procs  # noqa: E402


def row(program, impl, threads, gc_threads, variant, run, **cols):
    r = {c: None for c in results.CSV_COLUMNS}
    r.update(program=program, impl=impl, threads=threads, gc_threads=gc_threads,
             variant=variant, run=run, status="ok")
    r.update(cols)
    return r


def parse_trace(recs, tail="", **kw):
    """parse_sgc_trace over a trace file holding RECS (then TAIL, raw)."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for rec in recs:
            f.write(json.dumps(rec) + "\n")
        f.write(tail)
    try:
        return gcstats.parse_sgc_trace(f.name, **kw)
    finally:
        os.unlink(f.name)


class PairedRatio(unittest.TestCase):
    def test_pairs_by_round_not_by_median(self):
        # Round 1 is a slow phase for both sides, rounds 2 and 3 fast ones.
        # Within the rounds g=2 is 1.8, 1.6 and 1.7 times g=1: paired,
        # 1.7; the ratio of the medians (320 / 200) would say 1.6.
        rows = []
        for run, base, ratio in ((1, 100.0, 1.8), (2, 200.0, 1.6), (3, 210.0, 1.7)):
            rows.append(row("p", "sgc", 2, 1, "opt", run, mark_mb_per_s=base))
            rows.append(row("p", "sgc", 2, 2, "opt", run, mark_mb_per_s=base * ratio))
        self.assertAlmostEqual(tables.paired_speedup(results.group(rows), ("p", "sgc", 2, "opt"), 2), 1.7)

    def test_unpaired_rounds_and_failed_runs_are_left_out(self):
        rows = [row("p", "sgc", 2, 1, "opt", 1, mark_mb_per_s=100.0),
                row("p", "sgc", 2, 2, "opt", 1, mark_mb_per_s=150.0),
                row("p", "sgc", 2, 2, "opt", 2, mark_mb_per_s=999.0),  # no g=1 in round 2
                row("p", "sgc", 2, 1, "opt", 3, mark_mb_per_s=100.0),
                row("p", "sgc", 2, 2, "opt", 3, mark_mb_per_s=999.0, status="check-failed")]
        self.assertAlmostEqual(tables.paired_speedup(results.group(rows), ("p", "sgc", 2, "opt"), 2), 1.5)

    def test_none_without_a_pair(self):
        rows = [row("p", "sgc", 2, 2, "opt", 1, mark_mb_per_s=150.0)]
        self.assertIsNone(tables.paired_speedup(results.group(rows), ("p", "sgc", 2, "opt"), 2))

    def test_alloc_series_paired_over_one_thread(self):
        rows = []
        for run, base in ((1, 100.0), (2, 50.0)):
            rows.append(row("alloc-free", "mimalloc", 1, None, "default", run, mops=base))
            rows.append(row("alloc-free", "mimalloc", 2, None, "default", run, mops=base * 1.9))
        up = tables.alloc_series(rows, "alloc-free", paired=True)
        self.assertAlmostEqual(up["mimalloc"][2], 1.9)
        self.assertAlmostEqual(up["mimalloc"][1], 1.0)

    def test_alloc_series_of_another_column(self):
        rows = []
        for run, base in ((1, 100.0), (2, 50.0)):
            rows.append(row("alloc-free", "sgc", 1, None, "default", run, mops=base,
                            mops_p10=base * 1.1))
            rows.append(row("alloc-free", "sgc", 2, None, "default", run, mops=base * 1.7,
                            mops_p10=base * 1.1 * 1.95))
        up = tables.alloc_series(rows, "alloc-free", paired=True, col="mops_p10")
        self.assertAlmostEqual(up["sgc"][2], 1.95)
        self.assertAlmostEqual(tables.alloc_series(rows, "alloc-free", paired=True)["sgc"][2], 1.7)


class Tables(unittest.TestCase):
    def test_speedup_data_marked_bytes_per_collection(self):
        rows = [row("cube", "sgc", 2, 1, "opt", 1, mark_mb_per_s=10.0, gc_s=2.0,
                    marked_bytes=400.0, collections=4.0),
                row("cube", "sgc", 2, 2, "opt", 1, mark_mb_per_s=15.0, gc_s=1.0,
                    marked_bytes=100.0, collections=4.0)]
        d = tables.speedup_data(rows)[("cube", "sgc", 2, "opt")]
        self.assertEqual(d[1], (10.0, 2.0, 100.0))
        self.assertEqual(d[2], (15.0, 1.0, 25.0))

    def test_mark_rate_over_pauses_never_above_over_mark_time(self):
        rows = [row("gcbench", "sgc", 2, 1, "default", 1, mark_mb_per_s=3000.0,
                    marked_bytes=3e9, gc_s=1.5),
                row("gcbench", "bdwgc", 2, 1, "default", 1, mark_mb_per_s=1000.0)]
        (r,) = tables.mark_rate_rows(rows)
        self.assertEqual(r[6], "3.00")  # sgc mark time
        self.assertEqual(r[7], "2.00")  # 3e9 bytes / 1.5 s of pauses = 2000 MB/s

    def test_mark_rate_over_pauses_counts_the_time_before_the_stops(self):
        # sgc clears the marks before the world stops: that time (prestop_s)
        # counts with the pauses, since bdwgc's figure includes its clearing.
        rows = [row("gcbench", "sgc", 2, 1, "default", 1, mark_mb_per_s=3000.0,
                    marked_bytes=3e9, gc_s=1.0, prestop_s=0.5),
                row("gcbench", "bdwgc", 2, 1, "default", 1, mark_mb_per_s=1000.0)]
        (r,) = tables.mark_rate_rows(rows)
        self.assertEqual(r[7], "2.00")  # 3e9 bytes / (1.0 + 0.5) s

    def test_mark_rate_paired_within_rounds(self):
        # Round 2 is slow for both: per round 1.2, 1.0 and 1.1 (paired 1.1);
        # the medians, 1200 and 1000, give 1.20.
        rows = []
        for run, s, b in ((1, 1200.0, 1000.0), (2, 600.0, 600.0), (3, 1210.0, 1100.0)):
            rows.append(row("cky", "sgc", 2, 1, "default", run, mark_mb_per_s=s))
            rows.append(row("cky", "bdwgc", 2, 1, "default", run, mark_mb_per_s=b))
        (r,) = tables.mark_rate_rows(rows)
        self.assertEqual(r[6], "1.20")
        self.assertEqual(r[8], "1.10")

    def test_object_rate_paired_and_bytes_per_object(self):
        # Round 2 is slow for both: per round 1.5, 2.0, 1.4 (paired 1.5);
        # the medians, 28 and 20, give 1.40.  bdwgc counts 48 bytes for
        # each 32-byte object: 1.50 as much per object.
        rows = []
        for run, s, b in ((1, 30.0, 20.0), (2, 10.0, 5.0), (3, 28.0, 20.0)):
            rows.append(row("cky", "sgc", 2, 1, "default", run, mark_mobj_per_s=s,
                            marked_objects_enum=1e6, marked_bytes_enum=32e6,
                            gc_s=0.08, prestop_s=0.02))
            rows.append(row("cky", "bdwgc", 2, 1, "default", run, mark_mobj_per_s=b,
                            marked_objects_enum=1e6, marked_bytes_enum=48e6))
        (r,) = tables.mark_object_rate_rows(rows)
        self.assertEqual(r[3], "28.00")   # sgc's median
        self.assertEqual(r[4], "10.00")   # 1e6 objects / (0.08 + 0.02) s
        self.assertEqual(r[6], "1.40")    # ratio of medians, 28 / 20
        self.assertEqual(r[7], "0.50")    # over pauses, 10 / 20
        self.assertEqual(r[8], "1.50")    # paired
        self.assertEqual(r[9:], ["32.0", "48.0", "1.50"])

    def test_object_rate_needs_counted_runs(self):
        rows = [row("cky", "sgc", 2, 1, "default", 1, mark_mb_per_s=1000.0),
                row("cky", "bdwgc", 2, 1, "default", 1, mark_mb_per_s=900.0)]
        self.assertEqual(tables.mark_object_rate_rows(rows), [])

    def test_trace_sums_the_time_before_the_stops(self):
        s = parse_trace([{"pause_ns": 10, "mark_ns": 5, "prestop_ns": p} for p in (1000, 3000)])
        self.assertAlmostEqual(s["prestop_s"], 4000 / 1e9)


class BdwgcStats(unittest.TestCase):
    def parse(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".err", delete=False) as f:
            f.write(text)
        try:
            return gcstats.parse_bdwgc_stats(f.name, None)
        finally:
            os.unlink(f.name)

    def test_incremental_collections_pause_for_their_stopped_marking(self):
        # A full collection prints "Complete collection took"; one that
        # incremental mode finished prints only its world-stopped marking.
        s = self.parse("--> Marking for collection #1 after 0 allocated bytes\n"
                       "World-stopped marking took 0 ms 100000 ns (0 ms in average)\n"
                       "Complete collection took 0 ms 200000 ns\n"
                       "--> Marking for collection #2 after 5 allocated bytes\n"
                       "World-stopped marking took 804 ms 0 ns (0 ms in average)\n"
                       "--> Marking for collection #3 after 5 allocated bytes\n"
                       "World-stopped marking took 6 ms 0 ns (0 ms in average)\n")
        self.assertEqual(s["collections"], 3)
        self.assertAlmostEqual(s["max_pause_ms"], 804.0)
        self.assertAlmostEqual(s["mean_pause_ms"], (0.2 + 804 + 6) / 3)


class Trace(unittest.TestCase):
    def test_concurrent_start_pauses_count_as_pauses(self):
        # A cycle's record is its finish (2 ms) with its start's 14 ms; a
        # stop collection of 4 ms: three pauses, two collections.
        recs = [{"pause_ns": 2000000, "start_pause_ns": 14000000, "concurrent": 1},
                {"pause_ns": 4000000, "start_pause_ns": 0}]
        s = parse_trace(recs)
        self.assertEqual(s["collections"], 2)
        self.assertAlmostEqual(s["max_pause_ms"], 14.0)
        self.assertAlmostEqual(s["mean_pause_ms"], 20.0 / 3)
        self.assertAlmostEqual(s["gc_s"], 0.020)

    def test_p99_pause_by_nearest_rank(self):
        # 200 collections of 1 ms and two of 9 ms: the 99th percentile is
        # the 200th of 202, 1 ms; with 50 pauses it is the worst.
        recs = [{"pause_ns": 1000000}] * 200 + [{"pause_ns": 9000000}] * 2
        self.assertAlmostEqual(parse_trace(recs)["p99_pause_ms"], 1.0)
        recs = [{"pause_ns": 1000000}] * 49 + [{"pause_ns": 9000000}]
        self.assertAlmostEqual(parse_trace(recs)["p99_pause_ms"], 9.0)
        self.assertEqual(gcstats.nearest_rank([3, 1, 2], 0.5), 2)

    def test_idle_share_counts_parallel_collections_only(self):
        recs = [
            # alone: not counted
            {"pause_ns": 10, "mark_ns": 1000, "markers": 1, "mark_idle_ns": 500},
            # 2 markers x 1000 ns present, 100 ns idle
            {"pause_ns": 10, "mark_ns": 1000, "markers": 2, "mark_idle_ns": 100},
            # 2 x 3000 ns present, 300 idle
            {"pause_ns": 10, "mark_ns": 3000, "markers": 2, "mark_idle_ns": 300},
        ]
        s = parse_trace(recs, tail='{"truncated":')  # a crash's last line is skipped
        self.assertEqual(s["collections"], 3)
        self.assertAlmostEqual(s["mark_idle_share"], 400 / 8000)


    def test_markers_split_rates_each_count_over_its_own_collections(self):
        recs = [
            # one GC thread: 4e6 bytes in 2000 ns and 2e6 in 1000 ns: 2000 B/ns
            {"pause_ns": 10, "mark_ns": 2000, "markers": 1, "marked_bytes": 4000000},
            {"pause_ns": 10, "mark_ns": 1000, "markers": 1, "marked_bytes": 2000000},
            # two: 6e6 bytes in 1500 ns: 4000 B/ns
            {"pause_ns": 10, "mark_ns": 1500, "markers": 2, "marked_bytes": 6000000},
        ]
        s = parse_trace(recs, by_markers=True)
        plain = parse_trace(recs)
        self.assertAlmostEqual(s["cycle_speedup"], 2.0)
        self.assertAlmostEqual(s["cycle_mb_per_gc_1"], 3.0)
        self.assertAlmostEqual(s["cycle_mb_per_gc_n"], 6.0)
        self.assertNotIn("cycle_speedup", plain)  # only when asked
        self.assertIsNone(gcstats.markers_split(recs[:2]))  # one side only

    def test_markers_split_decomposes_the_speed_up_exactly(self):
        def rec(markers, mark_ns, marked, busy):
            return {"pause_ns": 10, "mark_ns": mark_ns, "markers": markers,
                    "marked_bytes": marked, "mark_threads": [{"busy_ns": b} for b in busy]}
        recs = [
            # one thread: busy 900 of 1000 ns for 1e6 bytes (outside 10%)
            rec(1, 1000, 1000000, [900]),
            # two: 1e6 bytes in 800 ns; busy 600 and 400 (the busiest 600:
            # outside 25%, mean 500: imbalance 1.2; busy per byte 1000/900)
            rec(2, 800, 1000000, [600, 400]),
        ]
        s = gcstats.markers_split(recs)
        self.assertAlmostEqual(s["cycle_speedup"], 1000 / 800)
        self.assertAlmostEqual(s["cycle_busy_ratio"], 1000 / 900)
        self.assertAlmostEqual(s["cycle_imbalance"], 1.2)
        self.assertAlmostEqual(s["cycle_outside_1"], 0.1)
        self.assertAlmostEqual(s["cycle_outside_n"], 0.25)
        product = 2 * (1 - s["cycle_outside_n"]) / (1 - s["cycle_outside_1"]) / (
            s["cycle_busy_ratio"] * s["cycle_imbalance"])
        self.assertAlmostEqual(product, s["cycle_speedup"])
        # A trace without per-thread busy times keeps the speed-up alone.
        old = [{k: v for k, v in r.items() if k != "mark_threads"} for r in recs]
        self.assertNotIn("cycle_busy_ratio", gcstats.markers_split(old))

    def test_cycle_section_medians_over_runs(self):
        rows = [row("gcbench", "sgc", 2, 2, "cycle-store", i, cycle_speedup=v,
                    cycle_mb_per_gc_1=16.0, cycle_mb_per_gc_n=17.0)
                for i, v in enumerate([1.7, 1.9, 2.0], 1)]
        text = "\n".join(report.section_cycle(rows))
        self.assertIn("| gcbench | 2 | 2 | cycle-store | 3 | 1.90 | 1.70–2.00 |", text)
        self.assertIn("| 16 | 17 | - | - | - | - |", text)  # no busy times: dashes
        for r, ratio in zip(rows, [1.1, 1.3, 1.2]):
            r.update(cycle_busy_ratio=ratio, cycle_imbalance=1.01, cycle_outside_1=0.001,
                     cycle_outside_n=0.02)
        text = "\n".join(report.section_cycle(rows))
        self.assertIn("| 16 | 17 | 1.20 | 1.010 | 0.1% | 2.0% |", text)

    def test_markers_rates_give_every_count_over_one_thread(self):
        recs = [
            {"pause_ns": 10, "mark_ns": 1000, "markers": 1, "marked_bytes": 2000000},
            {"pause_ns": 10, "mark_ns": 600, "markers": 2, "marked_bytes": 2000000},
            {"pause_ns": 10, "mark_ns": 300, "markers": 4, "marked_bytes": 2000000},
            {"pause_ns": 10, "mark_ns": 500, "markers": 4, "marked_bytes": 4000000},
        ]
        s = parse_trace(recs, by_markers=True)
        per = gcstats.parse_cycle_speedups(s["cycle_speedups"])
        self.assertEqual(sorted(per), [1, 2, 4])
        self.assertAlmostEqual(per[2][0], 1000 / 600, places=3)
        self.assertAlmostEqual(per[4][0], 3.75, places=3)  # 6e6 B in 800 ns over 2000 B/ns
        self.assertAlmostEqual(per[4][1], 3.0)  # MB per collection
        self.assertAlmostEqual(s["cycle_speedup"], per[4][0], places=3)  # most over one
        self.assertIsNone(gcstats.markers_rates(recs[1:]))  # no one-thread collection

    def test_mark_scaling_section_takes_runs_of_more_than_two_counts(self):
        rows = [row("cube", "sgc", 16, None, "cycle-opt", i,
                    cycle_speedups=f"1:1.0000:50.00;2:{a}:50.00;4:{b}:51.00")
                for i, (a, b) in enumerate([(1.9, 3.5), (1.8, 3.7), (2.0, 3.6)], 1)]
        rows.append(row("cube", "sgc", 2, 2, "cycle-store", 1,
                        cycle_speedups="1:1.0000:50.00;2:1.9000:50.00"))
        text = "\n".join(mark_scaling.section_mark_scaling(rows, "/nonexistent", None))
        self.assertIn("| cube | 16 | cycle-opt | 3 | 1 | 1.90 (1.80–2.00) | 3.60 (3.50–3.70) "
                      "| 50/50/51 |", text)
        self.assertNotIn("cycle-store", text)  # a 1,2 cycle has its own section
        self.assertEqual(mark_scaling.section_mark_scaling(rows[3:], "/nonexistent", None), [])


class Concurrent(unittest.TestCase):
    def test_run_time_over_stop_mode_paired_by_round(self):
        rows = [row("gcbench", "sgc", 2, None, "default", 1, wall_s=1.0),
                row("gcbench", "sgc", 2, None, "default", 2, wall_s=2.0),
                row("gcbench", "sgc", 2, None, "concurrent-uffd", 1, wall_s=1.5, p99_pause_ms=0.5),
                row("gcbench", "sgc", 2, None, "concurrent-uffd", 2, wall_s=3.0, p99_pause_ms=0.7),
                row("gcbench", "bdwgc-incr", 2, None, "default", 1, wall_s=2.0),
                row("gcbench", "bdwgc-incr", 2, None, "default", 2, wall_s=2.0),
                # no concurrent configuration at this thread count: left out
                row("cky", "sgc", 1, None, "default", 1, wall_s=1.0),
                row("cky", "bdwgc", 1, None, "default", 1, wall_s=1.0),
                # a fixed-time program: left out, whatever it ran
                row("latency-1g", "sgc", 2, None, "default", 1, wall_s=20.0),
                row("latency-1g", "sgc", 2, None, "concurrent-uffd", 1, wall_s=20.0)]
        data = {(d["program"], d["threads"], d["impl"], d["variant"]): d
                for d in report.concurrent_rows(rows)}
        self.assertEqual(sorted(data), [("gcbench", 2, "bdwgc-incr", "default"),
                                        ("gcbench", 2, "sgc", "concurrent-uffd"),
                                        ("gcbench", 2, "sgc", "default")])
        self.assertAlmostEqual(data[("gcbench", 2, "sgc", "concurrent-uffd")]["ratio"], 1.5)
        self.assertAlmostEqual(data[("gcbench", 2, "sgc", "concurrent-uffd")]["p99_pause_ms"], 0.6)
        # 2.0 / 1.0 and 2.0 / 2.0: the median of the rounds' ratios, not
        # of the walls (2.0 / 1.5)
        self.assertAlmostEqual(data[("gcbench", 2, "bdwgc-incr", "default")]["ratio"], 1.5)
        self.assertEqual(data[("gcbench", 2, "sgc", "default")]["ratio"], 1.0)


class ThreadLists(unittest.TestCase):
    def test_specs_follow_the_usable_cpus(self):
        saved = matrix.usable_cpus
        try:
            matrix.usable_cpus = lambda: 12
            self.assertEqual(matrix.thread_list("pow2"), [1, 2, 4, 8, 12])
            self.assertEqual(matrix.thread_list("pow2x2"), [1, 2, 4, 8, 16, 24])
            self.assertEqual(matrix.thread_list("max"), [12])
            self.assertEqual(matrix.thread_list([3, 5]), [3, 5])
            matrix.usable_cpus = lambda: 1
            self.assertEqual(matrix.thread_list("pow2"), [1])
        finally:
            matrix.usable_cpus = saved

    def test_cycle_variants_count_up_to_the_cpus(self):
        counts = [int(c) for c in matrix.CYCLE_POW2.split(",")]
        self.assertEqual(counts, matrix.pow2_upto(matrix.usable_cpus()))
        for v in ("cycle-opt", "cycle-simple", "cycle-chase-lev"):
            self.assertEqual(matrix.VARIANTS[v]["SGC_MARKERS_CYCLE"], matrix.CYCLE_POW2)


class MarkersAuto(unittest.TestCase):
    """Experiment markers-auto (Table 4.4): auto against fixed counts."""

    def test_expansion(self):
        cfgs = matrix.expand("markers-auto", matrix.EXPERIMENTS["markers-auto"],
                             programs=["cky", "mark-list"])
        self.assertEqual([c.label() for c in cfgs],
                         ["cky sgc t=2 gct=- markers-auto", "cky sgc t=2 gct=- markers-rule",
                          "cky sgc t=2 gct=1 fixed", "cky sgc t=2 gct=2 fixed",
                          "mark-list sgc t=1 gct=- markers-auto", "mark-list sgc t=1 gct=- markers-rule",
                          "mark-list sgc t=1 gct=1 fixed", "mark-list sgc t=1 gct=2 fixed"])
        more = matrix.expand("markers-auto", matrix.EXPERIMENTS["markers-auto"],
                             programs=["cky"], gc_threads=[1, 2, 4])
        self.assertEqual([(c.gc_threads, c.variant) for c in more],
                         [(None, "markers-auto"), (None, "markers-rule"), (1, "fixed"), (2, "fixed"),
                          (4, "fixed")])
        self.assertEqual(matrix.VARIANTS["fixed"], {"SGC_ADAPTIVE": "0"})
        self.assertEqual(matrix.VARIANTS["markers-auto"], {"SGC_MARKERS": "auto"})
        self.assertEqual(matrix.VARIANTS["markers-rule"], {"SGC_MARKERS": "rule"})

    def test_ratio_to_the_best_fixed_count_paired(self):
        # mark ms per collection (mark_s / collections x 1000):
        #   round   fixed 1  fixed 2  auto  rule
        #     1       2.0      1.0     1.1    1.5
        #     2       4.0      3.0     3.3    3.0   (a slow round)
        #     3       2.0      1.2     1.2    1.2
        # best fixed: 2 (median 1.2 against 2.0); auto's paired ratios
        # 1.1, 1.1, 1.0 -> 1.1 (over 1.05: "NO"); of medians 1.2 / 1.2 =
        # 1.0; the rule's median 1.5, paired 1.5, 1.0, 1.0 -> 1.0.
        fig = {1: (2.0, 4.0, 2.0), 2: (1.0, 3.0, 1.2)}
        rows = []
        for r in (1, 2, 3):
            for n, v in fig.items():
                rows.append(row("cky", "sgc", 2, n, "fixed", r, mark_s=v[r - 1] * 10 / 1e3,
                                collections=10, marked_bytes=50e6, markers_hist=f"{n}:10"))
            rows.append(row("cky", "sgc", 2, None, "markers-auto", r,
                            mark_s=(1.1, 3.3, 1.2)[r - 1] * 10 / 1e3, collections=10,
                            marked_bytes=50e6, markers_hist="1:3;2:7"))
            rows.append(row("cky", "sgc", 2, None, "markers-rule", r,
                            mark_s=(1.5, 3.0, 1.2)[r - 1] * 10 / 1e3, collections=10,
                            marked_bytes=50e6, markers_hist="2:10"))
        d, = markers_auto.markers_auto_data(rows)
        self.assertEqual(d["best"], 2)
        self.assertAlmostEqual(d["fixed"][1], 2.0)
        self.assertAlmostEqual(d["auto_paired"], 1.1)
        self.assertAlmostEqual(d["auto_ratio"], 1.0)
        self.assertAlmostEqual(d["rule_paired"], 1.0)
        self.assertEqual(d["rule_hist"], "2:30")
        self.assertEqual(d["auto_hist"], "1:9 2:21")
        self.assertAlmostEqual(d["mb_auto"], 5.0)
        table = markers_auto.markers_auto_table(rows)
        self.assertIn("| cky | 2 | 3 | 2 | 1.20 | 1.50 | 1.20 | 2 | 1.000 | 1.100 | 1.000 | NO |", table)
        # A round without every fixed count is left out of the pairing.
        rows = [r for r in rows if not (r["run"] == 3 and r["gc_threads"] == 1)]
        self.assertAlmostEqual(markers_auto.markers_auto_data(rows)[0]["auto_paired"], 1.1)

    def test_trace_counts_collections_per_count(self):
        recs = [{"gc_no": i, "markers": m, "mark_ns": 1000, "pause_ns": 2000}
                for i, m in enumerate([1, 2, 2, 1, 2], 1)]
        self.assertEqual(parse_trace(recs)["markers_hist"], "1:2;2:3")
        self.assertEqual(gcstats.parse_markers_hist("1:2;2:3"), {1: 2, 2: 3})


class Pooling(unittest.TestCase):
    def test_merged_runs_pair_within_their_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            dirs = []
            # Source 0: g=2 is 2.0x; source 1: 1.0x.  Its run numbers
            # collide with source 0's: pairing across sources would mix
            # them.
            for i, factor in enumerate((2.0, 1.0)):
                d = os.path.join(tmp, f"src{i}")
                os.makedirs(d)
                rs = []
                for run in (1, 2, 3):
                    base = 100.0 * (i + 1) * run
                    rs.append(row("p", "sgc", 2, 1, "opt", run, mark_mb_per_s=base))
                    rs.append(row("p", "sgc", 2, 2, "opt", run, mark_mb_per_s=base * factor))
                results.write_csv(os.path.join(d, "results.csv"), rs)
                dirs.append(d)
            out = os.path.join(tmp, "pooled")
            devnull = open(os.devnull, "w")
            old, sys.stdout = sys.stdout, devnull
            try:
                report.merge_reports(dirs, out)
            finally:
                sys.stdout = old
                devnull.close()
            rows = results.read_csv(os.path.join(out, "results.csv"))
            self.assertEqual(sorted({r["run"] for r in rows}), [1, 2, 3, 1001, 1002, 1003])
            ratios = sorted(r2["mark_mb_per_s"] / r1["mark_mb_per_s"]
                            for r1 in rows for r2 in rows
                            if r1["gc_threads"] == 1 and r2["gc_threads"] == 2
                            and r1["run"] == r2["run"])
            self.assertEqual(ratios, [1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
            with open(os.path.join(out, "report.md")) as f:
                self.assertIn("Speed-up table", f.read())


class Ceiling(unittest.TestCase):
    def test_section_gives_speedups_of_each_loop(self):
        rows = []
        for run in (1, 2, 3):
            rows.append(row("ceiling-compute", "glibc", 1, None, "default", run, mops=100.0))
            rows.append(row("ceiling-compute", "glibc", 2, None, "default", run, mops=198.0))
            rows.append(row("ceiling-stream", "glibc", 1, None, "default", run, mops=100.0))
            rows.append(row("ceiling-stream", "glibc", 2, None, "default", run, mops=130.0))
        text = "\n".join(report.section_ceiling(rows))
        self.assertIn("| ceiling-compute | 2 | 100 | 198 | 1.98 | 1.98 |", text)
        self.assertIn("| ceiling-stream | 2 | 100 | 130 | 1.30 | 1.30 |", text)
        self.assertEqual(report.section_ceiling([]), [])


class Sleepers(unittest.TestCase):
    def test_table_shows_the_runs_own_ceiling(self):
        rows = [row("sleepers", "sgc", 50, None, "default", run, metric=m, collections=10,
                    extra=f"ceiling_bursts_per_s={c} sleep_overrun=1.1 peak_heap_mb=6")
                for run, m, c in ((1, 30000.0, 41000), (2, 31000.0, 41600), (3, 29000.0, 41500))]
        text = "\n".join(report.section_sleepers(rows))
        self.assertIn("ceiling bursts/s", text)
        self.assertIn("| sleepers | sgc | default | 50 | 30,000 | 41,500 | 1.10 | 10 | 6 |", text)
        self.assertEqual(report.section_sleepers([]), [])


class ThreadTime(unittest.TestCase):
    def test_time_with_two_threads_paired_and_of_medians(self):
        # Round 2 is slow for both thread counts.  The rounds' own ratios
        # are 1.3, 1.1 and 1.2 (paired: 1.2); the medians, 0.21 and 0.26,
        # give 1.24.
        rows = []
        for run, one, two in ((1, 0.20, 0.26), (2, 0.40, 0.44), (3, 0.21, 0.252)):
            rows.append(row("gcbench", "sgc", 1, None, "default", run, wall_s=one))
            rows.append(row("gcbench", "sgc", 2, None, "default", run, wall_s=two))
            rows.append(row("alloc-free", "sgc", 1, None, "default", run, wall_s=one))
            rows.append(row("alloc-free", "sgc", 2, None, "default", run, wall_s=two))
        rows.append(row("cky", "sgc", 2, None, "default", 1, wall_s=0.5))  # no 1-thread run
        text = "\n".join(report.section_thread_time(rows))
        self.assertIn("| gcbench | sgc | 2 | default | default | 0.21 | 0.26 | 1.24 | 1.20 |", text)
        self.assertNotIn("alloc-free", text)
        self.assertNotIn("| cky", text)
        self.assertEqual(report.section_thread_time(rows[-1:]), [])


class AllocPeers(unittest.TestCase):
    def test_sgc_over_each_peer_paired_within_rounds(self):
        # Round 2 is slow for everyone.  sgc lps1.5 over mimalloc per round:
        # 0.8, 0.9 and 0.85 (paired: 0.85); the medians, 100 and 110, would
        # give 0.91.  bdwgc ran no 2-thread round: no column for it.
        rows = []
        for run, sgc, mi in ((1, 100.0, 125.0), (2, 50.0, 55.5556), (3, 102.0, 120.0)):
            rows.append(row("alloc-free", "sgc", 2, None, "lps1.5", run, mops=sgc))
            rows.append(row("alloc-free", "mimalloc", 2, None, "default", run, mops=mi))
            rows.append(row("alloc-free", "bdwgc", 1, None, "default", run, mops=10.0))
        self.assertEqual(set(tables.alloc_peer_ratios(rows, "alloc-free", "mimalloc")), {"sgc lps1.5"})
        self.assertAlmostEqual(tables.alloc_peer_ratios(rows, "alloc-free", "mimalloc")["sgc lps1.5"][2],
                               0.85, places=3)
        self.assertEqual(tables.alloc_peer_ratios(rows, "alloc-free", "bdwgc"), {})
        text = "\n".join(report.alloc_peer_lines(rows, "alloc-free", [2]))
        self.assertIn("| sgc | / mimalloc 2 thr |", text)
        self.assertIn("| sgc lps1.5 | 0.85 |", text)
        self.assertEqual(report.alloc_peer_lines(rows, "alloc-drop", [2]), [])


class CallgrindFunction(unittest.TestCase):
    def test_counts_own_instructions_not_calls(self):
        # Positions "instr line": absolute, relative (+/-) and repeated (*)
        # addresses; the cost line after calls= is the callee's inclusive
        # cost and belongs to no instruction of the caller.
        text = """positions: instr line
events: Ir
fn=(1) mark_drain_own
0x100 0 5
+4 0 7
cfn=(2) marker_share
calls=1 0x900 0
* 0 1000
+3 0 2
-7 0 1
fn=(3) other
0x200 0 9
fn=(1)
0x107 0 4
"""
        with tempfile.NamedTemporaryFile("w", suffix=".cg", delete=False) as f:
            f.write(text)
        try:
            c = callgrind_function.instruction_counts(f.name, "mark_drain_own")
        finally:
            os.unlink(f.name)
        self.assertEqual(dict(c), {0x100: 6, 0x104: 7, 0x107: 6})


class ThreadsVsProcesses(unittest.TestCase):
    def test_span_waits_for_the_slowest_process(self):
        # Two processes did 100 M allocations each, one in 1 s, one in 2 s:
        # together 200 M in 2 s, 100 M/s, not the 150 M/s their rates sum to.
        self.assertAlmostEqual(threads_vs_procs.combine_processes([100.0, 50.0], [1.0, 2.0]), 100.0)
        self.assertAlmostEqual(threads_vs_procs.combine_processes([100.0, 50.0]), 150.0)

    def test_span_equals_the_sum_when_fair(self):
        self.assertAlmostEqual(threads_vs_procs.combine_processes([80.0, 80.0], [1.5, 1.5]), 160.0)

    def test_every_side_goes_first_equally(self):
        sides = ["threads", "processes", "alone"]
        orders = [threads_vs_procs.round_order(r, sides) for r in range(6)]
        for order in orders:
            self.assertEqual(sorted(order), sorted(sides))
        firsts = [order[0] for order in orders]
        self.assertEqual({s: firsts.count(s) for s in sides}, {s: 2 for s in sides})
        # Two sides alternate, as the tool always did.
        self.assertEqual(threads_vs_procs.round_order(1, ["threads", "processes"]),
                         ["processes", "threads"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
