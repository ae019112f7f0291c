/* The page path without heap_lock (alloc/page_path.h): reserved fresh
 * pages stay their owner's, the gate keeps a collection and a refill
 * apart, and refills really take that path. */
#include <pthread.h>
#include <unistd.h>

#include "alloc/page_path.h"
#include "alloc/percpu.h"
#include "collect/collect.h"
#include "common.h"
#include "unit.h"

static _Atomic int inside, left;

static void *hold_gate(void *arg) {
  (void)arg;
  struct thread_alloc *t = alloc_self_or_register();
  CHECK(page_path_enter(t), "the gate is open");
  atomic_store(&inside, 1);
  usleep(50 * 1000);
  atomic_store(&left, 1); /* before the exit the closer waits for */
  page_path_exit(t);
  return NULL;
}

static void *allocate(void *arg) {
  long **keep = arg;
  for (int round = 0; round < 40; round++)
    for (int i = 0; i < 20000; i++) {
      long *p = GC_malloc(32);
      CHECK(p && p[0] == 0 && p[3] == 0, "round %d object %d not zeroed", round, i);
      p[0] = i;
      keep[i % 64] = p; /* a few survive each round */
    }
  return NULL;
}

/* Part 1: thread A takes fresh pages (and a reserve of them), then waits
 * while thread B allocates.  Collections are off, so LPS's bound never
 * allows growth (max l is 0) and B steals what it can: it must never get
 * A's reserved fresh pages, only pages a thread emptied (none here). */
static pthread_barrier_t reserve_taken, reserve_checked;

static void *take_reserve(void *arg) {
  (void)arg;
  for (int i = 0; i < 200; i++) CHECK(GC_malloc(32) != NULL, "allocation");
  pthread_barrier_wait(&reserve_taken);
  pthread_barrier_wait(&reserve_checked);
  return NULL;
}

static void *allocate_beside(void *arg) {
  (void)arg;
  for (int i = 0; i < 20000; i++) CHECK(GC_malloc(32) != NULL, "allocation");
  return NULL;
}

/* Part 4's thread A: 400 pages of 32-byte objects, none kept, then
 * alive (its store stays its own) until B has allocated. */
static pthread_barrier_t dropped, stolen;

static void *fill_and_wait(void *arg) {
  (void)arg;
  for (int i = 0; i < 400 * 128; i++) CHECK(GC_malloc(32) != NULL, "allocation");
  pthread_barrier_wait(&dropped);
  pthread_barrier_wait(&stolen);
  return NULL;
}

int main(void) {
  GC_INIT();
  /* 1. Reserved fresh pages are the owner's alone (first, on a fresh
   * heap: later parts leave swept pages that refills would use). */
  SGC_stats_t before;
  SGC_get_stats(&before);
  GC_disable();
  pthread_barrier_init(&reserve_taken, NULL, 2);
  pthread_barrier_init(&reserve_checked, NULL, 2);
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, take_reserve, NULL) == 0, "thread");
  pthread_barrier_wait(&reserve_taken);
  CHECK(pthread_create(&b, NULL, allocate_beside, NULL) == 0, "thread");
  pthread_join(b, NULL);
  pthread_barrier_wait(&reserve_checked);
  pthread_join(a, NULL);
  GC_enable();
  SGC_stats_t after;
  SGC_get_stats(&after);
  CHECK(after.stolen_pages == before.stolen_pages,
        "a thread stole %lu fresh pages another had reserved",
        (unsigned long)(after.stolen_pages - before.stolen_pages));
  CHECK(after.pages_taken > before.pages_taken + 100, "pages taken %lu -> %lu",
        (unsigned long)before.pages_taken, (unsigned long)after.pages_taken);

  /* 2. Closing waits for a thread inside; a closed gate turns refills away. */
  pthread_t holder;
  CHECK(pthread_create(&holder, NULL, hold_gate, NULL) == 0, "thread");
  while (!atomic_load(&inside)) sched_yield();
  pthread_mutex_lock(&heap_lock);
  pthread_mutex_lock(&registry_lock);
  page_path_close();
  CHECK(atomic_load(&left) == 1, "page_path_close returned while a thread was inside");
  struct thread_alloc *self = alloc_self_or_register();
  CHECK(!page_path_enter(self), "entered a closed gate");
  CHECK(!atomic_load(&self->in_page_path), "a turned-away thread stays announced");
  page_path_open();
  pthread_mutex_unlock(&registry_lock);
  pthread_mutex_unlock(&heap_lock);
  CHECK(page_path_enter(self), "the reopened gate");
  page_path_exit(self);
  pthread_join(holder, NULL);

  /* 3. Two threads allocating across collections refill mostly (80% and
   * more) without heap_lock: per-thread caches, LPS, refills by sweeping,
   * from their own pages, or stealing (live data is tiny here, so LPS's
   * bound stops fresh pages early). */
  static long *keep[2][64];
  pthread_t workers[2];
  for (int i = 0; i < 2; i++)
    CHECK(pthread_create(&workers[i], NULL, allocate, keep[i]) == 0, "worker");
  for (int i = 0; i < 2; i++) pthread_join(workers[i], NULL);
  GC_gcollect();
  SGC_stats_t s;
  SGC_get_stats(&s);
  CHECK(s.collections >= 2, "collections %lu", (unsigned long)s.collections);
  CHECK(s.unlocked_refills >= 4 * s.page_refills,
        "refills without heap_lock %lu, with %lu", (unsigned long)s.unlocked_refills,
        (unsigned long)s.page_refills);
  printf("refills: %lu without heap_lock, %lu with\n", (unsigned long)s.unlocked_refills,
         (unsigned long)s.page_refills);

  /* 4. LPS steals pages another (live) thread emptied: A fills pages and
   * drops them, an explicit collection sweeps them back into A's store,
   * and B, with an empty store and the heap past LPS's bound, must take
   * them rather than fresh ones. */
  pthread_barrier_init(&dropped, NULL, 2);
  pthread_barrier_init(&stolen, NULL, 2);
  CHECK(pthread_create(&a, NULL, fill_and_wait, NULL) == 0, "thread");
  pthread_barrier_wait(&dropped);
  GC_gcollect();
  SGC_get_stats(&after);
  CHECK(pthread_create(&b, NULL, allocate_beside, NULL) == 0, "thread");
  pthread_join(b, NULL);
  pthread_barrier_wait(&stolen);
  pthread_join(a, NULL);
  SGC_get_stats(&s);
  CHECK(s.stolen_pages > after.stolen_pages, "no page stolen (%lu)",
        (unsigned long)s.stolen_pages);

  /* 5. Per-CPU caches (SGC_LAB=cpu) refill on the same path, into the
   * CPU's slot: part 3 again, with nothing else running while the mode
   * changes.  Before, every per-CPU refill took heap_lock. */
  percpu_set_mode(2);
  if (percpu_enabled) {
    uint64_t installed = percpu_stats.refills;
    SGC_get_stats(&before);
    for (int i = 0; i < 2; i++)
      CHECK(pthread_create(&workers[i], NULL, allocate, keep[i]) == 0, "worker");
    for (int i = 0; i < 2; i++) pthread_join(workers[i], NULL);
    GC_gcollect();
    SGC_get_stats(&s);
    uint64_t unlocked = s.unlocked_refills - before.unlocked_refills,
             locked = s.page_refills - before.page_refills;
    CHECK(unlocked >= 4 * locked, "per-CPU refills without heap_lock %lu, with %lu",
          (unsigned long)unlocked, (unsigned long)locked);
    CHECK(percpu_stats.refills > installed + 100, "lists installed on a CPU: %lu",
          (unsigned long)(percpu_stats.refills - installed));
    printf("per-CPU refills: %lu without heap_lock, %lu with\n", (unsigned long)unlocked,
           (unsigned long)locked);
    percpu_set_mode(1);
  } else {
    printf("per-CPU caches unavailable here (no rseq): part 5 skipped\n");
  }

  return unit_finish();
}
