/*
 * latency: a server holding a large live heap (issue 54, "Benchmarks").
 *
 * The heap is a hash table of small objects: -m MiB (256) of live data,
 * each key an entry (next, key, value: 32 bytes) and its value (64 bytes,
 * pointer-holding, checksummed), the buckets in segments of 64 Ki slots.
 * Built first, outside the timed region.  Then -t (2) threads serve
 * requests for -d (5) seconds: a request touches -k (8) random keys under
 * their stripe's lock, reads each value and checks it, replaces -u (50)
 * percent of them with a new value (one in sixteen of those replaces the
 * entry too), and allocates -g (2048) bytes of pointer-free response
 * plus four small temporaries, all garbage at once.  So the live set
 * stays the same while the program allocates steadily and stores
 * pointers into old objects: what a concurrent collector's barrier sees.
 *
 * Every request's latency is recorded (a log-linear histogram, 64 steps
 * per power of two: within 1.6%).  Closed loop by default: each thread
 * serves its next request at once.  With -R (requests/s per thread) the
 * requests are due at a fixed rate and a request's latency runs from when
 * it was due, so a pause that delays the requests behind it counts for
 * each of them (no coordinated omission).
 *
 *   -t threads (2)  -m live MiB (256)  -d seconds (5)  -k keys per
 *   request (8)  -u update percent (50)  -g garbage bytes per request
 *   (2048)  -R requests/s per thread (0: closed loop)
 *
 * Metrics: requests_per_s (all threads), p50_us, p99_us, p999_us, max_us,
 * mean_us; also requests, keys, build_s, collections (in the timed
 * region).  Check: every read value matches its key and checksum; at the
 * end every key is in its bucket once, with a sound value.
 */
#include "bench_common.h"

#include <getopt.h>

typedef struct Value {
  uint64_t key, version, sum;
  unsigned char data[40];
} Value;

typedef struct Entry {
  struct Entry *next;
  uint64_t key;
  Value *value;
} Entry;

enum {
  SEGMENT_SHIFT = 16, /* 64 Ki bucket slots (512 KiB) a segment */
  STRIPES = 4096,     /* locks, by bucket */
  SUB_BITS = 6,       /* histogram: 64 steps per power of two */
  HIST_BUCKETS = (64 - SUB_BITS + 1) << SUB_BITS,
};

static int nthreads = 2, keys_per_request = 8, update_pct = 50;
static long live_mib = 256, garbage_bytes = 2048;
static double duration_s = 5, rate_per_thread = 0;
static uint64_t nkeys, nbuckets;
static Entry ***segments; /* GC_MALLOC'd: the table's root */
static pthread_mutex_t stripes[STRIPES];
static volatile int stop;

typedef struct Server {
  int id;
  uint64_t requests, total_ns, max_ns;
  uint64_t hist[HIST_BUCKETS];
} Server;

static unsigned hist_index(uint64_t ns) {
  if (ns < (1u << SUB_BITS)) return (unsigned)ns;
  unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
  unsigned shift = msb - SUB_BITS;
  return ((shift + 1) << SUB_BITS) + (unsigned)((ns >> shift) & ((1u << SUB_BITS) - 1));
}

/* The largest latency that falls in bucket I (its upper bound). */
static uint64_t hist_upper(unsigned i) {
  if (i < (1u << SUB_BITS)) return i;
  unsigned shift = (i >> SUB_BITS) - 1;
  uint64_t sub = i & ((1u << SUB_BITS) - 1);
  return (((1ull << SUB_BITS) + sub + 1) << shift) - 1;
}

static uint64_t bucket_of(uint64_t key) { return (key * 0x9e3779b97f4a7c15ull) % nbuckets; }
static Entry **slot_of(uint64_t bucket) {
  return &segments[bucket >> SEGMENT_SHIFT][bucket & ((1u << SEGMENT_SHIFT) - 1)];
}

static uint64_t value_sum(const Value *v) {
  uint64_t h = bench_mix(v->key, v->version);
  for (size_t i = 0; i < sizeof v->data; i++) h = bench_mix(h, v->data[i]);
  return h;
}

static Value *new_value(uint64_t key, uint64_t version) {
  Value *v = (Value *)bench_xmalloc(sizeof *v);
  v->key = key;
  v->version = version;
  for (size_t i = 0; i < sizeof v->data; i++) v->data[i] = (unsigned char)(key * 31 + version + i);
  v->sum = value_sum(v);
  return v;
}

static void check_value(const Value *v, uint64_t key) {
  if (!v || v->key != key || v->sum != value_sum(v))
    bench_fail("key %llu: value %p unsound", (unsigned long long)key, (const void *)v);
}

static void build(void) {
  uint64_t segs = (nbuckets + (1u << SEGMENT_SHIFT) - 1) >> SEGMENT_SHIFT;
  segments = (Entry ***)bench_xmalloc(segs * sizeof *segments);
  for (uint64_t s = 0; s < segs; s++)
    segments[s] = (Entry **)bench_xmalloc(sizeof(Entry *) << SEGMENT_SHIFT);
  for (uint64_t key = 0; key < nkeys; key++) {
    Entry *e = (Entry *)bench_xmalloc(sizeof *e);
    Entry **slot = slot_of(bucket_of(key));
    e->key = key;
    e->value = new_value(key, 0);
    e->next = *slot;
    *slot = e;
  }
}

/* One request: KEYS_PER_REQUEST keys read, some updated, garbage made. */
static void serve(bench_rng *rng) {
  for (int j = 0; j < keys_per_request; j++) {
    uint64_t key = bench_rng_next(rng) % nkeys, bucket = bucket_of(key);
    pthread_mutex_t *lock = &stripes[bucket % STRIPES];
    pthread_mutex_lock(lock);
    Entry **at = slot_of(bucket);
    while (*at && (*at)->key != key) at = &(*at)->next;
    Entry *e = *at;
    if (!e) {
      bench_fail("key %llu missing", (unsigned long long)key);
    } else {
      check_value(e->value, key);
      uint32_t roll = bench_rng_below(rng, 100 * 16);
      if (roll < (uint32_t)update_pct * 16) {
        Value *v = new_value(key, e->value->version + 1);
        if (roll % 16 == 0) { /* the entry too: a new object in the old chain */
          Entry *n = (Entry *)bench_xmalloc(sizeof *n);
          n->key = key;
          n->value = v;
          n->next = e->next;
          *at = n;
        } else {
          e->value = v;
        }
      }
    }
    pthread_mutex_unlock(lock);
  }
  unsigned char *response = (unsigned char *)bench_xmalloc_atomic((size_t)garbage_bytes);
  memset(response, 0x5a, (size_t)garbage_bytes);
  Entry *temp = NULL;
  for (int i = 0; i < 4; i++) {
    Entry *t = (Entry *)bench_xmalloc(sizeof *t);
    t->next = temp;
    temp = t;
  }
  if (response[garbage_bytes - 1] != 0x5a || !temp) bench_fail("response");
}

static void *server(void *arg) {
  Server *s = (Server *)arg;
  bench_rng rng = {0x853c49e6748fea9bull * (uint64_t)(s->id + 1)};
  uint64_t interval_ns = rate_per_thread > 0 ? (uint64_t)(1e9 / rate_per_thread) : 0;
  uint64_t due = (uint64_t)(bench_now() * 1e9);
  while (!stop) {
    uint64_t start = (uint64_t)(bench_now() * 1e9);
    if (interval_ns) {
      if (start < due) { /* early: wait until the request is due */
        uint64_t wait = due - start;
        struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
        if (wait > 50000) nanosleep(&ts, NULL);
        while ((uint64_t)(bench_now() * 1e9) < due) {
        }
      }
      start = due; /* late: it counts from when it was due */
      due += interval_ns;
    }
    serve(&rng);
    uint64_t ns = (uint64_t)(bench_now() * 1e9) - start;
    s->hist[hist_index(ns)]++;
    s->total_ns += ns;
    if (ns > s->max_ns) s->max_ns = ns;
    s->requests++;
  }
  return NULL;
}

static void check_table(void) {
  uint64_t found = 0, key_sum = 0;
  for (uint64_t b = 0; b < nbuckets; b++)
    for (Entry *e = *slot_of(b); e; e = e->next) {
      if (bucket_of(e->key) != b) bench_fail("key %llu in bucket %llu", (unsigned long long)e->key,
                                             (unsigned long long)b);
      check_value(e->value, e->key);
      found++;
      key_sum += e->key;
    }
  if (found != nkeys || key_sum != nkeys * (nkeys - 1) / 2)
    bench_fail("%llu entries of %llu keys", (unsigned long long)found, (unsigned long long)nkeys);
}

static double percentile_us(const uint64_t *hist, uint64_t total, double fraction) {
  uint64_t want = (uint64_t)(fraction * (double)total), seen = 0;
  if (want >= total) want = total - 1;
  for (unsigned i = 0; i < HIST_BUCKETS; i++) {
    seen += hist[i];
    if (seen > want) return (double)hist_upper(i) / 1e3;
  }
  return 0;
}

int main(int argc, char **argv) {
  int c;
  while ((c = getopt(argc, argv, "t:m:d:k:u:g:R:")) != -1) {
    switch (c) {
      case 't': nthreads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'm': live_mib = bench_arg_long("-m", optarg, 1, 1 << 20); break;
      case 'd': duration_s = bench_arg_double("-d", optarg, 0.01, 3600); break;
      case 'k': keys_per_request = (int)bench_arg_long("-k", optarg, 1, 1 << 20); break;
      case 'u': update_pct = (int)bench_arg_long("-u", optarg, 0, 100); break;
      case 'g': garbage_bytes = bench_arg_long("-g", optarg, 1, 1 << 26); break;
      case 'R': rate_per_thread = bench_arg_double("-R", optarg, 0, 1e9); break;
      default:
        BENCH_USAGE_EXIT("usage: latency [-t threads] [-m live_mib] [-d seconds] [-k keys_per_request] "
                         "[-u update_pct] [-g garbage_bytes] [-R requests_per_s_per_thread]\n");
    }
  }
  GC_INIT();
  /* An entry, a value and a bucket slot a key: 32 + 64 + 8 bytes. */
  nkeys = ((uint64_t)live_mib << 20) / (sizeof(Entry) + sizeof(Value) + sizeof(Entry *));
  if (nkeys < 16) nkeys = 16;
  nbuckets = nkeys;
  for (int i = 0; i < STRIPES; i++) pthread_mutex_init(&stripes[i], NULL);
  double b0 = bench_now();
  build();
  double build_s = bench_now() - b0;

  Server *servers = (Server *)calloc((size_t)nthreads, sizeof *servers);
  pthread_t *tids = (pthread_t *)calloc((size_t)nthreads, sizeof *tids);
  if (!servers || !tids) exit(3);
  unsigned long gc0 = bench_gc_count();
  double t0 = bench_now();
  for (int i = 0; i < nthreads; i++) {
    servers[i].id = i;
    int e = bench_thread_create(&tids[i], NULL, server, &servers[i]);
    if (e) {
      fprintf(stderr, "latency: thread %d: %s\n", i, strerror(e));
      exit(3);
    }
  }
  while (bench_now() - t0 < duration_s) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  stop = 1;
  for (int i = 0; i < nthreads; i++) bench_thread_join(tids[i], NULL);
  double wall = bench_now() - t0;
  unsigned long collections = bench_gc_count() - gc0;
  check_table();

  static uint64_t hist[HIST_BUCKETS];
  uint64_t requests = 0, total_ns = 0, max_ns = 0;
  for (int i = 0; i < nthreads; i++) {
    requests += servers[i].requests;
    total_ns += servers[i].total_ns;
    if (servers[i].max_ns > max_ns) max_ns = servers[i].max_ns;
    for (unsigned k = 0; k < HIST_BUCKETS; k++) hist[k] += servers[i].hist[k];
  }
  if (!requests) bench_fail("no request served");
  bench_result_begin("latency", nthreads, wall);
  bench_kv("requests", "%llu", (unsigned long long)requests);
  bench_kv("requests_per_s", "%.0f", (double)requests / wall);
  bench_kv("p50_us", "%.1f", requests ? percentile_us(hist, requests, 0.50) : 0);
  bench_kv("p99_us", "%.1f", requests ? percentile_us(hist, requests, 0.99) : 0);
  bench_kv("p999_us", "%.1f", requests ? percentile_us(hist, requests, 0.999) : 0);
  bench_kv("max_us", "%.1f", (double)max_ns / 1e3);
  bench_kv("mean_us", "%.2f", requests ? (double)total_ns / (double)requests / 1e3 : 0);
  bench_kv("keys", "%llu", (unsigned long long)nkeys);
  bench_kv("live_mib", "%ld", live_mib);
  bench_kv("build_s", "%.3f", build_s);
  bench_kv("collections", "%lu", collections);
  free(tids);
  free(servers);
  return bench_result_end();
}
