/* A thread that GC_suspend_thread parks while it waits for heap_lock
 * leaves the waiters' counts until it is resumed (lock_wait_park,
 * base/lock_wait.c).  Before, it stayed counted: every GC_gcollect
 * then yielded to it for up to 2 ms, and, once it had waited over 1 ms,
 * every taker of heap_lock did too, for as long as it stayed suspended.
 *
 * A worker allocates large objects without pause (each takes heap_lock),
 * so GC_suspend_thread, which holds heap_lock while it parks the worker,
 * often parks it inside its wait: 400 such suspensions.  That needs both
 * threads running at once, and beside other tests on a 2-CPU machine it
 * found the worker waiting in 0 of 4,000.  So HELD_ROUNDS more make the
 * wait happen: a holder thread takes heap_lock (GC_call_with_alloc_lock)
 * until the worker waits for it and then until the suspender does too;
 * when the suspender gets the lock first, the worker is inside its wait,
 * blocked: in 48-100 of 100 rounds alone, and in 1-72 of 100 beside two
 * busy loops, so the rounds go on, up to HELD_ROUNDS_MOST, while none
 * has parked the worker waiting.  After each suspension the counts
 * must be 0 (no other thread waits), and the worker's record must show,
 * in some suspension, that it was parked inside a counted wait, or the
 * test proved nothing; each resume puts it back. */
#include <unistd.h>

#include "common.h"
#include "gc/javaxfc.h"
#include "base/lock_wait.h"
#include "threads/thread.h"
#include "unit.h"

/* The test's own sleeps are glibc's (thread_nap), not sgc's sleeping
 * calls: a thread leaving one of those waits, counted, for registry_lock
 * while GC_suspend_thread holds it, which this test would take for the
 * parked worker's count. */

enum { SUSPENSIONS = 400, HELD_ROUNDS = 100, HELD_ROUNDS_MOST = 2000, LARGE = 64 << 10 };

static atomic_int stop;
static struct sgc_thread *_Atomic worker_record;
static const _Atomic unsigned char *_Atomic worker_counted, *_Atomic suspender_counted;
static atomic_int hold_round, held_round;

static bool counted_waiting(const _Atomic unsigned char *t) {
  return atomic_load(t) & LOCK_COUNTED_WAITER;
}

/* Waits up to a second for T to wait for one of the collector's locks. */
static bool wait_until_waiting(const _Atomic unsigned char *t) {
  for (int i = 0; i < 100000 && !counted_waiting(t); i++) thread_nap(10 * 1000L);
  return counted_waiting(t);
}

/* Holds heap_lock (inside GC_call_with_alloc_lock) until the suspender
 * waits for it. */
static void *hold_until_suspender_waits(void *round) {
  atomic_store(&held_round, (int)(intptr_t)round);
  wait_until_waiting(atomic_load(&suspender_counted));
  return NULL;
}

static void *holder(void *arg) {
  (void)arg;
  int seen = 0;
  while (!atomic_load(&stop)) {
    int round = atomic_load(&hold_round);
    if (round == seen) {
      thread_nap(20 * 1000L);
      continue;
    }
    seen = round;
    GC_call_with_alloc_lock(hold_until_suspender_waits, (void *)(intptr_t)round);
  }
  return NULL;
}

static void *allocate_large(void *arg) {
  (void)arg;
  void *volatile keep = NULL;
  keep = GC_malloc(16); /* registered */
  atomic_store(&worker_counted, lock_wait_counted_view());
  atomic_store(&worker_record, sgc_self);
  while (!atomic_load(&stop)) keep = GC_malloc(LARGE);
  (void)keep;
  return NULL;
}

struct tally {
  int suspensions, parked_waiting, counted_while_parked;
};

/* Suspends WORKER (record W) and reads the counts while it is parked. */
static void suspend_and_check(pthread_t worker, struct sgc_thread *w, struct tally *tally) {
  GC_suspend_thread((GC_SUSPEND_THREAD_ID)worker);
  unsigned as = atomic_load(atomic_load(&worker_counted));
  int waiters = atomic_load(&lock_waiters), starving = atomic_load(&lock_starving);
  tally->suspensions++;
  if (as & LOCK_COUNTED_WAITER) {
    tally->parked_waiting++;
    /* One low is allowed (lock_wait.h), one high is the fault -- if it
     * stays while the worker is parked: another thread's wait of a few
     * microseconds (the holder's, a GC thread's for registry_lock) may
     * be counted at the moment of the first read, which failed about one
     * run in 150 before this second look. */
    for (int i = 0; i < 100 && (waiters > 0 || starving > 0); i++) {
      thread_nap(100 * 1000L);
      waiters = atomic_load(&lock_waiters);
      starving = atomic_load(&lock_starving);
    }
    tally->counted_while_parked += waiters > 0 || starving > 0;
  }
  GC_resume_thread((GC_SUSPEND_THREAD_ID)worker);
}

int main(void) {
  GC_init();
  atomic_store(&suspender_counted, lock_wait_counted_view());
  pthread_t worker, hold;
  CHECK(GC_pthread_create(&worker, NULL, allocate_large, NULL) == 0, "create");
  CHECK(GC_pthread_create(&hold, NULL, holder, NULL) == 0, "create");
  while (!atomic_load(&worker_record)) thread_nap(1000 * 1000L);
  struct sgc_thread *w = atomic_load(&worker_record);
  struct tally free_running = {0}, held = {0};
  for (int i = 0; i < SUSPENSIONS; i++) {
    suspend_and_check(worker, w, &free_running);
    thread_nap(200 * 1000L);
  }
  for (int round = 1;
       round <= HELD_ROUNDS ||
       (round <= HELD_ROUNDS_MOST && free_running.parked_waiting + held.parked_waiting == 0);
       round++) {
    atomic_store(&hold_round, round);
    while (atomic_load(&held_round) != round) thread_nap(10 * 1000L);
    if (wait_until_waiting(atomic_load(&worker_counted))) suspend_and_check(worker, w, &held);
  }
  atomic_store(&stop, 1);
  CHECK(GC_pthread_join(worker, NULL) == 0, "join");
  CHECK(GC_pthread_join(hold, NULL) == 0, "join");
  printf("%d of %d suspensions parked the worker inside its wait for heap_lock, and %d of %d "
         "with the lock held until both waited\n",
         free_running.parked_waiting, free_running.suspensions, held.parked_waiting,
         held.suspensions);
  CHECK(free_running.parked_waiting + held.parked_waiting > 0,
        "no suspension parked the worker inside a wait");
  int counted = free_running.counted_while_parked + held.counted_while_parked;
  CHECK(counted == 0, "%d of %d parked waiters still counted", counted,
        free_running.parked_waiting + held.parked_waiting);
  CHECK(atomic_load(&lock_waiters) == 0 && atomic_load(&lock_starving) == 0,
        "counts left at %d waiters, %d starving", atomic_load(&lock_waiters),
        atomic_load(&lock_starving));
  return unit_finish();
}
