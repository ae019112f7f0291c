#!/bin/sh
# cpu_id vs mm_cid as the per-CPU cache index (issue 6): 3 runs each at
# 2, 8 and 32 threads; prints the median ns per pop+push.
set -e
cc -O2 -o /tmp/rseq_index_bench "$(dirname "$0")/rseq_index_bench.c" -lpthread
for t in 2 8 32; do
  for idx in cpu mm; do
    for r in 1 2 3; do /tmp/rseq_index_bench $t $idx; done | sort -t= -k4 -n | sed -n 2p
  done
done
