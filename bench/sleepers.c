/*
 * sleepers: many independent threads, most asleep at any moment, each
 * with a small live set of its own (a server's worker pool; issue 53).
 *
 * Each of -t (500) threads loops for -d (3) seconds: it sleeps a random
 * -s..-S (200..2200) microseconds, wakes, and allocates a burst of -b
 * (200) objects of 16..192 bytes.  Every -e-th (8th) object of a burst is
 * kept in the burst's list; the thread keeps its last -k (8) bursts, so
 * its live set is constant (about 21 KB at the defaults: some 10 MB over
 * 500 threads) and everything else it allocates is garbage at once.
 * -K N instead keeps about N objects over all threads, whatever their
 * number (each keeps N / -t, from up to -k bursts): the live data stays
 * put while the threads grow, so the heap shows what the allocator holds
 * per thread (issue 53's per-CPU target).
 * -w says how a thread sleeps: "sleep" (nanosleep, the default), "cond"
 * (pthread_cond_timedwait on a condition variable of its own, never
 * signalled, as an idle server worker waits for work) or "poll" (ppoll
 * with no descriptors, as an event loop waits).
 *
 * Metrics: bursts_per_s over all threads; kept_mb, the bytes the threads'
 * rings hold at the end (object sizes summed); peak_heap_mb (GC_get_heap_size
 * sampled every 5 ms by the main thread) and peak_rss_mb; collections;
 * worst_burst_ms and p99_burst_ms: the longest time a burst took, as a
 * thread sees it, which holds any collection pause it met.
 * ceiling_bursts_per_s: the rate if bursts cost nothing, from this run's own
 * schedule (sum over threads of bursts / seconds of sleep it asked for);
 * the allocator cannot beat it.  sleep_overrun: seconds actually waited over
 * seconds asked for (timer slack and a busy scheduler make it above 1).
 * Check: every kept object carries its thread, burst and index, verified
 * when its burst is dropped and at the end.
 */
#include "bench_common.h"

#include <poll.h>

typedef struct Obj {
  struct Obj *next;
  uint32_t thread, burst, index, size;
  unsigned char pad[];
} Obj;

enum { MAX_KEPT = 64, LATENCY_BUCKETS = 4096 }; /* latency histogram: 0.05 ms buckets */

typedef struct Sleeper {
  int id;
  long bursts;
  size_t kept_bytes; /* what its ring holds at the end, counted */
  double worst_ms;
  double sleep_asked_s, sleep_spent_s; /* the schedule, and what nanosleep took */
  uint32_t latency[LATENCY_BUCKETS];
} Sleeper;

static int nthreads = 500, burst = 200, kept_bursts = 8, keep_every = 8;
static long kept_total; /* -K: objects kept over all threads (0: per thread, -k and -e) */
static long sleep_min_us = 200, sleep_max_us = 2200;
static double duration_s = 3.0;
static volatile int stop;
static enum { WAIT_SLEEP, WAIT_COND, WAIT_POLL } wait_mode = WAIT_SLEEP;

/* A thread's condition variable and mutex, for -w cond. */
typedef struct Waiter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
} Waiter;

static void waiter_init(Waiter *w) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->cond, &attr);
  pthread_condattr_destroy(&attr);
}

/* Waits US microseconds the way -w says. */
static void wait_for(Waiter *w, long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  if (wait_mode == WAIT_SLEEP) {
    nanosleep(&ts, NULL);
  } else if (wait_mode == WAIT_POLL) {
    ppoll(NULL, 0, &ts, NULL);
  } else {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += ts.tv_sec;
    deadline.tv_nsec += ts.tv_nsec;
    if (deadline.tv_nsec >= 1000000000) deadline.tv_sec++, deadline.tv_nsec -= 1000000000;
    pthread_mutex_lock(&w->lock);
    while (pthread_cond_timedwait(&w->cond, &w->lock, &deadline) == 0) {
    } /* no one signals it: until the deadline */
    pthread_mutex_unlock(&w->lock);
  }
}

static Obj *make(uint32_t thread, uint32_t b, uint32_t index, uint32_t size) {
  Obj *o = (Obj *)bench_xmalloc(size);
  o->next = NULL;
  o->thread = thread;
  o->burst = b;
  o->index = index;
  o->size = size;
  return o;
}

static void check_burst(const Obj *list, uint32_t thread, uint32_t b) {
  uint32_t want = 0;
  for (const Obj *o = list; o; o = o->next, want += (uint32_t)keep_every)
    if (o->thread != thread || o->burst != b || o->index != want) {
      bench_fail("thread %u burst %u: object %u reads thread %u burst %u index %u", thread, b,
                 want, o->thread, o->burst, o->index);
      return;
    }
}

static void *sleeper(void *arg) {
  Sleeper *s = (Sleeper *)arg;
  /* The ring of kept bursts lives in the GC heap, reachable from this stack. */
  Obj **ring = (Obj **)bench_xmalloc(sizeof(Obj *) * (size_t)kept_bursts);
  memset(ring, 0, sizeof(Obj *) * (size_t)kept_bursts);
  bench_rng rng = {0x9e3779b97f4a7c15ull * (uint64_t)(s->id + 1)};
  uint32_t b = 0;
  Waiter w;
  waiter_init(&w);
  while (!stop) {
    long us = sleep_min_us + (long)bench_rng_below(&rng, (uint32_t)(sleep_max_us - sleep_min_us + 1));
    double asleep = bench_now();
    wait_for(&w, us);
    double t0 = bench_now();
    s->sleep_asked_s += (double)us * 1e-6;
    s->sleep_spent_s += t0 - asleep;
    int slot = (int)(b % (uint32_t)kept_bursts);
    if (ring[slot]) check_burst(ring[slot], (uint32_t)s->id, b - (uint32_t)kept_bursts);
    Obj *head = NULL, **tail = &head;
    for (int i = 0; i < burst; i++) {
      uint32_t size = 16 + 8 * bench_rng_below(&rng, 23); /* 16..192 */
      if (size < sizeof(Obj)) size = sizeof(Obj);
      Obj *o = make((uint32_t)s->id, b, (uint32_t)i, size);
      if (i % keep_every == 0) {
        *tail = o;
        tail = &o->next;
      }
    }
    ring[slot] = head;
    double ms = (bench_now() - t0) * 1e3;
    if (ms > s->worst_ms) s->worst_ms = ms;
    int bucket = (int)(ms / 0.05);
    s->latency[bucket < LATENCY_BUCKETS ? bucket : LATENCY_BUCKETS - 1]++;
    s->bursts++;
    b++;
  }
  for (uint32_t k = b > (uint32_t)kept_bursts ? b - (uint32_t)kept_bursts : 0; k < b; k++) {
    check_burst(ring[k % (uint32_t)kept_bursts], (uint32_t)s->id, k);
    for (const Obj *o = ring[k % (uint32_t)kept_bursts]; o; o = o->next) s->kept_bytes += o->size;
  }
  return NULL;
}

/* -K: a thread's share of the kept objects, as -k bursts of burst/-e
 * objects each (every -e-th object of a burst is kept; fewer bursts when
 * the share is smaller than -k). */
static void share_kept_total(void) {
  long share = kept_total / nthreads > 0 ? kept_total / nthreads : 1;
  long per_burst = share / kept_bursts > 0 ? share / kept_bursts : 1;
  if (per_burst > burst) per_burst = burst;
  long bursts = share / per_burst;
  kept_bursts = (int)(bursts < 1 ? 1 : bursts > MAX_KEPT ? MAX_KEPT : bursts);
  keep_every = (int)(burst / per_burst);
}

int main(int argc, char **argv) {
  int c;
  while ((c = getopt(argc, argv, "t:d:b:k:e:K:s:S:w:")) != -1) {
    switch (c) {
      case 't': nthreads = (int)bench_arg_long("-t", optarg, 1, 100000); break;
      case 'd': duration_s = bench_arg_double("-d", optarg, 0.01, 3600); break;
      case 'b': burst = (int)bench_arg_long("-b", optarg, 1, 1 << 20); break;
      case 'k': kept_bursts = (int)bench_arg_long("-k", optarg, 1, MAX_KEPT); break;
      case 'e': keep_every = (int)bench_arg_long("-e", optarg, 1, 1 << 20); break;
      case 'K': kept_total = bench_arg_long("-K", optarg, 1, 1L << 30); break;
      case 's': sleep_min_us = bench_arg_long("-s", optarg, 0, 10000000); break;
      case 'S': sleep_max_us = bench_arg_long("-S", optarg, 0, 10000000); break;
      case 'w':
        if (strcmp(optarg, "sleep") == 0) wait_mode = WAIT_SLEEP;
        else if (strcmp(optarg, "cond") == 0) wait_mode = WAIT_COND;
        else if (strcmp(optarg, "poll") == 0) wait_mode = WAIT_POLL;
        else BENCH_USAGE_EXIT("sleepers: -w takes sleep, cond or poll\n");
        break;
      default:
        BENCH_USAGE_EXIT("usage: sleepers [-t threads] [-d seconds] [-b burst] [-k kept_bursts] "
                         "[-e keep_every] [-K kept_total] [-s sleep_min_us] [-S sleep_max_us] "
                         "[-w sleep|cond|poll]\n");
    }
  }
  if (sleep_max_us < sleep_min_us) sleep_max_us = sleep_min_us;
  if (kept_total) share_kept_total();
  GC_INIT();
  Sleeper *sl = (Sleeper *)calloc((size_t)nthreads, sizeof(Sleeper));
  pthread_t *tids = (pthread_t *)calloc((size_t)nthreads, sizeof(pthread_t));
  if (!sl || !tids) exit(3);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 * 1024);
  unsigned long gc0 = bench_gc_count();
  double t0 = bench_now();
  for (int i = 0; i < nthreads; i++) {
    sl[i].id = i;
    int e = bench_thread_create(&tids[i], &attr, sleeper, &sl[i]);
    if (e) {
      fprintf(stderr, "sleepers: thread %d: %s\n", i, strerror(e));
      exit(3);
    }
  }
  size_t peak_heap = 0;
  while (bench_now() - t0 < duration_s) {
    size_t h = bench_heap_size();
    if (h > peak_heap) peak_heap = h;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  stop = 1;
  for (int i = 0; i < nthreads; i++) bench_thread_join(tids[i], NULL);
  double wall = bench_now() - t0;
  size_t h = bench_heap_size();
  if (h > peak_heap) peak_heap = h;

  long bursts = 0;
  size_t kept = 0;
  double worst = 0, ceiling = 0, asked = 0, spent = 0;
  static uint64_t hist[LATENCY_BUCKETS];
  for (int i = 0; i < nthreads; i++) {
    bursts += sl[i].bursts;
    kept += sl[i].kept_bytes;
    if (sl[i].worst_ms > worst) worst = sl[i].worst_ms;
    if (sl[i].sleep_asked_s > 0) ceiling += (double)sl[i].bursts / sl[i].sleep_asked_s;
    asked += sl[i].sleep_asked_s;
    spent += sl[i].sleep_spent_s;
    for (int k = 0; k < LATENCY_BUCKETS; k++) hist[k] += sl[i].latency[k];
  }
  uint64_t seen = 0;
  int p99 = LATENCY_BUCKETS - 1;
  for (int k = 0; k < LATENCY_BUCKETS; k++) {
    seen += hist[k];
    if (seen * 100 >= (uint64_t)bursts * 99) {
      p99 = k;
      break;
    }
  }
  bench_result_begin("sleepers", nthreads, wall);
  bench_kv("bursts", "%ld", bursts);
  bench_kv("bursts_per_s", "%.0f", (double)bursts / wall);
  bench_kv("ceiling_bursts_per_s", "%.0f", ceiling);
  bench_kv("sleep_overrun", "%.3f", asked > 0 ? spent / asked : 0.0);
  bench_kv("peak_heap_mb", "%.1f", (double)peak_heap / 1048576.0);
  bench_kv("peak_rss_mb", "%.1f", (double)bench_peak_rss_kb() / 1024.0);
  bench_kv("kept_mb", "%.1f", (double)kept / 1048576.0);
  bench_kv("collections", "%lu", bench_gc_count() - gc0);
  bench_kv("worst_burst_ms", "%.2f", worst);
  bench_kv("p99_burst_ms", "%.2f", (p99 + 1) * 0.05);
  free(tids);
  free(sl);
  return bench_result_end();
}
