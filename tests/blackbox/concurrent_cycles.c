/* concurrent_cycles: concurrent mode collects about as often as stop mode
 * on the same work (docs/concurrent.md, "Triggering").
 *
 * The program builds a large structure, drops most of it and then
 * allocates short-lived lists while it replaces parts of what it kept:
 * the heap has grown past what the live data and the stop collector's
 * threshold need, so the stop collector collects only once the heap is
 * used up.  A cycle that started from the threshold alone came several
 * times as often, each marking the whole live data again.
 *
 * The parent runs the same work twice in child processes, with
 * SGC_MODE=stop and SGC_MODE=concurrent, and compares the collections
 * each counted (GC_get_gc_no: a cycle counts once, at its finish).
 * Counts, not times: they do not depend on the machine's load, only on
 * how the allocation meets the trigger. */
#include "gc.h"

#include "common.h"
#include "spawn_case.h"

enum {
  NODE_WORDS = 4,           /* 32-byte nodes */
  BUILT = 1280 * 1024,      /* nodes built at first: 40 MiB */
  KEEP_EVERY = 32,          /* of them kept: 1.25 MiB */
  KEPT_SLOTS = BUILT / KEEP_EVERY,
  LIST = 1000,              /* a short-lived list's nodes */
  LISTS = 12 * 1024,        /* 12,288 lists: 375 MiB of them */
};

struct node {
  struct node *next;
  uintptr_t value[NODE_WORDS - 1];
};

static struct node *new_node(struct node *next, uintptr_t v) {
  struct node *n = GC_MALLOC(sizeof *n);
  CHECK(n != NULL, "out of memory");
  n->next = next;
  n->value[0] = v;
  return n;
}

/* The work: returns a checksum so that nothing is optimised away. */
static uintptr_t work(void) {
  struct node **kept = GC_MALLOC(KEPT_SLOTS * sizeof *kept);
  CHECK(kept != NULL, "out of memory");
  /* A large structure first, most of it dropped. */
  struct node *all = NULL;
  for (unsigned i = 0; i < BUILT; i++) all = new_node(all, i);
  unsigned k = 0;
  unsigned at = 0;
  for (struct node *n = all; n && k < KEPT_SLOTS; n = n->next, at++)
    if (at % KEEP_EVERY == 0) kept[k++] = n;
  for (unsigned i = 0; i < k; i++) kept[i]->next = NULL;
  all = NULL;
  /* Short-lived lists; one node of each replaces a kept one. */
  uintptr_t sum = 0, seed = 1;
  for (unsigned l = 0; l < LISTS; l++) {
    struct node *list = NULL;
    for (unsigned i = 0; i < LIST; i++) list = new_node(list, i);
    for (struct node *n = list; n; n = n->next) sum += n->value[0];
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    kept[(seed >> 33) % k] = list;
    list->next = NULL;
  }
  return sum;
}

/* Runs this program as a child in MODE (spawn_case: its stderr read
 * back); returns the collections it counted. */
static unsigned long count_in(const char *mode) {
  static char buf[1 << 16];
  CHECK(setenv("SGC_MODE", mode, 1) == 0);
  int st = spawn_case("child", buf, sizeof buf);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the %s child failed: %s", mode, buf);
  const char *figures = strstr(buf, "figures:");
  unsigned long collections = 0;
  int incremental = -1;
  CHECK(figures && sscanf(figures, "figures: %lu %d", &collections, &incremental) == 2,
        "the %s child printed no counts: %s", mode, buf);
  CHECK(incremental == (strcmp(mode, "concurrent") == 0), "the %s child ran in the wrong mode", mode);
  return collections;
}

int main(int argc, char **argv) {
  t_test_name = "concurrent_cycles";
  if (argc == 2 && strcmp(argv[1], "child") == 0) {
    GC_INIT();
    uintptr_t sum = work();
    CHECK(sum != 0, "no work");
    fprintf(stderr, "figures: %lu %d\n", (unsigned long)GC_get_gc_no(), GC_is_incremental_mode() ? 1 : 0);
    return 0;
  }
  unsigned long stop = count_in("stop");
  unsigned long concurrent = count_in("concurrent");
  CHECK(stop > 0, "the stop child counted no collection");
  printf("collections: stop %lu, concurrent %lu\n", stop, concurrent);
  /* Cycles end early when their marking converges before the heap is
   * used up; a few more than the stop collector's are fine, twice as
   * many are not. */
  CHECK(concurrent <= stop + stop / 2 + 2, "concurrent mode collected %lu times, stop mode %lu",
        concurrent, stop);
  return 0;
}
