/*
 * ceiling: what this machine gives T threads that share no work and take no
 * lock, measured next to the collector in the same runner invocation.  A
 * parallel marker or allocator cannot scale better than these loops do on
 * the same CPUs at the same moment, so the report quotes their speed-up
 * beside the targets' (on a VM whose second vCPU is sometimes a sibling
 * hyperthread or busy with a neighbour, the ceiling is well below T).
 *
 *   -m compute : an integer mixing loop in registers, no memory traffic;
 *   -m chase   : dependent loads along one random cycle through -n 64-byte
 *                nodes (default 512 Ki nodes = 32 MiB, larger than the
 *                caches), each thread starting at its own point of the cycle:
 *                the access pattern of marking a heap, one cache miss per
 *                step, the nodes read-only and shared like a heap is;
 *   -m stream  : sequential 8-byte reads of a shared -n-node array (memory
 *                bandwidth, the access pattern of sweeping and scanning),
 *                each thread from its own point of the array.
 *
 * Every thread does the same -s steps (so T threads do T times the work of
 * one); mops = all threads' steps / wall / 1e6, and the speed-up of T
 * threads is mops(T) / mops(1).  Built as bench-ceiling-malloc only: it
 * allocates nothing while timed.
 * Checks: the cycle is one cycle through every node; each thread ends
 * where the cycle's order says S steps from its start; compute threads
 * (same seed) agree; stream sums equal the closed form.
 *
 * Flags: -m mode  -t threads (1)  -n nodes  -s steps per thread
 */
#include "bench_common.h"

enum mode { MODE_COMPUTE, MODE_CHASE, MODE_STREAM };

/* One cache line per node so that each chase step is its own miss. */
typedef struct node {
  struct node *next;
  uint64_t index;
  char pad[48];
} node;

typedef struct {
  enum mode mode;
  long steps;
  node *nodes;
  long n;
  long start; /* position in the cycle's order (chase) */
  uint64_t result;
} worker;

static void *run_worker(void *arg) {
  worker *w = (worker *)arg;
  if (w->mode == MODE_COMPUTE) {
    uint64_t x = 0x243f6a8885a308d3ULL;
    for (long i = 0; i < w->steps; i++) x = bench_mix(x, (uint64_t)i);
    w->result = x;
  } else if (w->mode == MODE_CHASE) {
    node *p = &w->nodes[w->start];
    for (long i = 0; i < w->steps; i++) p = p->next;
    w->result = p->index;
  } else {
    /* Read each node's index word: one 8-byte load per 64-byte line keeps
     * the loop bandwidth-bound rather than bound by adds. */
    uint64_t sum = 0;
    long k = w->start;
    for (long i = 0; i < w->steps; i++) {
      sum += w->nodes[k].index;
      if (++k == w->n) k = 0;
    }
    w->result = sum;
  }
  return NULL;
}

/* The sum of the first m indices read by a stream that starts at node 0 and
 * wraps around n nodes whose index words are 0..n-1. */
static uint64_t stream_prefix_sum(uint64_t m, uint64_t n) {
  uint64_t laps = m / n, rest = m % n;
  return laps * (n * (n - 1) / 2) + (rest ? rest * (rest - 1) / 2 : 0);
}

/* A random cycle through all n nodes: order[k] is the node visited at
 * step k from order[0]. */
static long *build_cycle(node *nodes, long n) {
  long *order = malloc((size_t)n * sizeof *order);
  if (!order) {
    perror("malloc");
    exit(3);
  }
  bench_rng rng = {0x6a09e667f3bcc909ULL};
  for (long i = 0; i < n; i++) order[i] = i;
  for (long i = n - 1; i > 0; i--) {
    long j = (long)bench_rng_below(&rng, (uint32_t)(i + 1));
    long t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (long k = 0; k < n; k++) {
    nodes[order[k]].index = (uint64_t)order[k];
    nodes[order[k]].next = &nodes[order[(k + 1) % n]];
  }
  return order;
}

static void check_cycle(const node *nodes, long n) {
  const node *p = &nodes[0];
  for (long k = 1; k < n; k++) {
    p = p->next;
    if (p == &nodes[0]) {
      bench_fail("cycle closes after %ld of %ld nodes", k, n);
      return;
    }
  }
  if (p->next != &nodes[0]) bench_fail("cycle does not close after %ld nodes", n);
}

int main(int argc, char **argv) {
  const char *mode_name = "chase";
  long threads = 1, n = 512 * 1024, steps = -1;
  int opt;
  while ((opt = getopt(argc, argv, "m:t:n:s:")) != -1) {
    switch (opt) {
    case 'm': mode_name = optarg; break;
    case 't': threads = bench_arg_long("-t", optarg, 1, 1024); break;
    case 'n': n = bench_arg_long("-n", optarg, 2, 1L << 26); break;
    case 's': steps = bench_arg_long("-s", optarg, 1, 1L << 40); break;
    default:
      fprintf(stderr, "usage: ceiling [-m compute|chase|stream] [-t threads] [-n nodes] "
                      "[-s steps per thread]\n");
      return 2;
    }
  }
  enum mode mode;
  if (!strcmp(mode_name, "compute")) mode = MODE_COMPUTE;
  else if (!strcmp(mode_name, "chase")) mode = MODE_CHASE;
  else if (!strcmp(mode_name, "stream")) mode = MODE_STREAM;
  else {
    fprintf(stderr, "ceiling: unknown mode %s\n", mode_name);
    return 2;
  }
  if (steps < 0) /* about 0.2-0.4 s for one thread on a 2020s x86 core */
    steps = mode == MODE_COMPUTE ? 100000000L : mode == MODE_CHASE ? 2000000L : 100000000L;

  node *nodes = NULL;
  long *order = NULL;
  if (mode != MODE_COMPUTE) {
    nodes = aligned_alloc(64, (size_t)n * sizeof *nodes);
    if (!nodes) {
      perror("aligned_alloc");
      return 3;
    }
    memset(nodes, 0, (size_t)n * sizeof *nodes);
    order = build_cycle(nodes, n);
    check_cycle(nodes, n);
  }
  worker *w = calloc((size_t)threads, sizeof *w);
  if (!w) {
    perror("calloc");
    return 3;
  }
  for (long i = 0; i < threads; i++)
    w[i] = (worker){mode, steps, nodes, n, i * (n / threads), 0};
  if (mode == MODE_CHASE)
    for (long i = 0; i < threads; i++) w[i].start = order[w[i].start];

  double start = bench_now();
  bench_run_threads((int)threads, run_worker, w, sizeof *w);
  double wall = bench_now() - start;

  uint64_t hash = 0;
  for (long i = 0; i < threads; i++) {
    uint64_t want = w[0].result;
    if (mode == MODE_CHASE) {
      long from = i * (n / threads);
      want = (uint64_t)order[(long)(((uint64_t)from + (uint64_t)steps) % (uint64_t)n)];
    } else if (mode == MODE_STREAM) {
      uint64_t from = (uint64_t)(i * (n / threads));
      want = stream_prefix_sum(from + (uint64_t)steps, (uint64_t)n) -
             stream_prefix_sum(from, (uint64_t)n);
    }
    if (w[i].result != want) {
      bench_fail("thread %ld: result %llu, expected %llu", i, (unsigned long long)w[i].result,
                 (unsigned long long)want);
      break;
    }
    hash = bench_mix(hash, w[i].result);
  }
  bench_result_begin("ceiling", (int)threads, wall);
  bench_kv("mode", "%s", mode_name);
  bench_kv("steps", "%ld", steps);
  bench_kv("ns_per_step", "%.3f", wall * 1e9 / (double)steps);
  bench_kv("mops", "%.3f", (double)steps * (double)threads / wall / 1e6);
  free(w);
  free(order);
  free(nodes);
  return bench_result_end();
}
