/* The per-thread caches of free uncollectable objects (alloc/
 * uncollectable.c) stay bounded as a whole, not only per class.
 *
 *   Each thread allocates just under the per-class limit (32 KiB) of
 *   objects in every class of both uncollectable kinds, then frees them
 *   all: 2 x 30 classes x ~30 KiB, far above the thread's limit.  After
 *   each class's frees its caches must keep at most
 *   UNCOLLECTABLE_CACHED_LIMIT_BYTES, and their running total must be
 *   their sum; before the limit they kept everything freed, 1.9 MiB.
 *   The objects handed back are reused by other threads, zeroed where
 *   the kind is cleared.  Two threads do each part at once while the
 *   main thread collects in a loop. */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "alloc/alloc.h"
#include "common.h"
#include "alloc/thread_alloc.h"
#include "unit.h"

enum { PER_CLASS_BYTES = 30 << 10, WORKERS = 2 };
static _Atomic int workers_done;
/* Set by the main thread as it starts its first collection: the workers
 * wait for it, so on a loaded machine they cannot finish before it. */
static _Atomic int collecting;

static size_t cached_total(const struct thread_alloc *t) {
  size_t sum = 0;
  for (unsigned k = 0; k < 2; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) sum += t->uncollectable_cached_bytes[k][c];
  return sum;
}

static void *alloc_kind(unsigned k, size_t bytes) {
  return k ? GC_malloc_atomic_uncollectable(bytes) : GC_malloc_uncollectable(bytes);
}

static void *fill_and_free(void *unused) {
  (void)unused;
  size_t freed = 0, kept = 0, held_n = 0;
  void **held = GC_malloc_uncollectable(sizeof(void *) * (PER_CLASS_BYTES / 16 + 1));
  CHECK(held != NULL, "held");
  if (!held) return NULL;
  for (unsigned k = 0; k < 2; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      unsigned size = size_class_bytes[c];
      size_t n = PER_CLASS_BYTES / size, first = held_n;
      for (size_t i = 0; i < n; i++) {
        void *p = alloc_kind(k, size);
        CHECK(p != NULL, "kind %u class %u", k, c);
        if (!p) return NULL;
        memset(p, 0xa5, size);
        held[held_n++] = p;
      }
      for (size_t i = first; i < held_n; i++) GC_free(held[i]);
      freed += (held_n - first) * size;
      held_n = first;
      size_t now = cached_total(alloc_self());
      if (now > kept) kept = now;
    }
  size_t bound = UNCOLLECTABLE_CACHED_LIMIT_BYTES;
  printf("freed %zu KiB into the caches, they kept at most %zu KiB (bound %zu KiB)\n",
         freed >> 10, kept >> 10, bound >> 10);
  CHECK(freed > 2 * bound, "the test frees too little (%zu) to show the bound", freed);
  CHECK(kept <= bound, "the caches keep %zu bytes, over %zu", kept, bound);
  CHECK(alloc_self()->uncollectable_cached_total == cached_total(alloc_self()), "total %u, sum %zu",
        alloc_self()->uncollectable_cached_total, cached_total(alloc_self()));
  GC_free(held);
  return NULL;
}

/* Other threads takes the handed-back objects: every one of the kind
 * GC_malloc_uncollectable clears zeroed. */
static void *reuse(void *unused) {
  (void)unused;
  size_t dirty = 0, taken = 0;
  for (unsigned k = 0; k < 2; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      unsigned size = size_class_bytes[c];
      for (size_t i = 0; i < PER_CLASS_BYTES / size; i++) {
        unsigned char *p = alloc_kind(k, size);
        CHECK(p != NULL, "reuse kind %u class %u", k, c);
        if (!p) return NULL;
        if (k == 0) {
          for (unsigned b = 0; b < size; b++) dirty += p[b] != 0;
          taken++;
        }
        GC_free(p);
      }
    }
  CHECK(dirty == 0, "%zu non-zero bytes in %zu reused objects", dirty, taken);
  CHECK(alloc_self()->uncollectable_cached_total == cached_total(alloc_self()), "total %u, sum %zu",
        alloc_self()->uncollectable_cached_total, cached_total(alloc_self()));
  return NULL;
}

/* A worker's start: its part, then counted done however it ended. */
static void *worker(void *fn) {
  while (!atomic_load(&collecting)) sched_yield();
  ((void *(*)(void *))fn)(NULL);
  atomic_fetch_add(&workers_done, 1);
  return NULL;
}

/* WORKERS threads run FN at once while this one collects, so hand-backs,
 * refills and the workers' exits (their caches retired) meet collections. */
static void run_beside_collections(void *(*fn)(void *)) {
  pthread_t t[WORKERS];
  atomic_store(&workers_done, 0);
  atomic_store(&collecting, 0);
  for (int i = 0; i < WORKERS; i++) CHECK(GC_pthread_create(&t[i], NULL, worker, (void *)fn) == 0, "create");
  unsigned long collections = 0;
  while (atomic_load(&workers_done) < WORKERS) {
    atomic_store(&collecting, 1);
    GC_gcollect();
    collections++;
  }
  for (int i = 0; i < WORKERS; i++) CHECK(GC_pthread_join(t[i], NULL) == 0, "join");
  printf("%lu collections meanwhile\n", collections);
  CHECK(collections > 0, "no collection beside the workers");
}

int main(void) {
  GC_INIT();
  run_beside_collections(fill_and_free);
  run_beside_collections(reuse);
  return unit_finish();
}
