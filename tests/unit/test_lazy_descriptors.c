/* A chunk's page headers are written only when their pages are used
 * (heap/heap.c, heap/page_pool.c): growing the heap by 256 MiB must not
 * make 256 MiB worth of headers resident (23.5 MB with 368-byte headers),
 * and pages taken from anywhere in the fresh spans must still have
 * correct headers (start addresses, zeroed contents), also after they are
 * freed, reused and given back to the OS. */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "heap/heap.h"
#include "unit.h"

enum { GROW_MIB = 256, LARGE_BYTES = 3 << 20, LARGE_COUNT = 40, SMALL_COUNT = 100000 };

static void *volatile keep[LARGE_COUNT];

static bool all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i += 64)
    if (p[i]) return false;
  return p[n - 1] == 0;
}

/* Large objects spread over the fresh spans: their headers (head and
 * tails) come from pages no one wrote before. */
static __attribute__((noinline)) void large_round(int round) {
  for (int i = 0; i < LARGE_COUNT; i++) {
    unsigned char *p = GC_malloc(LARGE_BYTES);
    CHECK(p != NULL, "round %d: large object %d not allocated", round, i);
    if (!p) return;
    CHECK(GC_base(p + LARGE_BYTES / 2) == p, "round %d: interior pointer of object %d", round, i);
    CHECK(GC_size(p) >= LARGE_BYTES, "round %d: size of object %d", round, i);
    struct page_header *head = page_of_address((uintptr_t)p);
    CHECK(head && head->start == (uintptr_t)p, "round %d: head start of object %d", round, i);
    struct page_header *last = page_of_address((uintptr_t)p + LARGE_BYTES - 1);
    CHECK(last && last->start == (((uintptr_t)p + LARGE_BYTES - 1) & ~(uintptr_t)(PAGE_BYTES - 1)),
          "round %d: tail start of object %d", round, i);
    CHECK(all_zero(p, LARGE_BYTES), "round %d: large object %d not zero", round, i);
    memset(p, 0x5a, LARGE_BYTES);
    keep[i] = p;
  }
}

static __attribute__((noinline)) void drop_large(void) {
  for (int i = 0; i < LARGE_COUNT; i++) keep[i] = NULL;
}

static __attribute__((noinline)) void clear_stack(void) {
  volatile char junk[16384];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = 0;
}

int main(void) {
  GC_init();
  long before = unit_resident_kb();
  CHECK(GC_expand_hp((size_t)GROW_MIB << 20), "GC_expand_hp(%d MiB) failed", GROW_MIB);
  long grown = unit_resident_kb();
  printf("resident %ld KiB before growing by %d MiB, %ld KiB after\n", before, GROW_MIB, grown);
  CHECK(grown - before < 4096, "growing the heap made %ld KiB resident", grown - before);

  large_round(0);
  drop_large();
  clear_stack();
  GC_gcollect();
  /* The freed pages are dirty now: handed out again, they must read as
   * zero for pointer-containing objects. */
  for (int i = 0; i < SMALL_COUNT; i++) {
    void **o = GC_malloc(64);
    CHECK(o && GC_base(o + 3) == (void *)o, "small object %d: GC_base", i);
    if (!o) break;
    bool zero = true;
    for (int w = 0; w < 8; w++) zero &= o[w] == NULL;
    CHECK(zero, "small object %d not zero", i);
    o[1] = (void *)(uintptr_t)0x5a5a;
  }
  large_round(1);
  drop_large();
  clear_stack();
  GC_gcollect_and_unmap();
  CHECK(GC_get_unmapped_bytes() >= (size_t)LARGE_COUNT * LARGE_BYTES / 2,
        "only %zu bytes given back", GC_get_unmapped_bytes());
  /* Released pages come back zero, without a memset. */
  for (int i = 0; i < LARGE_COUNT; i++) {
    void **p = GC_malloc(LARGE_BYTES);
    CHECK(p && all_zero((unsigned char *)p, LARGE_BYTES), "reused large object %d not zero", i);
  }
  return unit_finish();
}
