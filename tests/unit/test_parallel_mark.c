/* Parallel marking on its own: graphs with exactly K reachable objects
 * (wide, deep, one huge array, a long list, a list ending in a tree,
 * layers whose nodes each have about four referrers),
 * marked by every variant of
 * thesis Table 3.2 with 1 to 8 markers (more than this machine's cores).
 * A collection that declared termination while work remained or lost a
 * stolen entry would report fewer than K, and one that marked an object
 * twice with the atomic exchange (SGC_MARK_SET=exchange) more; every
 * reachable object's mark is also checked by a walk of the test's own.
 * With SGC_MARK_STACK_LIMIT=256 the wide shapes overflow the stacks and
 * must come to the same counts by rescanning the heap.  Each shape runs in a fresh child so nothing else is in the
 * heap. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "mark/mark.h"
#include "mark/marker.h"
#include "unit.h"

struct node {
  struct node *left, *right;
};

static void *volatile root; /* the only root of the graph */

static size_t build_wide(void) {
  enum { N = 100000 };
  void **array = GC_malloc(N * sizeof(void *));
  for (size_t i = 0; i < N; i++) array[i] = GC_malloc(16);
  root = array;
  return N + 1;
}

static struct node *tree(int depth) {
  struct node *n = GC_malloc(sizeof *n);
  if (depth > 0) {
    n->left = tree(depth - 1);
    n->right = tree(depth - 1);
  }
  return n;
}
static size_t build_deep(void) {
  root = tree(16);
  return (1u << 17) - 1;
}

/* One 8 MiB object whose words point to 50,000 small objects spread out:
 * only splitting lets several markers share it. */
static size_t build_huge_array(void) {
  enum { WORDS = 1 << 20, N = 50000 };
  void **array = GC_malloc(WORDS * sizeof(void *));
  for (size_t i = 0; i < N; i++) array[(i * 7919) % WORDS] = GC_malloc(32);
  root = array;
  return N + 1;
}

static size_t build_list(void) {
  enum { N = 200000 };
  struct node *head = NULL;
  for (size_t i = 0; i < N; i++) {
    struct node *n = GC_malloc(sizeof *n);
    n->left = head;
    head = n;
  }
  root = head;
  return N;
}

/* After a collection: the reachable objects whose mark bit is clear,
 * found by a walk of our own (a visited set of object starts, not the mark
 * bits).  Catches a bit lost to a racing plain store, which the marked
 * count above cannot see (the marker that set the bit counted it). */
static size_t unmarked_reachable(void) {
  size_t cap = 1u << 21, stack_cap = 1u << 20, sp = 0, unmarked = 0;
  uintptr_t *seen = calloc(cap, sizeof *seen), *stack = malloc(stack_cap * sizeof *stack);
  CHECK(seen && stack, "memory for the walk");
  stack[sp++] = (uintptr_t)root;
  while (sp) {
    uintptr_t w = stack[--sp];
    struct page_header *page;
    uintptr_t base = object_start(w, &page);
    if (!base) continue;
    size_t h = (base >> 4) * 0x9E3779B97F4A7C15ull >> 43;
    while (seen[h] && seen[h] != base) h = (h + 1) & (cap - 1);
    if (seen[h]) continue;
    seen[h] = base;
    if (!mark_bit_test(page, base)) unmarked++;
    size_t size = object_size(page);
    for (uintptr_t *q = (uintptr_t *)base; (uintptr_t)(q + 1) <= base + size; q++)
      if (*q && sp < stack_cap) stack[sp++] = *q;
  }
  free(seen);
  free(stack);
  return unmarked;
}

/* A long list ending in a deep tree: one marker works alone for a long
 * while, the others idle in termination detection, and then it has a
 * tree to share: the idle ones must take part again, and termination
 * must not be declared in between. */
static size_t build_list_then_tree(void) {
  enum { N = 200000 };
  struct node *head = tree(15);
  for (size_t i = 0; i < N; i++) {
    struct node *n = GC_malloc(sizeof *n);
    n->left = head;
    head = n;
  }
  root = head;
  return N + (1u << 16) - 1;
}

/* Layers of nodes, each pointing to four nodes of the next layer, so
 * every node below the first has about four referrers: GC threads reach
 * the same objects from different parents at once, the case where plain
 * mark stores let two of them scan one object (mark.c's set_mark).  The
 * first pointer of node n goes to node n of the next layer, so every node
 * is reachable. */
struct shared_node {
  struct shared_node *next[4];
};

static size_t build_shared(void) {
  enum { LAYERS = 8, WIDTH = 20000, FANOUT = 4 };
  struct shared_node **layer[LAYERS];
  for (size_t l = 0; l < LAYERS; l++) {
    layer[l] = malloc(WIDTH * sizeof *layer[l]);
    CHECK(layer[l] != NULL, "memory for a layer");
    for (size_t n = 0; n < WIDTH; n++) layer[l][n] = GC_malloc(sizeof(struct shared_node));
  }
  for (size_t l = 0; l + 1 < LAYERS; l++)
    for (size_t n = 0; n < WIDTH; n++)
      for (size_t j = 0; j < FANOUT; j++) layer[l][n]->next[j] = layer[l + 1][(n + j * 7919) % WIDTH];
  struct shared_node **first = GC_malloc(WIDTH * sizeof *first);
  memcpy(first, layer[0], WIDTH * sizeof *first);
  root = first;
  for (size_t l = 0; l < LAYERS; l++) free(layer[l]);
  return (size_t)LAYERS * WIDTH + 1;
}

static const char *variant_names[] = {"opt", "simple", "noopt", "no-slo", "no-nsb"};

/* Sets the variant the way mark_init does for SGC_MARK_VARIANT. */
static void use_variant(enum mark_variant v) {
  mark_config.variant = v;
  mark_config.split_bytes = (v == MARK_NOOPT || v == MARK_NO_SLO) ? 0 : 256;
  mark_config.optimistic_bits = v != MARK_NOOPT;
  mark_config.balance = v != MARK_SIMPLE;
  mark_config.nsb = v != MARK_NOOPT && v != MARK_NO_NSB;
}

static void run_shape(const char *name, size_t (*build)(void)) {
  sgc_settings.markers_choice = MARKERS_FIXED; /* exactly the markers asked for */
  GC_disable();
  size_t k = build();
  GC_enable();
  for (int deque = DEQUE_WATERMARK; deque <= DEQUE_CHASE_LEV; deque++)
  for (int v = MARK_OPT; v <= MARK_NO_NSB; v++) {
    if (deque == DEQUE_CHASE_LEV && v == MARK_SIMPLE) continue; /* simple never steals */
    for (unsigned markers = 1; markers <= 8; markers++) {
      use_variant((enum mark_variant)v);
      mark_config.deque = (enum mark_deque)deque;
      sgc_settings.markers = markers;
      for (int rep = 0; rep < 3; rep++) {
        /* Marks set by a plain store (the default) and by the exchange. */
        bool plain = rep != 1;
        mark_config.plain_mark_store = plain;
        GC_gcollect();
        SGC_gc_record_t rec;
        CHECK(SGC_get_gc_records(&rec, 1) == 1, "no record");
        /* With plain stores two GC threads may both count an object (in
         * the shared layers, or a root found twice); never fewer. */
        CHECK(plain ? rec.marked_objects >= k : rec.marked_objects == k,
              "%s, %s, %s, %u markers, %s: marked %lu objects, expected %zu", name,
              deque ? "chase-lev" : "watermark", variant_names[v], markers,
              plain ? "store" : "exchange", (unsigned long)rec.marked_objects, k);
        CHECK(rec.markers == (int)markers, "%s: %d markers ran, asked for %u", name,
              rec.markers, markers);
        size_t lost = unmarked_reachable();
        CHECK(lost == 0, "%s, %s, %s, %u markers: %zu reachable objects unmarked", name,
              deque ? "chase-lev" : "watermark", variant_names[v], markers, lost);
        if (v == MARK_SIMPLE)
          CHECK(rec.steal_successes == 0, "%s: simple variant stole", name);
      }
    }
  }
  /* Under SGC_MARK_STACK_LIMIT (ctest's unit_parallel_mark_overflow) the
   * wide shapes overflow the watermark stacks, so the counts above were
   * reached through rescans of the marked heap (mark/overflow.c). */
  if (mark_config.stack_limit && strcmp(name, "deep") && strstr(name, "list") == NULL)
    CHECK(mark_overflow_rescans() > 0, "%s: a stack limit of %zu entries never overflowed", name,
          mark_config.stack_limit);
}

int main(void) {
  struct {
    const char *name;
    size_t (*build)(void);
  } shapes[] = {{"wide", build_wide},
                {"deep", build_deep},
                {"huge array", build_huge_array},
                {"long list", build_list},
                {"list then tree", build_list_then_tree},
                {"shared", build_shared}};
  int failures = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      GC_init();
      run_shape(shapes[i].name, shapes[i].build);
      printf("%s (rescans %lu): ", shapes[i].name, (unsigned long)mark_overflow_rescans());
      int rc = unit_finish();
      fflush(stdout);
      _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    CHECK(ok, "shape %s failed (status %d)", shapes[i].name, status);
    failures += !ok;
  }
  return unit_finish();
}
