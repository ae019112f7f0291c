/* The collector's side of debugging allocation (collect/debug_alloc.c). */
#ifndef SGC_API_DEBUG_ALLOC_H
#define SGC_API_DEBUG_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* After marking, before sweeping, heap_lock held: checks every debugging
 * object, drops the unreachable ones from the list, and in leak mode
 * reports and keeps those never freed. */
void debug_objects_after_mark(void);
/* Prints what the last collections found; outside every lock. */
void debug_objects_print_reports(void);
/* Around fork, with the collector's locks held: takes (TAKE) or releases
 * the debugging objects' lock, so no child inherits it held. */
void debug_objects_fork_lock(bool take);
/* A plain object (no debugging header) found leaked (collect/leak_find.c):
 * listed with the next report, in bdwgc's words.  Takes debug_lock. */
void debug_report_plain_leak(void *object, size_t size, bool atomic);
/* Leak mode was switched on: one more collection at exit. */
void debug_objects_leak_mode_on(void);

#endif
