/*
 * gcbench: the classic GC benchmark (Ellis, Kovac, Boehm) in its
 * multi-threaded form (papers/003): each of the -t client threads performs
 * the whole benchmark on the one shared heap.
 *
 * Per client thread:
 *   1. build a "stretch" tree of depth S (18) bottom-up and drop it;
 *   2. build a long-lived tree of depth L (16) top-down and keep it;
 *   3. allocate a long-lived atomic array of A (500,000) doubles;
 *   4. for depth d = m (4), m+2, ..., M (16): build and drop
 *      N(d) = 2 * size(S) / size(d) trees of depth d top-down, then N(d)
 *      trees bottom-up (size(d) = 2^(d+1) - 1 nodes);
 *   5. the long-lived tree and array must still be intact.
 *
 * Check: the node count of the stretch tree, of the first and last tree of
 * every depth and both construction orders, and of the long-lived tree
 * equals size(d); a value stored in every node matches its depth; the
 * array holds its known values.
 *
 * Flags: -t threads (1)  -S stretch depth (18)  -L long-lived depth (16)
 *        -A array doubles (500000)  -m min depth (4)  -M max depth (16)
 *        -r repetitions of steps 4 per thread (1)
 */
#include "bench_common.h"

typedef struct Node {
  struct Node *left;
  struct Node *right;
  int32_t i, j;
} Node;

static int stretch_depth = 18, long_depth = 16, min_depth = 4, max_depth = 16;
static long array_size = 500000;
static int reps = 1;

static long tree_size(int d) { return (1L << (d + 1)) - 1; }

static long num_iters(int d) { return 2 * tree_size(stretch_depth) / tree_size(d); }

static Node *new_node(Node *l, Node *r, int depth) {
  Node *n = (Node *)GC_MALLOC(sizeof(Node));
  if (!n) {
    fprintf(stderr, "gcbench: out of memory\n");
    exit(3);
  }
  n->left = l;
  n->right = r;
  n->i = depth;
  n->j = ~depth;
  return n;
}

/* Top-down: the node exists, give it children and recurse. */
static void populate(int depth, Node *n) {
  if (depth <= 0) return;
  n->left = new_node(NULL, NULL, depth - 1);
  n->right = new_node(NULL, NULL, depth - 1);
  populate(depth - 1, n->left);
  populate(depth - 1, n->right);
}

/* Bottom-up: children first, then the parent. */
static Node *make_tree(int depth) {
  if (depth <= 0) return new_node(NULL, NULL, 0);
  Node *l = make_tree(depth - 1);
  Node *r = make_tree(depth - 1);
  return new_node(l, r, depth);
}

/* Count nodes; -1 if the structure is not a perfect tree of this depth
 * with the expected per-node values. */
static long check_tree(const Node *n, int depth) {
  if (!n || n->i != depth || n->j != ~depth) return -1;
  if (depth == 0) return (n->left || n->right) ? -1 : 1;
  long a = check_tree(n->left, depth - 1);
  long b = check_tree(n->right, depth - 1);
  if (a < 0 || b < 0) return -1;
  return a + b + 1;
}

typedef struct {
  int id;
  long nodes;       /* nodes allocated by this client */
  int failed;
} Client;

static void verify(Client *c, const Node *t, int depth, const char *what) {
  long got = check_tree(t, depth);
  if (got != tree_size(depth)) {
    bench_fail("client %d: %s tree of depth %d has %ld nodes, expected %ld", c->id,
               what, depth, got, tree_size(depth));
    c->failed = 1;
  }
}

static void time_construction(Client *c, int depth) {
  long iters = num_iters(depth);
  for (long k = 0; k < iters; k++) {
    Node *t = new_node(NULL, NULL, depth);
    populate(depth, t);
    if (k == 0 || k == iters - 1) verify(c, t, depth, "top-down");
  }
  for (long k = 0; k < iters; k++) {
    Node *t = make_tree(depth);
    if (k == 0 || k == iters - 1) verify(c, t, depth, "bottom-up");
  }
  c->nodes += 2 * iters * tree_size(depth);
}

static void *client(void *arg) {
  Client *c = (Client *)arg;
  /* 1. stretch the heap */
  {
    Node *t = make_tree(stretch_depth);
    verify(c, t, stretch_depth, "stretch");
    c->nodes += tree_size(stretch_depth);
  }
  /* 2. long-lived tree */
  Node *volatile long_lived = new_node(NULL, NULL, long_depth);
  populate(long_depth, long_lived);
  c->nodes += tree_size(long_depth);
  /* 3. long-lived array of doubles */
  double *volatile array = (double *)bench_xmalloc_atomic(sizeof(double) * (size_t)array_size);
  for (long i = 0; i < array_size / 2; i++) array[i] = 1.0 / (double)(i + 1);
  for (long i = array_size / 2; i < array_size; i++) array[i] = (double)i;
  /* 4. short-lived trees */
  for (int r = 0; r < reps; r++)
    for (int d = min_depth; d <= max_depth; d += 2) time_construction(c, d);
  /* 5. the long-lived data must have survived */
  verify(c, long_lived, long_depth, "long-lived");
  for (long i = 0; i < array_size; i++) {
    double want = i < array_size / 2 ? 1.0 / (double)(i + 1) : (double)i;
    if (array[i] != want) {
      bench_fail("client %d: array[%ld] = %g, expected %g", c->id, i, array[i], want);
      c->failed = 1;
      break;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1, opt;
  while ((opt = getopt(argc, argv, "t:S:L:A:m:M:r:h")) != -1) {
    switch (opt) {
      case 't': threads = (int)bench_arg_long("-t", optarg, 1, 4096); break;
      case 'S': stretch_depth = (int)bench_arg_long("-S", optarg, 1, 28); break;
      case 'L': long_depth = (int)bench_arg_long("-L", optarg, 0, 28); break;
      case 'A': array_size = bench_arg_long("-A", optarg, 1, 1L << 30); break;
      case 'm': min_depth = (int)bench_arg_long("-m", optarg, 0, 28); break;
      case 'M': max_depth = (int)bench_arg_long("-M", optarg, 0, 28); break;
      case 'r': reps = (int)bench_arg_long("-r", optarg, 1, 1000); break;
      default:
        BENCH_USAGE_EXIT(
            "usage: gcbench [-t threads] [-S stretch_depth] [-L long_lived_depth]\n"
            "               [-A array_doubles] [-m min_depth] [-M max_depth] [-r reps]\n");
    }
  }
  if (max_depth > stretch_depth) max_depth = stretch_depth;
  GC_INIT();
  bench_marked_init();

  Client *clients = (Client *)bench_xmalloc(sizeof(Client) * (size_t)threads);
  memset(clients, 0, sizeof(Client) * (size_t)threads);
  for (int i = 0; i < threads; i++) clients[i].id = i;

  double t0 = bench_now();
  if (threads == 1)
    client(&clients[0]); /* the classic single-threaded form */
  else
    bench_run_threads(threads, client, clients, sizeof(Client));
  double wall = bench_now() - t0;

  long nodes = 0;
  for (int i = 0; i < threads; i++) nodes += clients[i].nodes;
  bench_result_begin("gcbench", threads, wall);
  bench_kv("stretch_depth", "%d", stretch_depth);
  bench_kv("long_depth", "%d", long_depth);
  bench_kv("max_depth", "%d", max_depth);
  bench_kv("nodes", "%ld", nodes);
  bench_kv("mallocs_per_s", "%.0f", (double)nodes / wall);
  bench_kv("mops", "%.3f", (double)nodes / wall / 1e6);
  /* thread-independent fingerprint: the work of one client */
  bench_kv("hash", "%016llx", (unsigned long long)bench_mix(0, (uint64_t)clients[0].nodes));
  return bench_result_end();
}
