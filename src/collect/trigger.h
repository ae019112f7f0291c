/* When to collect and how much to grow the heap (collect/trigger.c):
 * what the collection itself reads and resets.  heap_lock held. */
#ifndef SGC_COLLECT_TRIGGER_H
#define SGC_COLLECT_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>

/* bdwgc's rule: bytes to allocate between collections. */
size_t collect_threshold(void);
/* GC_dont_gc, GC_disable, a collection running, automatic ones off. */
bool collections_off(void);
/* Concurrent mode starts cycles (not in leak mode). */
bool cycles_wanted(void);
/* Adds the unlocked refills' counts to the allocation since the last
 * collection (world stopped, page-path gate closed). */
void fold_unlocked_allocation(void);
/* After a collection: the per-thread lists a flip to per-CPU caches left
 * count in the next cycle, and the unlocked refills' budget follows the
 * new threshold. */
void trigger_after_collection(size_t lists_left_by_flip);
#endif
