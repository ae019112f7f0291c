/* What the allocator asks of the lazy sweeper (thesis §3.3): pages
 * waiting to be swept after a collection are sweep/'s, and a refill takes
 * and sweeps them through these calls.  Declared here, at the
 * allocator's layer, and defined by sweep/sweep.c, so that alloc/ never
 * includes sweep/ (docs/design.md, "Layers"; alloc/collector.h is the
 * same kind of seam for the collector).  Callers hold heap_lock or are
 * inside the page-path gate (alloc/page_path.h), so no collection runs
 * meanwhile. */
#ifndef SGC_ALLOC_SWEEPER_H
#define SGC_ALLOC_SWEEPER_H

#include <stdbool.h>

struct page_header;
struct page_store;
struct thread_alloc;

/* A free list of (KIND, CLS) objects from a page already swept, with its
 * length and last element, or NULL. */
void *sweep_take_partial(unsigned kind, unsigned cls, unsigned *count, void **tail);
/* Takes a page waiting to be swept for thread T: one of T's own first
 * (AL, LPS), then one no live thread owns, then (LPS, growth not allowed)
 * another thread's.  The caller owns it, sweeps it with sweep_page and
 * takes its list with sweep_detach. */
struct page_header *sweep_pop_unswept(struct thread_alloc *t, unsigned kind, unsigned cls);
/* A page of (KIND, CLS) waiting in store S, or NULL. */
struct page_header *sweep_pop_store_unswept(struct page_store *s, unsigned kind, unsigned cls);
/* S's thread left: its pages waiting to be swept go to the shared lists. */
void sweep_orphan_store(struct page_store *s);
void sweep_page(struct page_header *page);
void *sweep_detach(struct page_header *page, unsigned *count, void **tail);
/* Sweeps every page still waiting; true when some page became free. */
bool sweep_finish_all(void);
/* Sweeps waiting pages until one becomes free; false when none did.  A
 * thread short of a page needs one, not the whole heap swept: sweeping
 * everything touches every page long before it is used again, and on two
 * cores moved the other thread's pages into this one's cache. */
bool sweep_until_page_freed(void);
/* Whether any page store has pages waiting to be swept (a hint). */
bool sweep_stores_have_unswept(void);

#endif
