/* free_large_race: GC_free of a large object while another thread
 * collects hands no pages out twice.
 *
 * GC_free of a large object waits for heap_lock, which a collection holds
 * from start to end.  The object's address may then be nowhere the
 * collection looks (the program passed its last pointer), so the
 * collection freed the pages, and the GC_free put them in the pool again:
 * two later objects shared them.  Here two threads allocate 9000-byte
 * objects (three pages), keep every fourth in an array and free the rest;
 * collections run meanwhile.  Every kept object must be distinct, and
 * freeing them all must succeed.  Before the fix each run found kept
 * objects handed out twice (and GC_free then stopped with "points to a
 * free heap page"). */
#define _GNU_SOURCE
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include <gc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 2, PER_THREAD = 20000, KEEP_EVERY = 4, KEPT = PER_THREAD / KEEP_EVERY };

static void **kept[THREADS];

static void *churn(void *arg) {
  int slot = (int)(intptr_t)arg;
  void **keep = GC_MALLOC(KEPT * sizeof *keep);
  kept[slot] = keep;
  for (unsigned i = 0; i < PER_THREAD; i++) {
    char *p = i % 3 ? GC_MALLOC(9000) : GC_MALLOC_ATOMIC(9000);
    if (!p) {
      fprintf(stderr, "free_large_race: out of memory\n");
      exit(1);
    }
    memset(p, 1, 64);
    if (i % KEEP_EVERY == 0) keep[i / KEEP_EVERY] = p;
    else GC_FREE(p);
  }
  return NULL;
}

static int by_address(const void *a, const void *b) {
  uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  GC_INIT();
  pthread_t tid;
  if (pthread_create(&tid, NULL, churn, (void *)(intptr_t)1) != 0) {
    fprintf(stderr, "free_large_race: cannot start a thread\n");
    return 1;
  }
  churn((void *)(intptr_t)0);
  pthread_join(tid, NULL);
  /* The addresses, sorted, in malloc'd memory (not a root). */
  uintptr_t *all = malloc(THREADS * KEPT * sizeof *all);
  size_t n = 0;
  for (int s = 0; s < THREADS; s++)
    for (unsigned i = 0; i < KEPT; i++) all[n++] = (uintptr_t)kept[s][i];
  qsort(all, n, sizeof *all, by_address);
  unsigned twice = 0;
  for (size_t i = 1; i < n; i++) twice += all[i] == all[i - 1];
  free(all);
  if (twice) {
    fprintf(stderr, "FAIL: %u kept objects share their address with another kept object\n", twice);
    return 1;
  }
  for (int s = 0; s < THREADS; s++) {
    for (unsigned i = 0; i < KEPT; i++) GC_FREE(kept[s][i]);
    GC_FREE(kept[s]);
  }
  printf("free_large_race: %u kept large objects distinct and freed\n", THREADS * KEPT);
  return 0;
}
