/* Counted waits for the collector's locks, and turns for starved threads
 * (base/lock_wait.h). */
#include <sched.h>
#include <stdbool.h>
#include <time.h>

#include "common.h"
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

__thread const char *lock_holding_callback __attribute__((tls_model("initial-exec")));

/* The collector's locks by name, for the message (set once at start-up
 * by their owners' layer: api/init.c). */
static struct {
  const pthread_mutex_t *lock;
  const char *name;
} lock_names[4];

void lock_wait_name(const pthread_mutex_t *lock, const char *name) {
  for (unsigned i = 0; i < sizeof lock_names / sizeof *lock_names; i++)
    if (!lock_names[i].lock || lock_names[i].lock == lock) {
      lock_names[i].lock = lock;
      lock_names[i].name = name;
      return;
    }
}

static const char *lock_name(const pthread_mutex_t *lock) {
  for (unsigned i = 0; i < sizeof lock_names / sizeof *lock_names; i++)
    if (lock_names[i].lock == lock) return lock_names[i].name;
  return "lock";
}

bool lock_held_by(pthread_mutex_t *lock, int tid) {
  /* glibc records the kernel thread id of the owner in every mutex it
   * locks, whatever its type, and clears it on unlock: only thread TID
   * writes TID there, so reading it racily is exact when TID asks. */
  return __atomic_load_n(&lock->__data.__owner, __ATOMIC_RELAXED) == tid;
}

void lock_wait_check_not_held(pthread_mutex_t *lock) {
  /* A system call, on the waiting path only. */
  if (!lock_held_by(lock, os_gettid())) return;
  const char *callback = lock_holding_callback;
  if (callback)
    sgc_fatal("%s allocated, collected or registered a finalizer: it runs with sgc's %s "
              "held, which that call waits for, so the thread would wait for ever; as with "
              "bdwgc, it must not (allocate before or after it)",
              callback, lock_name(lock));
  sgc_fatal("a thread waits for sgc's %s, which it holds itself: a function sgc called with "
            "the lock held (a callback, a mark procedure, a warn procedure) called back into "
            "sgc, which it must not",
            lock_name(lock));
}

void lock_wait_counted(pthread_mutex_t *lock) {
  lock_wait_check_not_held(lock);
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
