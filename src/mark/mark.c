/* The sequential mark loop.  Ranges longer than MARK_SPLIT_BYTES are cut
 * into pieces as they are popped (thesis §3.4.2, SLO), which bounds the
 * work per step and is how the parallel marker will share large objects. */
#include "mark/mark.h"

#include <string.h>
#include <sys/mman.h>

#include "common.h"
#include "os/os.h"

enum {
  MARK_SPLIT_BYTES = 4096,
  INITIAL_STACK_ENTRIES = 1 << 16,
  /* Ranges are prefetched when popped and scanned this many pops later,
   * so the cache miss on an object's first line overlaps other work. */
  PREFETCH_DEPTH = 8,
};

struct mark_range {
  uintptr_t lo, hi;
};

static struct mark_range *stack;
static size_t stack_top, stack_capacity;
struct mark_totals mark_totals;

void mark_init(void) {
  stack_capacity = INITIAL_STACK_ENTRIES;
  stack = os_alloc(stack_capacity * sizeof *stack);
  if (!stack) sgc_fatal("cannot allocate the mark stack");
}

/* Growing never loses work: the old entries move with mremap.  No libc
 * call here: the world is stopped and another thread may hold malloc's
 * locks. */
static void stack_grow(void) {
  size_t old_bytes = stack_capacity * sizeof *stack;
  void *p = mremap(stack, old_bytes, old_bytes * 2, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) sgc_fatal("mark stack overflow: cannot grow to %zu bytes", old_bytes * 2);
  stack = p;
  stack_capacity *= 2;
}

static inline void push(uintptr_t lo, uintptr_t hi) {
  if (unlikely(stack_top == stack_capacity)) stack_grow();
  stack[stack_top++] = (struct mark_range){lo, hi};
}

void mark_push_range(uintptr_t lo, uintptr_t hi) {
  lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
  if (hi > lo) push(lo, hi);
}

void mark_clear_all(void) {
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0; i < c->page_count; i++) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      if ((state == PAGE_SMALL || state == PAGE_LARGE_HEAD) && p->kind >= KIND_THREAD_LOCAL_COUNT)
        continue; /* uncollectable: the bit means "allocated" */
      for (unsigned w = 0; w < MARK_WORDS_PER_PAGE; w++)
        atomic_store_explicit(&p->mark_bits[w], 0, memory_order_relaxed);
    }
  }
  mark_totals = (struct mark_totals){0, 0};
}

static inline bool kind_is_scanned(unsigned kind) {
  return kind == KIND_NORMAL || kind == KIND_UNCOLLECTABLE;
}

void mark_push_contents(struct page_header *page, uintptr_t base) {
  if (kind_is_scanned(page->kind)) mark_push_range(base, base + object_size(page));
}

static inline void mark_candidate(uintptr_t w, uintptr_t lowest, uintptr_t highest) {
  if (w - lowest >= highest - lowest) return;
  struct page_header *page;
  uintptr_t base = object_start(w, &page);
  if (!base || !mark_bit_set(page, base)) return;
  size_t size = object_size(page);
  mark_totals.bytes += size;
  mark_totals.objects++;
  if (kind_is_scanned(page->kind)) push(base, base + size);
}

void mark_word(uintptr_t w) {
  mark_candidate(w, atomic_load_explicit(&heap_lowest, memory_order_relaxed),
                 atomic_load_explicit(&heap_highest, memory_order_relaxed));
}

void mark_without_scan(struct page_header *page, uintptr_t base) { mark_bit_set(page, base); }

void mark_scan_contents_excluding_self(struct page_header *page, uintptr_t base) {
  uintptr_t end = base + object_size(page);
  if (!kind_is_scanned(page->kind)) return;
  for (uintptr_t *p = (uintptr_t *)base; (uintptr_t)p < end; p++) {
    uintptr_t w = *p;
    if (w >= base && w < end) continue;
    mark_word(w);
  }
}

void mark_drain(void) {
  uintptr_t lowest = atomic_load_explicit(&heap_lowest, memory_order_relaxed);
  uintptr_t highest = atomic_load_explicit(&heap_highest, memory_order_relaxed);
  struct mark_range window[PREFETCH_DEPTH];
  unsigned first = 0, count = 0;
  for (;;) {
    while (count < PREFETCH_DEPTH && stack_top) {
      struct mark_range r = stack[--stack_top];
      if (r.hi - r.lo > MARK_SPLIT_BYTES) {
        stack[stack_top++] = (struct mark_range){r.lo + MARK_SPLIT_BYTES, r.hi};
        r.hi = r.lo + MARK_SPLIT_BYTES;
      }
      __builtin_prefetch((const void *)r.lo);
      window[(first + count++) % PREFETCH_DEPTH] = r;
    }
    if (!count) return;
    struct mark_range r = window[first];
    first = (first + 1) % PREFETCH_DEPTH;
    count--;
    for (const uintptr_t *p = (const uintptr_t *)r.lo; (uintptr_t)(p + 1) <= r.hi; p++)
      mark_candidate(*p, lowest, highest);
  }
}
