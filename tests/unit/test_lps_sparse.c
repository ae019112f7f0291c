/* LPS's l counts what survivors fill, not the pages they are spread over
 * (alloc/page_store.c, page_policy_after_collection): PAGES pages of
 * 32-byte objects of which one in SPARSE survives a collection hold
 * PAGES / SPARSE pages' worth, and l (and max l) must say so.  Counting
 * pages with any survivor, l read PAGES, and the bound a < k·max(l) let
 * a heap of sleeping threads grow with the spread (bench-sleepers). */
#include "alloc/page_store.h"
#include "collect/collect.h"
#include "common.h"
#include "unit.h"

enum { PAGES = 400, SPARSE = 8, OBJECT_BYTES = 32, PER_PAGE = PAGE_BYTES / OBJECT_BYTES };

static void **kept; /* uncollectable: the collector sees it */

static __attribute__((noinline)) void fill(void) {
  for (long i = 0; i < (long)PAGES * PER_PAGE; i++) {
    void *p = GC_malloc(OBJECT_BYTES);
    CHECK(p != NULL, "allocation");
    if (i % SPARSE == 0) kept[i / SPARSE] = p;
  }
}

int main(void) {
  GC_init();
  kept = GC_malloc_uncollectable(sizeof(void *) * (PAGES * PER_PAGE / SPARSE + 1));
  CHECK(kept != NULL, "allocation");
  fill();
  GC_gcollect();
  struct page_counters c;
  pthread_mutex_lock(&heap_lock);
  page_counters_read(&c);
  pthread_mutex_unlock(&heap_lock);
  long filled = PAGES / SPARSE;
  printf("live pages l=%ld max_l=%ld (survivors fill about %ld pages, spread over %d)\n", c.l,
         c.max_l, filled, PAGES);
  /* The kept table, the runtime's own objects: a few pages more. */
  CHECK(c.l <= filled + 16, "l counts the pages survivors are spread over");
  CHECK(c.max_l <= filled + 16, "max l counts the pages survivors are spread over");
  CHECK(c.l >= filled / 2, "l below what the survivors fill");
  return unit_finish();
}
