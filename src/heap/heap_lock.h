/* The heap's locks: heap_lock (page pool, sweep lists, chunks, and the
 * collector, which holds it from start to end), meta_lock (finalizer,
 * link and root tables), and the page operations done outside heap_lock
 * that a collection waits out.  heap_lock_wait, heap_lock_acquire and
 * meta_lock_take are the threads layer's (threads/pthread_api.c): a wait
 * is a blocking section, so a collection need not signal the waiter. */
#ifndef SGC_HEAP_LOCK_H
#define SGC_HEAP_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/lock_wait.h"

/* heap_lock guards the page pool, the sweep lists, chunk creation and the
 * collector.  The allocation and free fast paths never take it.  Lock
 * order: heap_lock, registry_lock, meta_lock. */
extern pthread_mutex_t heap_lock;
/* heap_lock for mutator T (NULL: not registered).  A thread that has to
 * wait for it -- most often for a whole collection, which holds it from
 * start to end -- waits in a blocking section (threads/pthread_api.c), so
 * the collection does not signal it: waking a thread asleep in the
 * kernel to take the stop signal costs tens of microseconds on a VM. */
struct sgc_thread;
void heap_lock_wait(struct sgc_thread *t);
static inline void heap_lock_take(struct sgc_thread *t) {
  lock_turn_for_starving();
  if (__builtin_expect(pthread_mutex_trylock(&heap_lock) == 0, 1)) return;
  heap_lock_wait(t);
}
/* heap_lock_take for the calling thread, registered or not, where no
 * thread record is at hand. */
void heap_lock_acquire(void);
/* meta_lock guards the finalizer and disappearing-link tables and the
 * registered roots.  A collection takes it with heap_lock; the program's
 * threads take it with meta_lock_take, which waits as heap_lock_take
 * does (threads/pthread_api.c). */
extern pthread_mutex_t meta_lock;
void meta_lock_take(void);

/* Incremented by every collection; a page is swept at most once per epoch. */
extern _Atomic uint32_t gc_epoch;

/* Page operations done outside heap_lock (sweeping a page a thread took,
 * formatting a fresh page): a collection waits, with heap_lock held so no
 * new one starts, until none is in progress before it stops the world, so
 * it never sees a page half swept or half formatted. */
extern _Atomic unsigned page_ops_in_progress;
static inline void page_op_begin(void) {
  atomic_fetch_add_explicit(&page_ops_in_progress, 1, memory_order_acq_rel);
}
static inline void page_op_end(void) {
  atomic_fetch_sub_explicit(&page_ops_in_progress, 1, memory_order_acq_rel);
}
/* With heap_lock held (so none begins): until every page op has ended.
 * acquire: pairs with page_op_end, so their writes are visible after. */
static inline void page_ops_wait(void) {
  while (atomic_load_explicit(&page_ops_in_progress, memory_order_acquire)) sched_yield();
}

#endif
