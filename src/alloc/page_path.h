/* The page path without heap_lock.
 *
 * Thesis §2.2 asks that page-level operations scale: a thread refilling
 * its free list from its own batches, from pages waiting to be swept, or
 * from its own free-page store (AL, LPS) should not queue behind one global
 * lock.  Those structures get small locks of their own (a spin lock per
 * size class for the sweep lists, per page store, per thread's batches),
 * and the refill that uses only them runs outside heap_lock (refill.c).
 *
 * What heap_lock still gave that refill is exclusion from a collection,
 * which rebuilds the sweep lists and drops the batches.  The gate below
 * gives it instead, with no shared write on the refill's side: a thread
 * announces itself in its own record, then checks that no collection has
 * closed the gate; a collection closes it, then waits until no thread is
 * announced.  Both sides write then read with seq_cst (a Dekker pair), so
 * either the collector sees the thread inside or the thread sees the gate
 * closed, never neither.  A thread that finds the gate closed takes the
 * heap_lock path, which waits for the collection.
 *
 * Inside the gate a thread takes no lock but these spin locks, and
 * heap_lock holders take them only after closing the gate or for a few
 * list operations, so the collector's wait always ends. */
#ifndef SGC_PAGE_PATH_H
#define SGC_PAGE_PATH_H

#include <stdatomic.h>
#include <stdbool.h>

#include "os/spin_lock.h"
#include "alloc/thread_alloc.h"

extern _Atomic bool page_path_closed;

/* Enters the gate; false when a collection has closed it. */
static inline bool page_path_enter(struct thread_alloc *t) {
  atomic_store_explicit(&t->in_page_path, true, memory_order_seq_cst);
  if (!atomic_load_explicit(&page_path_closed, memory_order_seq_cst)) return true;
  atomic_store_explicit(&t->in_page_path, false, memory_order_release);
  return false;
}

static inline void page_path_exit(struct thread_alloc *t) {
  /* release: everything done inside happens before the collector's
   * acquire load that sees the thread gone. */
  atomic_store_explicit(&t->in_page_path, false, memory_order_release);
}

/* Closes the gate and waits until no registered thread is inside; with
 * heap_lock and registry_lock held.  page_path_open reopens it. */
void page_path_close(void);
void page_path_open(void);

#endif
