/* free_reuse: memory one thread GC_free()s is reused by other threads
 * before the heap grows, whether the freeing thread lives on or exits.
 *
 * Collections are disabled (GC_disable), so the only way the heap can stay
 * bounded is the allocator's reuse of explicitly freed objects.  sgc keeps
 * a thread's freed objects in batches of its own (alloc/batches.c); a
 * thread with none takes another's before asking for fresh pages.  The
 * check: a second thread allocating as much as the first freed grows the
 * heap by less than a tenth of that, and gets zeroed, distinct objects.
 *
 *   FREE_REUSE_OBJECTS (default 200000) objects of 32 bytes per phase.
 */
#define GC_THREADS
#include <gc.h>
#include <pthread.h>

#include "common.h"

enum { OBJECT_BYTES = 32 };
static long objects = 200000;
static pthread_barrier_t freed, reused;

static void fill_and_free(void) {
  void **all = malloc(objects * sizeof(void *)); /* collections are off */
  CHECK(all != NULL);
  for (long i = 0; i < objects; i++) {
    all[i] = GC_MALLOC(OBJECT_BYTES);
    CHECK(all[i] != NULL, "object %ld", i);
    memset(all[i], 0x5a, OBJECT_BYTES);
  }
  for (long i = 0; i < objects; i++) GC_FREE(all[i]);
  free(all);
}

/* Allocates OBJECTS objects and checks them; returns the heap growth. */
static size_t allocate_and_check(void) {
  size_t before = GC_get_heap_size();
  void **all = malloc(objects * sizeof(void *)); /* collections are off */
  CHECK(all != NULL);
  for (long i = 0; i < objects; i++) {
    unsigned char *p = GC_MALLOC(OBJECT_BYTES);
    CHECK(p != NULL, "object %ld", i);
    for (int b = 0; b < OBJECT_BYTES; b++)
      CHECK(p[b] == 0, "object %ld byte %d is %#x, not zero", i, b, p[b]);
    memcpy(p, &i, sizeof i); /* a duplicate hand-out overwrites this */
    all[i] = p;
  }
  for (long i = 0; i < objects; i++) {
    long stamp;
    memcpy(&stamp, all[i], sizeof stamp);
    CHECK(stamp == i, "object %ld handed out twice (holds %ld)", i, stamp);
  }
  size_t growth = GC_get_heap_size() - before;
  for (long i = 0; i < objects; i++) GC_FREE(all[i]);
  free(all);
  return growth;
}

static void *freer_stays(void *arg) {
  (void)arg;
  fill_and_free();
  pthread_barrier_wait(&freed);
  pthread_barrier_wait(&reused); /* alive while the other thread allocates */
  return NULL;
}

static void *freer_exits(void *arg) {
  (void)arg;
  fill_and_free();
  return NULL;
}

static void *reuser(void *arg) {
  *(size_t *)arg = allocate_and_check();
  return NULL;
}

int main(void) {
  t_test_name = "free_reuse";
  const char *n = getenv("FREE_REUSE_OBJECTS");
  if (n) objects = atol(n);
  GC_INIT();
  GC_allow_register_threads();
  GC_disable();
  size_t bound = (size_t)objects * OBJECT_BYTES / 10;

  /* 1: the freeing thread is still alive (its batches are its own). */
  pthread_barrier_init(&freed, NULL, 2);
  pthread_barrier_init(&reused, NULL, 2);
  pthread_t a, b;
  size_t growth = 0;
  CHECK(GC_pthread_create(&a, NULL, freer_stays, NULL) == 0);
  pthread_barrier_wait(&freed);
  CHECK(GC_pthread_create(&b, NULL, reuser, &growth) == 0);
  CHECK(GC_pthread_join(b, NULL) == 0);
  pthread_barrier_wait(&reused);
  CHECK(GC_pthread_join(a, NULL) == 0);
  CHECK(growth <= bound, "heap grew by %zu bytes reusing %zu freed (bound %zu)", growth,
        (size_t)objects * OBJECT_BYTES, bound);
  printf("free_reuse: freer alive, heap growth %zu bytes\n", growth);

  /* 2: the freeing thread exited. */
  CHECK(GC_pthread_create(&a, NULL, freer_exits, NULL) == 0);
  CHECK(GC_pthread_join(a, NULL) == 0);
  CHECK(GC_pthread_create(&b, NULL, reuser, &growth) == 0);
  CHECK(GC_pthread_join(b, NULL) == 0);
  CHECK(growth <= bound, "heap grew by %zu bytes after the freer exited (bound %zu)", growth,
        bound);
  printf("free_reuse: freer exited, heap growth %zu bytes\n", growth);
  return 0;
}
