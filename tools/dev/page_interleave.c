/* What it costs two threads to work on interleaved 4 KiB pages.
 *
 * Each of two threads walks 128 pages of its own, round after round, as
 * an allocator's fast paths walk a page of 256-byte objects: per object
 * it reads the first word (a free-list pop), clears the object (GC_free's
 * clearing) and writes the first word.  Nothing is shared between the
 * threads but the pages' neighbourhood: with RUN pages, thread 0 owns
 * pages [0, RUN), thread 1 [RUN, 2 RUN), thread 0 the next RUN, and so
 * on; RUN 0 gives each thread one contiguous half.  A slowdown at small
 * RUN against RUN 0 is the machine's, from the hardware prefetchers
 * reaching into the neighbour's page; it says how long a run of pages an
 * allocator should give each thread (history.md, "Objects above 16 bytes,
 * two threads and interleaved pages").
 *
 *   cc -O2 -pthread tools/dev/page_interleave.c -o /tmp/page_interleave
 *   for run in 0 1 2 4 8 16; do /tmp/page_interleave $run; done
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PAGE = 4096, PAGES_PER_THREAD = 128, OBJECT = 256, ROUNDS = 20000 };

static char *region;
static int run_pages;

static void *walk(void *arg) {
  int id = (int)(intptr_t)arg;
  uint64_t sum = 0;
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < PAGES_PER_THREAD; k++) {
      int page = run_pages ? (k / run_pages) * 2 * run_pages + id * run_pages + k % run_pages
                           : id * PAGES_PER_THREAD + k;
      char *p = region + (size_t)page * PAGE;
      for (int o = 0; o < PAGE; o += OBJECT) {
        sum += *(volatile uint64_t *)(p + o);
        memset(p + o, 0, OBJECT);
        *(volatile uint64_t *)(p + o) = (uint64_t)r;
      }
    }
  return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv) {
  if (argc != 2 || (run_pages = atoi(argv[1])) < 0 || (run_pages && PAGES_PER_THREAD % run_pages)) {
    fprintf(stderr, "usage: page_interleave RUN (0, or a divisor of %d)\n", PAGES_PER_THREAD);
    return 2;
  }
  size_t bytes = 2 * (size_t)PAGES_PER_THREAD * PAGE;
  region = aligned_alloc(1 << 21, bytes);
  if (!region) return 3;
  memset(region, 1, bytes);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_t threads[2];
  for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, walk, (void *)(intptr_t)i);
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("run %d pages: %.3f s\n", run_pages,
         (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
  return 0;
}
