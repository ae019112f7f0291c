/* For the write-barrier tests: marks the object at P (a small object's
 * start, or a large object) as the marker would, since a barrier reports
 * only the pages that hold a marked object which may hold pointers (the
 * only pages whose rescan could find anything, barrier.h). */
#ifndef SGC_UNIT_MARKED_H
#define SGC_UNIT_MARKED_H
#include "heap/heap.h"

static inline void unit_mark_object(const void *p) {
  mark_bit_set(page_of_address((uintptr_t)p), (uintptr_t)p);
}
#endif
