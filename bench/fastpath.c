/*
 * fastpath: nanoseconds per call of the allocation and the free fast paths
 * apart, one thread (not a thesis figure: the tool behind the fast-path
 * changes of docs/benchmarks/history.md, "The fast paths on an Intel VM").
 *
 * Each round allocates -n (1,000) objects of -s (16) bytes, writing a tag
 * into each and keeping the pointers in an array, then reads each tag and
 * frees the object; -r (20,000) rounds.  The two loops are timed apart, so
 * the result gives alloc_ns and free_ns, the mean time of one call in each
 * (the loop's own loads and stores included).  With the default -n, a
 * round's objects (16 KB) and pointers stay in L1, so the figures are the
 * fast paths' own cost, not the memory's.  The clock is read twice per loop
 * of 1,000 calls, well under 1% of a loop's time.
 *
 *   bench-fastpath-sgc [-n objects] [-r rounds] [-s size]
 *   tools/ab.sh -f free_ns -a LD_LIBRARY_PATH=OLD/src BUILD BUILD bench-fastpath-sgc
 *   LD_PRELOAD=/lib/x86_64-linux-gnu/libmimalloc.so.2 bench-fastpath-malloc
 *
 * Collections are disabled in the collector builds, so a round's objects
 * come back from the free lists, as with malloc.  Known answer: the sum of
 * the tags read back.
 */
#include "bench_common.h"

#include <getopt.h>

static uint64_t run(long n, long rounds, size_t size, void **ptrs, double *alloc_s,
                    double *free_s) {
  uint64_t sum = 0;
  for (long r = 0; r < rounds; r++) {
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
      uintptr_t *p = (uintptr_t *)GC_MALLOC(size);
      if (!p) {
        fprintf(stderr, "fastpath: out of memory\n");
        exit(3);
      }
      p[0] = (uintptr_t)(r + i);
      ptrs[i] = p;
    }
    double t1 = bench_now();
    for (long i = 0; i < n; i++) {
      uintptr_t *p = (uintptr_t *)ptrs[i];
      sum += p[0];
      GC_FREE(p);
    }
    double t2 = bench_now();
    *alloc_s += t1 - t0;
    *free_s += t2 - t1;
  }
  return sum;
}

int main(int argc, char **argv) {
  long n = 1000, rounds = 20000, size = 16;
  int opt;
  while ((opt = getopt(argc, argv, "n:r:s:t:h")) != -1) {
    switch (opt) {
      case 'n': n = bench_arg_long("-n", optarg, 1, 1L << 24); break;
      case 'r': rounds = bench_arg_long("-r", optarg, 1, 1L << 30); break;
      case 's': size = bench_arg_long("-s", optarg, (long)sizeof(uintptr_t), 1L << 20); break;
      case 't': bench_arg_long("-t", optarg, 1, 1); break; /* one thread only */
      default: BENCH_USAGE_EXIT("usage: fastpath [-n objects] [-r rounds] [-s size]\n");
    }
  }
  GC_INIT();
#ifndef BENCH_MALLOC
  GC_disable();
#endif
  void **ptrs = (void **)malloc(sizeof(void *) * (size_t)n);
  if (!ptrs) {
    perror("malloc");
    return 3;
  }
  double alloc_s = 0, free_s = 0, t0 = bench_now();
  uint64_t sum = run(n, rounds, (size_t)size, ptrs, &alloc_s, &free_s);
  double wall = bench_now() - t0;
  uint64_t want = (uint64_t)rounds * (uint64_t)(n * (n - 1) / 2) +
                  (uint64_t)n * (uint64_t)(rounds * (rounds - 1) / 2);
  if (sum != want)
    bench_fail("checksum %llu, expected %llu", (unsigned long long)sum, (unsigned long long)want);
  double calls = (double)n * (double)rounds;
  bench_result_begin("fastpath", 1, wall);
  bench_kv("objsize", "%ld", size);
  bench_kv("alloc_ns", "%.3f", alloc_s * 1e9 / calls);
  bench_kv("free_ns", "%.3f", free_s * 1e9 / calls);
  bench_kv("mops", "%.3f", calls / (alloc_s + free_s) / 1e6);
  free(ptrs);
  return bench_result_end();
}
