/* Lent batches (alloc/batches.c): a thread robbed of a batch while it was
 * using its own makes the shortfall up from fresh pages instead of
 * stealing in turn, up to the objects taken from it; past that it steals
 * again.
 *
 *   A frees N objects (its batches), then starts using them again;
 *   B, short by two batches, steals two of A's, then frees all it holds;
 *   A uses up the rest of its own and needs one batch more: that comes
 *   from fresh pages although B's batches are there to steal (no steal);
 *   A needs more than the two batches it lost: it steals (one or more). */
#include <pthread.h>
#include <string.h>

#include "alloc/alloc.h"
#include "common.h"
#include "unit.h"

enum { OBJECTS = 20000, OBJECT_BYTES = 32, MAX_HELD = 2 * OBJECTS };
static pthread_barrier_t step;
static unsigned batch; /* objects per batch of this class */
static void *held_a[MAX_HELD], *held_b[MAX_HELD]; /* roots; collections are off anyway */
static uint64_t stolen_by_b, stolen_in_makeup, stolen_past_lent;

static uint64_t stolen_now(void) {
  SGC_stats_t s;
  SGC_get_stats(&s);
  return s.stolen_batches;
}

/* Allocates N more objects into HELD from *COUNT on. */
static void allocate(void **held, long *count, long n) {
  for (long i = 0; i < n; i++, (*count)++) {
    held[*count] = GC_malloc(OBJECT_BYTES);
    CHECK(held[*count] != NULL, "object %ld", *count);
    if (held[*count]) memset(held[*count], 0x5a, OBJECT_BYTES);
  }
}

static void free_all(void **held, long *count) {
  while (*count) GC_free(held[--*count]);
}

/* The steps run one thread at a time, in turn, between the barriers. */
static void *thread_a(void *unused) {
  (void)unused;
  long n = 0;
  pthread_barrier_wait(&step); /* B holds its objects: nothing to steal */
  allocate(held_a, &n, OBJECTS);
  free_all(held_a, &n);
  /* Its batches, and OBJECTS % batch objects on its free list. */
  long on_list = OBJECTS % batch, in_batches = OBJECTS - on_list;
  allocate(held_a, &n, on_list + 2 * batch); /* pops two of its batches */
  pthread_barrier_wait(&step);
  pthread_barrier_wait(&step); /* B stole two and freed all it held */
  uint64_t before = stolen_now();
  /* The rest of its own, then one batch more: inside what was lent. */
  allocate(held_a, &n, in_batches - 4 * batch + batch);
  stolen_in_makeup = stolen_now() - before;
  before = stolen_now();
  /* Past the rest of what was lent (and the few fresh pages its store
   * may hold in reserve): steals. */
  allocate(held_a, &n, 4 * batch);
  stolen_past_lent = stolen_now() - before;
  free_all(held_a, &n);
  pthread_barrier_wait(&step); /* B may exit now (its batches become anyone's) */
  return NULL;
}

static void *thread_b(void *unused) {
  (void)unused;
  long n = 0;
  allocate(held_b, &n, OBJECTS);
  pthread_barrier_wait(&step);
  pthread_barrier_wait(&step); /* A has its batches and uses them */
  free_all(held_b, &n);
  uint64_t before = stolen_now();
  allocate(held_b, &n, OBJECTS + 2 * batch); /* its own, then two of A's */
  stolen_by_b = stolen_now() - before;
  free_all(held_b, &n); /* batches for A to steal, if it would */
  pthread_barrier_wait(&step);
  pthread_barrier_wait(&step);
  return NULL;
}

int main(void) {
  GC_INIT();
  GC_disable(); /* only freed objects can keep the heap from growing */
  batch = free_flush_objects(size_class_for_bytes(OBJECT_BYTES + sgc_settings.extra_bytes));
  CHECK(batch * 6 < OBJECTS, "a batch of %u objects: too few batches for the test", batch);
  pthread_barrier_init(&step, NULL, 2);
  pthread_t a, b;
  CHECK(GC_pthread_create(&a, NULL, thread_a, NULL) == 0, "create");
  CHECK(GC_pthread_create(&b, NULL, thread_b, NULL) == 0, "create");
  CHECK(GC_pthread_join(a, NULL) == 0, "join");
  CHECK(GC_pthread_join(b, NULL) == 0, "join");
  CHECK(stolen_by_b == 2, "B took %lu of A's batches (2 expected)", (unsigned long)stolen_by_b);
  CHECK(stolen_in_makeup == 0, "A, robbed while using its batches, stole %lu",
        (unsigned long)stolen_in_makeup);
  CHECK(stolen_past_lent >= 1, "A, past what it lent, stole %lu", (unsigned long)stolen_past_lent);
  printf("batch_lent: batch %u objects; B took %lu, A took %lu making up and %lu past it\n",
         batch, (unsigned long)stolen_by_b, (unsigned long)stolen_in_makeup,
         (unsigned long)stolen_past_lent);
  return unit_finish();
}
