/* What the allocator asks of the collector: the one seam that points up
 * (docs/design.md, "The layering rule").  Declared here, at the
 * allocator's layer, and defined in collect/ (trigger.c; concurrent_assist
 * in assist.c, collect_after_unlock in collect.c), so that alloc/
 * never includes the collector.  All but collect_after_unlock and
 * unlocked_flush_step with heap_lock held. */
#ifndef SGC_ALLOC_COLLECTOR_H
#define SGC_ALLOC_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>

struct thread_alloc;

/* The heap policy when no free page is at hand (thesis §2.2, step 3), in
 * two steps a caller runs around its own ways of finding a page (sweeping,
 * its store, stealing):
 * collect_if_due collects (SGC_REASON_ALLOCATION) when the allocation
 * since the last collection calls for it and this slow path has not
 * collected yet (*COLLECTED), and says whether it did; */
bool collect_if_due(bool *collected);
/* grow_or_collect grows the heap by the growth rule, else by BYTES at
 * the least, else (the heap's limit, or the OS refusing) collects once
 * (SGC_REASON_HEAP_LIMIT) unless collections are off; false when it could
 * do none of these. */
bool grow_or_collect(size_t bytes, bool *collected);
/* Torture mode (SGC_TORTURE=N): whether T's slow path is its Nth, and
 * collect_torture collects for it. */
bool collect_torture_turn(struct thread_alloc *t);
void collect_torture(void);
/* Concurrent mode, at a slow path with no lock of the collector's held
 * (collect/assist.c): a cycle's share of marking for a thread about
 * to take about BYTES, the start of a cycle when one is due, or the
 * finish of one that converged: true then, and the caller runs
 * collect_after_unlock. */
bool concurrent_assist(size_t bytes);
/* After heap_lock is released: queued finalizers, the trace. */
void collect_after_unlock(void);
/* The bytes a thread may count privately before adding them to the
 * shared allocation count (collect/trigger.c). */
size_t unlocked_flush_step(void);

#endif
