/* Chunks: address space reserved from the OS in large aligned pieces and
 * published in the page map. */
#include "heap/heap.h"

#include <errno.h>
#include <string.h>

#include "collect/events.h"
#include "common.h"
#include "os/os.h"

_Atomic(struct pagemap_entry *) pagemap_l1[1u << PAGEMAP_L1_BITS];
_Atomic uintptr_t heap_lowest = UINTPTR_MAX, heap_highest = 0;
bool heap_interior_pointers = true;
uint64_t heap_displacements[PAGE_BYTES / 64];

static struct chunk *chunk_list;     /* written under heap_lock */
static _Atomic size_t heap_bytes;
/* Written under heap_lock; relaxed: read only to word a message. */
static _Atomic int grow_refusal;

int heap_grow_refusal(void) { return atomic_load_explicit(&grow_refusal, memory_order_relaxed); }

static bool grow_refused(int why) {
  atomic_store_explicit(&grow_refusal, why, memory_order_relaxed);
  return false;
}

size_t heap_size_bytes(void) {
  return atomic_load_explicit(&heap_bytes, memory_order_relaxed);
}

struct chunk *heap_first_chunk(void) { return chunk_list; }

/* C's base is CHUNK_BYTES-aligned (os_reserve_aligned), which the
 * entries' FIRST relies on. */
static bool pagemap_insert(struct chunk *c, size_t bytes) {
  for (uintptr_t a = c->base; a < c->base + bytes; a += CHUNK_BYTES) {
    size_t i1 = a >> (CHUNK_SHIFT + PAGEMAP_L2_BITS);
    struct pagemap_entry *l2 = atomic_load_explicit(&pagemap_l1[i1], memory_order_acquire);
    if (!l2) {
      l2 = os_alloc(sizeof(struct pagemap_entry) << PAGEMAP_L2_BITS);
      if (!l2) return false;
      /* Release: a reader that sees the table sees it zeroed. */
      atomic_store_explicit(&pagemap_l1[i1], l2, memory_order_release);
    }
    struct pagemap_entry *e = &l2[(a >> CHUNK_SHIFT) & ((1u << PAGEMAP_L2_BITS) - 1)];
    /* Release: a reader that finds the chunk or a header sees the chunk's
     * fields and its headers initialised. */
    atomic_store_explicit(&e->chunk, c, memory_order_release);
    atomic_store_explicit(&e->first, &c->pages[(a - c->base) >> PAGE_SHIFT], memory_order_release);
  }
  return true;
}

bool heap_grow(size_t bytes) {
  size_t size = (bytes + CHUNK_BYTES - 1) & ~(size_t)(CHUNK_BYTES - 1);
  if (size == 0) size = CHUNK_BYTES;
  size_t limit = sgc_settings.max_heap_bytes;
  if (limit && heap_size_bytes() + size > limit) {
    /* Use what is left under the limit, in whole chunks. */
    if (heap_size_bytes() + CHUNK_BYTES > limit || size > CHUNK_BYTES)
      return grow_refused(HEAP_REFUSED_LIMIT);
  }
  void *base = os_reserve_aligned(size, CHUNK_BYTES);
  if (!base) return grow_refused(errno);
  SGC_ASSERT(((uintptr_t)base & (CHUNK_BYTES - 1)) == 0);
  size_t pages = size >> PAGE_SHIFT;
  size_t desc_bytes = sizeof(struct chunk) + pages * sizeof(struct page_header);
  struct chunk *c = os_alloc(desc_bytes);
  if (!c) {
    int why = errno;
    os_free(base, size);
    return grow_refused(why);
  }
  c->base = (uintptr_t)base;
  c->page_count = pages;
  c->descriptor_bytes = desc_bytes;
  /* The descriptors are left as the OS gives them: all zero is a free,
   * clean page (PAGE_FREE, no PAGE_DIRTY), and the pool writes a header's
   * start when its page becomes a span's head or tail or leaves the pool
   * (page_pool.c).  Writing every header here made the descriptors of a
   * chunk resident at once, 9% of the heap's size whether its pages were
   * used or not: a 256 MiB initial heap cost 24 MB of memory. */
  if (!pagemap_insert(c, size)) sgc_fatal("cannot map page table for %zu bytes", size);
  c->next = chunk_list;
  chunk_list = c;
  uintptr_t lo = c->base, hi = c->base + size;
  if (lo < atomic_load(&heap_lowest)) atomic_store(&heap_lowest, lo);
  if (hi > atomic_load(&heap_highest)) atomic_store(&heap_highest, hi);
  atomic_fetch_add_explicit(&heap_bytes, size, memory_order_relaxed);
  page_pool_add_chunk(c);
  heap_resized(heap_size_bytes());
  return true;
}
