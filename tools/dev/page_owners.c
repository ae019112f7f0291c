/* Which heap pages two threads' objects share, under sgc.
 *
 * Two threads each allocate N objects of S bytes with GC_malloc, write
 * one word of each, and GC_free them all, R times over, recording the
 * 4 KiB page of every object they got.  Prints how many pages each thread
 * used and how many both did, and the share of allocations that landed on
 * a page where the other thread held a live object at that moment.  A
 * page both used over the run may just have changed hands whole (a
 * steal); one both hold live objects on is shared while both work: their
 * fast paths then run side by side in it, which the machine charges for
 * (tools/dev/page_interleave.c; history.md, "Objects above 16 bytes, two
 * threads and interleaved pages").
 *
 *   cc -O2 -pthread -Iinclude tools/dev/page_owners.c -LBUILD/src -Wl,-rpath,BUILD/src -lsgc \
 *      -o /tmp/page_owners
 *   SGC_STATS=1 /tmp/page_owners [N [S [R]]]     # defaults 2000 256 2000
 */
#include <gc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { PAGE_SHIFT = 12, PAGE_INDEX_BITS = 24 };

static long objects = 2000, object_bytes = 256, rounds = 2000;
static uint8_t *pages_seen[2]; /* per thread: page index (low bits) -> used */
/* Per thread: page index -> its objects allocated and not yet freed there.
 * Written by the owner, read by the other thread (relaxed: a sample). */
static uint16_t *pages_live[2];
static pthread_barrier_t start; /* both threads work at once */
static long beside_other[2]; /* allocations onto a page the other thread held live objects on */

static void *run(void *arg) {
  int me = (int)(intptr_t)arg;
  uint8_t *seen = pages_seen[me];
  uint16_t *live = pages_live[me], *other = pages_live[1 - me];
  long beside = 0;
  pthread_barrier_wait(&start);
  void **held = malloc((size_t)objects * sizeof *held);
  if (!held) abort();
  for (long r = 0; r < rounds; r++) {
    for (long i = 0; i < objects; i++) {
      held[i] = GC_malloc((size_t)object_bytes);
      if (!held[i]) abort();
      *(volatile long *)held[i] = r;
      uint32_t page = ((uintptr_t)held[i] >> PAGE_SHIFT) & ((1u << PAGE_INDEX_BITS) - 1);
      seen[page] = 1;
      __atomic_store_n(&live[page], (uint16_t)(live[page] + 1), __ATOMIC_RELAXED);
      beside += __atomic_load_n(&other[page], __ATOMIC_RELAXED) != 0;
    }
    for (long i = 0; i < objects; i++) {
      uint32_t page = ((uintptr_t)held[i] >> PAGE_SHIFT) & ((1u << PAGE_INDEX_BITS) - 1);
      __atomic_store_n(&live[page], (uint16_t)(live[page] - 1), __ATOMIC_RELAXED);
      GC_free(held[i]);
    }
  }
  free(held);
  beside_other[me] = beside;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) objects = atol(argv[1]);
  if (argc > 2) object_bytes = atol(argv[2]);
  if (argc > 3) rounds = atol(argv[3]);
  if (objects < 1 || object_bytes < 1 || rounds < 1) {
    fprintf(stderr, "usage: page_owners [N [S [R]]]\n");
    return 2;
  }
  GC_INIT();
  for (int i = 0; i < 2; i++)
    if (!(pages_seen[i] = calloc(1u << PAGE_INDEX_BITS, 1)) ||
        !(pages_live[i] = calloc(1u << PAGE_INDEX_BITS, sizeof *pages_live[i])))
      return 3;
  pthread_barrier_init(&start, NULL, 2);
  pthread_t threads[2];
  for (intptr_t i = 0; i < 2; i++) GC_pthread_create(&threads[i], NULL, run, (void *)i);
  for (int i = 0; i < 2; i++) GC_pthread_join(threads[i], NULL);
  long used[2] = {0, 0}, both = 0;
  for (uint32_t p = 0; p < 1u << PAGE_INDEX_BITS; p++) {
    used[0] += pages_seen[0][p];
    used[1] += pages_seen[1][p];
    both += pages_seen[0][p] && pages_seen[1][p];
  }
  printf("pages: thread 0 used %ld, thread 1 %ld, both %ld\n", used[0], used[1], both);
  printf("allocations beside the other thread's live objects: thread 0 %.2f%%, thread 1 %.2f%%\n",
         100.0 * (double)beside_other[0] / (double)(objects * rounds),
         100.0 * (double)beside_other[1] / (double)(objects * rounds));
  return 0;
}
