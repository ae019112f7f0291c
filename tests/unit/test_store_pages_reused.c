/* Free pages a thread keeps in its store (AL, LPS) serve the objects no
 * store is for -- uncollectable, custom-kind and large objects, which take
 * pages through page_acquire -- before the heap grows.  The program fills
 * pages with garbage, collects (the emptied pages go to this thread's
 * store), takes every free page out of the shared pool, and then
 * allocates such objects: the heap must not grow, and the store must
 * have given up its pages.  Before page_acquire drained the stores first,
 * the heap grew by a quarter here while hundreds of free pages sat in the
 * store (Guile's compiler ran in a 28 MiB heap under LPS, 8 under PS).
 * Run under each policy (CMakeLists.txt); under PS the pages are in the
 * pool from the start, which the test then empties likewise. */
#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "collect/collect.h"
#include "common.h"
#include "unit.h"
#include "pool_hold.h"

enum { PAGES = 400, OBJECT_BYTES = 32 };

static void count_free(const struct page_store_counters *c, void *arg) { *(long *)arg += c->free; }

static long store_free_pages(void) {
  long n = 0;
  pthread_mutex_lock(&heap_lock);
  page_stores_visit(count_free, &n);
  pthread_mutex_unlock(&heap_lock);
  return n;
}

static __attribute__((noinline)) void fill_garbage(void) {
  for (int i = 0; i < PAGES * (PAGE_BYTES / OBJECT_BYTES); i++)
    CHECK(GC_malloc(OBJECT_BYTES) != NULL, "allocation");
}

int main(void) {
  GC_INIT();
  fill_garbage();
  GC_gcollect(); /* sweeps everything: emptied pages go back by the policy */
  long kept = store_free_pages();
  bool stores = page_policy != PAGE_POLICY_PS;
  if (stores) CHECK(kept >= PAGES / 2, "only %ld free pages in the stores after the collection", kept);

  /* Empty the pool, so only the stores hold free pages. */
  static struct pool_hold hold;
  size_t pool_left = pool_hold_all(&hold);
  CHECK(pool_left == 0, "%zu pages left in the pool", pool_left);

  size_t heap_before = heap_size_bytes();
  /* Uncollectable objects, one page each class; a large object. */
  for (unsigned bytes = 16; bytes <= 2048; bytes *= 2) CHECK(GC_malloc_uncollectable(bytes), "uncollectable");
  CHECK(GC_malloc(3 * PAGE_BYTES) != NULL, "large");
  size_t heap_after = heap_size_bytes();
  if (stores) {
    CHECK(heap_after == heap_before, "the heap grew from %zu to %zu bytes with %ld free pages in stores",
          heap_before, heap_after, kept);
    CHECK(store_free_pages() < kept, "the stores kept all %ld pages", kept);
  }
  printf("policy %d: %ld pages in stores, heap %zu -> %zu bytes\n", (int)page_policy, kept,
         heap_before, heap_after);

  pool_release_held(&hold);
  return unit_finish();
}
