/* Memory-node placement of chunks and of their page headers (placement.h). */
#include "heap/placement.h"

#include <stddef.h>

#include "common.h"

_Atomic uint64_t heap_bmb_bytes[NUMA_MAX_NODES];
_Atomic uint64_t heap_foreign_takes;

void heap_place_pages(uintptr_t lo, uintptr_t hi) {
  if (!numa_active() || hi <= lo) return;
  if (numa_placement == NUMA_INTERLEAVE) {
    numa_bind_interleave((void *)lo, hi - lo);
  } else if (numa_placement == NUMA_LOCAL) {
    /* A growth may start or end inside a stripe (heap.c grows by less
     * than a chunk): each piece goes to its own stripe's node. */
    const uintptr_t stripe = (uintptr_t)1 << LOCAL_STRIPE_SHIFT;
    for (uintptr_t a = lo, end; a < hi; a = end) {
      end = (a | (stripe - 1)) + 1;
      if (end > hi) end = hi;
      numa_bind_node((void *)a, end - a, heap_stripe_node(a), numa_decisions.bound_bytes);
    }
  }
}

/* The heap address whose header holds descriptor byte OFFSET (the chunk's
 * own fields count with its first page's). */
static uintptr_t described_address(uintptr_t base, size_t offset) {
  size_t first = offsetof(struct chunk, pages);
  size_t index = offset < first ? 0 : (offset - first) / sizeof(struct page_header);
  return base + (index << PAGE_SHIFT);
}

void heap_place_descriptors(void *desc, uintptr_t base, size_t from, size_t to) {
  if (!numa_bmb || !numa_active()) return;
  /* Runs of OS pages whose first byte's header is on the same node: a
   * header that straddles two pages goes where its first page does. */
  size_t run = from;
  unsigned run_node = heap_bmb_node(described_address(base, from));
  for (size_t at = from + PAGE_BYTES; at <= to; at += PAGE_BYTES) {
    unsigned node = at < to ? heap_bmb_node(described_address(base, at)) : run_node + 1;
    if (node == run_node) continue;
    numa_bind_node((char *)desc + run, at - run, run_node, heap_bmb_bytes);
    run = at;
    run_node = node;
  }
}

static void count_span(struct page_header *head, size_t pages, void *arg) {
  uint64_t *free_pages = arg;
  for (size_t i = 0; i < pages; i++)
    free_pages[heap_node_of(head, head->start + (i << PAGE_SHIFT))]++;
}

void heap_pages_per_node(uint64_t used[NUMA_MAX_NODES], uint64_t free_pages[NUMA_MAX_NODES]) {
  for (unsigned n = 0; n < NUMA_MAX_NODES; n++) used[n] = free_pages[n] = 0;
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0, step; i < c->page_count; i += step) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      step = page_walk_step(p, state);
      if (state != PAGE_SMALL && state != PAGE_LARGE_HEAD) continue;
      uintptr_t a = c->base + (i << PAGE_SHIFT);
      /* A large object's pages: by address, or all with its head's node
       * under first touch (its tail headers may be untouched). */
      for (size_t k = 0; k < step; k++) used[heap_node_of(p, a + (k << PAGE_SHIFT))]++;
    }
  }
  if (numa_placement != NUMA_FIRSTTOUCH) page_pool_for_each_span(count_span, free_pages);
}
