/* Where the heap's memory lies on memory nodes (SGC_NUMA_PLACEMENT,
 * SGC_BMB; docs/numa.md).  Pages of a chunk go to nodes as the placement
 * says: interleave page by page (the kernel's MPOL_INTERLEAVE, whose node
 * for an anonymous page is its page number modulo the nodes), local in
 * stripes of LOCAL_STRIPE_SHIFT round-robin (papers/002 §3.2's fragments:
 * each stripe is one node's, and a thread refills from its node's stripes),
 * first touch where the thread that took it ran.  BMB spreads the page
 * headers, which hold the mark bytes, round-robin by the heap address they
 * describe, whatever the pages' own placement (thesis §3.4.3). */
#ifndef SGC_HEAP_PLACEMENT_H
#define SGC_HEAP_PLACEMENT_H

#include "heap/heap.h"
#include "os/numa.h"

enum {
  /* A local stripe is a chunk's worth: chunks are aligned to it, so a
   * chunk's first page starts a stripe (its growths may end inside one). */
  LOCAL_STRIPE_SHIFT = CHUNK_SHIFT,
  /* BMB: 256 pages' headers go to one node, the next 256 pages' to the
   * next: 23 whole descriptor pages while a header is 368 bytes, so the
   * nodes get equal shares (a stripe of headers that ended inside a page
   * would put that page's other headers on its node too). */
  BMB_STRIPE_SHIFT = PAGE_SHIFT + 8,
};

/* The node the placement puts heap address A on; under first touch, the
 * node the taking thread ran on (recorded in the header as it leaves the
 * pool), which page P (A's header) holds. */
static inline unsigned heap_node_of(const struct page_header *p, uintptr_t a) {
  switch (numa_placement) {
  case NUMA_INTERLEAVE: return (unsigned)((a >> PAGE_SHIFT) % numa.nodes);
  case NUMA_LOCAL: return (unsigned)((a >> LOCAL_STRIPE_SHIFT) % numa.nodes);
  case NUMA_FIRSTTOUCH:
  default: return p->node < numa.nodes ? p->node : 0;
  }
}
/* The node local placement gives heap address A's stripe. */
static inline unsigned heap_stripe_node(uintptr_t a) {
  return (unsigned)((a >> LOCAL_STRIPE_SHIFT) % numa.nodes);
}
/* BMB: the node of the descriptor memory that holds A's page header. */
static inline unsigned heap_bmb_node(uintptr_t a) {
  return (unsigned)((a >> BMB_STRIPE_SHIFT) % numa.nodes);
}

/* Binds the chunk pages [LO, HI), just committed, as the placement says
 * (nothing under first touch or one node). */
void heap_place_pages(uintptr_t lo, uintptr_t hi);
/* BMB: binds descriptor bytes [FROM, TO) of the chunk whose descriptor
 * mapping is at DESC and whose pages start at BASE. */
void heap_place_descriptors(void *desc, uintptr_t base, size_t from, size_t to);
/* Descriptor bytes BMB placed per node, and pages the local placement
 * handed out off the taker's node because its node had none free. */
extern _Atomic uint64_t heap_bmb_bytes[NUMA_MAX_NODES];
extern _Atomic uint64_t heap_foreign_takes;

/* Pages per node now (heap_lock held): in use (small or large), and free
 * in the pool where the placement decides by address (interleave, local;
 * first touch leaves FREE zero: a clean page has no node until touched). */
void heap_pages_per_node(uint64_t used[NUMA_MAX_NODES], uint64_t free_pages[NUMA_MAX_NODES]);

#endif
