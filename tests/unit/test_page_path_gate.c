/* The page-path gate as a Dekker pair (alloc/page_path.h), under load: a
 * thread that enters must never be inside while the collector believes
 * the gate closed and empty.  Each side's own check here is a relaxed
 * load or store, so no fence in the test hides a missing one in the gate:
 * with page_path_enter's seq_cst store made a relaxed store, 314-1007
 * entries a run got through a closed gate on the 2-vCPU VM (3 of 3 runs
 * failed; 0 in 5 runs of the gate as it is, 310,000-590,000 closes
 * each).
 *
 * Mutators enter and leave in a loop; inside, each loads `closed_seen`
 * (relaxed), which the closer sets only between page_path_close's return
 * and page_path_open.  A mutator seeing it set was let in through a
 * closed gate.  The closer also counts, after each close, mutators
 * inside by their own relaxed flags. */
#include <pthread.h>
#include <time.h>

#include "alloc/page_path.h"
#include "collect/collect.h"
#include "common.h"
#include "unit.h"

enum { MUTATORS = 2, SECONDS = 2 };
static _Atomic int closed_seen, stop;
static _Atomic int inside_flag[MUTATORS];
static _Atomic unsigned long violations, entries, refusals, closes, caught_inside;

static void *mutator(void *arg) {
  int id = (int)(intptr_t)arg;
  struct thread_alloc *t = alloc_self_or_register();
  unsigned long in = 0, out = 0, bad = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    /* A little work outside, as a refill has between two entries: with
     * none, the closer's wait for the flags to clear could take seconds. */
    for (volatile int spin = 0; spin < 32; spin++) {
    }
    if (!page_path_enter(t)) {
      out++;
      continue;
    }
    atomic_store_explicit(&inside_flag[id], 1, memory_order_relaxed);
    if (atomic_load_explicit(&closed_seen, memory_order_relaxed)) bad++;
    atomic_store_explicit(&inside_flag[id], 0, memory_order_relaxed);
    page_path_exit(t);
    in++;
  }
  atomic_fetch_add(&entries, in);
  atomic_fetch_add(&refusals, out);
  atomic_fetch_add(&violations, bad);
  return NULL;
}

int main(void) {
  GC_INIT();
  pthread_t th[MUTATORS];
  for (int i = 0; i < MUTATORS; i++)
    CHECK(GC_pthread_create(&th[i], NULL, mutator, (void *)(intptr_t)i) == 0, "create");
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    pthread_mutex_lock(&heap_lock);
    pthread_mutex_lock(&registry_lock);
    page_path_close();
    atomic_store_explicit(&closed_seen, 1, memory_order_relaxed);
    for (int spin = 0; spin < 200; spin++)
      for (int i = 0; i < MUTATORS; i++)
        if (atomic_load_explicit(&inside_flag[i], memory_order_relaxed)) caught_inside++;
    atomic_store_explicit(&closed_seen, 0, memory_order_relaxed);
    page_path_open();
    pthread_mutex_unlock(&registry_lock);
    pthread_mutex_unlock(&heap_lock);
    closes++;
    for (volatile int spin = 0; spin < 2000; spin++) {
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec - start.tv_sec < SECONDS);
  atomic_store(&stop, 1);
  for (int i = 0; i < MUTATORS; i++) CHECK(GC_pthread_join(th[i], NULL) == 0, "join");
  printf("%lu closes; %lu entries, %lu refused; %lu entered a closed gate, %lu seen inside\n",
         closes, entries, refusals, violations, caught_inside);
  CHECK(closes > 100 && entries > 1000 && refusals > 0, "the two sides did not meet");
  CHECK(violations == 0, "%lu entries through a closed gate", violations);
  CHECK(caught_inside == 0, "%lu times a mutator was inside a closed gate", caught_inside);
  return unit_finish();
}
