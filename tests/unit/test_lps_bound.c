/* LPS(k) with an empty pool (thesis §2.2.3): a thread whose store is
 * empty steals another thread's free page only once
 * heap_expansion_allowed() says no; while it says yes, the thread takes
 * fresh pages, growing the heap if it must.
 *
 * The main thread keeps LIVE pages of objects and fills GARBAGE more with
 * garbage; a collection puts the emptied pages in its store (max l is
 * about LIVE, a about LIVE + GARBAGE).  The pool is then emptied, and a
 * second thread allocates NEED pages of objects:
 *   k = 1:   a > k·max(l), so it steals: the heap stays as it was and
 *            nearly every page it takes is remote;
 *   k = 100: expansion is allowed (after its first page, which lifts
 *            Σ max(u_i) above a), so it takes fresh pages: the heap grows
 *            and the main thread's store keeps its pages.
 * Before the fix the second case stole like the first, whatever k said. */
#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "collect/collect.h"
#include "common.h"
#include "unit.h"
#include "pool_hold.h"

enum { LIVE = 200, GARBAGE = 200, NEED = 48, OBJECT_BYTES = 32 };
enum { PER_PAGE = PAGE_BYTES / OBJECT_BYTES };

static void **live_objects; /* uncollectable: the collector sees it */

struct store_sums {
  int tid;
  long free, remote, taken;
};

static void sum_store(const struct page_store_counters *c, void *arg) {
  struct store_sums *s = arg;
  if (c->tid != s->tid) return;
  s->free += c->free;
  s->remote += c->remote;
  s->taken += c->taken;
}

static struct store_sums store_of(int tid) {
  struct store_sums s = {.tid = tid};
  pthread_mutex_lock(&heap_lock);
  page_stores_visit(sum_store, &s);
  pthread_mutex_unlock(&heap_lock);
  return s;
}

static __attribute__((noinline)) void fill(void) {
  for (long i = 0; i < (long)LIVE * PER_PAGE; i++) {
    live_objects[i] = GC_malloc(OBJECT_BYTES);
    CHECK(live_objects[i] != NULL, "allocation");
  }
  for (long i = 0; i < (long)GARBAGE * PER_PAGE; i++) CHECK(GC_malloc(OBJECT_BYTES), "allocation");
}

static void **needed;
static int second_tid;

static void *second_thread(void *arg) {
  (void)arg;
  second_tid = thread_alloc_tid(alloc_self());
  for (long i = 0; i < (long)NEED * PER_PAGE; i++) {
    needed[i] = GC_malloc(OBJECT_BYTES);
    CHECK(needed[i] != NULL, "allocation");
  }
  return NULL;
}

static void run(double k) {
  page_policy_k = k;
  /* A refill first (another size class than the second thread's): the
   * main thread allocates in this interval, so its
   * store is not idle and keeps the pages it emptied (page_store_idle). */
  for (long i = 0; i < 2L * PER_PAGE; i++) CHECK(GC_malloc(3 * OBJECT_BYTES), "allocation");
  GC_gcollect(); /* sweeps everything: emptied pages go to their owner */
  int main_tid = thread_alloc_tid(alloc_self());
  struct store_sums main_before = store_of(main_tid);
  CHECK(main_before.free >= GARBAGE / 2, "k=%g: only %ld free pages in the main store", k,
        main_before.free);

  static struct pool_hold hold;
  CHECK(pool_hold_all(&hold) == 0, "k=%g: pages left in the pool", k);

  size_t heap_before = heap_size_bytes();
  pthread_t th;
  CHECK(GC_pthread_create(&th, NULL, second_thread, NULL) == 0, "thread");
  CHECK(GC_pthread_join(th, NULL) == 0, "join");
  size_t heap_after = heap_size_bytes();
  struct store_sums second = store_of(second_tid);
  struct store_sums main_after = store_of(main_tid);
  printf("k=%g: heap %zu -> %zu KiB; second thread took %ld pages, %ld remote; main store %ld -> %ld "
         "free pages\n",
         k, heap_before >> 10, heap_after >> 10, second.taken, second.remote, main_before.free,
         main_after.free);
  /* One page may come from the sweep lists rather than the store (a
   * partly used page the first run's thread left when it exited). */
  CHECK(second.taken >= NEED - 1, "k=%g: the second thread took %ld pages", k, second.taken);
  if (k == 1) {
    CHECK(heap_after == heap_before, "k=1: the heap grew from %zu to %zu bytes", heap_before,
          heap_after);
    CHECK(second.remote >= second.taken - 1, "k=1: %ld of %ld pages remote", second.remote,
          second.taken);
  } else {
    CHECK(heap_after > heap_before, "k=%g: the heap did not grow (%zu bytes)", k, heap_after);
    CHECK(second.remote <= 1, "k=%g: %ld of %ld pages remote", k, second.remote, second.taken);
    CHECK(main_after.free >= main_before.free - 1, "k=%g: the main store went from %ld to %ld",
          k, main_before.free, main_after.free);
  }

  pool_release_held(&hold);
}

int main(void) {
  GC_INIT();
  if (page_policy != PAGE_POLICY_LPS) {
    printf("skip: SGC_PAGE_POLICY is not lps\n");
    return 0;
  }
  live_objects = GC_malloc_uncollectable(sizeof(void *) * LIVE * PER_PAGE);
  needed = GC_malloc_uncollectable(sizeof(void *) * NEED * PER_PAGE);
  CHECK(live_objects && needed, "arrays");
  fill();
  run(1);
  /* The second thread's objects stay reachable (needed), its store is
   * gone with it: the next run's thread starts with an empty one. */
  run(100);
  return unit_finish();
}
