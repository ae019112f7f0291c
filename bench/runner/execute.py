"""Running one configuration once: the binary, its arguments and environment,
a time limit, and the row of results.csv it yields; and the machine's
description for meta.json."""

import datetime
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time

from .gcstats import parse_bdwgc_stats, parse_result_line, parse_sgc_trace
from .matrix import EXPERIMENTS, IMPLS, PEER_PACKAGES, PROGRAMS, THREAD_FLAG, VARIANTS
from .results import CSV_COLUMNS
from .util import REPO, show_path, to_float


_lib_cache = {}


def find_library(soname):
    """Absolute path of a shared library by soname, or None."""
    if soname in _lib_cache:
        return _lib_cache[soname]
    path = None
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    try:
        if not ldconfig:
            raise OSError("no ldconfig")
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True,
                             timeout=10).stdout
        for line in out.splitlines():
            line = line.strip()
            if line.startswith(soname + " ") and "=>" in line:
                cand = line.split("=>", 1)[1].strip()
                if "x86-64" in line or "64" in line or path is None:
                    path = cand
                    break
    except (OSError, subprocess.SubprocessError):
        pass
    if path is None:
        for d in ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                  "/usr/local/lib"]:
            cand = os.path.join(d, soname)
            if os.path.exists(cand):
                path = cand
                break
    _lib_cache[soname] = path
    return path


def binary_for(cfg, bin_dir):
    return os.path.join(bin_dir, f"bench-{PROGRAMS[cfg.program]['bin']}-{IMPLS[cfg.impl]['suffix']}")


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("SGC_") or k.startswith("GC_") or k == "LD_PRELOAD":
            del env[k]
    return env


def run_one(cfg, run_idx, profile, bin_dir, logs_dir, timeout, with_stats, sgc_env=None):
    """SGC_ENV: settings every sgc run gets (the fast predictor's profile:
    run.py --predict-profile), since the runner clears the caller's SGC_*."""
    row = {c: "" for c in CSV_COLUMNS}
    row.update(experiment=cfg.experiment, program=cfg.program, impl=cfg.impl,
               threads=cfg.threads, gc_threads="" if cfg.gc_threads is None else cfg.gc_threads,
               variant=cfg.variant, run=run_idx)
    impl = IMPLS[cfg.impl]
    binary = binary_for(cfg, bin_dir)
    args = list(PROGRAMS[cfg.program]["args"][profile]) + [THREAD_FLAG, str(cfg.threads)]
    env_extra = dict(impl.get("env", {}))
    if cfg.impl == "sgc":
        env_extra.update(sgc_env or {})
        env_extra.update(VARIANTS[cfg.variant])
    if impl["kind"] == "gc" and cfg.gc_threads is not None:
        env_extra[impl["markers_env"]] = str(cfg.gc_threads)
    tag = "{}_{}_t{}_g{}_{}_r{}".format(cfg.program, cfg.impl, cfg.threads,
                                        "d" if cfg.gc_threads is None else cfg.gc_threads,
                                        cfg.variant, run_idx)
    prefix = os.path.join(logs_dir, tag)
    if with_stats and impl["kind"] == "gc":
        if impl["stats"] == "sgc":
            env_extra["SGC_TRACE"] = prefix + ".trace.jsonl"
        else:
            env_extra["GC_PRINT_STATS"] = "1"
    # Counts the objects each collection marked, alike under both
    # collectors (bench/bench_marked.h): costs wall time, not mark time.
    if with_stats and impl["kind"] == "gc" and EXPERIMENTS.get(cfg.experiment, {}).get("count_marked"):
        env_extra["BENCH_COUNT_MARKED"] = "1"
    if impl["kind"] == "malloc" and impl.get("preload"):
        lib = find_library(impl["preload"])
        if not lib:
            row["status"] = "missing-peer"
            row["extra"] = f"{impl['preload']} not found (apt-get install {PEER_PACKAGES.get(cfg.impl, '?')})"
            return row
        env_extra["LD_PRELOAD"] = lib
    # the recorded environment excludes the per-run trace path
    shown_env = {k: v for k, v in env_extra.items() if k != "SGC_TRACE"}
    row["env"] = " ".join(f"{k}={v}" for k, v in sorted(shown_env.items()))
    row["args"] = " ".join(args)
    row["command"] = " ".join([f"{k}={shlex.quote(v)}" for k, v in sorted(shown_env.items())] +
                              [shlex.quote(show_path(binary))] +
                              [shlex.quote(a) for a in args])
    row["log"] = os.path.relpath(prefix, logs_dir)
    if not os.access(binary, os.X_OK):
        row["status"] = "missing-binary"
        return row

    env = clean_env()
    env.update(env_extra)
    with open(prefix + ".out", "w") as fo, open(prefix + ".err", "w") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary] + args, stdout=fo, stderr=fe, env=env,
                             start_new_session=True, cwd=logs_dir)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        wall = time.monotonic() - t0
        p.returncode = status  # already reaped
    row["proc_wall_s"] = round(wall, 6)
    row["user_s"] = round(ru.ru_utime, 6)
    row["sys_s"] = round(ru.ru_stime, 6)
    row["peak_rss_kb"] = ru.ru_maxrss
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        row["exit_code"] = -sig
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = str(sig)
        row["status"] = "timeout" if timed_out.is_set() else f"crashed-{signame}"
    else:
        row["exit_code"] = os.WEXITSTATUS(status)

    res = parse_result_line(prefix + ".out")
    if res:
        row["check"] = res.get("check", "")
        row["wall_s"] = to_float(res.get("wall_s"))
        row["hash"] = res.get("hash", "")
        row["gc_count"] = to_float(res.get("gc_count"))
        mname = PROGRAMS[cfg.program]["metric"]
        row["metric_name"] = mname
        row["metric"] = to_float(res.get(mname))
        row["mops"] = to_float(res.get("mops"))
        row["mops_p10"] = to_float(res.get("mops_p10"))
        skip = {"prog", "impl", "threads", "wall_s", "check", "hash", "gc_count", "mops", mname,
                "mops_p10",
                "peak_rss_kb", "heap_bytes", "cpu_s", "marked_objects_enum", "marked_bytes_enum"}
        for k in ("marked_objects_enum", "marked_bytes_enum"):
            row[k] = to_float(res.get(k))
        row["extra"] = " ".join(f"{k}={v}" for k, v in res.items() if k not in skip)
        # The program's own VmHWM: rusage's ru_maxrss of the child also counts
        # the forked copy of this Python process before exec (~17 MB here).
        if to_float(res.get("peak_rss_kb")):
            row["peak_rss_kb"] = to_float(res.get("peak_rss_kb"))
        if res.get("heap_bytes") not in (None, "0"):
            row["heap_bytes"] = to_float(res.get("heap_bytes"))
    if not row["status"]:
        if res is None:
            row["status"] = "no-result" if row["exit_code"] == 0 else f"error-exit-{row['exit_code']}"
        elif res.get("check") != "ok":
            row["status"] = "check-failed"
        elif row["exit_code"] != 0:
            row["status"] = f"error-exit-{row['exit_code']}"
        else:
            row["status"] = "ok"
    if row["wall_s"] in ("", None):
        row["wall_s"] = row["proc_wall_s"]

    stats = None
    if with_stats and impl["kind"] == "gc":
        if impl["stats"] == "sgc":
            stats = parse_sgc_trace(prefix + ".trace.jsonl",
                                    by_markers="SGC_MARKERS_CYCLE" in VARIANTS.get(cfg.variant, {}))
        else:
            stats = parse_bdwgc_stats(prefix + ".err", cfg.gc_threads)
    if stats:
        for k, v in stats.items():
            if v is None:
                continue
            if k == "heap_bytes" and not v:
                continue
            row[k] = round(v, 9) if isinstance(v, float) else v
    if row.get("marked_objects_enum") and row.get("mark_s"):
        row["mark_mobj_per_s"] = round(row["marked_objects_enum"] / row["mark_s"] / 1e6, 6)
    return row


def machine_info():
    info = {}
    info["date"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    info["hostname"] = platform.node()
    info["nproc"] = os.cpu_count()
    try:
        info["nproc_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["nproc_usable"] = os.cpu_count()
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cpu"] = cpu or platform.processor() or "unknown"
    info["kernel"] = platform.release()
    info["os"] = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["mem_gib"] = round(int(line.split()[1]) / 1048576, 1)
    except OSError:
        pass
    try:
        nodes = [d for d in os.listdir("/sys/devices/system/node") if re.match(r"node\d+$", d)]
        info["numa_nodes"] = len(nodes)
    except OSError:
        info["numa_nodes"] = None
    def cmd(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    info["gcc"] = cmd(["gcc", "--version"]).split("\n")[0]
    info["libgc"] = cmd(["dpkg-query", "-W", "-f=${Version}", "libgc1"])
    info["git_commit"] = cmd(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    info["git_dirty"] = bool(cmd(["git", "-C", REPO, "status", "--porcelain", "--", "src", "include", "bench"]))
    # binaries built elsewhere (tools/dev/bench_bundle.sh): what they were built
    # from and with, which this machine's git, gcc and dpkg cannot say
    if os.environ.get("SGC_BENCH_COMMIT"):
        info["git_commit"] = os.environ["SGC_BENCH_COMMIT"].removesuffix("-dirty")
        info["git_dirty"] = os.environ["SGC_BENCH_COMMIT"].endswith("-dirty")
        info["gcc"] = os.environ.get("SGC_BENCH_GCC", "") + " (where the bundle was built)"
        info["libgc"] = os.environ.get("SGC_BENCH_LIBGC", "") + " (carried)"
    # the libgc.so.1 the bdwgc builds load (no RUNPATH: ld.so's cache
    # order), which a package's version alone does not say when a bundle
    # carried another (tools/dev/bench_bundle.sh puts it in /usr/local/lib)
    for line in cmd(["/sbin/ldconfig", "-p"]).splitlines():
        fields = line.split()
        if fields and fields[0] == "libgc.so.1" and "x86-64" in line:
            info["libgc_path"] = fields[-1]
            break
    info["loadavg"] = cmd(["cat", "/proc/loadavg"])
    return info
