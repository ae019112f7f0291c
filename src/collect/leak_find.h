/* Leak finding for the plain calls' objects (collect/leak_find.c). */
#ifndef SGC_COLLECT_LEAK_FIND_H
#define SGC_COLLECT_LEAK_FIND_H

#include <stdbool.h>

/* Before a stop-the-world collection (heap_lock held): whether it looks
 * for leaks of custom kinds (GC_new_kind), whose free objects are then
 * marked with leak_find_mark_free after the marks are cleared and before
 * marking (alloc/custom_alloc.c, custom_kinds_free_lists_undo). */
bool leak_find_custom_kinds_begin(void);
void leak_find_mark_free(void *object);
/* Leak mode, a cycle's finish: OBJECT is free though the cycle may have
 * marked it (alloc/custom_alloc.c, custom_kinds_before_mark). */
void leak_find_unmark_free(void *object);
/* World stopped, marking done, before the batches of freed objects are
 * dropped: decides whether this collection looks for leaks, and if so
 * marks the batches' objects as freed. */
void leak_find_before_batches_drop(void);
/* heap_lock held, page path closed, after debug_objects_after_mark and
 * before the sweep: reports every unmarked object never freed. */
void leak_find_after_mark(void);
/* After the sweep (heap_lock held): in leak mode, sweeps what the lazy
 * sweep left, so the next collection finds every free object on a list. */
void leak_find_after_sweep(void);

#endif
