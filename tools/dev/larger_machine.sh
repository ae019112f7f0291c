#!/bin/sh
# The experiments a 2-CPU machine cannot show, for a larger machine lent for
# a short while (bench/README.md, "On a larger machine"): each set fits in
# 10 minutes on 16 CPUs.  Every experiment runs under a time budget: when it
# runs out the runner writes the rounds so far (SIGINT), so a slower
# machine gets fewer rounds, not a lost set.
#
#   tools/dev/larger_machine.sh mark OUT    # #4: mark speed-up 1..CPUs per variant, the
#                                       # list/tiny heaps, the applications vs bdwgc,
#                                       # the headline at 1 and 2 threads
#   tools/dev/larger_machine.sh alloc OUT   # #5: alloc 1..2xCPUs threads, unfair, policies
#   tools/dev/larger_machine.sh more OUT    # both issues' 2-thread targets again (mark-cycle,
#                                       # headline, alloc-scaling) and threads against
#                                       # processes (tools/dev/threads_vs_procs.py)
#   tools/dev/larger_machine.sh pair OUT    # #4 in one lease: its 2-core targets on two CPUs of
#                                       # distinct cores (taskset; mark-cycle, gcbench's
#                                       # clients against bdwgc with 2 markers), then
#                                       # 1..CPUs GC threads (mark-scaling, list/tiny heaps)
#   tools/dev/larger_machine.sh predict OUT # #56: this machine calibrated, both predictors
#                                       # against marks with 1..CPUs GC threads, the curves,
#                                       # SGC_MARKERS=auto against fixed counts (<= ~7 minutes)
#
# With a bundle (tools/dev/bench_bundle.sh) unpacked first; results in
# OUT/<set>-<experiment>/, packed as OUT/<set>.tgz (results, reports,
# figures) and OUT/<set>-logs.tgz (every run's output and trace).
# LM_SCALE=P gives each experiment P% of its budget (a quick trial: 10).
set -u
set_name=${1:?usage: tools/dev/larger_machine.sh mark|alloc|more|pair|predict OUT}
out=${2:?usage: tools/dev/larger_machine.sh mark|alloc|more|pair|predict OUT}
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${SGC_BENCH_BUILD:-/tmp/wt-build}
# An unpacked bundle's description (tools/dev/bench_bundle.sh), exported for the
# runner: without it a report names this machine's git, gcc and libgc
# package, none of which built or ran the binaries.
if [ -f "$build/bundle.env" ]; then
  set -a
  . "$build/bundle.env"
  set +a
fi
py=${PYTHON:-python3}
mkdir -p "$out"

# run NAME BUDGET_S RUNS RUNNER-ARGS...: one runner invocation in OUT/SET-NAME
# ($pin, when set, is a CPU list the runner and its programs are held to)
pin=
run() {
  name=$1 budget=$(($2 * ${LM_SCALE:-100} / 100)) runs=$3
  shift 3
  echo "== $set_name-$name: up to $runs rounds in ${budget}s${pin:+ on CPUs $pin}"
  ${pin:+taskset -c "$pin"} timeout -s INT -k 20 "$budget" "$py" "$repo/bench/run.py" --runs "$runs" \
    --build-dir "$build" --out "$out/$set_name-$name" "$@" >"$out/$set_name-$name.log" 2>&1
  grep -E "runs ok|^gcbench, 2 clients|interrupted" "$out/$set_name-$name.log"
}

# Two CPUs of distinct cores (not SMT siblings) in CPU 0's package: what
# "2 cores" means in issue 4's targets.  Prints "A,B"; just "0" if none.
distinct_core_pair() {
  t=/sys/devices/system/cpu
  key0="$(cat $t/cpu0/topology/physical_package_id 2>/dev/null):$(cat $t/cpu0/topology/core_id 2>/dev/null)"
  for c in $t/cpu[0-9]*; do
    n=${c##*/cpu}
    [ "$n" = 0 ] && continue
    [ "$(cat "$c/online" 2>/dev/null || echo 1)" = 1 ] || continue
    pkg=$(cat "$c/topology/physical_package_id" 2>/dev/null)
    [ "$pkg:$(cat "$c/topology/core_id" 2>/dev/null)" = "$key0" ] && continue
    [ "$pkg" = "${key0%%:*}" ] || continue
    echo "0,$n"
    return
  done
  echo 0
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "topology: $(lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket)\(s\)|^NUMA node\(s\)' | tr -s ' ' | tr '\n' ';')" \
  "cpu0's siblings: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)"
case $set_name in
mark)
  run mark-scaling 200 8 --experiment mark-scaling
  run headline 110 7 --headline --threads 1,2
  run apps-scaling 150 3 --experiment scaling
  run markshape 50 5 --experiment markshape-scaling
  ;;
alloc)
  run alloc-2 140 11 --experiment alloc-scaling --experiment ceiling --threads 1,2
  run alloc-many 140 5 --experiment alloc-scaling-many
  run alloc-bdwgc 60 1 --experiment alloc-bdwgc-many --timeout 25
  run unfair 60 3 --experiment unfair-scaling
  run policies 110 3 --experiment policies-scaling
  ;;
more)
  run mark-cycle 140 15 --experiment mark-cycle
  run headline 100 8 --headline --threads 1,2
  # what threads lose to sharing a process, T threads against T processes
  tvp() {
    name=$1
    shift
    echo "== $set_name-tvp-$name"
    timeout -k 5 30 "$py" "$repo/tools/dev/threads_vs_procs.py" "$@" >"$out/$set_name-tvp-$name.log" 2>&1
    tail -6 "$out/$set_name-tvp-$name.log"
  }
  mi=$(cd "$repo/bench" && "$py" -c 'from runner.execute import find_library; print(find_library("libmimalloc.so.2"))')
  tvp alloc256-sgc-t2 -n 9 -t 2 -s alloc_s -a "$build" bench-alloc-sgc -m free -s 256 -n 20000 -r 100
  tvp alloc256-mimalloc-t2 -n 9 -t 2 -s alloc_s -a -e LD_PRELOAD="$mi" "$build" bench-alloc-malloc -m free -s 256 -n 20000 -r 100
  tvp alloc256-sgc-t8 -n 5 -t 8 -s alloc_s "$build" bench-alloc-sgc -m free -s 256 -n 20000 -r 100
  tvp gcbench-t2 -n 7 -t 2 -a "$build" bench-gcbench-sgc
  run alloc-2 120 10 --experiment alloc-scaling --experiment ceiling --threads 1,2
  ;;
pair)
  # The 2-core targets first, each program and peer held to two CPUs of
  # distinct cores: the in-run 2-GC-thread speed-up (SGC_MARKERS_CYCLE=1,2)
  # and gcbench with 1 and 2 clients against bdwgc with 2 markers.
  pin=$(distinct_core_pair)
  echo "pair: CPUs $pin"
  run mark-cycle 130 15 --experiment mark-cycle --experiment ceiling --threads 1,2
  run headline 70 9 --headline --programs gcbench,bh-pt,cube --threads 1,2 --gc-threads 2
  pin=
  run mark-scaling 170 8 --experiment mark-scaling
  run markshape 45 5 --experiment markshape-scaling
  ;;
predict)
  # Issue 56 where there are CPUs enough: a profile of this machine, then
  # predicted against measured mark times with 1, 2, 4, ... all CPUs as
  # GC threads (the error table; the curves under this machine's profile
  # and the thesis's two beside the repo's 16-CPU mark-scaling report),
  # then SGC_MARKERS=auto against each fixed count on cube and bh-pt-long
  # (Table 4.4; the target: 95% of the best count's speed-up with fewer
  # GC threads).  One program thread: a snapshot and the marks it is
  # compared with come from different runs, alike only where the program
  # is deterministic (cube with 2 threads marks 0.7 MB a collection in
  # some runs and 4.7 in others: history.md, "cube's two heaps").
  d=$out/predict-model
  mkdir -p "$d"
  cpus=$(nproc) counts=1 c=2
  while [ "$c" -le "$cpus" ]; do counts=$counts,$c c=$((c * 2)); done
  echo "== predict: GC thread counts $counts"
  "$build/tools/predict/sgc-calibrate" -o "$d/host.profile" >"$d/calibrate.log" 2>&1 ||
    { echo "sgc-calibrate failed (calibrate.log)"; }
  scaling=$(ls -d "$repo"/docs/benchmarks/results/*-16cpu-mark-scaling 2>/dev/null | tail -1)
  # pvm NAME BUDGET_S ARGS...: predict_vs_measured.py into d/NAME.md, its
  # rows written as they come, so a budget that runs out keeps them
  pvm() {
    name=$1 budget=$(($2 * ${LM_SCALE:-100} / 100))
    shift 2
    PYTHONUNBUFFERED=1 timeout -s INT -k 20 "$budget" "$py" "$repo/tools/analysis/predict_vs_measured.py" \
      -b "$build" -p "$d/host.profile" -c "$counts" "$@" >"$d/$name.md" 2>"$d/$name.log"
    grep -E "^Within target|Traceback" "$d/$name.md" "$d/$name.log"
  }
  pvm errors 240 -r 3 ${scaling:+--report "$scaling/report.md"} \
    --also "$repo/tools/predict/profiles/e10k.profile" --also "$repo/tools/predict/profiles/o2k.profile"
  pvm adaptive 150 -r 1 --adaptive --adaptive-rounds 5 cube bh-pt-long
  grep -A4 "^| program | 1 GC thr" "$d/adaptive.md"
  ;;
*) echo "usage: tools/dev/larger_machine.sh mark|alloc|more|pair|predict OUT" >&2; exit 2 ;;
esac
dirs=$(cd "$out" && ls -d "$set_name"-*/)
tar czf "$out/$set_name.tgz" -C "$out" --exclude=logs $dirs $(cd "$out" && ls "$set_name"-*.log 2>/dev/null)
tar czf "$out/$set_name-logs.tgz" -C "$out" $dirs
ls -la "$out"/*.tgz
