/*
 * ceiling: what this machine gives T threads that share no work and take no
 * lock, measured next to the collector in the same runner invocation.  A
 * parallel marker or allocator is not expected to scale better than these
 * loops do on the same CPUs at the same moment, so the report quotes their
 * speed-up beside the targets' (on a VM whose second vCPU is sometimes a
 * sibling hyperthread or busy with a neighbour, that is well below T).
 *
 * -s steps in all are split evenly among the T threads, each working on its
 * own part, as parallel markers split one heap:
 *   -m compute : an integer mixing loop in registers, no memory traffic;
 *   -m chase   : dependent loads along one random cycle through -n 64-byte
 *                nodes (default 2 Mi nodes = 128 MiB, four times this
 *                machine's L3), thread i following the i-th stretch of the
 *                cycle, every node visited once in all: one cache and TLB
 *                miss per step with no reuse, the access pattern of marking
 *                a heap (so -s may not exceed -n);
 *   -m gather  : chase, but each thread follows GATHER_LANES stretches of
 *                its part of the cycle at once, one step of each in turn:
 *                that many independent misses in flight, as the marker's
 *                prefetch window keeps (src/mark/mark.c), so this is the
 *                ceiling of marking when latency is hidden and the memory
 *                system's concurrency is what two threads share;
 *   -m stream  : sequential 8-byte reads, one per 64-byte node, thread i
 *                going round and round the i-th slice of the nodes (memory
 *                bandwidth, the access pattern of sweeping and scanning).
 * mops = steps / wall / 1e6, and the speed-up of T threads is
 * mops(T) / mops(1).  Built as bench-ceiling-malloc only: it allocates
 * nothing while timed.
 * Checks: the cycle is one cycle through every node; each chasing thread
 * ends where the cycle's order says; compute threads agree with a
 * recomputation; stream sums equal the closed form.
 *
 * Flags: -m mode  -t threads (1)  -n nodes  -s steps in all
 */
#include "bench_common.h"

enum mode { MODE_COMPUTE, MODE_CHASE, MODE_GATHER, MODE_STREAM };

/* The marker's prefetch window (PREFETCH_DEPTH in src/mark/mark.c). */
enum { GATHER_LANES = 16 };

/* One cache line per node so that each chase step is its own miss. */
typedef struct node {
  struct node *next;
  uint64_t index;
  char pad[48];
} node;

typedef struct {
  enum mode mode;
  long steps; /* this thread's share */
  node *nodes;
  long lo, hi;       /* stream: its slice of the nodes */
  long start_node;   /* chase: where its stretch of the cycle begins */
  long end_position; /* chase: the position in the cycle's order it reaches */
  /* gather: each lane's first node, steps and the position it reaches */
  long lane_start[GATHER_LANES], lane_steps[GATHER_LANES], lane_end[GATHER_LANES];
  uint64_t result;
} worker;

static uint64_t compute_loop(long steps) {
  uint64_t x = 0x243f6a8885a308d3ULL;
  for (long i = 0; i < steps; i++) x = bench_mix(x, (uint64_t)i);
  return x;
}

static void *run_worker(void *arg) {
  worker *w = (worker *)arg;
  if (w->mode == MODE_COMPUTE) {
    w->result = compute_loop(w->steps);
  } else if (w->mode == MODE_CHASE) {
    node *p = &w->nodes[w->start_node];
    for (long i = 0; i < w->steps; i++) p = p->next;
    w->result = p->index;
  } else if (w->mode == MODE_GATHER) {
    node *p[GATHER_LANES];
    long common = w->lane_steps[GATHER_LANES - 1]; /* the fewest: later lanes get no extra */
    for (int j = 0; j < GATHER_LANES; j++) p[j] = &w->nodes[w->lane_start[j]];
    for (long i = 0; i < common; i++)
      for (int j = 0; j < GATHER_LANES; j++) p[j] = p[j]->next;
    uint64_t h = 0;
    for (int j = 0; j < GATHER_LANES; j++) {
      for (long i = common; i < w->lane_steps[j]; i++) p[j] = p[j]->next;
      h = bench_mix(h, p[j]->index);
    }
    w->result = h;
  } else {
    /* One 8-byte load per 64-byte line keeps the loop bound by memory
     * bandwidth rather than by adds. */
    uint64_t sum = 0;
    long k = w->lo;
    for (long i = 0; i < w->steps; i++) {
      sum += w->nodes[k].index;
      if (++k == w->hi) k = w->lo;
    }
    w->result = sum;
  }
  return NULL;
}

/* The sum of the index words read by m steps of a stream going round the
 * nodes [lo, hi), whose index words are their positions. */
static uint64_t stream_sum(uint64_t lo, uint64_t hi, uint64_t m) {
  uint64_t len = hi - lo, laps = m / len, rest = m % len;
  uint64_t lap = len * lo + len * (len - 1) / 2;
  return laps * lap + rest * lo + (rest ? rest * (rest - 1) / 2 : 0);
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
  long threads = 1, n = 2L << 20, steps = -1;
  int opt;
  while ((opt = getopt(argc, argv, "m:t:n:s:")) != -1) {
    switch (opt) {
    case 'm': mode_name = optarg; break;
    case 't': threads = bench_arg_long("-t", optarg, 1, 1024); break;
    case 'n': n = bench_arg_long("-n", optarg, 2, 1L << 26); break;
    case 's': steps = bench_arg_long("-s", optarg, 1, 1L << 40); break;
    default:
      fprintf(stderr, "usage: ceiling [-m compute|chase|gather|stream] [-t threads] [-n nodes] "
                      "[-s steps in all]\n");
      return 2;
    }
  }
  enum mode mode;
  if (!strcmp(mode_name, "compute")) mode = MODE_COMPUTE;
  else if (!strcmp(mode_name, "chase")) mode = MODE_CHASE;
  else if (!strcmp(mode_name, "gather")) mode = MODE_GATHER;
  else if (!strcmp(mode_name, "stream")) mode = MODE_STREAM;
  else {
    fprintf(stderr, "ceiling: unknown mode %s\n", mode_name);
    return 2;
  }
  if (steps < 0) /* about 0.2-0.4 s for one thread on a 2020s x86 core */
    steps = mode == MODE_CHASE ? n : mode == MODE_GATHER ? 8 * n : 100000000L;
  /* Gather goes round the cycle: 14 times as fast as chase, one pass is
   * too short a run, and the cycle is four times the L3, so a node comes
   * back only after the cache has turned over. */
  if (mode == MODE_CHASE && steps > n) {
    fprintf(stderr, "ceiling: -s %ld exceeds -n %ld: chase visits each node at most once\n",
            steps, n);
    return 2;
  }
  if (threads > n) {
    fprintf(stderr, "ceiling: more threads (%ld) than nodes (%ld)\n", threads, n);
    return 2;
  }

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
  /* Thread i gets steps/T steps (the first steps%T threads one more):
   * stream, the i-th of T equal slices of the nodes; chase, the stretch of
   * the cycle that starts where thread i-1's ends. */
  long at = 0;
  for (long i = 0; i < threads; i++) {
    long share = steps / threads + (i < steps % threads);
    long lo = i * (n / threads), hi = i == threads - 1 ? n : (i + 1) * (n / threads);
    w[i] = (worker){.mode = mode, .steps = share, .nodes = nodes, .lo = lo, .hi = hi};
    if (mode == MODE_CHASE) {
      w[i].start_node = order[at];
      at += share;
      w[i].end_position = at;
    } else if (mode == MODE_GATHER) {
      /* The stretch in GATHER_LANES consecutive pieces, the first ones a
       * step longer. */
      for (int j = 0; j < GATHER_LANES; j++) {
        long piece = share / GATHER_LANES + (j < share % GATHER_LANES);
        w[i].lane_start[j] = order[at % n];
        w[i].lane_steps[j] = piece;
        at += piece;
        w[i].lane_end[j] = at;
      }
    }
  }

  double start = bench_now();
  bench_run_threads((int)threads, run_worker, w, sizeof *w);
  double wall = bench_now() - start;

  uint64_t hash = 0;
  for (long i = 0; i < threads; i++) {
    uint64_t want;
    if (mode == MODE_COMPUTE) want = compute_loop(w[i].steps);
    else if (mode == MODE_CHASE) want = (uint64_t)order[w[i].end_position % n];
    else if (mode == MODE_GATHER) {
      want = 0;
      for (int j = 0; j < GATHER_LANES; j++)
        want = bench_mix(want, (uint64_t)order[w[i].lane_end[j] % n]);
    }
    else want = stream_sum((uint64_t)w[i].lo, (uint64_t)w[i].hi, (uint64_t)w[i].steps);
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
  bench_kv("ns_per_step", "%.3f", wall * 1e9 * (double)threads / (double)steps);
  bench_kv("mops", "%.3f", (double)steps / wall / 1e6);
  bench_kv("result", "%016llx", (unsigned long long)hash);
  free(w);
  free(order);
  free(nodes);
  return bench_result_end();
}
