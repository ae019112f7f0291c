/* Counted waits for the collector's locks (heap_lock, registry_lock),
 * and turns for threads starved of heap_lock.
 *
 * A collection holds heap_lock and registry_lock from start to end.  A
 * thread that collects again and again -- GC_gcollect in a loop, or large
 * objects allocated in a small heap, one automatic collection every few --
 * gives them up for a few microseconds between two holds, while a waiter
 * that the unlock wakes takes tens of microseconds to run: it finds the
 * lock taken again and sleeps on, for seconds.  So every wait is counted
 * (lock_waiters, lock_waits_ended); a wait that lasts over
 * LOCK_STARVING_NS counts as starving too (lock_starving); and a thread
 * about to take heap_lock while one is starving first yields until some
 * wait has ended, for at most LOCK_TURN_NS.  heap_lock is taken first of
 * the two, so the thread yielding holds neither: whichever the starving
 * thread waits for (registry_lock, say, at its start or exit, beside
 * collections that take it every few allocations) is free or about to be.  An explicit collection
 * yields to any waiter (collect/collect.c).  Only waits pay: the
 * uncontended lock is a relaxed load and a trylock. */
#ifndef SGC_LOCK_WAIT_H
#define SGC_LOCK_WAIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

enum { LOCK_STARVING_NS = 1000000, LOCK_TURN_NS = 2000000 };
/* What the calling thread's wait is counted as (lock_wait.c). */
enum { LOCK_COUNTED_WAITER = 1, LOCK_COUNTED_STARVING = 2 };


/* Threads waiting now, and of them those waiting over LOCK_STARVING_NS.
 * Signed, and read as "any" only above 0: a thread parked in the few
 * instructions between taking a count's bit in its own view and raising
 * the count (lock_wait.c) leaves it one low while parked, never one high
 * (which would make every explicit collection, and with lock_starving
 * every taker of heap_lock, yield to a thread that may stay suspended). */
extern _Atomic int lock_waiters;
extern _Atomic int lock_starving;
extern _Atomic unsigned lock_waits_ended; /* waits that have ended */

/* The program's function this thread runs with one of the collector's
 * locks held, as the message names it ("the GC_set_start_callback
 * callback"), or NULL: set around each (api/compat_hooks.c). */
extern __thread const char *lock_holding_callback __attribute__((tls_model("initial-exec")));
/* Whether LOCK is held by the thread whose kernel id is TID, asked by
 * that thread itself. */
bool lock_held_by(pthread_mutex_t *lock, int tid);
/* Before a wait for LOCK: a thread that holds it already would wait for
 * ever, so that is a fatal error naming lock_holding_callback. */
void lock_wait_check_not_held(pthread_mutex_t *lock);
/* Names LOCK in that message ("allocation lock"). */
void lock_wait_name(const pthread_mutex_t *lock, const char *name);

/* Waits for LOCK, counted; after LOCK_STARVING_NS counted as starving. */
void lock_wait_counted(pthread_mutex_t *lock);
/* Yields while *COUNT is above 0 until a wait has ended, at most LOCK_TURN_NS. */
void lock_yield_while(const _Atomic int *count);
/* GC_suspend_thread's park, in the suspend handler (threads/stop_world.c):
 * a thread parked inside a counted wait leaves the counts until it is
 * resumed, or every explicit collection -- and, had it counted as
 * starving, every taker of heap_lock -- would yield it a turn meanwhile.
 * Returns what to give back to lock_wait_unpark.  Async-signal-safe:
 * lock-free atomics only. */
unsigned lock_wait_park(void);
/* The calling thread's LOCK_COUNTED_* bits, for another thread to read
 * (unit_suspend_waiters); the thread writes them, relaxed. */
const _Atomic unsigned char *lock_wait_counted_view(void);
void lock_wait_unpark(unsigned counted);

static inline void lock_counted(pthread_mutex_t *lock) {
  if (__builtin_expect(pthread_mutex_trylock(lock) == 0, 1)) return;
  lock_wait_counted(lock);
}

/* Before taking heap_lock, which is taken first of the counted locks, so
 * the caller holds none a starving thread could be waiting for. */
static inline void lock_turn_for_starving(void) {
  if (__builtin_expect(atomic_load_explicit(&lock_starving, memory_order_relaxed) > 0, 0))
    lock_yield_while(&lock_starving);
}

#endif
