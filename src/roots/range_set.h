/* Sets of address ranges for the roots (roots/roots.c): growable arrays
 * from the OS, with an index by start address for the sets the program
 * fills (GC_add_roots, GC_exclude_static_roots). */
#ifndef SGC_RANGE_SET_H
#define SGC_RANGE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct range {
  uintptr_t lo, hi;
};

/* os_alloc'd (never the heap, and outside every root).  No fixed limit:
 * bdwgc aborts past 2,048 root ranges ("Too many root sets").  Each set
 * has one lock for readers and writers alike, held by the caller, so
 * growing never moves an array a reader is in. */
struct range_set {
  struct range *items;
  size_t count, capacity;
  /* Open addressing by start address: slot -> item index + 1 (0: free);
   * built and kept by range_set_add_or_extend and kept by
   * range_set_remove.  range_set_add leaves it alone: a set is filled by
   * one of the two adds, never both. */
  uint32_t *index;
  size_t index_slots;
};

/* Appends [lo, hi) (nothing when empty); WHAT names the set in the
 * fatal message when the OS refuses memory. */
void range_set_add(struct range_set *set, uintptr_t lo, uintptr_t hi, const char *what);
/* bdwgc's rule for GC_add_roots and its exclusions: a range starting where
 * one already does extends that one (when longer) instead of adding a
 * second.  Found through the index: a linear search made 100,000
 * GC_add_roots take 1.4 s. */
void range_set_add_or_extend(struct range_set *set, uintptr_t lo, uintptr_t hi,
                             const char *what);
/* Removes every range inside [lo, hi) (bdwgc's GC_remove_roots rule). */
void range_set_remove(struct range_set *set, uintptr_t lo, uintptr_t hi);
void range_set_clear(struct range_set *set);
bool range_set_holds(const struct range_set *set, uintptr_t a);

#endif
