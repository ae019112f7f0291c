/* Steals racing thread exit (alloc/batches.c): short-lived threads free
 * batches and exit (batches_retire makes them unowned) while long-lived
 * threads, short of objects, steal from them -- and, robbed in turn while
 * using their own, make the shortfall up (lent batches).  Collections run
 * meanwhile (they drop every batch and every lent count).
 *
 * Checked: every object handed out is zeroed, no object is handed out
 * twice while held (each holder writes its tag into every word and finds
 * it intact before freeing), and the run stole at all. */
#include <pthread.h>
#include <string.h>

#include "common.h"
#include "unit.h"

enum { TAKERS = 3, ROUNDS = 60, OBJECTS = 6000, OBJECT_WORDS = 4, FREERS_PER_ROUND = 2 };

static uint64_t stolen_now(void) {
  SGC_stats_t s;
  SGC_get_stats(&s);
  return s.stolen_batches;
}

/* Allocates N objects into HELD, checks each is zeroed, tags every word. */
static void fill(uintptr_t **held, long n, uintptr_t tag) {
  for (long i = 0; i < n; i++) {
    uintptr_t *p = GC_malloc(OBJECT_WORDS * sizeof(uintptr_t));
    CHECK(p != NULL, "object %ld", i);
    if (!p) return;
    int dirty = 0;
    for (int w = 0; w < OBJECT_WORDS; w++) dirty |= p[w] != 0;
    CHECK(!dirty, "object %ld not zeroed", i);
    for (int w = 0; w < OBJECT_WORDS; w++) p[w] = tag + (uintptr_t)i;
    held[i] = p;
  }
}

/* Checks HELD's tags and frees every object. */
static void check_and_free(uintptr_t **held, long n, uintptr_t tag) {
  for (long i = 0; i < n; i++) {
    int bad = 0;
    for (int w = 0; w < OBJECT_WORDS; w++) bad |= held[i][w] != tag + (uintptr_t)i;
    CHECK(!bad, "object %ld changed while held (tag %lx)", i, (unsigned long)tag);
    GC_free(held[i]);
    held[i] = NULL;
  }
}

static void *freer(void *arg) {
  uintptr_t **held = GC_MALLOC_UNCOLLECTABLE(OBJECTS * sizeof *held); /* a root */
  uintptr_t tag = (uintptr_t)arg << 32;
  fill(held, OBJECTS, tag);
  check_and_free(held, OBJECTS, tag);
  GC_FREE(held);
  return NULL; /* exits with its batches on its stack */
}

static void *taker(void *arg) {
  uintptr_t **held = GC_MALLOC_UNCOLLECTABLE(OBJECTS * sizeof *held); /* a root */
  for (long r = 0; r < ROUNDS; r++) {
    uintptr_t tag = ((uintptr_t)arg << 48) | ((uintptr_t)r << 32);
    /* Uneven rounds, so takers run short and steal from each other too. */
    long n = OBJECTS / 2 + (long)((r * 7919 + (uintptr_t)arg * 104729) % (OBJECTS / 2));
    fill(held, n, tag);
    if (r % 20 == 19) GC_gcollect();
    check_and_free(held, n, tag);
  }
  GC_FREE(held);
  return NULL;
}

int main(void) {
  GC_INIT();
  uint64_t before = stolen_now();
  pthread_t takers[TAKERS];
  for (intptr_t i = 0; i < TAKERS; i++)
    CHECK(GC_pthread_create(&takers[i], NULL, taker, (void *)(i + 1)) == 0, "create");
  for (intptr_t r = 0; r < ROUNDS / 2; r++) {
    pthread_t freers[FREERS_PER_ROUND];
    for (intptr_t i = 0; i < FREERS_PER_ROUND; i++)
      CHECK(GC_pthread_create(&freers[i], NULL, freer, (void *)(100 + r * FREERS_PER_ROUND + i)) == 0,
            "create");
    for (int i = 0; i < FREERS_PER_ROUND; i++) CHECK(GC_pthread_join(freers[i], NULL) == 0, "join");
  }
  for (int i = 0; i < TAKERS; i++) CHECK(GC_pthread_join(takers[i], NULL) == 0, "join");
  uint64_t stolen = stolen_now() - before;
  CHECK(stolen > 0, "no batch was stolen: the test drove no steal");
  printf("batch_steal_exit: %lu batches taken from other threads\n", (unsigned long)stolen);
  return unit_finish();
}
