/* Marking (thesis ch. 3): a conservative scan from the roots, by one or
 * several markers that balance load by stealing (mark/parallel.c). */
#ifndef SGC_MARK_H
#define SGC_MARK_H

#include <stdbool.h>
#include <stdint.h>

#include "heap/heap.h"
#include "mark/marker.h"

/* Reads SGC_MARK_VARIANT / SGC_SPLIT_BYTES and sets up marker 0. */
void mark_init(void);
/* Starts a collection's marking (world stopped): empty stacks, mark
 * bits of collectable objects cleared, uncollectable objects queued as
 * roots. */
void mark_begin(void);

/* Root and finalization helpers: they work on the collecting thread's
 * marker (marker 0). */
void mark_push_range(uintptr_t lo, uintptr_t hi);
void mark_push_range_on(struct marker *m, uintptr_t lo, uintptr_t hi);
void mark_word(uintptr_t word);
/* mark_word on marker M (a mark procedure's GC_mark_and_push). */
void mark_word_with(struct marker *m, uintptr_t word);
void mark_without_scan(struct page_header *page, uintptr_t base);
void mark_push_contents(struct page_header *page, uintptr_t base);
void mark_push_contents_on(struct marker *m, struct page_header *page, uintptr_t base);
void mark_scan_contents_excluding_self(struct page_header *page, uintptr_t base);
/* Concurrent cycles (collect/concurrent.c).  mark_concurrently: set
 * while GC threads mark beside the running program, so drains take the
 * care that needs (mark.c); mark_yield_request: a cycle's finish asks
 * them to stop and leave their work on their stacks. */
extern _Atomic bool mark_concurrently;
extern _Atomic int mark_yield_request;
static inline bool mark_yield_requested(void) {
  return atomic_load_explicit(&mark_yield_request, memory_order_relaxed) != 0;
}
/* The world stopped: scans marker 0's entries from FROM on (the roots
 * pushed so far) now, marking what they point to and queueing those
 * objects in their place, so the roots need not stay readable while the
 * program runs (a stack may be unmapped when its thread exits). */
void mark_scan_roots_now(size_t from);
/* Grows marker 0's stack to hold ENTRIES more, before the roots' ranges
 * are found: a stack moved (mremap) while a range still to be scanned
 * covers its old pages (a readable extent around a coroutine's stack
 * pointer that runs into it: bb_foreign_stacks) would be read unmapped. */
void mark_reserve(size_t entries);
/* Marks everything reachable from marker 0's stack on this thread alone. */
void mark_drain(void);
/* The same with every marker of this collection (parallel.c). */
void mark_drain_parallel(void);

/* One marker's loop over its own stack, with the prefetch window. */
void mark_drain_own(struct marker *m);

struct mark_totals {
  uint64_t bytes;   /* bytes of objects newly marked */
  uint64_t atomic_bytes; /* of them, in objects with no pointers (GC_malloc_atomic) */
  uint64_t objects;
  uint64_t steal_attempts, steal_successes;
  uint64_t idle_ns;       /* summed over markers: stealing and terminating */
  uint64_t max_busy_ns, min_busy_ns, sum_busy_ns;
  unsigned markers;
};
/* Sums the markers' counters of this collection. */
struct mark_totals mark_collect_totals(void);
extern struct marker *mark_collector; /* marker 0 */

/* parallel.c */
void parallel_mark_init(void);
/* Markers (GC threads + the collector) used by the next collection. */
unsigned parallel_markers_ready(void);
struct marker *parallel_marker(unsigned i);
void parallel_after_fork_child(void);
void parallel_ensure_markers(unsigned want);
/* Before the world stops: wakes the GC threads the coming mark will use,
 * so their wake-up overlaps clearing the marks and the stop (parallel.c). */
void parallel_prewake(void);
/* Right before the stop: lets a pre-woken GC thread that has not yet run
 * get off the collector's CPU. */
void parallel_prewake_settle(void);
unsigned parallel_markers_created(void);
/* A concurrent cycle's marking: every active marker drains from marker
 * 0's stack with stealing, as a collection does, until the work runs out
 * or mark_yield_request is set; then (no phase running) the GC threads'
 * leftover entries move to marker 0. */
void parallel_drain_concurrent(void);
/* ON from before a cycle's finish pre-wakes the GC threads until its
 * drain is done: that drain takes every GC thread (parallel.c). */
void parallel_finish_takes_all(bool on);
void parallel_gather_work(void);
void parallel_run_phase(void (*work)(struct marker *, void *), void *arg, bool wait_all);
unsigned parallel_set_active(unsigned want);
/* One round of steals by M over the active markers (victims on M's
 * memory node first), and during a concurrent cycle over the extra
 * victims too; true when it took work. */
bool parallel_steal_from_someone(struct marker *m);
/* Markers other than the GC threads' whose public work the markers of a
 * concurrent cycle's drains may steal as well (the assisting threads'
 * slots: collect/assist.c).  Once, before the first cycle; VICTIMS
 * stays valid. */
void parallel_set_extra_victims(struct marker *const *victims, unsigned count);
/* Adapts the next collection's marker count to this one's parallelism
 * (from T and the markers' busy, idle and CPU times). */
void parallel_after_collection(const struct mark_totals *t);
/* Before the first collection: BYTES allocated so far, an upper bound of
 * what it can find live (later ones use the last collection's live data). */
void parallel_bound_first_live(uint64_t bytes);
/* How many of WANT markers the next collection uses under SGC_MARKERS=rule
 * (WANT under any other choice). */
unsigned parallel_adaptive_markers(unsigned want);

#endif
