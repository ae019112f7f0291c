/* A lock held for a few list operations: test and test-and-set, yielding
 * the CPU after a short spin in case the holder was preempted. */
#ifndef SGC_SPIN_LOCK_H
#define SGC_SPIN_LOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

struct spin_lock {
  _Atomic bool held;
};

static inline void spin_lock(struct spin_lock *l) {
  for (unsigned spins = 0;; spins++) {
    /* acquire: the protected data is read after the lock is ours. */
    if (!atomic_exchange_explicit(&l->held, true, memory_order_acquire)) return;
    while (atomic_load_explicit(&l->held, memory_order_relaxed)) {
      if (++spins > 64) sched_yield();
      else __builtin_ia32_pause();
    }
  }
}

static inline void spin_unlock(struct spin_lock *l) {
  /* release: the updates made under the lock reach the next holder. */
  atomic_store_explicit(&l->held, false, memory_order_release);
}

#endif
