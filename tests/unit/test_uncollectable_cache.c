/* The per-thread caches of free uncollectable objects (alloc/
 * uncollectable.c) stay bounded as a whole, not only per class.
 *
 *   A thread allocates just under the per-class limit (32 KiB) of
 *   objects in every class of both uncollectable kinds, then frees them
 *   all: 2 x 30 classes x ~30 KiB, far above the thread's limit.  After
 *   each class's frees its caches must keep at most
 *   UNCOLLECTABLE_CACHED_LIMIT_BYTES, and their running total must be
 *   their sum; before the limit they kept everything freed, 1.9 MiB.
 *   The objects handed back are reused by another thread, zeroed where
 *   the kind is cleared. */
#include <pthread.h>
#include <string.h>

#include "alloc/alloc.h"
#include "common.h"
#include "threads/thread.h"
#include "unit.h"

enum { PER_CLASS_BYTES = 30 << 10 };
static void **held; /* uncollectable: a root */
static size_t held_n;

static size_t cached_total(const struct sgc_thread *t) {
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
  size_t freed = 0, kept = 0;
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
      size_t now = cached_total(sgc_self);
      if (now > kept) kept = now;
    }
  size_t bound = UNCOLLECTABLE_CACHED_LIMIT_BYTES;
  printf("freed %zu KiB into the caches, they kept at most %zu KiB (bound %zu KiB)\n",
         freed >> 10, kept >> 10, bound >> 10);
  CHECK(freed > 2 * bound, "the test frees too little (%zu) to show the bound", freed);
  CHECK(kept <= bound, "the caches keep %zu bytes, over %zu", kept, bound);
  CHECK(sgc_self->uncollectable_cached_total == cached_total(sgc_self), "total %u, sum %zu",
        sgc_self->uncollectable_cached_total, cached_total(sgc_self));
  return NULL;
}

/* Another thread takes the handed-back objects: every one of the kind
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
  CHECK(sgc_self->uncollectable_cached_total == cached_total(sgc_self), "total %u, sum %zu",
        sgc_self->uncollectable_cached_total, cached_total(sgc_self));
  return NULL;
}

int main(void) {
  GC_INIT();
  held = GC_malloc_uncollectable(sizeof(void *) * (PER_CLASS_BYTES / 16 + 1));
  CHECK(held != NULL, "held");
  pthread_t t;
  CHECK(GC_pthread_create(&t, NULL, fill_and_free, NULL) == 0, "create");
  CHECK(GC_pthread_join(t, NULL) == 0, "join");
  CHECK(GC_pthread_create(&t, NULL, reuse, NULL) == 0, "create");
  CHECK(GC_pthread_join(t, NULL) == 0, "join");
  return unit_finish();
}
