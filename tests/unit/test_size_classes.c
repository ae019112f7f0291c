/* Size classes: every small request maps to the smallest class that holds
 * it, classes are granule multiples, and no class wastes more of a page
 * than one object's worth; GC_free's object-start test agrees with
 * division. */
#include "common.h"
#include "heap/heap.h"
#include "heap/layout.h"
#include "unit.h"

int main(void) {
  GC_init();
  for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
    unsigned size = size_class_bytes[c];
    CHECK(size % GRANULE_BYTES == 0, "class %u size %u", c, size);
    CHECK(c == 0 || size > size_class_bytes[c - 1], "class %u not increasing", c);
    unsigned per_page = PAGE_BYTES / size;
    CHECK(per_page >= 2, "class %u holds %u objects", c, per_page);
    CHECK(PAGE_BYTES - per_page * size < size, "class %u wastes %u bytes", c,
          PAGE_BYTES - per_page * size);
  }
  CHECK(size_class_bytes[SIZE_CLASS_COUNT - 1] == MAX_SMALL_BYTES, "largest class");
  for (size_t n = 0; n <= MAX_SMALL_BYTES; n++) {
    unsigned c = size_class_for_bytes(n);
    CHECK(size_class_bytes[c] >= n, "request %zu got class %u (%u bytes)", n, c,
          size_class_bytes[c]);
    CHECK(c == 0 || size_class_bytes[c - 1] < n, "request %zu not in smallest class", n);
    /* The allocator agrees with the table. */
    if (n % 7 == 0) {
      void *p = GC_malloc(n);
      CHECK(p && GC_size(p) == size_class_bytes[c], "GC_size(GC_malloc(%zu)) = %zu", n,
            GC_size(p));
    }
  }
  /* GC_free's object-start test (heap.h) against plain division, for
   * every class and every offset into a page. */
  for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
    struct page_header page = {0};
    unsigned size = size_class_bytes[c];
    page.capacity = (uint16_t)(PAGE_BYTES / size);
    page_set_start_test(&page, size);
    for (uint32_t offset = 0; offset < PAGE_BYTES; offset++) {
      bool expected = offset % size == 0 && offset / size < page.capacity;
      CHECK(page_is_object_start(&page, offset) == expected, "class %u (%u bytes) offset %u", c,
            size, offset);
    }
  }
  return unit_finish();
}
