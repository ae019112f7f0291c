/* Marking by the program's threads during a concurrent cycle (thesis
 * §5.2; collect/assist.c): the assist slots, the pace of each slow
 * path's marking, and the rescan queue the driver fills for them.
 * concurrent_assist itself, which the allocator calls, is declared in
 * alloc/collector.h.  Used by collect/concurrent.c and collect.c. */
#ifndef SGC_ASSIST_H
#define SGC_ASSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgc.h"

/* Once, with the barrier: the slots' markers and the rescan queue. */
void assist_prepare(void);
/* The start pause: the counts cleared; LIVE (what the last collection
 * found), LIMIT (the allocation at which the cycle must be done) and
 * ALLOCATED (the count now) set the pace. */
void assist_cycle_begin(uint64_t live, size_t limit, size_t allocated);
/* Slow paths may take slots (the marking has begun), or may no longer;
 * assist_wait_slots then waits until every slot is given back. */
void assist_open_slots(void);
void assist_close_slots(void);
void assist_wait_slots(void);
/* The driver, after a round: the pages an assist rescans per MiB its
 * thread allocates (0: none, before the first round and once ready). */
void assist_rescan_pace(uint64_t pages_per_mib);
/* What the cycle's markers (GC threads and slots) have marked so far, as
 * their drains last published it. */
uint64_t cycle_marked_so_far(void);
/* Marker 0's own (no phase running): the slots' leftovers, and the
 * rescan queue's (ALL of it, or half of its public part); true when
 * there was some. */
bool assist_gather(void);
bool rescan_queue_gather(bool all);
/* The driver, after a round: what it queued on marker 0 moved to the
 * rescan queue, public. */
void rescan_queue_fill(void);
/* The program threads' marking this cycle (all of it once the finish
 * closed it): bytes, of them pointer-free, objects. */
void concurrent_assist_totals(uint64_t *bytes, uint64_t *atomic_bytes, uint64_t *objects);
/* The finish's record: the assists' fields of SGC_gc_record_t. */
void assist_record(SGC_gc_record_t *out);
/* fork()'s child: the slots' locks made anew, their work dropped. */
void assist_after_fork_child(void);

#endif
