/* What a cycle counts as allocated when the heap is used up, where that
 * count decides between collecting and growing (issue 53;
 * collect/trigger.c):
 *  - after a flip to per-CPU caches, the per-thread lists the flip left
 *    count, since the next cycle allocates from them;
 *  - when the heap is used up, bytes the threads refilled without
 *    heap_lock and have not yet published count;
 *  - a growth is a whole number of heap steps, the nearest to what the
 *    rule asks (a quarter of a 20 MiB heap grew it by 8 MiB, not 4).
 * The threshold is found by asking collect_should_run itself, so the
 * test does not depend on the growth rule's constants.  Runs with
 * SGC_LAB=flip and SGC_INITIAL_HEAP_SIZE=20m (tests/unit/CMakeLists.txt). */
#include <pthread.h>

#include "alloc/percpu.h"
#include "alloc/thread_alloc.h"
#include "collect/collect.h"
#include "common.h"
#include "heap/accounting.h"
#include "heap/heap.h"
#include "heap/heap_lock.h"
#include "unit.h"

enum { MAX_WORKERS = 64 };

static struct thread_alloc *worker_alloc[MAX_WORKERS];
static void *volatile worker_keep[MAX_WORKERS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, finish;

/* Fills the worker's own lists, one refill per size class, then waits
 * (a blocking section) with them full. */
static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  worker_alloc[id] = alloc_self();
  for (size_t bytes = 16; bytes <= 2048; bytes += 16) worker_keep[id] = GC_malloc(bytes);
  pthread_mutex_lock(&lock);
  ready++;
  pthread_cond_broadcast(&cond);
  while (!finish) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* Every thread's unpublished refill bytes set to zero, other than
 * WORKER's (WORKER_BYTES) and the caller's (OWN_BYTES). */
static void set_pending(struct thread_alloc *w, size_t worker_bytes, size_t own_bytes) {
  FOR_EACH_THREAD_ALLOC(t) __atomic_store_n(&t->unlocked_bytes, 0, __ATOMIC_RELAXED);
  atomic_store(&allocated_unlocked, 0);
  if (w) __atomic_store_n(&w->unlocked_bytes, worker_bytes, __ATOMIC_RELAXED);
  __atomic_store_n(&alloc_self()->unlocked_bytes, own_bytes, __ATOMIC_RELAXED);
}

static bool should_run_at(size_t allocated) {
  heap_accounting.allocated_since_gc = allocated;
  return collect_should_run();
}

/* The least published allocation at which a collection is due, nothing
 * pending (binary search: collect_should_run is monotonic in it). */
static size_t due_at(void) {
  set_pending(NULL, 0, 0);
  size_t lo = 0, hi = (size_t)1 << 40;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (should_run_at(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

int main(void) {
  GC_init();
  unsigned workers = cpu_cache_count + 1;
  if (workers > MAX_WORKERS) workers = MAX_WORKERS;
  pthread_t th[MAX_WORKERS];
  for (unsigned i = 0; i < workers; i++)
    CHECK(GC_pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0, "thread %u", i);
  pthread_mutex_lock(&lock);
  while (ready < (int)workers) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);

  /* The first collection flips to per-CPU caches (more threads than
   * CPUs, the workers' lists over 64 KiB a CPU); the second does not. */
  GC_gcollect();
  bool flipped = percpu_enabled && percpu_stats.flips_to_cpu == 1;
  pthread_mutex_lock(&heap_lock);
  size_t after_flip = due_at();
  pthread_mutex_unlock(&heap_lock);
  GC_gcollect();
  pthread_mutex_lock(&heap_lock);
  size_t threshold = due_at();
  if (flipped) {
    printf("due at %zu KiB after the flip, %zu KiB after the next collection\n",
           after_flip >> 10, threshold >> 10);
    CHECK(after_flip + (size_t)FLIP_BUFFER_BYTES * cpu_cache_count < threshold,
          "the lists a flip left count: due at %zu, then %zu", after_flip, threshold);
  } else {
    printf("no flip (per-CPU caches unavailable): the flip's lists not checked\n");
  }

  /* Growth with the threshold reached: a quarter of the heap, to the
   * nearest step. */
  set_pending(NULL, 0, 0);
  heap_accounting.allocated_since_gc = threshold;
  size_t step = sgc_settings.heap_step_bytes, quarter = heap_size_bytes() / 4;
  size_t grow = collect_growth_bytes(PAGE_BYTES);
  printf("heap %zu MiB, step %zu KiB: grows by %zu KiB\n", heap_size_bytes() >> 20, step >> 10,
         grow >> 10);
  CHECK(quarter >= step, "heap of %zu bytes too small for the check", heap_size_bytes());
  CHECK(grow % step == 0, "growth %zu not in whole steps of %zu", grow, step);
  CHECK(grow + step / 2 >= quarter && grow <= quarter + step / 2,
        "growth %zu not the nearest step to %zu", grow, quarter);
  /* The heap used up with the published count 64 KiB short of the
   * threshold: the worker's and this thread's unpublished bytes decide
   * between collecting and growing. */
  size_t short_by = 64 << 10;
  set_pending(worker_alloc[0], 48 << 10, 20 << 10);
  heap_accounting.allocated_since_gc = threshold - short_by;
  size_t heap_before = heap_size_bytes();
  GC_word gc_before = GC_get_gc_no();
  bool collected = false;
  CHECK(grow_or_collect(PAGE_BYTES, &collected), "grow_or_collect");
  CHECK(collected && GC_get_gc_no() == gc_before + 1 && heap_size_bytes() == heap_before,
        "68 KiB pending over a 64 KiB gap: a collection, not growth (heap %zu -> %zu)",
        heap_before, heap_size_bytes());
  threshold = due_at();
  set_pending(worker_alloc[0], 30 << 10, 20 << 10);
  heap_accounting.allocated_since_gc = threshold - short_by;
  gc_before = GC_get_gc_no();
  collected = false;
  CHECK(grow_or_collect(PAGE_BYTES, &collected), "grow_or_collect");
  CHECK(!collected && GC_get_gc_no() == gc_before && heap_size_bytes() > heap_before,
        "50 KiB pending under a 64 KiB gap: growth, not a collection");

  heap_accounting.allocated_since_gc = 0;
  pthread_mutex_unlock(&heap_lock);

  pthread_mutex_lock(&lock);
  finish = 1;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
  for (unsigned i = 0; i < workers; i++) pthread_join(th[i], NULL);
  return unit_finish();
}
