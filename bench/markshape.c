/*
 * markshape: marking on heap shapes where parallel markers have nothing to
 * share (bdwgc issues #320, #453, #619: more markers, slower marking).
 *
 *   -s list : one linked list of -n (1,000,000) 16-byte nodes;
 *   -s tiny : -n (2,000) small objects, a heap far below one page pool;
 *   -s wide : an array of -n objects (a shape that does parallelise, for
 *             contrast);
 *   -s tree : a complete binary tree of at least -n nodes, each node's two
 *             children allocated together before either is filled in
 *             (gcbench's top-down construction; nodes of 2 pointers and 2
 *             words).  It parallelises too, with the marking order of a
 *             tree; tools/dev/mark_interference.py compares it with two
 *             processes.
 *   -s proc : the same tree, its nodes of a kind of their own whose mark
 *             procedure pushes the two children (GC_new_kind, GC_new_proc,
 *             GC_MARK_AND_PUSH): how a language runtime marks the objects
 *             whose layout it knows.
 * -H MiB first grows the heap by that much (GC_expand_hp), so that a small
 * shape sits in a large, mostly free heap: what a collection costs then
 * should follow the live data, not the heap's size.
 * The shape is built once, then -c (20) explicit collections run.  The
 * runner reads each collection's mark time from sgc's trace or bdwgc's
 * GC_PRINT_STATS; this program reports the mean GC_gcollect() time too.
 * Check: after the collections every node is intact (its stored index and
 * the list order, or the array contents).
 *
 * Flags: -s shape  -n objects  -c collections  -H MiB  -t (ignored: 1 thread)
 *        -w (tree only: rewrite a word of every node before each collection)
 *        -g gaps (tree only: that many dead nodes after each live one)
 */
#include "bench_common.h"

#include <stdbool.h>

#include "gc/gc_mark.h"

typedef struct cell {
  struct cell *next;
  uint64_t value;
} cell;

typedef struct tree_node {
  struct tree_node *left, *right;
  uint64_t index, check; /* heap numbering: root 1, children 2i and 2i + 1 */
} tree_node;

static cell *volatile list_head;
static cell **volatile array;
static tree_node *volatile tree_root;
static int tree_depth;     /* levels below the root */
static uint64_t tree_salt; /* -w: what the last rewrite XORed into every check word */
static long tree_gaps;     /* -g: dead nodes allocated after each live one */
static tree_node *volatile tree_gap_sink;

static uint64_t tree_check(uint64_t index) { return index * 0x9e3779b97f4a7c15u; }

/* -s proc: the nodes' kind, or -1 (GC_MALLOC). */
static int proc_kind = -1;

/* The children, as a runtime's procedure marks the fields it knows (a
 * free node of the kind holds its free-list link in `left`: pushing it
 * only keeps a free node a while). */
static struct GC_ms_entry *mark_tree_node(GC_word *addr, struct GC_ms_entry *msp,
                                          struct GC_ms_entry *limit, GC_word env) {
  (void)env;
  tree_node *t = (tree_node *)addr;
  msp = GC_MARK_AND_PUSH(t->left, msp, limit, (void **)&t->left);
  return GC_MARK_AND_PUSH(t->right, msp, limit, (void **)&t->right);
}

static void proc_kind_new(void) {
  unsigned proc = GC_new_proc(mark_tree_node);
  proc_kind = (int)GC_new_kind(GC_new_free_list(), GC_MAKE_PROC(proc, 0), 0, 1);
}

static tree_node *tree_node_new(uint64_t index) {
  tree_node *t = proc_kind < 0 ? (tree_node *)GC_MALLOC(sizeof *t)
                               : (tree_node *)GC_generic_malloc(sizeof *t, proc_kind);
  t->index = index;
  t->check = tree_check(index);
  /* -g: garbage between the live nodes, so that the live tree is spread
   * over (gaps + 1) times the pages, as a running program's survivors sit
   * among its dead objects. */
  for (long g = 0; g < tree_gaps; g++) tree_gap_sink = (tree_node *)GC_MALLOC(sizeof *t);
  return t;
}

static void tree_populate(tree_node *t, int depth) {
  if (depth == 0) return;
  t->left = tree_node_new(2 * t->index);
  t->right = tree_node_new(2 * t->index + 1);
  tree_populate(t->left, depth - 1);
  tree_populate(t->right, depth - 1);
}

/* A mutator's writes between collections (-w): every node's check word
 * rewritten, so that the collection finds the tree's lines dirty in this
 * thread's caches, as a program's collections find what it just wrote. */
static void tree_rewrite(tree_node *t) {
  for (; t; t = t->right) {
    t->check = tree_check(t->index) ^ tree_salt;
    tree_rewrite(t->left);
  }
}

/* Nodes found under T, or -1 at the first one that is wrong. */
static long tree_verify(const tree_node *t, uint64_t index, int depth) {
  if (!t || t->index != index || t->check != (tree_check(index) ^ tree_salt)) return -1;
  if (depth == 0) return t->left || t->right ? -1 : 1;
  long l = tree_verify(t->left, 2 * index, depth - 1);
  long r = l < 0 ? -1 : tree_verify(t->right, 2 * index + 1, depth - 1);
  return r < 0 ? -1 : 1 + l + r;
}

static void build(const char *shape, long n) {
  if (!strcmp(shape, "list") || !strcmp(shape, "tiny")) {
    cell *head = NULL;
    for (long i = 0; i < n; i++) {
      cell *c = (cell *)GC_MALLOC(sizeof *c);
      c->next = head;
      c->value = (uint64_t)i * 2654435761u;
      head = c;
    }
    list_head = head;
  } else if (!strcmp(shape, "tree") || !strcmp(shape, "proc")) {
    if (!strcmp(shape, "proc")) proc_kind_new();
    while ((2L << tree_depth) - 1 < n) tree_depth++;
    tree_node *root = tree_node_new(1);
    tree_populate(root, tree_depth);
    tree_root = root;
  } else {
    cell **a = (cell **)GC_MALLOC((size_t)n * sizeof *a);
    for (long i = 0; i < n; i++) {
      a[i] = (cell *)GC_MALLOC(sizeof(cell));
      a[i]->value = (uint64_t)i * 2654435761u;
    }
    array = a;
  }
}

static void verify(const char *shape, long n) {
  if (list_head) {
    long i = n;
    for (cell *c = list_head; c; c = c->next) {
      i--;
      if (c->value != (uint64_t)i * 2654435761u) {
        bench_fail("list node %ld corrupted", i);
        return;
      }
    }
    if (i != 0) bench_fail("list has %ld nodes, expected %ld", n - i, n);
  } else if (tree_root) {
    long found = tree_verify(tree_root, 1, tree_depth);
    if (found != (2L << tree_depth) - 1) bench_fail("tree of depth %d corrupted", tree_depth);
  } else {
    for (long i = 0; i < n; i++)
      if (!array[i] || array[i]->value != (uint64_t)i * 2654435761u) {
        bench_fail("array element %ld corrupted", i);
        return;
      }
  }
  (void)shape;
}

int main(int argc, char **argv) {
  const char *shape = "list";
  long n = -1, collections = 20, grow_mib = 0;
  bool rewrite = false;
  int opt;
  while ((opt = getopt(argc, argv, "s:n:c:H:t:wg:")) != -1) {
    switch (opt) {
    case 's': shape = optarg; break;
    case 'n': n = bench_arg_long("-n", optarg, 1, 100000000); break;
    case 'c': collections = bench_arg_long("-c", optarg, 1, 100000); break;
    case 'H': grow_mib = bench_arg_long("-H", optarg, 0, 1 << 20); break;
    case 't': break;
    case 'w': rewrite = true; break;
    case 'g': tree_gaps = bench_arg_long("-g", optarg, 0, 64); break;
    default:
      fprintf(stderr, "usage: markshape [-s list|tiny|wide|tree|proc] [-n objects] [-c collections] "
                      "[-H MiB] [-w] [-g gaps]\n");
      return 2;
    }
  }
  if (strcmp(shape, "list") && strcmp(shape, "tiny") && strcmp(shape, "wide") &&
      strcmp(shape, "tree") && strcmp(shape, "proc")) {
    fprintf(stderr, "markshape: unknown shape %s\n", shape);
    return 2;
  }
  if (n < 0) n = !strcmp(shape, "tiny") ? 2000 : 1000000;
  GC_INIT();
  if (grow_mib && !GC_expand_hp((size_t)grow_mib << 20)) {
    fprintf(stderr, "markshape: cannot grow the heap by %ld MiB\n", grow_mib);
    return 3;
  }
  build(shape, n);
  if (tree_root) n = (2L << tree_depth) - 1; /* the nodes built */
  double start = bench_now();
  for (long i = 0; i < collections; i++) {
    if (rewrite && tree_root) {
      tree_salt = (uint64_t)i + 1;
      tree_rewrite(tree_root);
    }
    GC_gcollect();
  }
  double wall = bench_now() - start;
  verify(shape, n);
  bench_result_begin("markshape", 1, wall);
  bench_kv("shape", "%s", shape);
  bench_kv("objects", "%ld", n);
  bench_kv("collections", "%ld", collections);
  bench_kv("grown_mib", "%ld", grow_mib);
  bench_kv("collect_ms", "%.4f", wall * 1e3 / (double)collections);
  bench_kv("mops", "%.3f", (double)n * (double)collections / wall / 1e6);
  return bench_result_end();
}
