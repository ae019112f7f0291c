/* Lazy sweeping gives a thread back its own pages (sweep/sweep.c): under
 * AL and LPS a page waits for sweeping in its owner's store.  Under AL
 * another thread's refills never take it and the owner reuses it; under
 * LPS another thread takes it only by stealing (the heap is past LPS's
 * bound here), so every remote page is a stolen one.  Under PS (one
 * shared list) the other thread takes such pages freely: the same program
 * then counts remote pages that no steal explains, which shows the checks
 * can fail.  Part 2: pages waiting in the store of a thread that exits
 * move to the shared lists, and another thread reuses them.  Run once per
 * policy (SGC_PAGE_POLICY, see CMakeLists.txt). */
#include <pthread.h>

#include "alloc/page_store.h"
#include "collect/collect.h"
#include "common.h"
#include "unit.h"

enum { PAGES = 200, PER_PAGE = PAGE_BYTES / 32 };

static pthread_barrier_t filled, collected, other_done, refilled;

/* Allocates PAGES pages of 32-byte objects and keeps none. */
static void fill_pages(void) {
  for (int i = 0; i < PAGES * PER_PAGE; i++) CHECK(GC_malloc(32) != NULL, "allocation");
}

static void *owner(void *arg) {
  (void)arg;
  fill_pages();
  pthread_barrier_wait(&filled);
  pthread_barrier_wait(&collected);
  pthread_barrier_wait(&other_done);
  fill_pages(); /* again: its own swept pages serve it */
  pthread_barrier_wait(&refilled);
  return NULL;
}

static void *other(void *arg) {
  (void)arg;
  for (int i = 0; i < PAGES / 2 * PER_PAGE; i++) CHECK(GC_malloc(32) != NULL, "allocation");
  return NULL;
}

/* Part 2: a thread whose pages wait for the sweep in its store exits. */
static pthread_barrier_t leaver_filled, leaver_collected;
static long leaver_waiting; /* its store's pages waiting, seen before it exits */
static struct page_store *leaver_store;

static void *leaver(void *arg) {
  (void)arg;
  fill_pages();
  leaver_store = alloc_self_or_register()->page_store;
  pthread_barrier_wait(&leaver_filled);
  pthread_barrier_wait(&leaver_collected);
  leaver_waiting = atomic_load(&leaver_store->unswept.pages);
  return NULL; /* exits: its store retires */
}

static void *refill_pages(void *arg) {
  (void)arg;
  fill_pages();
  return NULL;
}

/* A collection that leaves every page to the lazy sweep (GC_gcollect
 * would sweep them all at once). */
static void collect_lazily(void) {
  pthread_mutex_lock(&heap_lock);
  collect_locked(SGC_REASON_EXPLICIT);
  pthread_mutex_unlock(&heap_lock);
  collect_after_unlock();
}

int main(void) {
  GC_INIT();
  /* Enough heap that nobody runs out (and sweeps everything) meanwhile. */
  GC_expand_hp(64u << 20);
  pthread_barrier_init(&filled, NULL, 2);
  pthread_barrier_init(&collected, NULL, 2);
  pthread_barrier_init(&other_done, NULL, 2);
  pthread_barrier_init(&refilled, NULL, 2);
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, owner, NULL) == 0, "thread");
  pthread_barrier_wait(&filled);
  collect_lazily();
  SGC_stats_t before;
  SGC_get_stats(&before);
  pthread_barrier_wait(&collected);
  CHECK(pthread_create(&b, NULL, other, NULL) == 0, "thread");
  pthread_join(b, NULL);
  SGC_stats_t mid;
  SGC_get_stats(&mid);
  pthread_barrier_wait(&other_done);
  pthread_barrier_wait(&refilled);
  pthread_join(a, NULL);
  SGC_stats_t after;
  SGC_get_stats(&after);

  unsigned long remote_other = (unsigned long)(mid.remote_pages - before.remote_pages);
  unsigned long stolen_other = (unsigned long)(mid.stolen_pages - before.stolen_pages);
  unsigned long remote_all = (unsigned long)(after.remote_pages - before.remote_pages);
  printf("policy %d: remote pages %lu (stolen %lu) while the other thread allocated, %lu in "
         "all; pages consumed %lu -> %lu\n",
         (int)page_policy, remote_other, stolen_other, remote_all,
         (unsigned long)before.pages_consumed, (unsigned long)after.pages_consumed);
  if (page_policy == PAGE_POLICY_LPS) {
    CHECK(remote_other > 0 && remote_other <= stolen_other,
          "remote pages %lu, stolen %lu: LPS takes another thread's pages only by stealing",
          remote_other, stolen_other);
  } else if (page_policy == PAGE_POLICY_AL) {
    CHECK(remote_all == 0, "%lu of the owner's dropped pages went to another thread",
          remote_all);
    /* The owner refilled from its own swept pages, not fresh ones: only
     * the other thread's 100 pages (and a few kept in reserve) are new. */
    CHECK(after.pages_consumed <= before.pages_consumed + PAGES / 2 + 16,
          "pages consumed %lu -> %lu", (unsigned long)before.pages_consumed,
          (unsigned long)after.pages_consumed);
  } else {
    CHECK(remote_other > stolen_other,
          "under PS the other thread took only %lu of the owner's pages (stolen %lu)",
          remote_other, stolen_other);
  }

  /* 2. An exiting thread's pages waiting for the sweep become anyone's:
   * they move to the shared lists, and another thread's refills reuse
   * them instead of growing consumption. */
  pthread_barrier_init(&leaver_filled, NULL, 2);
  pthread_barrier_init(&leaver_collected, NULL, 2);
  CHECK(pthread_create(&a, NULL, leaver, NULL) == 0, "thread");
  pthread_barrier_wait(&leaver_filled);
  collect_lazily();
  pthread_barrier_wait(&leaver_collected);
  pthread_join(a, NULL);
  if (page_policy_returns_to_owner(page_policy))
    CHECK(leaver_waiting >= PAGES / 2, "%ld of the leaver's pages waited in its store",
          leaver_waiting);
  CHECK(atomic_load(&leaver_store->unswept.pages) == 0,
        "%ld pages still wait in an exited thread's store",
        (long)atomic_load(&leaver_store->unswept.pages));
  SGC_get_stats(&before);
  CHECK(pthread_create(&b, NULL, refill_pages, NULL) == 0, "thread");
  pthread_join(b, NULL);
  SGC_get_stats(&after);
  printf("after a thread exited: pages consumed %lu -> %lu\n",
         (unsigned long)before.pages_consumed, (unsigned long)after.pages_consumed);
  CHECK(after.pages_consumed <= before.pages_consumed + 16,
        "the exited thread's pages were not reused: consumed %lu -> %lu",
        (unsigned long)before.pages_consumed, (unsigned long)after.pages_consumed);
  return unit_finish();
}
