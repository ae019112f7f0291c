/* two_paths: a heap whose every object two GC threads reach by two
 * paths, for the cost of lines of mark bytes changing hands (history.md,
 * "bh's two GC threads"): N objects of 48 bytes found through array A in
 * allocation order and through array B shuffled (SHARED 1), or B pointing
 * to N objects of its own (SHARED 0: nothing shared, what the machine
 * gives two GC threads); then ROUNDS collections.
 *
 *   cc -O2 -Iinclude tools/dev/two_paths.c -o /tmp/two_paths -Lbuild/src -lsgc \
 *      -Wl,-rpath,$PWD/build/src
 *   SGC_ADAPTIVE=0 SGC_MARKERS_CYCLE=1,2 SGC_TRACE=/tmp/shared.trace /tmp/two_paths 1 50000 60
 *   SGC_ADAPTIVE=0 SGC_MARKERS_CYCLE=1,2 SGC_TRACE=/tmp/apart.trace /tmp/two_paths 0 50000 60
 *
 * then the median mark_ns of the traces' records with markers 1 and 2
 * (the first few marked a heap being built). */
#include <stdio.h>
#include <stdlib.h>

#include "gc.h"

static void **a, **b; /* roots */

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: two_paths SHARED [N [ROUNDS]]\n");
    return 2;
  }
  int shared = atoi(argv[1]), rounds = argc > 3 ? atoi(argv[3]) : 40;
  size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 50000;
  GC_INIT();
  a = GC_MALLOC(n * sizeof(void *));
  b = GC_MALLOC(n * sizeof(void *));
  if (!a || !b) return 1;
  for (size_t i = 0; i < n; i++) a[i] = GC_MALLOC(48);
  for (size_t i = 0; i < n; i++) b[i] = shared ? a[i] : GC_MALLOC(48);
  srand(1);
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = (size_t)rand() % (i + 1);
    void *t = b[i];
    b[i] = b[j];
    b[j] = t;
  }
  for (int r = 0; r < rounds; r++) GC_gcollect();
  return 0;
}
