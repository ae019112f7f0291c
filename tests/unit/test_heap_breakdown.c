/* Where the heap is (SGC_get_stats' last_* fields, the trace's
 * store_free_bytes and pool_free_bytes, SGC_STATS's "heap at the last
 * collection" line): after KEEP bytes kept and GARBAGE bytes dropped, a
 * collection finds about KEEP live, the parts never add up to more than
 * the heap, and after a parallel sweep the dropped pages lie free in the
 * stores or the pool. */
#include "alloc/page_store.h"
#include "common.h"
#include "unit.h"

enum { KEEP = 2 << 20, GARBAGE = 24 << 20, OBJECT_BYTES = 64 };

static void **kept;

static __attribute__((noinline)) void fill(void) {
  for (long i = 0; i < KEEP / OBJECT_BYTES; i++) CHECK((kept[i] = GC_malloc(OBJECT_BYTES)), "allocation");
  for (long i = 0; i < GARBAGE / OBJECT_BYTES; i++) CHECK(GC_malloc(OBJECT_BYTES), "allocation");
}

int main(void) {
  GC_INIT();
  kept = GC_malloc_uncollectable(sizeof(void *) * (KEEP / OBJECT_BYTES));
  CHECK(kept != NULL, "allocation");
  fill();
  GC_gcollect();
  SGC_stats_t s;
  SGC_get_stats(&s);
  uint64_t parts = s.last_live_bytes + s.last_cache_bytes + s.last_store_free_bytes +
                   s.last_pool_free_bytes;
  printf("heap %lu KiB: live %lu, caches %lu, stores %lu, pool %lu KiB\n",
         (unsigned long)(s.last_heap_bytes >> 10), (unsigned long)(s.last_live_bytes >> 10),
         (unsigned long)(s.last_cache_bytes >> 10), (unsigned long)(s.last_store_free_bytes >> 10),
         (unsigned long)(s.last_pool_free_bytes >> 10));
  CHECK(s.last_heap_bytes == s.heap_bytes, "last heap %lu, heap now %lu",
        (unsigned long)s.last_heap_bytes, (unsigned long)s.heap_bytes);
  CHECK(s.last_live_bytes >= KEEP && s.last_live_bytes < KEEP + (1 << 20), "live %lu bytes",
        (unsigned long)s.last_live_bytes);
  CHECK(parts <= s.last_heap_bytes, "the parts (%lu) exceed the heap (%lu)", (unsigned long)parts,
        (unsigned long)s.last_heap_bytes);
  /* With the parallel sweep every page is swept before the collection
   * ends: the dropped objects' pages lie free in the thread's store (AL,
   * LPS) or the pool (PS).  The lazy sweep leaves them in "the rest". */
  if (sgc_settings.sweep_parallel)
    CHECK(s.last_store_free_bytes + s.last_pool_free_bytes >= (1 << 20),
          "no free pages after a parallel sweep: stores %lu, pool %lu",
          (unsigned long)s.last_store_free_bytes, (unsigned long)s.last_pool_free_bytes);
  return unit_finish();
}
