/* page_marked_count (heap/heap.h) sums a page's mark bytes by adding its
 * mark words as byte lanes: the sum must equal a byte-by-byte count for
 * every pattern the marker can leave, the full page (every granule an
 * object start, 256 marks: the largest count, which must not wrap) and
 * the empty page included.  The sweep trusts it to tell an untouched
 * page (0) and a full one (capacity) from the rest. */
#include <string.h>

#include "common.h"
#include "heap/heap.h"
#include "unit.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static unsigned count_bytes(const struct page_header *p) {
  unsigned n = 0;
  for (unsigned g = 0; g < GRANULES_PER_PAGE; g++)
    n += atomic_load_explicit(&p->marks.byte[g], memory_order_relaxed);
  return n;
}

static struct page_header page;

static void set_every(unsigned stride, unsigned first) {
  memset((void *)&page.marks, 0, sizeof page.marks);
  for (unsigned g = first; g < GRANULES_PER_PAGE; g += stride)
    atomic_store_explicit(&page.marks.byte[g], 1, memory_order_relaxed);
}

int main(void) {
  memset((void *)&page.marks, 0, sizeof page.marks);
  CHECK(page_marked_count(&page) == 0, "empty page counted %u", page_marked_count(&page));

  /* Objects of every granule count from 1 to a page, every object
   * marked: the counts a full page of each size class gives. */
  for (unsigned stride = 1; stride <= GRANULES_PER_PAGE; stride++) {
    set_every(stride, 0);
    unsigned want = (GRANULES_PER_PAGE + stride - 1) / stride;
    CHECK(page_marked_count(&page) == want, "stride %u: %u, want %u", stride,
          page_marked_count(&page), want);
  }
  set_every(1, 0);
  CHECK(page_marked_count(&page) == GRANULES_PER_PAGE, "full page %u", page_marked_count(&page));
  /* One mark, at every position (each byte lane, each word). */
  for (unsigned g = 0; g < GRANULES_PER_PAGE; g++) {
    set_every(GRANULES_PER_PAGE, g);
    CHECK(page_marked_count(&page) == 1, "single mark at %u: %u", g, page_marked_count(&page));
  }
  /* Random patterns of every density. */
  for (int round = 0; round < 20000; round++) {
    unsigned density = (unsigned)(unit_xorshift(&rng) % 101);
    for (unsigned g = 0; g < GRANULES_PER_PAGE; g++)
      atomic_store_explicit(&page.marks.byte[g], unit_xorshift(&rng) % 100 < density,
                            memory_order_relaxed);
    unsigned want = count_bytes(&page), got = page_marked_count(&page);
    CHECK(got == want, "random pattern %d (density %u%%): %u, want %u", round, density, got, want);
  }
  return unit_finish();
}
