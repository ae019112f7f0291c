/* mark_scan_roots_now, a concurrent cycle's start pause (thesis §5.2):
 * the root ranges on the collector's stack are read word by word in the
 * pause and replaced by what they point to.  Every object a root word
 * points to must come out marked and counted once, those that hold
 * pointers pushed once each (a repeat pointer finds the mark set), a
 * pointer-free one counted as atomic and not pushed, a word outside
 * the heap ignored; and enough of them must grow the stack while the
 * scan still reads its root ranges from it. */
#include <stdlib.h>

#include "common.h"
#include "heap/heap.h"
#include "heap/heap_lock.h"
#include "mark/mark.h"
#include "mark/marker.h"
#include "unit.h"

enum { NORMAL = 200000, ATOMIC = 5000, WORDS = NORMAL + ATOMIC + NORMAL / 2 + 2 };

static bool marked(void *p) {
  struct page_header *page = page_of_address((uintptr_t)p);
  return page && mark_bit_test(page, (uintptr_t)p);
}

int main(void) {
  GC_init();
  GC_disable(); /* no collection may clear the marks under test */
  /* The roots: not a static of this program (the collector would scan
   * it); any memory the stack's ranges point to serves. */
  void **roots = calloc(WORDS, sizeof *roots);
  CHECK(roots != NULL, "calloc");
  for (size_t i = 0; i < NORMAL; i++) roots[i] = GC_malloc(16);
  for (size_t i = 0; i < ATOMIC; i++) roots[NORMAL + i] = GC_malloc_atomic(32);
  /* Repeats, two to a page and far apart, then no pointers at all. */
  for (size_t i = 0; i < NORMAL / 2; i++) roots[NORMAL + ATOMIC + i] = roots[(i * 7919) % NORMAL];
  roots[WORDS - 2] = (void *)(uintptr_t)0x10;
  roots[WORDS - 1] = (char *)roots[0] + 8; /* inside an object already marked */

  pthread_mutex_lock(&heap_lock);
  mark_begin();
  struct marker *m = mark_collector;
  size_t from = m->top, capacity = m->capacity;
  /* Split over two ranges, so the second is read after pushes grew the stack. */
  mark_push_range((uintptr_t)roots, (uintptr_t)(roots + NORMAL / 2));
  mark_push_range((uintptr_t)(roots + NORMAL / 2), (uintptr_t)(roots + WORDS));
  mark_scan_roots_now(from);

  CHECK(capacity < NORMAL && m->capacity > capacity, "the stack grew (%zu to %zu entries)",
        capacity, m->capacity);
  size_t pushed = m->top - from;
  CHECK(pushed == NORMAL, "%zu ranges pushed for %d objects that hold pointers", pushed, NORMAL);
  size_t wrong = 0;
  for (size_t i = from; i < m->top; i++)
    if (m->entries[i].hi - m->entries[i].lo != 16 || !marked((void *)m->entries[i].lo)) wrong++;
  CHECK(wrong == 0, "%zu pushed ranges are not a marked 16-byte object", wrong);
  size_t unmarked = 0;
  for (size_t i = 0; i < NORMAL + ATOMIC; i++) unmarked += !marked(roots[i]);
  CHECK(unmarked == 0, "%zu objects a root points to left unmarked", unmarked);
  CHECK(m->marked_objects == NORMAL + ATOMIC, "%llu objects counted, want %d",
        (unsigned long long)m->marked_objects, NORMAL + ATOMIC);
  CHECK(m->marked_bytes == (uint64_t)NORMAL * 16 + (uint64_t)ATOMIC * 32, "%llu bytes counted",
        (unsigned long long)m->marked_bytes);
  CHECK(m->marked_atomic_bytes == (uint64_t)ATOMIC * 32, "%llu atomic bytes counted",
        (unsigned long long)m->marked_atomic_bytes);

  /* Leave the collector as a collection would: stack empty, marks cleared. */
  m->top = 0;
  mark_begin();
  pthread_mutex_unlock(&heap_lock);
  GC_enable();
  return unit_finish();
}
