/* The collection driver: when to collect, and one collection's steps. */
#ifndef SGC_COLLECT_H
#define SGC_COLLECT_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgc.h"
#include "threads/lock_wait.h"

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

struct heap_accounting {
  size_t allocated_since_gc; /* bytes handed out since the last collection */
  /* Written under heap_lock and read without it (GC_get_total_bytes,
   * GC_get_gc_no): relaxed atomics, a load and a store under the lock. */
  _Atomic size_t total_allocated;
  size_t live_after_gc;      /* marked bytes at the last collection */
  size_t live_atomic_after_gc; /* of them, in pointer-free objects */
  size_t root_bytes;         /* static roots at the last collection */
  _Atomic uint64_t gc_count; /* as total_allocated */
  uint64_t page_refills;      /* free-list refills that took heap_lock */
  uint64_t stolen_batches;    /* ... that took another thread's freed objects */
  uint64_t large_allocations;
  int disable_count;         /* GC_disable nesting */
  bool collecting;
};
extern struct heap_accounting heap_accounting; /* under heap_lock */

/* GC_set_disable_automatic_collection and GC_set_force_unmap_on_gcollect
 * (api/compat_hooks.c). */
bool collect_automatic_disabled(void);
bool collect_force_unmap(void);

/* Torture mode's turn (SGC_TORTURE=N): every Nth allocation slow path of
 * T.  Its collections are automatic ones, so none while those are off. */
struct sgc_thread;
bool collect_torture_turn(struct sgc_thread *t);

/* Every lock a collection takes before it stops the world, in its order,
 * with no page op in flight and the page path closed: a thread stopped or
 * parked while they are held holds none of them, nor a sweep-list,
 * page-store or batch lock (fork, GC_stop_world_external,
 * GC_suspend_thread).  Released in the reverse order. */
void collector_locks_take(void);
void collector_locks_release(void);
/* Both with heap_lock held. */
bool collect_should_run(void);
void collect_locked(enum SGC_gc_reason reason);
/* Heap growth when no free page is left and no collection is due. */
size_t collect_growth_bytes(size_t needed);
/* Called after heap_lock is released: runs queued finalizers or notifies. */
void collect_after_unlock(void);
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

/* Records bytes handed to a thread (refill or large object). */
static inline void account_allocation(size_t bytes) {
  heap_accounting.allocated_since_gc += bytes;
  size_t total = atomic_load_explicit(&heap_accounting.total_allocated, memory_order_relaxed);
  atomic_store_explicit(&heap_accounting.total_allocated, total + bytes, memory_order_relaxed);
}

/* Refills outside heap_lock (alloc/page_path.h) count their bytes in the
 * thread's record and add them here in steps of UNLOCKED_FLUSH_BYTES, so
 * the collection trigger sees them without a shared write per refill.
 * Collections fold both into heap_accounting. */
enum { UNLOCKED_FLUSH_BYTES = 64 << 10 };
/* What all threads together may hold back: a quarter of the collection
 * threshold, so that the trigger is never late by much (500 threads at
 * 64 KiB held 32 MB back from an 8 MB threshold).  Set by each
 * collection; read by refills, relaxed (a hint). */
extern _Atomic size_t unlocked_flush_budget;
/* The step for one thread: the budget over the registered threads, at
 * least a page and at most UNLOCKED_FLUSH_BYTES. */
size_t unlocked_flush_step(void);
extern _Atomic size_t allocated_unlocked;
extern _Atomic uint64_t refills_unlocked;
/* Bytes allocated since the last collection, all paths together. */
size_t allocated_since_gc_bytes(void);

#endif
