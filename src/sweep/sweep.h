/* Lazy sweeping (thesis §3.3): after a collection every small page waits in
 * an "unswept" list of its kind and size class -- its owner's (in the
 * owner's page store) under AL and LPS, a shared one under PS or when the
 * owner has exited -- and is swept when a thread needs objects of that
 * class.  A shared list is under its class's spin lock, a store's under
 * the store's (sweep.c); callers hold heap_lock or are inside the
 * page-path gate (alloc/page_path.h), so no collection runs meanwhile. */
#ifndef SGC_SWEEP_H
#define SGC_SWEEP_H

#include <stdbool.h>

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
/* After marking: frees unmarked large objects and queues every small page
 * for sweeping in the new epoch. */
void sweep_after_mark(void);
/* The same, but every page swept now by all GC threads (SGC_SWEEP=parallel). */
void sweep_after_mark_parallel(void);
/* Bytes in swept pages' free lists (for GC_get_free_bytes). */
size_t sweep_free_bytes_estimate(void);

#endif
