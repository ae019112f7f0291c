/* sgc-calibrate [-q] [-o FILE]: measures this host for the predictor and
 * writes a profile (docs/prediction.md):
 *  - miss latency M_1: a pointer chase through a random cycle of lines in
 *    a buffer far larger than the last-level cache, with plain loads and
 *    with atomic read-modify-writes;
 *  - occupancy S_O: every CPU chasing 32 independent cycles at once, all on
 *    the host's memory, or every CPU streaming through its part of it,
 *    whichever is faster: the time per access when the memory is the
 *    bottleneck (an upper bound where it never saturates);
 *  - overlap: one thread chasing as many independent cycles as the
 *    marker's prefetch window holds (time per miss; latency over it is
 *    the memory-level parallelism), and one thread streaming (time per
 *    line the hardware prefetcher fetches ahead);
 *  - the data TLB: chases of cached lines one to a page against the
 *    same lines side by side, over more and more pages, fitted to two
 *    levels' entries and miss costs;
 *  - sgc's marker: per-object and per-word costs from collections of
 *    known heaps (one GC thread), a pointer's page-map walk, and what
 *    one miss costs it (its prefetch window overlaps misses) from a heap
 *    of scattered objects;
 *  - a steal: four cache-line transfers between two threads (the victim's
 *    lock, bottom, entries and the idle flag), from a ping-pong;
 *  - join: a futex wake until the woken thread runs; a pre-woken GC
 *    thread's join as sgc's trace reports it, a second thread computing
 *    as a program's do; marker: one more marker's
 *    serial cost, from collections of a tiny heap with 2 markers and 1
 *    in turn. */
#include <dirent.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mark/predict_model.h"
#include "sgc.h"
#include "tlb.h"

static bool quick;
/* Independent chases per thread: enough misses in flight to find the
 * memory's limit rather than one thread's latency. */
enum { CHAINS = 32 };

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of V[0 .. N), N > 0 (V is sorted). */
static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, by_value);
  return v[n / 2];
}

static void *map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    fprintf(stderr, "sgc-calibrate: cannot map %zu bytes\n", bytes);
    exit(1);
  }
  return p;
}

/* ---- the host's cache and memory ---- */

static unsigned long sysfs_number(const char *path) {
  FILE *f = fopen(path, "r");
  unsigned long v = 0;
  char unit = 0;
  if (f) {
    if (fscanf(f, "%lu%c", &v, &unit) < 1) v = 0;
    fclose(f);
  }
  if (unit == 'K') v <<= 10;
  if (unit == 'M') v <<= 20;
  return v;
}

/* CPUs in a sysfs CPU list ("0-3,8,10-11"); 1 when unreadable. */
static unsigned cpu_list_count(const char *path) {
  FILE *f = fopen(path, "r");
  unsigned count = 0;
  if (f) {
    unsigned a, b;
    char sep = 0;
    while (fscanf(f, "%u", &a) == 1) {
      b = a;
      sep = 0;
      if (fscanf(f, "%c", &sep) == 1 && sep == '-' && fscanf(f, "%u%c", &b, &sep) < 1) break;
      count += b >= a ? b - a + 1 : 1;
      if (sep != ',') break;
    }
    fclose(f);
  }
  return count ? count : 1;
}

/* The last-level cache (the highest level cpu0 has), and the nodes. */
static void read_cache(struct predict_profile *p) {
  unsigned long best = 0;
  for (int i = 0; i < 8; i++) {
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    unsigned long level = sysfs_number(path);
    if (level < 2 || level < best) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    unsigned long size = sysfs_number(path);
    if (!size) continue;
    best = level;
    p->cache_bytes = size;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/ways_of_associativity", i);
    unsigned long ways = sysfs_number(path);
    if (ways) p->cache_ways = (unsigned)ways;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/coherency_line_size", i);
    unsigned long line = sysfs_number(path);
    if (line) p->line_bytes = (unsigned)line;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
    p->cache_cpus = cpu_list_count(path);
  }
  unsigned nodes = 0;
  DIR *d = opendir("/sys/devices/system/node");
  for (struct dirent *e; d && (e = readdir(d));)
    if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9') nodes++;
  if (d) closedir(d);
  p->nodes = nodes ? nodes : 1;
}

/* 0 .. N - 1 shuffled (munmap N * sizeof (size_t) bytes after). */
static size_t *random_order(size_t n) {
  size_t *order = map(n * sizeof *order);
  for (size_t i = 0; i < n; i++) order[i] = i;
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = next_random() % (i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}

/* A random cycle through the lines of [BASE, BASE + LINES * 64), each
 * line's first word pointing to the next line of the cycle. */
static void make_cycle(uintptr_t *base, size_t lines, size_t stride_words) {
  size_t *order = random_order(lines);
  for (size_t i = 0; i < lines; i++)
    base[order[i] * stride_words] = (uintptr_t)&base[order[(i + 1) % lines] * stride_words];
  munmap(order, lines * sizeof *order);
}

struct chase {
  uintptr_t *start[CHAINS];
  size_t steps;
  bool rmw;
  double ns;
  uintptr_t sink;
};

/* Follows up to CHAINS cycles in step (independent misses, overlapping). */
static void *chase_run(void *arg) {
  struct chase *c = arg;
  uintptr_t *p[CHAINS];
  unsigned chains = 0;
  while (chains < CHAINS && c->start[chains]) {
    p[chains] = c->start[chains];
    chains++;
  }
  double t0 = now_ns();
  for (size_t s = 0; s < c->steps; s++)
    for (unsigned k = 0; k < chains; k++)
      p[k] = c->rmw ? (uintptr_t *)atomic_fetch_add((_Atomic uintptr_t *)p[k], 0)
                    : (uintptr_t *)*(volatile uintptr_t *)p[k];
  c->ns = now_ns() - t0;
  for (unsigned k = 0; k < chains; k++) c->sink += (uintptr_t)p[k];
  return NULL;
}

/* The last-level cache this thread holds (cache_capacity_fit): a chase
 * through random cycles of 1 MiB, 2, 4, ... up to twice SYSFS_BYTES
 * (BUF holds them), the fastest of 3 passes each after one to warm up;
 * at most SYSFS_BYTES.  On the 2-vCPU AMD VM sysfs names 32 MiB and a
 * chase over 8 MB already took a third of the way to the memory's time. */
static uint64_t cache_capacity(uintptr_t *buf, uint64_t sysfs_bytes, double miss_ns) {
  enum { SIZES = 16 };
  uint64_t bytes[SIZES];
  double ns[SIZES];
  unsigned n = 0;
  for (uint64_t size = 1u << 20; n < SIZES && size <= 2 * sysfs_bytes && size <= (quick ? 16u << 20 : 64u << 20);
       size *= 2) {
    size_t lines = size / 64;
    make_cycle(buf, lines, 8);
    size_t steps = lines < (1u << 20) ? lines : 1u << 20;
    struct chase warm = {.start = {buf}, .steps = steps};
    chase_run(&warm);
    double best = 0;
    for (int r = 0; r < 3; r++) {
      struct chase one = {.start = {buf}, .steps = steps};
      chase_run(&one);
      double t = one.ns / (double)steps;
      if (r == 0 || t < best) best = t;
    }
    bytes[n] = size;
    ns[n++] = best;
  }
  uint64_t fit = cache_capacity_fit(bytes, ns, n, miss_ns);
  return fit && fit < sysfs_bytes ? fit : sysfs_bytes;
}

/* Latency (one chain, one thread: the fastest of 5 passes, as the
 * marker's costs are the fastest of their collections, since a shared
 * host's memory is at times far slower for a while) and time per access
 * with every CPU chasing CHAINS chains, for loads or RMWs. */
static void memory_costs(uintptr_t *buf, size_t lines, unsigned cpus, bool rmw, double *latency,
                         double *occupancy) {
  size_t steps = quick ? 200000 : 2000000;
  *latency = 0;
  for (int r = 0; r < 5; r++) {
    struct chase one = {.start = {buf}, .steps = steps / 5, .rmw = rmw};
    chase_run(&one);
    double ns = one.ns / (double)one.steps;
    if (r == 0 || ns < *latency) *latency = ns;
  }
  unsigned threads = cpus > 64 ? 64 : cpus;
  struct chase many[64];
  pthread_t ids[64];
  for (unsigned t = 0; t < threads; t++) {
    memset(&many[t], 0, sizeof many[t]);
    for (unsigned k = 0; k < CHAINS; k++) many[t].start[k] = &buf[(next_random() % lines) * 8];
    many[t].steps = steps / CHAINS;
    many[t].rmw = rmw;
  }
  double t0 = now_ns();
  for (unsigned t = 0; t < threads; t++) pthread_create(&ids[t], NULL, chase_run, &many[t]);
  for (unsigned t = 0; t < threads; t++) pthread_join(ids[t], NULL);
  double elapsed = now_ns() - t0;
  *occupancy = elapsed / ((double)threads * CHAINS * (double)(steps / CHAINS));
}

/* One thread, PREDICT_PREFETCH_DEPTH independent chases in step: the
 * time per miss with the marker's window full of misses; the best of 3. */
static double overlap_ns(uintptr_t *buf, size_t lines) {
  size_t steps = quick ? 20000 : 200000;
  double best = 0;
  for (int r = 0; r < 3; r++) {
    struct chase c = {.steps = steps};
    for (unsigned k = 0; k < PREDICT_PREFETCH_DEPTH; k++) c.start[k] = &buf[(next_random() % lines) * 8];
    chase_run(&c);
    double ns = c.ns / ((double)steps * PREDICT_PREFETCH_DEPTH);
    if (r == 0 || ns < best) best = ns;
  }
  return best;
}

struct stream {
  const volatile uintptr_t *lo;
  size_t lines;
  double ns;
  uintptr_t sink;
};

/* One word of every line of [lo, lo + lines * 64), in address order. */
static void *stream_run(void *arg) {
  struct stream *s = arg;
  uintptr_t sum = 0;
  double t0 = now_ns();
  for (size_t i = 0; i < s->lines; i++) sum += s->lo[i * 8];
  s->ns = now_ns() - t0;
  s->sink = sum;
  return NULL;
}

/* Per line read in address order: one thread (best of 3 passes), and
 * every CPU at once over its own part (the memory's rate for streams). */
static void stream_costs(uintptr_t *buf, size_t lines, unsigned cpus, double *one, double *all) {
  *one = 0;
  for (int r = 0; r < 3; r++) {
    struct stream s = {.lo = buf, .lines = lines};
    stream_run(&s);
    double ns = s.ns / (double)lines;
    if (r == 0 || ns < *one) *one = ns;
  }
  unsigned threads = cpus > 64 ? 64 : cpus;
  struct stream parts[64];
  pthread_t ids[64];
  double t0 = now_ns();
  for (unsigned t = 0; t < threads; t++) {
    parts[t] = (struct stream){.lo = buf + t * (lines / threads) * 8, .lines = lines / threads};
    pthread_create(&ids[t], NULL, stream_run, &parts[t]);
  }
  for (unsigned t = 0; t < threads; t++) pthread_join(ids[t], NULL);
  *all = (now_ns() - t0) / (double)(lines / threads * threads);
}

/* ---- the data TLB ---- */

/* One thread chasing a random cycle through N lines: one line on each
 * of N pages when SPREAD (at offsets that differ, so the lines spread
 * over the cache's sets), else N lines side by side.  Few enough lines
 * to stay cached either way, so the difference is the pages' walks. */
static double page_chase_ns(uintptr_t *buf, size_t n, bool spread) {
  size_t *order = random_order(n);
  size_t words_per_page = 4096 / sizeof *buf;
#define LINE_AT(i) (spread ? (i) * words_per_page + ((i) * 37 % 64) * 8 : (i) * 8)
  for (size_t i = 0; i < n; i++)
    buf[LINE_AT(order[i])] = (uintptr_t)&buf[LINE_AT(order[(i + 1) % n])];
  struct chase c = {.start = {&buf[LINE_AT(order[0])]}, .steps = quick ? 100000 : 1000000};
#undef LINE_AT
  munmap(order, n * sizeof *order);
  chase_run(&c); /* caches the lines and the page tables */
  double best = 0;
  for (int r = 0; r < 3; r++) {
    chase_run(&c);
    double ns = c.ns / (double)c.steps;
    if (r == 0 || ns < best) best = ns;
  }
  return best;
}

/* The TLB's two levels (tools/predict/tlb.h): chases over 16, 32, ...
 * 16,384 pages (64 MiB, past any data TLB's reach) against their lines
 * side by side, fitted. */
static void tlb_costs(struct predict_profile *p) {
  enum { COUNTS = 11, MOST = 16 << (COUNTS - 1) };
  uintptr_t *buf = map((size_t)MOST * 4096);
  unsigned n[COUNTS];
  double extra[COUNTS];
  for (unsigned k = 0; k < COUNTS; k++) {
    n[k] = 16u << k;
    extra[k] = page_chase_ns(buf, n[k], true) - page_chase_ns(buf, n[k], false);
  }
  munmap(buf, (size_t)MOST * 4096);
  struct tlb_fit f;
  if (!tlb_fit(n, extra, COUNTS, &f)) return;
  p->tlb1_entries = f.entries[0];
  p->tlb1_miss_ns = f.cost[0];
  p->tlb2_entries = f.entries[1];
  p->tlb2_miss_ns = f.cost[1];
}

/* ---- a steal and a join ---- */

static _Atomic int ping;
static void *pong(void *arg) {
  int rounds = *(int *)arg;
  for (int i = 0; i < rounds; i++) {
    while (atomic_load_explicit(&ping, memory_order_acquire) != 2 * i + 1) {}
    atomic_store_explicit(&ping, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

/* One line's transfer between two CPUs (half a round trip): the best of
 * 50 batches, as a batch where either thread lost its CPU says nothing. */
static double transfer_ns(void) {
  enum { BATCHES = 50 };
  int batch = quick ? 400 : 4000, rounds = BATCHES * batch;
  pthread_t id;
  atomic_store(&ping, 0);
  pthread_create(&id, NULL, pong, &rounds);
  double best = 0;
  for (int b = 0, i = 0; b < BATCHES; b++) {
    double t0 = now_ns();
    for (int end = i + batch; i < end; i++) {
      atomic_store_explicit(&ping, 2 * i + 1, memory_order_release);
      while (atomic_load_explicit(&ping, memory_order_acquire) != 2 * i + 2) {}
    }
    double ns = (now_ns() - t0) / batch / 2;
    if (b == 0 || ns < best) best = ns;
  }
  pthread_join(id, NULL);
  return best;
}

static _Atomic uint32_t futex_word;
static _Atomic double woke_at;
static void *sleeper(void *arg) {
  int rounds = *(int *)arg;
  for (int i = 0; i < rounds; i++) {
    while (atomic_load(&futex_word) == (uint32_t)(2 * i))
      syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 2 * i, NULL, NULL, 0);
    atomic_store(&woke_at, now_ns());
    atomic_store(&futex_word, (uint32_t)(2 * i + 2));
  }
  return NULL;
}

/* From a futex wake until the sleeper runs, the median of ROUNDS. */
static double join_ns(void) {
  enum { ROUNDS = 101 };
  int rounds = ROUNDS;
  double took[ROUNDS];
  pthread_t id;
  atomic_store(&futex_word, 0);
  pthread_create(&id, NULL, sleeper, &rounds);
  for (int i = 0; i < ROUNDS; i++) {
    usleep(200); /* let it sleep */
    double t0 = now_ns();
    atomic_store(&futex_word, (uint32_t)(2 * i + 1));
    syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    while (atomic_load(&futex_word) != (uint32_t)(2 * i + 2)) sched_yield();
    took[i] = atomic_load(&woke_at) - t0;
  }
  pthread_join(id, NULL);
  return median(took, ROUNDS);
}

/* ---- sgc's marker ---- */

static void *volatile keep; /* the heap under test, a root */

/* The fastest of a few collections' mark time. */
static double mark_ns(void) {
  double best = 0;
  for (int i = 0; i < (quick ? 3 : 7); i++) {
    GC_gcollect();
    SGC_gc_record_t r;
    SGC_get_gc_records(&r, 1);
    if (i == 0 || (double)r.mark_ns < best) best = (double)r.mark_ns;
  }
  return best;
}

/* An array of N pointers to objects of BYTES each (ATOMIC: pointer-free
 * kind; else scanned, their words zero), in a random order when SCATTER. */
static void build(size_t n, size_t bytes, bool atomic, bool scatter) {
  keep = NULL;
  void **array = GC_MALLOC(n * sizeof(void *));
  for (size_t i = 0; i < n; i++) array[i] = atomic ? GC_MALLOC_ATOMIC(bytes) : GC_MALLOC(bytes);
  for (size_t i = 0; scatter && i + 1 < n; i++) {
    size_t j = i + next_random() % (n - i);
    void *t = array[i];
    array[i] = array[j];
    array[j] = t;
  }
  for (size_t i = 0; atomic && i < n; i++) memset(array[i], 0, bytes);
  keep = array;
}

/* KEEP's N pointers twice over, in a new array.  Not in marker_costs: a
 * local there kept the array reachable, from a register or the frame, for
 * every later measurement (the 2N pointers and N objects, 0.33 ms, in the
 * push cost's). */
__attribute__((noinline)) static void build_twice(size_t n) {
  void **twice = GC_MALLOC(2 * n * sizeof(void *));
  memcpy(twice, (void *)keep, n * sizeof(void *));
  memcpy(twice + n, (void *)keep, n * sizeof(void *));
  keep = twice;
}

static void marker_costs(struct predict_profile *p) {
  GC_set_markers_count(1);
  keep = NULL;
  double base = mark_ns(); /* the roots alone */
  size_t n = quick ? 20000 : 100000;
  /* Few large objects of zero words: the per-word cost (and N pointers). */
  size_t big = 64 << 10, bigs = (quick ? 16 : 64);
  build(bigs, big, false, false);
  double words = (double)bigs * big / 8 + bigs;
  double word = (mark_ns() - base) / words;
  /* N pointer-free objects: per object, plus the array's N words. */
  build(n, 16, true, false);
  double object = (mark_ns() - base - (double)n * word) / (double)n;
  if (word < 0.01) word = 0.01;
  if (object < 0.5) object = 0.5;
  p->word_ns = word;
  p->object_ns = object;
  /* The same objects each found twice (2N pointers): per pointer finding
   * a mark set, beyond its word. */
  build(n, 16, true, false);
  build_twice(n);
  double edge = (mark_ns() - base - 2.0 * (double)n * word - (double)n * object) / (double)n;
  p->edge_ns = edge > 0 ? edge : 0;
  /* N objects of two zero words that hold pointers (a scanned kind): per
   * object, beyond a pointer-free one's and its two words, the push of
   * its range, its pop and its prefetch. */
  build(n, 16, false, false);
  double push = (mark_ns() - base - 3.0 * (double)n * word - (double)n * object) / (double)n;
  p->push_ns = push > 0 ? push : 0;
  /* 20,000 pointer-free 16-byte objects (79 pages, cached), pointed at
   * in allocation order and then in a random one: the random order's
   * pointers find another page than the pointer before (1 - 1/79 of
   * them), where mark.c's one-entry page cache misses and the page map
   * is walked; per such pointer, beyond the ordered ones. */
  size_t few = 20000;
  double pages = (double)few * 16 / 4096;
  build(few, 16, true, false);
  double ordered = mark_ns();
  build(few, 16, true, true);
  double shuffled = mark_ns();
  p->page_ns = shuffled > ordered ? (shuffled - ordered) / ((double)few * (1 - 1 / pages)) : 0;
  /* Scattered 64-byte objects, 4x the cache: what a miss costs the marker. */
  size_t scattered = 4 * p->cache_bytes / 64;
  if (scattered < (1u << 19)) scattered = 1u << 19;
  if (quick) scattered = 1u << 16;
  build(scattered, 64, false, true);
  double t = mark_ns() - base;
  double work = (double)scattered * (object + 9 * word);
  double misses = (double)scattered * (1 + 1.0 / 16) + (double)scattered * 8 / 64;
  p->marker_miss_ns = t > work ? (t - work) / misses : 1;
  keep = NULL;
  /* One more marker, on a tiny heap: its serial cost, the median over
   * collections with 2 markers and 1 in turn (as SGC_MARKERS_CYCLE runs a
   * program).  The fastest of a block of each, one block after the
   * other, read 0 to 5.4 us as the VM's phase moved between the blocks. */
  enum { PAIRS = 15 };
  double extra[PAIRS];
  for (int i = 0; i < PAIRS; i++) {
    SGC_gc_record_t r[2];
    GC_set_markers_count(2);
    GC_gcollect();
    SGC_get_gc_records(&r[0], 1);
    GC_set_markers_count(1);
    GC_gcollect();
    SGC_get_gc_records(&r[1], 1);
    extra[i] = (double)r[0].mark_ns - (double)r[1].mark_ns;
  }
  double m = median(extra, PAIRS);
  p->marker_ns = m > 0 ? m : 0;
}

static atomic_bool mutator_stop;

/* A program's other thread: computing while the main one collects. */
static void *mutator_spin(void *arg) {
  (void)arg;
  volatile unsigned long work = 0;
  while (!atomic_load_explicit(&mutator_stop, memory_order_relaxed)) work++;
  return NULL;
}

/* A pre-woken GC thread's join, as the collector wakes it in a program:
 * collections of a heap that takes 0.1-0.3 ms to mark, 2 markers, while
 * a second thread computes on the other CPU (stopping it frees the CPU
 * the helper runs on; with every other CPU idle, the join is an idle
 * CPU's wake-up instead: 16-30 us on the AMD VM, where programs' own
 * pre-woken helpers joined in 0.27-0.8 us with a thread on each CPU;
 * history.md), each helper's join_ns where its trace record says it was
 * pre-woken (the SGC_TRACE main sets); the median, or STAY without 5
 * such joins (SGC_PREWAKE_US=0, one CPU). */
static double prewake_join_ns(double stay) {
  const char *trace = getenv("SGC_TRACE");
  if (!trace || strstr(trace, "%p")) return stay;
  build(quick ? 20000 : 50000, 16, false, false);
  GC_set_markers_count(2);
  pthread_t mutator;
  atomic_store_explicit(&mutator_stop, false, memory_order_relaxed);
  bool spinning = GC_pthread_create(&mutator, NULL, mutator_spin, NULL) == 0;
  /* A pause before each, as a program's own work makes: the helpers go
   * back to sleep, and the pre-wake is what wakes them (back to back,
   * they are still spinning from the last mark when the next begins). */
  for (int i = 0; i < (quick ? 11 : 41); i++) {
    usleep(3000);
    GC_gcollect();
  }
  atomic_store_explicit(&mutator_stop, true, memory_order_relaxed);
  if (spinning) GC_pthread_join(mutator, NULL);
  GC_set_markers_count(1);
  keep = NULL;
  enum { MOST = 256 };
  double joins[MOST];
  int n = 0;
  FILE *f = fopen(trace, "r");
  static char line[1 << 16];
  while (f && fgets(line, sizeof line, f)) {
    /* Each helper's entry: ..."join_ns":N,"prewoken":true (the first is
     * the collector's own, joined at 0). */
    for (char *at = strstr(line, "\"mark_threads\":"); at && (at = strstr(at, "\"join_ns\":"));) {
      at += strlen("\"join_ns\":");
      double v = strtod(at, &at);
      if (!strncmp(at, ",\"prewoken\":true", 16) && v > 0 && n < MOST) joins[n++] = v;
    }
  }
  if (f) fclose(f);
  if (n < 5) return stay;
  return median(joins, (size_t)n);
}

int main(int argc, char **argv) {
  const char *out = NULL;
  int opt;
  while ((opt = getopt(argc, argv, "qo:")) != -1) {
    if (opt == 'q') quick = true;
    else if (opt == 'o') out = optarg;
    else {
      fprintf(stderr, "usage: sgc-calibrate [-q] [-o PROFILE]\n  -q  quick, small and rough\n");
      return 2;
    }
  }
  /* The marker counts below must be the ones asked for; the trace tells
   * how the GC threads joined (prewake_join_ns). */
  char trace[64] = "";
  if (!getenv("SGC_ADAPTIVE")) {
    setenv("SGC_ADAPTIVE", "0", 1);
    unsetenv("SGC_MARKERS");
    if (!getenv("SGC_TRACE")) {
      snprintf(trace, sizeof trace, "/tmp/sgc-calibrate-%ld.trace", (long)getpid());
      setenv("SGC_TRACE", trace, 1);
      setenv("SGC_CALIBRATE_TRACE", trace, 1); /* ours: removed at the end */
    }
    execv("/proc/self/exe", argv);
  }
  struct predict_profile p;
  predict_profile_default(&p);
  snprintf(p.name, sizeof p.name, "calibrated");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  p.cpus = cpus > 0 ? (unsigned)cpus : 1;
  read_cache(&p);
  size_t bytes = 4 * p.cache_bytes;
  if (bytes < (64u << 20)) bytes = 64u << 20;
  if (quick) bytes = 16u << 20;
  uintptr_t *buf = map(bytes);
  make_cycle(buf, bytes / 64, 8);
  memory_costs(buf, bytes / 64, p.cpus, false, &p.read_miss_ns, &p.read_occupancy_ns);
  memory_costs(buf, bytes / 64, p.cpus, true, &p.rmw_miss_ns, &p.rmw_occupancy_ns);
  p.read_overlap_ns = overlap_ns(buf, bytes / 64);
  double streams_ns;
  stream_costs(buf, bytes / 64, p.cpus, &p.read_stream_ns, &streams_ns);
  /* Any rate the memory was seen to serve bounds its occupancy: a few
   * CPUs' chases may not saturate it where their streams do. */
  if (streams_ns < p.read_occupancy_ns) p.read_occupancy_ns = streams_ns;
  p.read_remote_miss_ns = p.read_miss_ns;
  p.rmw_remote_miss_ns = p.rmw_miss_ns;
  p.cache_bytes = cache_capacity(buf, p.cache_bytes, p.read_miss_ns); /* remakes buf's cycles */
  munmap(buf, bytes);
  tlb_costs(&p);
  p.steal_ns = p.cpus > 1 ? 4 * transfer_ns() : 0;
  p.join_ns = p.cpus > 1 ? join_ns() : 0;
  marker_costs(&p);
  p.prewake_join_ns = p.steal_ns < p.join_ns ? p.steal_ns : p.join_ns;
  if (p.cpus > 1) p.prewake_join_ns = prewake_join_ns(p.prewake_join_ns);
  if (getenv("SGC_CALIBRATE_TRACE")) unlink(getenv("SGC_CALIBRATE_TRACE"));
  char text[4096];
  predict_profile_format(&p, text, sizeof text);
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    fprintf(stderr, "sgc-calibrate: cannot write %s\n", out);
    return 1;
  }
  fprintf(f, "# sgc-calibrate%s: this host (docs/prediction.md)\n%s", quick ? " -q" : "", text);
  if (out) fclose(f);
  return 0;
}
