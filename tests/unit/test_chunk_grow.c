/* Chunks grow in place (heap/heap.c): a heap that keeps growing stays one
 * chunk (up to its 1 GiB of room), its new pages join the free span
 * before them, and large objects each larger than every one freed
 * before them then find their pages there.  Before, every growth was a
 * chunk of its own: 1, 2, ... 32 MiB objects, each dropped, grew the heap
 * past 100 MiB in 9 chunks.  What could fail: a growth starting a new
 * chunk, pages of the grown part that the pool does not know, a span
 * that does not join, or headers of the new pages that are not free. */
#include <string.h>

#include "collect/collect.h"
#include "common.h"
#include "heap/heap.h"
#include "unit.h"

static unsigned chunk_count(void) {
  unsigned n = 0;
  FOR_EACH_CHUNK(c) n++;
  return n;
}

int main(void) {
  GC_init();
  CHECK(chunk_count() == 1, "%u chunks at the start", chunk_count());
  struct chunk *first = heap_first_chunk();
  /* 1 GiB of room (heap.c's CHUNK_ROOM_BYTES), nothing limiting the
   * address space here. */
  CHECK(first->reserved_pages >= ((size_t)1 << 30) >> PAGE_SHIFT,
        "the first chunk keeps %zu pages of room", first->reserved_pages);
  for (size_t mib = 1; mib <= 32; mib++) {
    unsigned char *p = GC_malloc_atomic(mib << 20);
    CHECK(p != NULL, "%zu MiB", mib);
    if (!p) break;
    memset(p, 0x5a, mib << 20);
    CHECK(p[0] == 0x5a && p[(mib << 20) - 1] == 0x5a, "%zu MiB object written", mib);
  }
  CHECK(chunk_count() == 1, "%u chunks after growing", chunk_count());
  size_t heap = GC_get_heap_size();
  /* The 32 MiB object and the 31 MiB one before it may both be live at a
   * collection; chunk by chunk the heap reached 116 MiB and more. */
  CHECK(heap <= (size_t)80 << 20, "heap %zu MiB", heap >> 20);
  /* The grown parts joined the free pages before them: after the
   * collections, the free pages lie (nearly) all in one span. */
  GC_gcollect();
  GC_gcollect();
  heap_lock_acquire();
  size_t free_pages = page_pool_free_pages(), largest = 0;
  for (struct page_header *p = &first->pages[0]; p < &first->pages[first->page_count];) {
    uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
    size_t step = page_walk_step(p, state);
    if (state == PAGE_FREE && page_pool_is_span_head(p) && p->span_pages > largest)
      largest = p->span_pages;
    p += step;
  }
  pthread_mutex_unlock(&heap_lock);
  CHECK(largest >= free_pages * 3 / 4, "largest free span %zu pages of %zu free", largest,
        free_pages);
  printf("1 chunk of %zu pages (room for %zu), heap %zu MiB, largest free span %zu pages of %zu\n",
         first->page_count, first->reserved_pages, heap >> 20, largest, free_pages);
  return unit_finish();
}
