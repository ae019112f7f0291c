/* Counted waits for the collector's locks, and turns for starved threads
 * (base/lock_wait.h). */
#include <sched.h>
#include <stdbool.h>
#include <time.h>

#include "os/os.h"
#include "base/lock_wait.h"

_Atomic int lock_waiters;
_Atomic unsigned lock_waits_ended;
_Atomic int lock_starving;

/* With the lock just taken.  Release: the thread yielding a turn, seeing
 * this wait end, goes on. */
static void lock_wait_ended(void) {
  atomic_fetch_add_explicit(&lock_waits_ended, 1, memory_order_release);
  atomic_fetch_sub_explicit(&lock_waiters, 1, memory_order_release);
}

/* The thread's own view of what counts it: a bit is set before its count
 * is raised and cleared after it is lowered, so a park in between takes
 * out a count not yet in (or no longer in) and the count reads one low
 * until the thread runs on, never one high (lock_wait.h).  Before, the
 * view followed the count in, and a thread suspended between the two
 * stayed counted as starving while parked: 1 of 380 parked waiters in
 * one ASan run of unit_suspend_waiters.  A signal fence suffices: the
 * handler runs on this thread. */
static __thread _Atomic unsigned char lock_counted_as __attribute__((tls_model("initial-exec")));

const _Atomic unsigned char *lock_wait_counted_view(void) { return &lock_counted_as; }

static void counted_as(unsigned char bits) {
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&lock_counted_as, bits, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
}

void lock_wait_counted(pthread_mutex_t *lock) {
  counted_as(LOCK_COUNTED_WAITER);
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
    counted_as(LOCK_COUNTED_WAITER | LOCK_COUNTED_STARVING);
    atomic_fetch_add_explicit(&lock_starving, 1, memory_order_relaxed);
    pthread_mutex_lock(lock);
    atomic_fetch_sub_explicit(&lock_starving, 1, memory_order_relaxed);
    counted_as(LOCK_COUNTED_WAITER);
  }
  lock_wait_ended();
  counted_as(0);
}

unsigned lock_wait_park(void) {
  unsigned counted = atomic_load_explicit(&lock_counted_as, memory_order_relaxed);
  if (counted & LOCK_COUNTED_STARVING)
    atomic_fetch_sub_explicit(&lock_starving, 1, memory_order_relaxed);
  /* Release, as lock_wait_ended's: a collection yielding to waiters goes on. */
  if (counted & LOCK_COUNTED_WAITER)
    atomic_fetch_sub_explicit(&lock_waiters, 1, memory_order_release);
  return counted;
}

void lock_wait_unpark(unsigned counted) {
  if (counted & LOCK_COUNTED_WAITER) atomic_fetch_add_explicit(&lock_waiters, 1, memory_order_relaxed);
  if (counted & LOCK_COUNTED_STARVING)
    atomic_fetch_add_explicit(&lock_starving, 1, memory_order_relaxed);
}

void lock_yield_while(const _Atomic int *count) {
  unsigned ended = atomic_load_explicit(&lock_waits_ended, memory_order_acquire);
  uint64_t deadline = os_now_ns() + LOCK_TURN_NS;
  while (atomic_load_explicit(count, memory_order_relaxed) > 0 &&
         atomic_load_explicit(&lock_waits_ended, memory_order_acquire) == ended &&
         os_now_ns() < deadline)
    sched_yield();
}
