/*
 * fastpath: nanoseconds per call of the allocation and the free fast paths
 * apart (not a thesis figure: the tool behind the fast-path
 * changes of docs/benchmarks/history.md, "The fast paths on an Intel VM").
 *
 * Each round allocates -n (1,000) objects of -s (16) bytes, writing a tag
 * into each and keeping the pointers in an array, then reads each tag and
 * frees the object; -r (20,000) rounds.  The two loops are timed apart, so
 * the result gives alloc_ns and free_ns, the mean time of one call in each
 * (the loop's own loads and stores included).  With the default -n, a
 * round's objects (16 KB) and pointers stay in L1, so the figures are the
 * fast paths' own cost, not the memory's.  The clock is read twice per loop
 * of 1,000 calls, well under 1% of a loop's time.  With -t, each thread runs
 * the same rounds on objects of its own; alloc_ns and free_ns are then the
 * threads' mean per call, and mops counts all threads' calls over the
 * slowest thread's time in the two loops.
 *
 *   bench-fastpath-sgc [-t threads] [-n objects] [-r rounds] [-s size]
 *   bench/run.py --experiment fastpath (sgc against the malloc peers)
 *   tools/dev/ab.sh -f free_ns -a LD_LIBRARY_PATH=OLD/src BUILD BUILD bench-fastpath-sgc
 *   LD_PRELOAD=/lib/x86_64-linux-gnu/libmimalloc.so.2 bench-fastpath-malloc
 *
 * Collections are disabled in the collector builds, so a round's objects
 * come back from the free lists, as with malloc.  Known answer: the sum of
 * the tags read back.
 */
#include "bench_common.h"

#include <getopt.h>

static long n = 1000, rounds = 20000, size = 16;

typedef struct {
  double alloc_s, free_s;
  uint64_t sum;
} Worker;

static void *run(void *arg) {
  Worker *w = (Worker *)arg;
  /* Locals: the calls in the loops could change a global for all the
   * compiler knows, so it would reload them every call (as in alloc.c). */
  const long count = n, round_count = rounds;
  const size_t bytes = (size_t)size;
  void **ptrs = (void **)malloc(sizeof(void *) * (size_t)count); /* collections are off */
  if (!ptrs) {
    perror("malloc");
    exit(3);
  }
  uint64_t sum = 0;
  for (long r = 0; r < round_count; r++) {
    double t0 = bench_now();
    for (long i = 0; i < count; i++) {
      uintptr_t *p = (uintptr_t *)GC_MALLOC(bytes);
      if (!p) {
        fprintf(stderr, "fastpath: out of memory\n");
        exit(3);
      }
      p[0] = (uintptr_t)(r + i);
      ptrs[i] = p;
    }
    double t1 = bench_now();
    for (long i = 0; i < count; i++) {
      uintptr_t *p = (uintptr_t *)ptrs[i];
      sum += p[0];
      GC_FREE(p);
    }
    double t2 = bench_now();
    w->alloc_s += t1 - t0;
    w->free_s += t2 - t1;
  }
  w->sum = sum;
  free(ptrs);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1, opt;
  while ((opt = getopt(argc, argv, "n:r:s:t:h")) != -1) {
    switch (opt) {
      case 'n': n = bench_arg_long("-n", optarg, 1, 1L << 24); break;
      case 'r': rounds = bench_arg_long("-r", optarg, 1, 1L << 30); break;
      case 's': size = bench_arg_long("-s", optarg, (long)sizeof(uintptr_t), 1L << 20); break;
      case 't': threads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      default:
        BENCH_USAGE_EXIT("usage: fastpath [-t threads] [-n objects] [-r rounds] [-s size]\n");
    }
  }
  GC_INIT();
#ifndef BENCH_MALLOC
  GC_disable();
#endif
  Worker *ws = (Worker *)calloc((size_t)threads, sizeof(Worker));
  if (!ws) {
    perror("calloc");
    return 3;
  }
  double t0 = bench_now();
  bench_run_threads(threads, run, ws, sizeof(Worker));
  double wall = bench_now() - t0;
  uint64_t want = (uint64_t)rounds * (uint64_t)(n * (n - 1) / 2) +
                  (uint64_t)n * (uint64_t)(rounds * (rounds - 1) / 2);
  double alloc_s = 0, free_s = 0, slowest = 0;
  for (int i = 0; i < threads; i++) {
    if (ws[i].sum != want)
      bench_fail("thread %d: checksum %llu, expected %llu", i, (unsigned long long)ws[i].sum,
                 (unsigned long long)want);
    alloc_s += ws[i].alloc_s;
    free_s += ws[i].free_s;
    if (ws[i].alloc_s + ws[i].free_s > slowest) slowest = ws[i].alloc_s + ws[i].free_s;
  }
  double calls = (double)n * (double)rounds * threads;
  bench_result_begin("fastpath", threads, wall);
  bench_kv("objsize", "%ld", size);
  bench_kv("alloc_ns", "%.3f", alloc_s * 1e9 / calls);
  bench_kv("free_ns", "%.3f", free_s * 1e9 / calls);
  bench_kv("mops", "%.3f", calls / slowest / 1e6);
  free(ws);
  return bench_result_end();
}
