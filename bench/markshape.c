/*
 * markshape: marking on heap shapes where parallel markers have nothing to
 * share (bdwgc issues #320, #453, #619: more markers, slower marking).
 *
 *   -s list : one linked list of -n (1,000,000) 16-byte nodes;
 *   -s tiny : -n (2,000) small objects, a heap far below one page pool;
 *   -s wide : an array of -n objects (a shape that does parallelise, for
 *             contrast).
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
 */
#include "bench_common.h"

typedef struct cell {
  struct cell *next;
  uint64_t value;
} cell;

static cell *volatile list_head;
static cell **volatile array;

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
  int opt;
  while ((opt = getopt(argc, argv, "s:n:c:H:t:")) != -1) {
    switch (opt) {
    case 's': shape = optarg; break;
    case 'n': n = bench_arg_long("-n", optarg, 1, 100000000); break;
    case 'c': collections = bench_arg_long("-c", optarg, 1, 100000); break;
    case 'H': grow_mib = bench_arg_long("-H", optarg, 0, 1 << 20); break;
    case 't': break;
    default:
      fprintf(stderr, "usage: markshape [-s list|tiny|wide] [-n objects] [-c collections] "
                      "[-H MiB]\n");
      return 2;
    }
  }
  if (strcmp(shape, "list") && strcmp(shape, "tiny") && strcmp(shape, "wide")) {
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
  double start = bench_now();
  for (long i = 0; i < collections; i++) GC_gcollect();
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
