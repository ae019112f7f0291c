/* The collector's side of debugging allocation (api/debug_alloc.c). */
#ifndef SGC_API_DEBUG_ALLOC_H
#define SGC_API_DEBUG_ALLOC_H

/* After marking, before sweeping, heap_lock held: checks every debugging
 * object, drops the unreachable ones from the list, and in leak mode
 * reports and keeps those never freed. */
void debug_objects_after_mark(void);
/* Prints what the last collections found; outside every lock. */
void debug_objects_print_reports(void);

#endif
