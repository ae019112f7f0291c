/* Batches of GC_free'd objects (alloc/batches.c): a thread's own batches
 * come back to it without counting as stolen; a thread with none takes
 * another thread's before the heap gives it fresh pages, and each such
 * refill is counted in SGC_stats_t.stolen_batches. */
#include <pthread.h>
#include <string.h>

#include "common.h"
#include "unit.h"

enum { OBJECTS = 20000, OBJECT_BYTES = 32 };
static pthread_barrier_t freed, taken;

static uint64_t stolen_now(void) {
  SGC_stats_t s;
  SGC_get_stats(&s);
  return s.stolen_batches;
}

static void fill_and_free(void **all) {
  for (int i = 0; i < OBJECTS; i++) {
    all[i] = GC_malloc(OBJECT_BYTES);
    CHECK(all[i] != NULL, "object %d", i);
    if (all[i]) memset(all[i], 0x5a, OBJECT_BYTES);
  }
  for (int i = 0; i < OBJECTS; i++) GC_free(all[i]);
}

/* Thread A frees OBJECTS objects, takes them back itself, frees them
 * again, and stays alive (its batches stay its own) while B allocates. */
static void *freer(void *arg) {
  void **all = arg;
  fill_and_free(all);
  uint64_t before = stolen_now();
  fill_and_free(all); /* from its own batches */
  CHECK(stolen_now() == before, "a thread reusing its own batches stole %lu",
        (unsigned long)(stolen_now() - before));
  pthread_barrier_wait(&freed);
  pthread_barrier_wait(&taken);
  return NULL;
}

static void *taker(void *arg) {
  uint64_t *stolen = arg;
  uint64_t before = stolen_now();
  for (int i = 0; i < OBJECTS; i++) {
    unsigned char *p = GC_malloc(OBJECT_BYTES);
    CHECK(p != NULL, "object %d", i);
    if (!p) break;
    int dirty = 0;
    for (int b = 0; b < OBJECT_BYTES; b++) dirty |= p[b];
    CHECK(!dirty, "object %d not zeroed", i);
  }
  *stolen = stolen_now() - before;
  return NULL;
}

int main(void) {
  GC_INIT();
  GC_disable(); /* only freed objects can keep the heap from growing */
  static void *all[OBJECTS]; /* a root; collections are off anyway */
  pthread_barrier_init(&freed, NULL, 2);
  pthread_barrier_init(&taken, NULL, 2);
  pthread_t a, b;
  uint64_t stolen = 0;
  CHECK(GC_pthread_create(&a, NULL, freer, all) == 0, "create");
  pthread_barrier_wait(&freed);
  size_t heap_before = GC_get_heap_size();
  CHECK(GC_pthread_create(&b, NULL, taker, &stolen) == 0, "create");
  CHECK(GC_pthread_join(b, NULL) == 0, "join");
  size_t growth = GC_get_heap_size() - heap_before;
  pthread_barrier_wait(&taken);
  CHECK(GC_pthread_join(a, NULL) == 0, "join");
  /* All but A's last, unflushed list was in batches: B needed many. */
  CHECK(stolen >= 8, "the second thread took %lu batches", (unsigned long)stolen);
  CHECK(growth < (size_t)OBJECTS * OBJECT_BYTES / 4, "heap grew %zu bytes", growth);
  printf("batch_steal: %lu batches taken, heap growth %zu bytes\n", (unsigned long)stolen, growth);
  return unit_finish();
}
