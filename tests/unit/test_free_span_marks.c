/* The start of a collection steps over free spans and large objects' tail
 * pages (mark_begin), which is right only while pages in the free-page
 * pool carry no mark bits (page_pool_put clears them).  Checked here:
 *   1. after marked objects die -- swept, or freed with GC_free while
 *      their mark bit was set -- no free page has a mark bit;
 *   2. pages reused after that hold objects that die when dropped (a stale
 *      mark would keep them forever: weak links tell), and whose pages the
 *      sweep gives back;
 *   3. an uncollectable object lying after a free span is still found as
 *      a root, so what only it references survives. */
#include <string.h>

#include "alloc/page_store.h"
#include "common.h"
#include "heap/heap.h"
#include "unit.h"

enum { OBJECTS = 64, LARGE_BYTES = 16 * 4096 };

static void *volatile keep[OBJECTS];

static __attribute__((noinline)) void clear_stack(void) {
  volatile char junk[16384];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = 0;
}

/* Free pages with a mark bit set, and free pages in all: in the pool, or
 * kept in a thread's page store (emptied or reserved), which a sleeping
 * thread's collections hand back to the pool (page_stores_drain_idle). */
static size_t marked_free_pages(size_t *free_total) {
  size_t marked = 0;
  struct page_counters counters;
  pthread_mutex_lock(&heap_lock);
  page_counters_read(&counters);
  pthread_mutex_unlock(&heap_lock);
  *free_total = (size_t)counters.store_free;
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0; i < c->page_count; i++) {
      struct page_header *p = &c->pages[i];
      if (atomic_load_explicit(&p->state, memory_order_relaxed) != PAGE_FREE) continue;
      (*free_total)++;
      if (page_any_marked(p)) marked++;
    }
  }
  return marked;
}

static __attribute__((noinline)) void build(void) {
  for (int i = 0; i < OBJECTS; i++) {
    char *p = GC_malloc(i % 2 ? LARGE_BYTES : 256);
    memset(p, 0x11, 64);
    keep[i] = p;
  }
}

static __attribute__((noinline)) void drop_half_free_half(void) {
  /* The odd (large) ones are freed explicitly while still marked from the
   * last collection; the even ones are dropped for the sweep. */
  for (int i = 0; i < OBJECTS; i++) {
    if (i % 2) GC_free(keep[i]);
    keep[i] = NULL;
  }
}

/* The links live in an atomic (unscanned) object: in static data or on
 * the stack they would be roots themselves and keep their objects. */
static void **weak;

static __attribute__((noinline)) void build_weakly_held(void) {
  for (int i = 0; i < OBJECTS; i++) {
    void *p = GC_malloc(i % 2 ? LARGE_BYTES : 256);
    weak[i] = p;
    GC_general_register_disappearing_link(&weak[i], p);
  }
}

int main(void) {
  GC_init();
  weak = GC_malloc_atomic_uncollectable(OBJECTS * sizeof *weak);

  /* 1. Marked objects die both ways; then no free page has a mark. */
  build();
  GC_gcollect(); /* marks every object in keep[] */
  drop_half_free_half();
  clear_stack();
  GC_gcollect();
  GC_gcollect();
  size_t free_total, marked = marked_free_pages(&free_total);
  printf("free pages %zu, with a mark bit %zu\n", free_total, marked);
  CHECK(free_total > 0, "no free pages after the objects died");
  CHECK(marked == 0, "%zu free pages carry mark bits", marked);

  /* 2. Reused pages: objects on them die when dropped. */
  for (int round = 0; round < 3; round++) {
    build_weakly_held();
    clear_stack();
    GC_gcollect();
    int alive = 0;
    for (int i = 0; i < OBJECTS; i++) alive += weak[i] != NULL;
    CHECK(alive == 0, "round %d: %d unreachable objects survived", round, alive);
    for (int i = 0; i < OBJECTS; i++)
      if (weak[i]) GC_unregister_disappearing_link(&weak[i]);
  }
  /* The same objects built and dropped again: sweeping must have given
   * their pages back.  (Taking every other run out of the parallel
   * sweep's plan fails the round checks above.) */
  size_t free_after_reuse;
  marked = marked_free_pages(&free_after_reuse);
  printf("free pages after reuse %zu\n", free_after_reuse);
  CHECK(free_after_reuse >= free_total, "%zu free pages after reuse, %zu before",
        free_after_reuse, free_total);
  CHECK(marked == 0, "after reuse, %zu free pages carry mark bits", marked);

  /* 3. A free span, then an uncollectable root referencing a normal
   * object: the walk must reach the root past the span. */
  void *volatile filler = GC_malloc(64 * 4096);
  void **root = GC_malloc_uncollectable(32 * 4096);
  char *target = GC_malloc(256);
  strcpy(target, "reachable only from an uncollectable object");
  root[0] = target;
  void **target_weak = &weak[0];
  *target_weak = target;
  GC_general_register_disappearing_link(target_weak, target);
  target = NULL;
  filler = NULL;
  (void)filler;
  clear_stack();
  GC_gcollect(); /* the filler's pages become a free span before the root */
  GC_gcollect();
  CHECK(*target_weak != NULL, "the uncollectable object's referent was collected");
  CHECK(*target_weak &&
            strcmp(*target_weak, "reachable only from an uncollectable object") == 0,
        "the referent's contents changed");
  /* And the check can fail: without the root the referent goes. */
  root[0] = NULL;
  clear_stack();
  GC_gcollect();
  CHECK(*target_weak == NULL, "the referent outlived its only reference");
  GC_free(root);
  return unit_finish();
}
