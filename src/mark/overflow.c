/* Mark-stack overflow: a watermark stack that is full and cannot grow
 * (the OS refuses the mapping, or SGC_MARK_STACK_LIMIT says no) drops
 * entries rather than stop the program, and the heap is marked again
 * from every marked object until nothing was dropped -- the classic
 * recovery (bdwgc's "mark stack overflow" rescans), which the thesis
 * (§3.4) leaves to the base collector.
 *
 * What may be dropped: a range inside an object that is already marked
 * and whose kind is scanned word by word (kind_is_rescanned).  Every
 * object the drain pushes was marked first (set_mark), SLO's pieces lie
 * inside such objects, and the uncollectable objects mark_begin queues
 * carry a nonzero mark; the rescan pushes every such object whole again,
 * so nothing it held is lost.  What may not: a root's range (a stack, a
 * data segment, registers), the contents of an object left unmarked on
 * purpose (a finalizable object, a kind marked from all), and anything in
 * an object of a kind the program made: no rescan would find them.  Those
 * take the place of a droppable entry of the marker's own private part,
 * or, if there is none, grow the stack past the limit; only the OS
 * refusing that too is fatal.
 *
 * Progress: the rescan drains whenever its stack is half full, and a
 * drain that marks nothing new holds no more than that half plus the
 * halves SLO keeps of the one long object it is splitting (one a
 * halving, a few dozen at most), which the 256-entry minimum leaves room
 * for.  So a rescan that overflows has marked something new, and the
 * rounds end.
 *
 * A Chase-Lev deque (SGC_MARK_DEQUE=chase-lev) drops the same entries but
 * replaces none, its slots being shared with thieves: a root's range
 * grows it past the limit. */
#include "common.h"
#include "heap/heap.h"
#include "mark/mark.h"
#include "mark/marker.h"

_Atomic int mark_overflowed;
static _Atomic uint64_t dropped, rescans;

uint64_t mark_overflow_dropped(void) { return atomic_load_explicit(&dropped, memory_order_relaxed); }
uint64_t mark_overflow_rescans(void) { return atomic_load_explicit(&rescans, memory_order_relaxed); }

/* The kinds scanned word by word.  Not the kinds a program makes: the
 * free objects in threads' caches carry a mark too (collect.c keeps them
 * so, unscanned), and a rescan cannot tell them from reached ones; a
 * conservative scan of a free object only keeps garbage a cycle longer,
 * but a kind's mark procedure or descriptor read from a free object's
 * stale words is what once called a null procedure (history.md).  So
 * their ranges are never dropped. */
static bool kind_is_rescanned(unsigned kind) {
  return kind == KIND_NORMAL || kind == KIND_UNCOLLECTABLE;
}

/* Whether a rescan would push the range starting at LO again: it lies in
 * a marked object of a scanned kind.  The world is stopped. */
static bool range_found_by_rescan(uintptr_t lo) {
  struct page_header *p = page_of_address(lo), *page = p;
  if (!p) return false;
  uintptr_t base = object_start_in_page(p, lo, &page, true);
  return base && kind_is_rescanned(page->kind) && mark_bit_test(page, base);
}

/* Relaxed: the collector reads the flag after the drain's end, which
 * every marker reaches through the phase's own synchronisation. */
static void note_dropped(void) {
  atomic_store_explicit(&mark_overflowed, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
}

bool mark_overflow_drop(uintptr_t lo) {
  if (!range_found_by_rescan(lo)) return false;
  note_dropped();
  return true;
}

void mark_overflow_push(struct marker *m, uintptr_t lo, uintptr_t hi) {
  if (mark_overflow_drop(lo)) return;
  /* The private part [watermark, top) is the owner's alone. */
  size_t watermark = atomic_load_explicit(&m->watermark, memory_order_relaxed);
  for (size_t i = m->top; i-- > watermark;) {
    if (range_found_by_rescan(m->entries[i].lo)) {
      m->entries[i] = (struct mark_range){lo, hi};
      note_dropped();
      return;
    }
  }
  if (!marker_grow(m, true))
    sgc_fatal("mark stack overflow: the OS refused %zu bytes for %zu entries, none of which a "
              "rescan could find again", m->capacity * 2 * sizeof *m->entries, m->capacity);
  m->entries[m->top++] = (struct mark_range){lo, hi};
}

/* Whether C's stack or deque is half full. */
static bool half_full(struct marker *c) {
  if (mark_config.deque == DEQUE_CHASE_LEV) {
    int64_t used = atomic_load_explicit(&c->cl_bottom, memory_order_relaxed) -
                   atomic_load_explicit(&c->cl_top, memory_order_relaxed);
    return used >= (atomic_load_explicit(&c->cl_buffer, memory_order_relaxed)->mask + 1) / 2;
  }
  return c->top >= c->capacity / 2;
}

/* Pushes every marked object of a kind scanned word by word with the
 * collector's marker, draining whenever its stack is half full, so an
 * object's one entry always fits. */
static void rescan_marked_heap(void) {
  struct marker *c = mark_collector;
  FOR_EACH_CHUNK(chunk) {
    for (size_t i = 0, step; i < chunk->page_count; i += step) {
      struct page_header *p = &chunk->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      step = page_walk_step(p, state);
      if ((state != PAGE_SMALL && state != PAGE_LARGE_HEAD) || !kind_is_rescanned(p->kind))
        continue;
      size_t size = object_size(p);
      unsigned objects = state == PAGE_LARGE_HEAD ? 1 : p->capacity;
      for (unsigned j = 0; j < objects; j++) {
        uintptr_t obj = p->start + j * size;
        if (!mark_bit_test(p, obj)) continue;
        mark_push_contents(p, obj);
        if (half_full(c)) mark_drain_own(c);
      }
    }
  }
  mark_drain_own(c);
}

/* A load before the exchange: every drain calls this (finalization's
 * once per 256 finalizable objects), and almost none overflowed. */
void mark_overflow_recover(void) {
  while (atomic_load_explicit(&mark_overflowed, memory_order_relaxed) &&
         atomic_exchange_explicit(&mark_overflowed, 0, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&rescans, 1, memory_order_relaxed);
    rescan_marked_heap();
  }
}
