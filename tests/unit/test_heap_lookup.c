/* The conservative pointer test (heap/heap.h object_start) on adversarial
 * words: random values, addresses just outside chunks, every interior
 * offset of objects of every class, one past the end, large objects
 * spanning pages and chunks, and pages in the free pool; and the page map
 * itself, page by page. */
#include <string.h>

#include "common.h"
#include "heap/heap.h"
#include "unit.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uintptr_t start_of(uintptr_t a) {
  struct page_header *p;
  return object_start(a, &p);
}

/* Whatever the word, the answer is 0 or the start of an object whose
 * extent contains the word. */
static void check_word(uintptr_t w) {
  struct page_header *p = NULL;
  uintptr_t base = object_start(w, &p);
  if (!base) return;
  size_t size = object_size(p);
  CHECK(base <= w && w < base + size, "word %#lx -> %#lx size %zu", (unsigned long)w,
        (unsigned long)base, size);
  CHECK(GC_base((void *)w) == (void *)base, "GC_base disagrees for %#lx", (unsigned long)w);
}

int main(int argc, char **argv) {
  bool padded = argc > 1 && strcmp(argv[1], "padded") == 0;
  GC_init();
  /* Objects of every class, kept in a GC-visible array. */
  static void *objects[SIZE_CLASS_COUNT][8];
  for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
    for (int i = 0; i < 8; i++) objects[c][i] = GC_malloc(size_class_bytes[c] - (padded ? 1 : 0));

  /* Interior pointers and one past the end. */
  for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
    for (int i = 0; i < 8; i++) {
      uintptr_t o = (uintptr_t)objects[c][i];
      size_t size = size_class_bytes[c];
      CHECK(start_of(o) == o, "class %u object start", c);
      for (size_t off = 0; off < size; off += 8)
        CHECK(start_of(o + off) == o, "class %u offset %zu", c, off);
      /* sgc does not pad by default: one past the end of a full-size
       * request belongs to the next object (or nothing), never to this
       * one.  With SGC_EXTRA_BYTES=1 the request was size - 1 bytes, so
       * its one-past-the-end pointer is inside the object. */
      if (padded) CHECK(start_of(o + size - 1) == o, "padded class %u end", c);
      else CHECK(start_of(o + size) != o, "class %u one past the end kept the object", c);
    }
  }

  /* Words just outside every chunk and outside the address space. */
  FOR_EACH_CHUNK(ch) {
    uintptr_t end = ch->base + (ch->page_count << PAGE_SHIFT);
    check_word(ch->base - 1);
    check_word(ch->base - 8);
    check_word(end);
    check_word(end + 8);
    CHECK(page_of_address(end) == NULL || page_of_address(end) != &ch->pages[ch->page_count - 1],
          "one past a chunk maps into it");
  }
  CHECK(start_of(0) == 0, "null");
  CHECK(start_of(UINTPTR_MAX) == 0, "all ones");
  CHECK(start_of((uintptr_t)1 << 47) == 0, "2^47");
  CHECK(start_of((uintptr_t)1 << 48) == 0, "2^48");
  CHECK(start_of((uintptr_t)&rng) == 0, "a static variable");
  CHECK(GC_base(&rng) == NULL, "GC_base of a static");

  /* Random words, and random words inside the heap's range. */
  uintptr_t lo = atomic_load(&heap_lowest), hi = atomic_load(&heap_highest);
  for (int i = 0; i < 2000000; i++) {
    check_word((uintptr_t)unit_xorshift(&rng));
    check_word(lo + unit_xorshift(&rng) % (hi - lo + 4096));
  }

  /* Large objects: across pages and across chunks. */
  size_t sizes[] = {2049, 4095, 4096, 4097, 3 * 4096 + 5, 1 << 20, (5 << 20) + 123};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char *big = GC_malloc(sizes[i]);
    CHECK(big != NULL, "large %zu", sizes[i]);
    CHECK(GC_size(big) >= sizes[i], "GC_size large %zu", sizes[i]);
    CHECK(((uintptr_t)big & (PAGE_BYTES - 1)) == 0, "large objects are page aligned");
    for (size_t off = 0; off < sizes[i]; off += 1021)
      CHECK(start_of((uintptr_t)big + off) == (uintptr_t)big, "large %zu offset %zu", sizes[i], off);
    CHECK(start_of((uintptr_t)big + sizes[i] - 1) == (uintptr_t)big, "large last byte");
    size_t rounded = (sizes[i] + (padded ? 1 : 0) + 15) & ~(size_t)15;
    CHECK(start_of((uintptr_t)big + rounded) != (uintptr_t)big, "large one past the end");
    bool zero = true;
    for (size_t off = 0; off < sizes[i]; off++) zero &= big[off] == 0;
    CHECK(zero, "large object %zu not cleared", sizes[i]);
    memset(big, 0xAB, sizes[i]);
    /* Freed: its pages are free, and no word maps to it any more. */
    GC_free(big);
    CHECK(start_of((uintptr_t)big) == 0, "freed large object still found");
    /* Reallocating the same size reuses cleared memory. */
    char *again = GC_malloc(sizes[i]);
    bool cleared = true;
    for (size_t off = 0; off < sizes[i]; off += 64) cleared &= again[off] == 0;
    CHECK(cleared, "reallocated large object %zu not cleared", sizes[i]);
  }

  /* The page map gives every page of every chunk its own header, also in
   * a chunk that spans several map slots (the 5 MiB object above made
   * one), and the marker's walk (page_of_low_address) agrees. */
  bool spanning = false;
  FOR_EACH_CHUNK(ch) {
    spanning |= ch->page_count > PAGES_PER_CHUNK;
    for (size_t k = 0; k < ch->page_count; k++) {
      uintptr_t a = ch->base + (k << PAGE_SHIFT) + (k * 8) % PAGE_BYTES;
      if (page_of_address(a) != &ch->pages[k] || page_of_low_address(a) != &ch->pages[k]) {
        CHECK(false, "page %zu of the chunk at %#lx maps elsewhere", k, (unsigned long)ch->base);
        break;
      }
    }
  }
  CHECK(spanning, "no chunk spans two map slots");

  /* Without interior pointers only starts count (GC_base still answers). */
  GC_set_all_interior_pointers(0);
  uintptr_t o = (uintptr_t)objects[3][0];
  CHECK(start_of(o) == o, "start without interior");
  CHECK(start_of(o + 16) == 0, "interior without interior pointers");
  CHECK(GC_base((void *)(o + 16)) == (void *)o, "GC_base ignores the rule");
  GC_set_all_interior_pointers(1);
  return unit_finish();
}
