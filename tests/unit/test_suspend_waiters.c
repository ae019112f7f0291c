/* A thread that GC_suspend_thread parks while it waits for heap_lock
 * leaves the waiters' counts until it is resumed (lock_wait_park,
 * threads/lock_wait.c).  Before, it stayed counted: every GC_gcollect
 * then yielded to it for up to 2 ms, and, once it had waited over 1 ms,
 * every taker of heap_lock did too, for as long as it stayed suspended.
 *
 * A worker allocates large objects without pause (each takes heap_lock),
 * so GC_suspend_thread, which holds heap_lock while it parks the worker,
 * often parks it inside its wait.  After each suspension the counts must
 * be 0 (no other thread waits), and the worker's record must show, in
 * some of the 400 suspensions (and on, up to 4,000, while none has: beside
 * other tests under ASan one run found none in 400), that it was parked
 * inside a counted wait, or the test proved nothing; each resume puts it
 * back. */
#include <unistd.h>

#include "common.h"
#include "gc/javaxfc.h"
#include "threads/lock_wait.h"
#include "threads/thread.h"
#include "unit.h"

enum { SUSPENSIONS = 400, SUSPENSIONS_MOST = 4000, LARGE = 64 << 10 };

static atomic_int stop;
static struct sgc_thread *_Atomic worker_record;

static void *allocate_large(void *arg) {
  (void)arg;
  void *volatile keep = NULL;
  keep = GC_malloc(16); /* registered */
  atomic_store(&worker_record, sgc_self);
  while (!atomic_load(&stop)) keep = GC_malloc(LARGE);
  (void)keep;
  return NULL;
}

int main(void) {
  GC_init();
  pthread_t worker;
  CHECK(GC_pthread_create(&worker, NULL, allocate_large, NULL) == 0, "create");
  while (!atomic_load(&worker_record)) usleep(1000);
  struct sgc_thread *w = atomic_load(&worker_record);
  int parked_waiting = 0, counted_while_parked = 0;
  int i = 0;
  for (; i < SUSPENSIONS || (parked_waiting == 0 && i < SUSPENSIONS_MOST); i++) {
    GC_suspend_thread((GC_SUSPEND_THREAD_ID)worker);
    unsigned as = atomic_load(&w->lock_counted_as);
    unsigned waiters = atomic_load(&lock_waiters), starving = atomic_load(&lock_starving);
    if (as & LOCK_COUNTED_WAITER) {
      parked_waiting++;
      counted_while_parked += waiters != 0 || starving != 0;
    }
    GC_resume_thread((GC_SUSPEND_THREAD_ID)worker);
    usleep(200);
  }
  atomic_store(&stop, 1);
  CHECK(GC_pthread_join(worker, NULL) == 0, "join");
  printf("%d of %d suspensions parked the worker inside its wait for heap_lock\n", parked_waiting,
         i);
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
    CHECK(parked_waiting > 0, "no suspension parked the worker inside a wait");
  CHECK(counted_while_parked == 0, "%d of %d parked waiters still counted", counted_while_parked,
        parked_waiting);
  CHECK(atomic_load(&lock_waiters) == 0 && atomic_load(&lock_starving) == 0,
        "counts left at %u waiters, %u starving", atomic_load(&lock_waiters),
        atomic_load(&lock_starving));
  return unit_finish();
}
