/*
 * alloc: allocation throughput (thesis §2.4.1, Table 2.1 / Figure 2.4).
 *
 * Each of the -t threads allocates -n (100,000) objects of -s (16) bytes,
 * then releases all of them; this is repeated -r (30) times.  Release mode:
 *   -m free : GC_free() every object (explicit deallocation);
 *   -m drop : clear the references and let the collector reclaim them.
 * With -DBENCH_MALLOC the same program uses malloc/free (mode drop is then
 * the same as free), so glibc, jemalloc, tcmalloc and mimalloc can be
 * compared by LD_PRELOAD.
 * Object kind (collector builds only):
 *   -k normal : GC_MALLOC (scanned conservatively);
 *   -k typed  : GC_malloc_explicitly_typed with a descriptor naming the
 *               second word a pointer (gc_typed.h), the path bdwgc serves
 *               under its global allocation lock (SPEC §4);
 *   -k atomic : GC_MALLOC_ATOMIC (pointer-free, so neither scanned nor
 *               cleared): against -k normal, what clearing costs, the
 *               zeroed memory GC_MALLOC promises and malloc does not (the
 *               malloc builds take -k atomic as plain malloc).
 *
 * Metric: mops = million allocations per second summed over all threads
 * (allocations / wall time of the parallel part).  Also mops_p10: the
 * rate the threads would reach if every round of each took that thread's
 * 10th-percentile round time, summed over the threads.  On a VM whose
 * CPUs switch between speeds for seconds at a time, mops follows the
 * slowest stretch of the slowest thread, and mops_p10 what the allocator
 * does when the CPUs run at speed.
 * Check: every object is written with a value derived from (thread, round,
 * index) after allocation and read back before release; all pointers of a
 * round are non-null and distinct from their neighbours.
 */
#include "bench_common.h"
#ifndef BENCH_MALLOC
#include <gc/gc_typed.h>
#endif

static long nobj = 100000, rounds = 30, objsize = 16;
static int mode_free = 1;
enum object_kind { KIND_NORMAL_OBJECTS, KIND_TYPED_OBJECTS, KIND_ATOMIC_OBJECTS };
static enum object_kind objects_kind = KIND_NORMAL_OBJECTS;
#ifndef BENCH_MALLOC
static GC_descr typed_descr;
#endif

/* KIND is a constant at each call (see run_rounds): the loop of the
 * normal kind is the loop of the malloc builds, with no test of the kind
 * per object, so the peers run the same instructions around their calls. */
static inline __attribute__((always_inline)) uintptr_t *allocate_object(enum object_kind kind,
                                                                        size_t size) {
#ifndef BENCH_MALLOC
  if (kind == KIND_TYPED_OBJECTS) return (uintptr_t *)GC_malloc_explicitly_typed(size, typed_descr);
  if (kind == KIND_ATOMIC_OBJECTS) return (uintptr_t *)GC_MALLOC_ATOMIC(size);
#else
  (void)kind;
#endif
  return (uintptr_t *)GC_MALLOC(size);
}
static pthread_barrier_t start_barrier;

typedef struct {
  int id;
  int failed;
  uint64_t sum;
  double t_start, t_end;
  double *round_s; /* each round's time (malloc'd, outside the timed part) */
} Worker;

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* W's 10th-percentile round time (sorts its round times). */
static double round_p10(Worker *w) {
  qsort(w->round_s, (size_t)rounds, sizeof(double), compare_double);
  return w->round_s[rounds / 10];
}

/* The timed rounds of W over PTRS; returns the sum of the values read.
 * The settings are copied to locals first: the calls in the loop could
 * change a global for all the compiler knows, so it would reload them
 * every object. */
static inline __attribute__((always_inline)) uint64_t run_rounds(Worker *w, uintptr_t **ptrs,
                                                                 enum object_kind kind) {
  const long n = nobj, round_count = rounds;
  const size_t size = (size_t)objsize;
  const int free_each = mode_free;
  uint64_t sum = 0;
  for (long r = 0; r < round_count; r++) {
    double round_start = bench_now();
    uintptr_t tag = ((uintptr_t)w->id << 40) ^ ((uintptr_t)r << 20);
    for (long i = 0; i < n; i++) {
      uintptr_t *p = allocate_object(kind, size);
      if (!p) {
        fprintf(stderr, "alloc: out of memory\n");
        exit(3);
      }
      p[0] = tag + (uintptr_t)i; /* an odd-looking integer, not a pointer */
      ptrs[i] = p;
    }
    for (long i = 0; i < n; i++) {
      uintptr_t *p = ptrs[i];
      if (p == NULL || p[0] != tag + (uintptr_t)i || (i > 0 && p == ptrs[i - 1])) {
        if (!w->failed)
          bench_fail("thread %d round %ld object %ld: bad pointer or value", w->id, r, i);
        w->failed = 1;
        break;
      }
      sum += p[0];
      if (free_each) {
        GC_FREE(p);
      }
      ptrs[i] = NULL;
    }
    w->round_s[r] = bench_now() - round_start;
  }
  return sum;
}

static void *worker(void *arg) {
  Worker *w = (Worker *)arg;
  /* The pointer array is collector-visible (GC_MALLOC, not atomic) so that
   * in drop mode the objects stay alive until the array is cleared. */
  uintptr_t **ptrs = (uintptr_t **)bench_xmalloc(sizeof(void *) * (size_t)nobj);
  memset(ptrs, 0, sizeof(void *) * (size_t)nobj);
  pthread_barrier_wait(&start_barrier);
  w->t_start = bench_now();
  uint64_t sum = objects_kind == KIND_TYPED_OBJECTS    ? run_rounds(w, ptrs, KIND_TYPED_OBJECTS)
                 : objects_kind == KIND_ATOMIC_OBJECTS ? run_rounds(w, ptrs, KIND_ATOMIC_OBJECTS)
                                                       : run_rounds(w, ptrs, KIND_NORMAL_OBJECTS);
  w->t_end = bench_now();
  w->sum = sum;
#ifdef BENCH_MALLOC
  free(ptrs);
#endif
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1, opt;
  const char *mode = "free", *kind = "normal";
  while ((opt = getopt(argc, argv, "t:n:r:s:m:k:h")) != -1) {
    switch (opt) {
      case 't': threads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'n': nobj = bench_arg_long("-n", optarg, 1, 1L << 28); break;
      case 'r': rounds = bench_arg_long("-r", optarg, 1, 1L << 20); break;
      case 's': objsize = bench_arg_long("-s", optarg, (long)sizeof(uintptr_t), 1L << 20); break;
      case 'm':
        if (strcmp(optarg, "free") == 0) mode_free = 1;
        else if (strcmp(optarg, "drop") == 0) mode_free = 0;
        else BENCH_USAGE_EXIT("alloc: -m free|drop\n");
        mode = optarg;
        break;
      case 'k':
        if (strcmp(optarg, "normal") == 0) objects_kind = KIND_NORMAL_OBJECTS;
        else if (strcmp(optarg, "typed") == 0) objects_kind = KIND_TYPED_OBJECTS;
        else if (strcmp(optarg, "atomic") == 0) objects_kind = KIND_ATOMIC_OBJECTS;
        else BENCH_USAGE_EXIT("alloc: -k normal|typed|atomic\n");
        kind = optarg;
        break;
      default:
        BENCH_USAGE_EXIT(
            "usage: alloc [-t threads] [-n objects] [-r rounds] [-s size] [-m free|drop]"
            " [-k normal|typed|atomic]\n");
    }
  }
#ifdef BENCH_MALLOC
  mode_free = 1; /* malloc has no collector: always free */
  /* malloc's memory holds no pointers a collector scans and is not
   * cleared: -k atomic is plain malloc there, so the peers can be set
   * beside sgc's atomic objects under one name. */
  if (objects_kind == KIND_TYPED_OBJECTS) BENCH_USAGE_EXIT("alloc: -k typed needs a collector build\n");
#endif
  GC_INIT();
#ifndef BENCH_MALLOC
  if (objects_kind == KIND_TYPED_OBJECTS) {
    GC_word bitmap[1] = {(GC_word)1 << 1}; /* word 1 may hold a pointer */
    typed_descr = GC_make_descriptor(bitmap, (size_t)objsize / sizeof(GC_word));
  }
#endif
  pthread_barrier_init(&start_barrier, NULL, (unsigned)threads);
  Worker *ws = (Worker *)calloc((size_t)threads, sizeof(Worker)); /* no GC pointers inside */
  if (!ws) {
    fprintf(stderr, "alloc: out of memory for the workers\n");
    exit(3);
  }
  for (int i = 0; i < threads; i++) {
    ws[i].id = i;
    ws[i].round_s = (double *)malloc(sizeof(double) * (size_t)rounds);
    if (!ws[i].round_s) {
      fprintf(stderr, "alloc: out of memory for the round times\n");
      exit(3);
    }
  }

  double t0 = bench_now();
  bench_run_threads(threads, worker, ws, sizeof(Worker));
  double wall = bench_now() - t0;

  double first = ws[0].t_start, last = ws[0].t_end;
  double slowest = 0, fastest = 0, mops_p10 = 0;
  uint64_t total = 0;
  for (int i = 0; i < threads; i++) {
    double took = ws[i].t_end - ws[i].t_start;
    if (ws[i].t_start < first) first = ws[i].t_start;
    if (ws[i].t_end > last) last = ws[i].t_end;
    if (i == 0 || took > slowest) slowest = took;
    if (i == 0 || took < fastest) fastest = took;
    total += ws[i].sum;
    mops_p10 += (double)nobj / round_p10(&ws[i]) / 1e6;
    free(ws[i].round_s);
  }
  /* Known answer: sum over threads, rounds and indices of the stored tags. */
  uint64_t want = 0;
  for (int t = 0; t < threads; t++)
    for (long r = 0; r < rounds; r++)
      want += (uint64_t)nobj * ((((uint64_t)t << 40) ^ ((uint64_t)r << 20))) +
              (uint64_t)nobj * (uint64_t)(nobj - 1) / 2;
  if (total != want) bench_fail("checksum %llu, expected %llu", (unsigned long long)total,
                                (unsigned long long)want);

  double allocs = (double)threads * (double)rounds * (double)nobj;
  double par = last - first;
  bench_result_begin("alloc", threads, wall);
  bench_kv("mode", "%s", mode);
  bench_kv("kind", "%s", kind);
  bench_kv("objsize", "%ld", objsize);
  bench_kv("allocs", "%.0f", allocs);
  bench_kv("alloc_s", "%.6f", par);
  bench_kv("mops", "%.3f", allocs / par / 1e6);
  /* Every thread does the same work, so this is 1 on a fair machine; the
   * rate above waits for the slowest thread. */
  bench_kv("spread", "%.3f", fastest > 0 ? slowest / fastest : 1.0);
  bench_kv("mops_p10", "%.3f", mops_p10);
  free(ws);
  return bench_result_end();
}
