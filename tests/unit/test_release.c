/* Returning memory to the OS: after a large structure dies,
 * GC_gcollect_and_unmap gives its pages back (GC_get_unmapped_bytes, the
 * process's resident set), and reusing them yields zeroed memory. */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "unit.h"

static void *volatile keep;

static __attribute__((noinline)) void build_and_drop(void) {
  void **big = GC_malloc(4096 * sizeof(void *));
  for (int i = 0; i < 4096; i++) {
    /* 8 KiB large objects and small ones, all written (resident). */
    char *p = GC_malloc(i % 2 ? 8192 : 512);
    memset(p + sizeof(void *), 0x5a, (i % 2 ? 8192 : 512) - sizeof(void *));
    big[i] = p;
  }
  keep = big;
  keep = NULL;
}

/* Stale copies of the dropped pointers in dead frames would keep the
 * structure alive (the stack is scanned conservatively).  The stores go
 * through the volatile array one by one: a memset of it with the
 * qualifier cast away was dead code to the compiler, which dropped the
 * whole call, so the test passed only while no stale copy happened to
 * survive (a change to the mark phase's frames once left one). */
static __attribute__((noinline)) void clear_stack(void) {
  volatile char junk[16384];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = 0;
}

int main(void) {
  GC_init();
  build_and_drop();
  build_and_drop();
  clear_stack();
  long before = unit_resident_kb();
  GC_gcollect_and_unmap();
  long after = unit_resident_kb();
  size_t unmapped = GC_get_unmapped_bytes();
  printf("resident %ld KiB -> %ld KiB, unmapped %zu KiB\n", before, after, unmapped / 1024);
  /* Each structure is about 17 MiB (2,048 large objects of 8 KiB, 2,048
   * small ones of 512 bytes), and at least one of them lies free here: the
   * second may reuse the first's pages once a collection has freed them
   * (a heap grown in place: 16.0 MiB given back, 23 MiB before). */
  CHECK(unmapped >= (size_t)12 << 20, "only %zu bytes given back", unmapped);
  /* ThreadSanitizer's shadow memory stays resident: 7.9 MiB less there. */
  CHECK(after < before - 6 * 1024, "resident set did not shrink: %ld -> %ld KiB", before, after);
  /* Reuse: memory handed out again is zero and usable. */
  for (int i = 0; i < 4096; i++) {
    size_t n = i % 2 ? 8192 : 512;
    char *p = GC_malloc(n);
    bool zero = true;
    for (size_t j = 0; j < n; j += 64) zero &= p[j] == 0;
    CHECK(zero, "reused memory not zero (%zu bytes)", n);
    memset(p, 1, n);
  }
  CHECK(GC_get_unmapped_bytes() <= unmapped, "unmapped count grew on reuse");
  return unit_finish();
}
