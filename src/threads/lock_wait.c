/* Counted waits for the collector's locks, and turns for starved threads
 * (threads/lock_wait.h). */
#include <sched.h>
#include <stdbool.h>
#include <time.h>

#include "os/os.h"
#include "threads/lock_wait.h"

_Atomic unsigned lock_waiters;
_Atomic unsigned lock_waits_ended;
_Atomic unsigned lock_starving;

/* With the lock just taken.  Release: the thread yielding a turn, seeing
 * this wait end, goes on. */
static void lock_wait_ended(void) {
  atomic_fetch_add_explicit(&lock_waits_ended, 1, memory_order_release);
  atomic_fetch_sub_explicit(&lock_waiters, 1, memory_order_release);
}

void lock_wait_counted(pthread_mutex_t *lock) {
  atomic_fetch_add_explicit(&lock_waiters, 1, memory_order_relaxed);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += LOCK_STARVING_NS;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000;
  }
  bool starving = pthread_mutex_timedlock(lock, &deadline) != 0;
  if (starving) {
    atomic_fetch_add_explicit(&lock_starving, 1, memory_order_relaxed);
    pthread_mutex_lock(lock);
    atomic_fetch_sub_explicit(&lock_starving, 1, memory_order_relaxed);
  }
  lock_wait_ended();
}

void lock_yield_while(const _Atomic unsigned *count) {
  unsigned ended = atomic_load_explicit(&lock_waits_ended, memory_order_acquire);
  uint64_t deadline = os_now_ns() + LOCK_TURN_NS;
  while (atomic_load_explicit(count, memory_order_relaxed) &&
         atomic_load_explicit(&lock_waits_ended, memory_order_acquire) == ended &&
         os_now_ns() < deadline)
    sched_yield();
}
