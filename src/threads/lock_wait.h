/* Counted waits for the collector's locks (heap_lock, registry_lock).
 *
 * A thread that collects in a loop (GC_gcollect back to back) holds both
 * locks for the whole of each collection and gives them up for a few
 * instructions between two: a waiter that the unlock wakes finds them
 * taken again and sleeps on.  So every wait for them is counted, and an
 * explicit collection first lets a waiter in (collect/collect.c,
 * collect_lock_after_waiters).  Only waits are counted: the uncontended
 * lock is one trylock, as before. */
#ifndef SGC_LOCK_WAIT_H
#define SGC_LOCK_WAIT_H

#include <pthread.h>
#include <stdatomic.h>

extern _Atomic unsigned lock_waiters;     /* threads waiting now */
extern _Atomic unsigned lock_waits_ended; /* waits that have ended */

static inline void lock_wait_enter(void) {
  atomic_fetch_add_explicit(&lock_waiters, 1, memory_order_relaxed);
}
/* With the lock just taken.  Release: the collection watching for a wait
 * to end sees this one. */
static inline void lock_wait_leave(void) {
  atomic_fetch_add_explicit(&lock_waits_ended, 1, memory_order_release);
  atomic_fetch_sub_explicit(&lock_waiters, 1, memory_order_release);
}

static inline void lock_counted(pthread_mutex_t *lock) {
  if (__builtin_expect(pthread_mutex_trylock(lock) == 0, 1)) return;
  lock_wait_enter();
  pthread_mutex_lock(lock);
  lock_wait_leave();
}

#endif
