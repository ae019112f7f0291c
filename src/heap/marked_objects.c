/* The objects the last collection marked, page by page: the walk behind
 * GC_enumerate_reachable_objects_inner and the back-pointer search
 * (collect/backptr.c). */
#include "heap/heap.h"

bool heap_for_each_marked_object(marked_object_visit *visit, void *arg) {
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0, step; i < c->page_count; i += step) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      step = page_walk_step(p, state);
      if (state == PAGE_SMALL) {
        size_t size = object_size(p);
        for (unsigned k = 0; k < p->capacity; k++) {
          uintptr_t base = p->start + k * size;
          if (mark_bit_test_held(p, base) && visit(p, base, size, arg)) return true;
        }
      } else if (state == PAGE_LARGE_HEAD &&
                 !atomic_load_explicit(&p->clearing, memory_order_relaxed) &&
                 mark_bit_test_held(p, p->start) && visit(p, p->start, p->object_bytes, arg)) {
        return true;
      }
    }
  }
  return false;
}
