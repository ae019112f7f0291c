/*
 * shapes: programs of shapes a collector's user meets, where sgc once
 * lost to bdwgc by a wide margin (history.md, "Shapes where sgc lost to
 * bdwgc").  One shape a run:
 *
 *   -s grow       : a buffer grown by GC_realloc by an eighth at a time
 *                   from 16 bytes to -n MiB (32), -r (20) times; each
 *                   step fills the new part, each round checks the whole;
 *   -s threads    : -T (2000) threads, each allocating -n (4000) objects of
 *                   32..230 bytes while keeping 64, meeting at a barrier
 *                   while the main thread collects, allocating as many
 *                   again, and checking what it kept;
 *   -s finalizers : -n (1,000,000) objects with finalizers registered in a
 *                   loop and dropped; collections until at least 90% ran;
 *   -s finalizers-kept : -n (1,000,000) objects with finalizers kept
 *                   alive, then 2n more registered and dropped; one
 *                   collection at the end, after which at least 90% of
 *                   the dropped ones' finalizers ran and none of the
 *                   kept ones';
 *   -s roots      : -n (100,000) GC_add_roots ranges of 32 bytes, a
 *                   collection, then each removed with GC_remove_roots;
 *   -s large      : -n (3,000) pointer-free objects of 4 KiB plus a random
 *                   size below -r MiB (16), each filled, the last 8 kept
 *                   (the heap's free pages reused for ever other sizes,
 *                   and every collection freeing large objects); each
 *                   dropped one's first and last byte are checked;
 *   -s ramp       : pointer-free objects of 1, 2, ... -n MiB (48), each
 *                   filled and dropped, -r (3) times: each size is larger
 *                   than any freed before it, so it fits only where free
 *                   pages join up (heap chunks apart do not);
 *   -s weak       : -n (1,000,000) objects each with a disappearing link
 *                   (in pointer-free memory), every other one kept; two
 *                   collections; the kept ones' links must stand and at
 *                   least 90% of the others' be cleared.
 *
 * Metric: wall_s, the whole shape; mops, the shape's operations (realloc
 * steps, allocations, finalizable objects, root ranges, links) a second.  Check: as each
 * shape says.  -t is the runner's thread count, ignored (the shapes run
 * one thread but for the threads shape's -T).
 * Flags: -s shape  -n count  -r rounds (large: MiB)  -T threads
 */
#include "bench_common.h"

#include <pthread.h>

/* ---- grow ---- */
static double operations;

static void grow(long mib, long rounds) {
  size_t top = (size_t)mib << 20;
  for (long r = 0; r < rounds; r++) {
    size_t n = 16;
    unsigned char *p = GC_MALLOC_ATOMIC(n);
    memset(p, (int)(r & 0xff), n);
    while (n < top) {
      size_t m = n + n / 8 + 16;
      p = GC_REALLOC(p, m);
      if (!p) {
        bench_fail("GC_realloc to %zu bytes failed", m);
        return;
      }
      memset(p + n, (int)((r + n) & 0xff), m - n);
      n = m;
      operations++;
    }
    /* The first 16 bytes carry the round's byte through every copy. */
    for (size_t i = 0; i < 16; i++)
      if (p[i] != (unsigned char)(r & 0xff)) {
        bench_fail("round %ld: byte %zu lost in the copies", r, i);
        return;
      }
  }
}

/* ---- threads ---- */
enum { KEEP = 64 };
static pthread_barrier_t meet;
static long per_thread;

typedef struct {
  int index;
  int ok;
} thread_arg;

static void *thread_shape(void *argp) {
  thread_arg *arg = argp;
  uint64_t **keep = GC_MALLOC(KEEP * sizeof *keep);
  for (int phase = 0; phase < 2; phase++) {
    for (long i = 0; i < per_thread; i++) {
      size_t bytes = 32 + (size_t)(i % 200);
      uint64_t *o = GC_MALLOC(bytes);
      o[0] = ((uint64_t)arg->index << 32) | (uint64_t)i;
      keep[i % KEEP] = o;
    }
    if (phase == 0) pthread_barrier_wait(&meet); /* the main thread collects */
  }
  arg->ok = 1;
  for (long i = per_thread - KEEP; i < per_thread; i++)
    if (i >= 0 && keep[i % KEEP][0] != (((uint64_t)arg->index << 32) | (uint64_t)i)) arg->ok = 0;
  return NULL;
}

static void threads_shape(int threads, long count) {
  per_thread = count;
  thread_arg *args = calloc((size_t)threads, sizeof *args);
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  pthread_barrier_init(&meet, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; i++) {
    args[i].index = i;
    int e = bench_thread_create(&ids[i], &attr, thread_shape, &args[i]);
    if (e) {
      fprintf(stderr, "shapes: thread %d of %d: %s\n", i, threads, strerror(e));
      exit(3);
    }
  }
  GC_gcollect();
  pthread_barrier_wait(&meet);
  GC_gcollect();
  for (int i = 0; i < threads; i++) bench_thread_join(ids[i], NULL);
  operations = 2.0 * (double)threads * (double)count;
  for (int i = 0; i < threads; i++)
    if (!args[i].ok) {
      bench_fail("thread %d lost an object it kept", i);
      break;
    }
  free(args);
  free(ids);
}

/* ---- finalizers ---- */
static long finalized;
/* A finalizer that counts into the long its client data points to. */
static void count_into(void *obj, void *counter) {
  (void)obj;
  ++*(long *)counter;
}

static void register_and_drop(long n) {
  for (long i = 0; i < n; i++) {
    void *o = GC_MALLOC(32);
    GC_register_finalizer(o, count_into, &finalized, NULL, NULL);
  }
}

static void finalizers_shape(long n) {
  register_and_drop(n);
  operations = (double)n;
  for (int i = 0; i < 10 && finalized < n * 9 / 10; i++) {
    GC_gcollect();
    GC_invoke_finalizers();
  }
  if (finalized < n * 9 / 10) bench_fail("only %ld of %ld finalizers ran", finalized, n);
}

/* ---- finalizers-kept ---- */
static void **kept_finalizable; /* a root: the kept objects */
static long kept_finalized;

static void finalizers_kept_shape(long n) {
  kept_finalizable = GC_MALLOC((size_t)n * sizeof *kept_finalizable);
  if (!kept_finalizable) {
    bench_fail("cannot allocate the table");
    return;
  }
  for (long i = 0; i < n; i++) {
    kept_finalizable[i] = GC_MALLOC(32);
    GC_register_finalizer(kept_finalizable[i], count_into, &kept_finalized, NULL, NULL);
  }
  register_and_drop(2 * n);
  GC_gcollect();
  GC_invoke_finalizers();
  operations = 3.0 * (double)n;
  if (kept_finalized) bench_fail("%ld kept objects were finalized", kept_finalized);
  if (finalized < 2 * n * 9 / 10) bench_fail("only %ld of %ld finalizers ran", finalized, 2 * n);
}

/* ---- large ---- */
enum { LARGE_KEPT = 8 };

static void large_shape(long n, long max_mib) {
  unsigned char *kept[LARGE_KEPT] = {0};
  size_t kept_bytes[LARGE_KEPT] = {0};
  uint64_t seed = 12345;
  for (long i = 0; i < n; i++) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    size_t bytes = 4096 + (size_t)(seed >> 33) % ((size_t)max_mib << 20);
    unsigned char *p = GC_MALLOC_ATOMIC(bytes);
    if (!p) {
      bench_fail("GC_malloc_atomic of %zu bytes failed", bytes);
      return;
    }
    memset(p, (int)(i & 0xff), bytes);
    unsigned char *old = kept[i % LARGE_KEPT];
    size_t old_bytes = kept_bytes[i % LARGE_KEPT];
    long old_i = i - LARGE_KEPT;
    if (old && (old[0] != (unsigned char)old_i || old[old_bytes - 1] != (unsigned char)old_i)) {
      bench_fail("object %ld lost its contents", old_i);
      return;
    }
    kept[i % LARGE_KEPT] = p;
    kept_bytes[i % LARGE_KEPT] = bytes;
    operations++;
  }
}

/* ---- ramp ---- */
static void ramp_shape(long mib, long rounds) {
  for (long r = 0; r < rounds; r++)
    for (long m = 1; m <= mib; m++) {
      size_t bytes = (size_t)m << 20;
      unsigned char *p = GC_MALLOC_ATOMIC(bytes);
      if (!p) {
        bench_fail("GC_malloc_atomic of %ld MiB failed", m);
        return;
      }
      memset(p, (int)(m & 0xff), bytes);
      if (p[0] != (unsigned char)m || p[bytes - 1] != (unsigned char)m) {
        bench_fail("the %ld MiB object lost its contents", m);
        return;
      }
      operations++;
    }
}

/* ---- roots ---- */
static void roots_shape(long n) {
  char *area = malloc((size_t)n * 64);
  if (!area) {
    bench_fail("cannot allocate the area");
    return;
  }
  for (long i = 0; i < n; i++) GC_add_roots(area + i * 64, area + i * 64 + 32);
  GC_gcollect();
  for (long i = 0; i < n; i++) GC_remove_roots(area + i * 64, area + i * 64 + 32);
  operations = 2.0 * (double)n;
  free(area);
}

/* ---- weak ---- */
static void weak_shape(long n) {
  void **links = GC_MALLOC_ATOMIC((size_t)n * sizeof *links); /* not scanned */
  void **kept = GC_MALLOC((size_t)(n + 1) / 2 * sizeof *kept);
  if (!links || !kept) {
    bench_fail("cannot allocate the tables");
    return;
  }
  for (long i = 0; i < n; i++) {
    void *o = GC_MALLOC(32);
    links[i] = o;
    if (i % 2 == 0) kept[i / 2] = o;
    if (GC_GENERAL_REGISTER_DISAPPEARING_LINK(&links[i], o) != GC_SUCCESS) {
      bench_fail("cannot register link %ld", i);
      return;
    }
  }
  GC_gcollect();
  GC_gcollect();
  operations = (double)n;
  long cleared = 0;
  for (long i = 0; i < n; i++) {
    if (i % 2 == 0 && links[i] != kept[i / 2]) {
      bench_fail("the link of kept object %ld was cleared", i);
      return;
    }
    if (i % 2 == 1 && !links[i]) cleared++;
  }
  if (cleared < n / 2 * 9 / 10) bench_fail("only %ld of %ld dropped objects' links cleared", cleared, n / 2);
}

int main(int argc, char **argv) {
  const char *shape = "grow";
  long n = -1, rounds = -1; /* -r: each shape's own default */
  int threads = 2000, opt;
  while ((opt = getopt(argc, argv, "s:n:r:t:T:")) != -1) {
    switch (opt) {
    case 's': shape = optarg; break;
    case 'n': n = bench_arg_long("-n", optarg, 1, 100000000); break;
    case 'r': rounds = bench_arg_long("-r", optarg, 1, 100000); break;
    case 't': break;
    case 'T': threads = (int)bench_arg_long("-T", optarg, 1, 100000); break;
    default:
      fprintf(stderr, "usage: shapes [-s grow|threads|finalizers|finalizers-kept|large|ramp|roots|weak] "
                      "[-n count] [-r rounds] "
                      "[-T threads]\n");
      return 2;
    }
  }
  GC_INIT();
  double start = bench_now();
  if (!strcmp(shape, "grow")) {
    grow(n < 0 ? 32 : n, rounds < 0 ? 20 : rounds);
  } else if (!strcmp(shape, "threads")) {
    threads_shape(threads, n < 0 ? 4000 : n);
  } else if (!strcmp(shape, "finalizers")) {
    finalizers_shape(n < 0 ? 1000000 : n);
  } else if (!strcmp(shape, "finalizers-kept")) {
    finalizers_kept_shape(n < 0 ? 1000000 : n);
  } else if (!strcmp(shape, "large")) {
    large_shape(n < 0 ? 3000 : n, rounds < 0 ? 16 : rounds);
  } else if (!strcmp(shape, "ramp")) {
    ramp_shape(n < 0 ? 48 : n, rounds < 0 ? 3 : rounds);
  } else if (!strcmp(shape, "roots")) {
    roots_shape(n < 0 ? 100000 : n);
  } else if (!strcmp(shape, "weak")) {
    weak_shape(n < 0 ? 1000000 : n);
  } else {
    fprintf(stderr, "shapes: unknown shape %s\n", shape);
    return 2;
  }
  double wall = bench_now() - start;
  bench_result_begin("shapes", 1, wall);
  bench_kv("shape", "%s", shape);
  if (!strcmp(shape, "threads")) bench_kv("shape_threads", "%d", threads);
  bench_kv("mops", "%.4f", operations / wall / 1e6);
  return bench_result_end();
}
