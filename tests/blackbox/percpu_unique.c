/* Every object is handed out once: many threads on few CPUs allocate (and
 * free some) without collections, stamping each object with its owner and
 * a sequence number; at the end every object must still carry its stamp.
 * A per-CPU pop that survived preemption or migration mid-sequence would
 * give one object to two threads, and one stamp would be overwritten.
 * Run with SGC_LAB=cpu (and plain, for the per-thread path). */
#define GC_THREADS
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gc.h"
#include "common.h"

enum { THREADS = 32, OBJECTS = 20000 };

struct stamp {
  uint64_t owner, seq;
};

static struct stamp **tables[THREADS];

static void *worker(void *arg) {
  uint64_t id = (uint64_t)(intptr_t)arg;
  struct stamp **mine = tables[id];
  for (uint64_t i = 0; i < OBJECTS; i++) {
    struct stamp *s = GC_malloc(sizeof *s + (i % 3) * 16);
    CHECK(s != NULL);
    CHECK(s->owner == 0 && s->seq == 0, "object %p not cleared", (void *)s);
    s->owner = id + 1;
    s->seq = i;
    mine[i] = s;
    /* Free every fourth object at once: it must come back exactly once. */
    if (i % 4 == 3) {
      GC_free(mine[i - 1]);
      mine[i - 1] = NULL;
    }
    if ((i & 1023) == 0) sched_yield(); /* invite preemption and migration */
  }
  return NULL;
}

int main(void) {
  t_test_name = "percpu_unique";
  GC_INIT();
  for (int t = 0; t < THREADS; t++) {
    tables[t] = GC_malloc_uncollectable(OBJECTS * sizeof(void *));
    CHECK(tables[t] != NULL);
  }
  GC_disable(); /* the check is about the allocator alone */
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++)
    CHECK(GC_pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0);
  for (int t = 0; t < THREADS; t++) GC_pthread_join(th[t], NULL);
  long checked = 0;
  for (uint64_t t = 0; t < THREADS; t++)
    for (uint64_t i = 0; i < OBJECTS; i++) {
      struct stamp *s = tables[t][i];
      if (!s) continue;
      CHECK(s->owner == t + 1 && s->seq == i,
            "object %p given twice: holds owner %llu seq %llu, expected %llu %llu", (void *)s,
            (unsigned long long)s->owner, (unsigned long long)s->seq, (unsigned long long)t + 1,
            (unsigned long long)i);
      checked++;
    }
  GC_enable();
  printf("[percpu_unique] %ld objects checked\n", checked);
  t_note("PASS");
  return 0;
}
