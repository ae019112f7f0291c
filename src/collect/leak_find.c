/* Leak finding for objects of the plain calls (GC_malloc without
 * GC_DEBUG).  bdwgc in leak mode (GC_find_leak, GC_FIND_LEAK) reports
 * every object that became unreachable without GC_free, debugging header
 * or not; collect/debug_alloc.c reports those with a header, this file
 * the others, by address and size, once each: the sweep then reclaims
 * them, as bdwgc frees them after its report.
 *
 * An unmarked slot after marking is a leak unless it is free.  Free
 * objects are on a thread's or a CPU's list (marked as free objects by
 * the collection), in a batch of freed objects (alloc/batches.c), or on a
 * swept page's list.  A page the lazy sweep has not reached holds the
 * previous collection's garbage, already reported, on no list: so in leak
 * mode every collection ends by sweeping everything, and the first one
 * after collections outside leak mode only sweeps.  Batches and page
 * lists are marked FREED_MARK (their pages' marks are bytes, and a
 * collection reads any nonzero byte as marked), and the walk here turns
 * those back to 0 for the sweep.  Objects of kinds the program made
 * (GC_new_kind, GC_generic_malloc), as bdwgc reports them too: their
 * pages are all swept before each marking and their free lists undone
 * (alloc/custom_alloc.c); in leak mode the lists are undone only once the
 * marks are cleared, their objects marked FREED_MARK, and thread caches'
 * objects are marked as every kind's are. */
#include "collect/leak_find.h"

#include "alloc/alloc.h"
#include "collect/debug_alloc.h"
#include "common.h"
#include "heap/heap.h"
#include "heap/heap_lock.h"
#include "sweep/sweep.h"

enum { FREED_MARK = 2 };

/* No garbage from a collection that did not look lies unswept: true at
 * start-up, and after each collection in leak mode (heap_lock). */
static bool heap_swept_for_leaks = true;
static bool looking; /* this collection looks for leaks */
static bool looking_custom; /* and its custom kinds' free objects are marked */

static bool leak_mode(void) { return __atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED) != 0; }

static void mark_freed(void *p) {
  struct page_header *page = page_of_address((uintptr_t)p);
  if (page) atomic_store_explicit(mark_bit_of(page, (uintptr_t)p), FREED_MARK, memory_order_relaxed);
}

bool leak_find_custom_kinds_begin(void) {
  looking_custom = leak_mode() && heap_swept_for_leaks;
  return looking_custom;
}

void leak_find_mark_free(void *object) { mark_freed(object); }

void leak_find_unmark_free(void *object) {
  struct page_header *page = page_of_address((uintptr_t)object);
  if (page) mark_bit_clear(page, (uintptr_t)object);
}

void leak_find_before_batches_drop(void) {
  looking = leak_mode() && heap_swept_for_leaks;
  if (looking) batches_for_each_object(mark_freed);
}

static void check_small_page(struct page_header *p) {
  for (void **f = p->free_head; f; f = *f) mark_freed(f);
  size_t size = (size_t)p->object_granules << GRANULE_SHIFT;
  for (unsigned i = 0; i < p->capacity; i++) {
    uintptr_t obj = p->start + i * size;
    _Atomic uint8_t *mark = mark_bit_of(p, obj);
    uint8_t m = atomic_load_explicit(mark, memory_order_relaxed);
    if (m == FREED_MARK) atomic_store_explicit(mark, 0, memory_order_relaxed);
    else if (!m) debug_report_plain_leak((void *)obj, size, p->kind == KIND_ATOMIC);
  }
}

void leak_find_after_mark(void) {
  if (!looking) return;
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0, step; i < c->page_count; i += step) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      step = page_walk_step(p, state);
      if (!kind_is_collectable(p->kind)) continue;
      /* A custom kind's free objects are known only when marked so. */
      if (state == PAGE_SMALL && (!kind_is_custom(p->kind) || looking_custom)) check_small_page(p);
      else if (state == PAGE_LARGE_HEAD && !mark_bit_test(p, p->start))
        debug_report_plain_leak((void *)p->start, p->object_bytes, p->kind == KIND_ATOMIC);
    }
  }
}

void leak_find_after_sweep(void) {
  looking_custom = false;
  bool on = leak_mode();
  if (on) sweep_finish_all();
  heap_swept_for_leaks = on;
}
