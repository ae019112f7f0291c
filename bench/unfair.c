/*
 * unfair: unfair memory usage by threads (thesis §2.4.2, Figure 2.5).
 *
 * The -t threads take turns: only one thread at a time allocates about -k
 * (5120) KiB of small objects (a linked list of -s (32) byte nodes), walks
 * and checks it, then releases it and hands the turn to the next thread.
 * Every thread gets -r (10) turns.  Release mode -m free (GC_free every
 * node, the default) or -m drop (drop the list and let the collector find
 * it); with -DBENCH_MALLOC nodes are always freed.
 *
 * A per-thread page-local allocator (AL) keeps the pages each thread used,
 * so its footprint grows like P x 5 MB; a shared page list (PS) stays near
 * 5 MB; LPS(k) sits in between.  Reported: peak heap size (GC_get_heap_size
 * sampled at the end of every turn, GC builds only) and peak RSS (VmHWM).
 *
 * Check: each list has exactly the expected length and every node carries
 * the value (thread, turn, index) written at allocation.
 */
#include "bench_common.h"

typedef struct UNode {
  struct UNode *next;
  uintptr_t val;
} UNode;

static long kib = 5120, objsize = 32, turns = 10;
static int threads = 2, mode_free = 1;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long turn = 0; /* global turn number; thread turn % threads runs */
static size_t peak_heap = 0;
static long peak_rss_sampled = 0;

typedef struct {
  int id;
  int failed;
  long nodes;
} Worker;

/* One turn: allocate about -k KiB as a list, walk and check it, release
 * it.  Not inlined, and followed by scrub_stack: in drop mode a word of
 * this frame left holding a node (the loop's last allocation is the
 * list's head) would, scanned conservatively while the thread waits for
 * its next turn, keep its whole list alive, and every waiting thread one
 * list: memory would grow with the thread count under any page policy,
 * which is not what the benchmark measures. */
static __attribute__((noinline)) void run_turn(Worker *w, long k, size_t *heap, long *rss) {
  long per_turn = kib * 1024 / objsize;
  UNode *head = NULL;
  uintptr_t tag = ((uintptr_t)w->id << 48) ^ ((uintptr_t)k << 32);
  for (long i = 0; i < per_turn; i++) {
    UNode *n = (UNode *)bench_xmalloc((size_t)objsize);
    n->next = head;
    n->val = tag + (uintptr_t)i;
    head = n;
  }
  *heap = bench_heap_size();
  *rss = bench_rss_kb();
  /* walk and check */
  long cnt = 0;
  for (UNode *n = head; n; n = n->next, cnt++) {
    if (n->val != tag + (uintptr_t)(per_turn - 1 - cnt)) {
      if (!w->failed) bench_fail("thread %d turn %ld node %ld: bad value", w->id, k, cnt);
      w->failed = 1;
      break;
    }
  }
  if (!w->failed && cnt != per_turn) {
    bench_fail("thread %d turn %ld: list has %ld nodes, expected %ld", w->id, k, cnt, per_turn);
    w->failed = 1;
  }
  /* release */
  if (mode_free) {
    UNode *n = head;
    while (n) {
      UNode *next = n->next;
      GC_FREE(n);
      n = next;
    }
  }
  w->nodes += per_turn;
}

/* Overwrites the stack below the caller's frame, where run_turn's frame
 * and its callees' frames were, every byte of it: the frames glibc's
 * pthread_cond_wait then builds there leave holes, and a hole that still
 * holds a node pointer spilled by run_turn's callees keeps the list alive.
 * Writing one byte in 64 left 63 of them; with Debian 12's glibc no hole
 * fell on such a word, with Ubuntu 24.04's (2.39) one did, and every
 * waiting thread kept its last list (PS 132 MiB at 16 threads).  The
 * empty asm makes the compiler believe the area is read, so the memset
 * cannot be dropped as a dead store. */
static __attribute__((noinline)) void scrub_stack(void) {
  char area[16384];
  memset(area, 0, sizeof area);
  __asm__ volatile("" : : "r"(area) : "memory");
}

static void *worker(void *arg) {
  Worker *w = (Worker *)arg;
  for (long k = 0; k < turns; k++) {
    long my = k * threads + w->id;
    pthread_mutex_lock(&lock);
    while (turn != my) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);

    size_t hs;
    long rss;
    run_turn(w, k, &hs, &rss);
    scrub_stack();

    pthread_mutex_lock(&lock);
    if (hs > peak_heap) peak_heap = hs;
    if (rss > peak_rss_sampled) peak_rss_sampled = rss;
    turn++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int opt;
  const char *mode = "free";
  while ((opt = getopt(argc, argv, "t:k:s:r:m:h")) != -1) {
    switch (opt) {
      case 't': threads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'k': kib = bench_arg_long("-k", optarg, 1, 1L << 22); break;
      case 's': objsize = bench_arg_long("-s", optarg, (long)sizeof(UNode), 1L << 16); break;
      case 'r': turns = bench_arg_long("-r", optarg, 1, 1L << 20); break;
      case 'm':
        if (strcmp(optarg, "free") == 0) mode_free = 1;
        else if (strcmp(optarg, "drop") == 0) mode_free = 0;
        else BENCH_USAGE_EXIT("unfair: -m free|drop\n");
        mode = optarg;
        break;
      default:
        BENCH_USAGE_EXIT("usage: unfair [-t threads] [-k KiB_per_turn] [-s size] [-r turns] [-m free|drop]\n");
    }
  }
#ifdef BENCH_MALLOC
  mode_free = 1;
#endif
  GC_INIT();
  Worker *ws = (Worker *)calloc((size_t)threads, sizeof(Worker));
  for (int i = 0; i < threads; i++) ws[i].id = i;
  double t0 = bench_now();
  bench_run_threads(threads, worker, ws, sizeof(Worker));
  double wall = bench_now() - t0;

  long nodes = 0;
  for (int i = 0; i < threads; i++) nodes += ws[i].nodes;
  long want = (long)threads * turns * (kib * 1024 / objsize);
  if (nodes != want) bench_fail("allocated %ld nodes, expected %ld", nodes, want);

  bench_result_begin("unfair", threads, wall);
  bench_kv("mode", "%s", mode);
  bench_kv("kib_per_turn", "%ld", kib);
  bench_kv("allocs", "%ld", nodes);
  bench_kv("mops", "%.3f", (double)nodes / wall / 1e6);
  bench_kv("peak_heap_bytes", "%zu", peak_heap);
  bench_kv("peak_rss_sampled_kb", "%ld", peak_rss_sampled);
  free(ws);
  return bench_result_end();
}
