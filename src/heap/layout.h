/* Geometry of the BIBOP heap (thesis §2.2.1): 16-byte granules, 4 KiB pages
 * holding objects of one size class, 4 MiB chunks of pages. */
#ifndef SGC_LAYOUT_H
#define SGC_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  GRANULE_SHIFT = 4,
  GRANULE_BYTES = 1 << GRANULE_SHIFT,
  /* The page is the OS page so a VM write barrier can protect one. */
  PAGE_SHIFT = 12,
  PAGE_BYTES = 1 << PAGE_SHIFT,
  GRANULES_PER_PAGE = PAGE_BYTES / GRANULE_BYTES,
  /* Mark bytes, one a granule, read eight at a time (heap.h). */
  MARK_WORDS_PER_PAGE = GRANULES_PER_PAGE / 8,
  CHUNK_SHIFT = 22,
  CHUNK_BYTES = 1 << CHUNK_SHIFT,
  PAGES_PER_CHUNK = CHUNK_BYTES / PAGE_BYTES,
  /* Objects up to this size live in small-object pages. */
  MAX_SMALL_BYTES = 2048,
  MAX_SMALL_GRANULES = MAX_SMALL_BYTES / GRANULE_BYTES,
  /* x86-64 user addresses have 47 significant bits; the page map covers 48. */
  ADDRESS_BITS = 48,
  PAGEMAP_L2_BITS = 12,
  PAGEMAP_L1_BITS = ADDRESS_BITS - CHUNK_SHIFT - PAGEMAP_L2_BITS,
};

/* Object kinds: which pages an object comes from. */
enum object_kind {
  KIND_NORMAL = 0,            /* scanned conservatively, cleared */
  KIND_ATOMIC = 1,            /* never scanned, not cleared */
  KIND_UNCOLLECTABLE = 2,     /* scanned, a root until GC_free */
  KIND_ATOMIC_UNCOLLECTABLE = 3,
  KIND_COUNT = 4,
  KIND_THREAD_LOCAL_COUNT = 2 /* kinds with thread-local free lists */
  /* KIND_COUNT and up: kinds the program made (mark/custom_kind.h). */
};

/* Whether KIND is one the program made (GC_new_kind). */
static inline bool kind_is_custom(unsigned kind) { return kind >= KIND_COUNT; }
/* Kinds the program may make: KIND_COUNT .. KIND_COUNT + 27, and how many
 * it has made so far (GC_new_kind, mark/custom_kind.c, stores it with
 * release after the kind's descriptor; readers load it with acquire). */
enum { CUSTOM_KIND_MAX = 28 };
extern _Atomic unsigned custom_kind_count;

/* Whether objects of KIND may hold pointers the marker follows: every
 * kind but the atomic ones (a program's kinds are scanned by their mark
 * procedures). */
static inline bool kind_may_hold_pointers(unsigned kind) {
  return kind != KIND_ATOMIC && kind != KIND_ATOMIC_UNCOLLECTABLE;
}

/* Whether a collection may reclaim objects of KIND. */
static inline bool kind_is_collectable(unsigned kind) {
  return kind != KIND_UNCOLLECTABLE && kind != KIND_ATOMIC_UNCOLLECTABLE;
}

/* Size classes (heap/size_class.c). */
enum { SIZE_CLASS_COUNT = 30 };
/* page_header.free_slot of a kind without thread-local lists. */
enum { FREE_SLOT_NONE = 0xffff };
extern const uint16_t size_class_bytes[SIZE_CLASS_COUNT];
extern uint8_t size_class_of_granules[MAX_SMALL_GRANULES + 1];
void size_classes_init(void);

static inline unsigned size_class_for_bytes(size_t bytes) {
  return size_class_of_granules[(bytes + GRANULE_BYTES - 1) >> GRANULE_SHIFT];
}

#endif
