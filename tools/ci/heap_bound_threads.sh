#!/bin/sh
# The heap stays bounded with 2,000 threads: runs `bench-shapes -s threads`
# RUNS times under SGC_LPS_K=1 (where LPS steals most) and fails if any
# run's heap passes LIMIT_MIB.  Before the fix in alloc/page_store.c
# ("The counts that chose a steal"), about one run in 15 grew the heap by
# a quarter at every failed steal, to 5.5 GiB or 1.1 TiB around 23 MB live.
#   tools/ci/heap_bound_threads.sh [RUNS] [BUILD] [LIMIT_MIB]   (defaults 30, build, 512)
runs=${1:-30}
build=${2:-build}
limit=${3:-512}
prog="$build/bench/bench-shapes-sgc"
[ -x "$prog" ] || { echo "heap_bound_threads: $prog not built" >&2; exit 2; }
worst=0
i=1
while [ "$i" -le "$runs" ]; do
  line=$(SGC_LPS_K=1 "$prog" -s threads 2>&1 | grep '^RESULT')
  heap=$(echo "$line" | sed -n 's/.*heap_bytes=\([0-9]*\).*/\1/p')
  [ -n "$heap" ] || { echo "heap_bound_threads: run $i: no RESULT line" >&2; exit 1; }
  mib=$((heap >> 20))
  [ "$mib" -gt "$worst" ] && worst=$mib
  if [ "$mib" -gt "$limit" ]; then
    echo "heap_bound_threads: run $i: heap $mib MiB, past $limit MiB: $line" >&2
    exit 1
  fi
  i=$((i + 1))
done
echo "heap_bound_threads: $runs runs, largest heap $worst MiB (limit $limit)"
