/* Per-collection records, totals, the trace file and the exit summary. */
#ifndef SGC_STATS_H
#define SGC_STATS_H

#include <stdbool.h>

#include "sgc.h"

/* One GC thread's share of a collection's marking (thesis Fig 3.8). */
struct marker_record {
  uint64_t bytes, objects, steal_attempts, steal_successes, busy_ns, idle_ns, cpu_ns;
  uint64_t join_ns; /* from the phase's start to the helper's first work */
  bool prewoken;    /* the helper was awake, pre-woken, when the phase began */
};
enum { TRACE_MAX_MARKERS = 64 };

void stats_init(void);
/* The SGC_STATS=1 summary on stderr, now (also GC_dump). */
void stats_print_summary(void);
/* Stores a record and the first TRACE_MAX_MARKERS markers' shares
 * (heap_lock held; does no I/O). */
void stats_record_collection(const SGC_gc_record_t *rec, const struct marker_record *markers,
                             unsigned count);
/* Writes trace lines and GC_PRINT_STATS lines for new records (no lock
 * of the collector held). */
void stats_flush_pending(void);
/* The fork handlers' part (api/init.c): the child also reopens a
 * per-process SGC_TRACE file ("%p") at its first collection. */
void stats_before_fork(void);
void stats_after_fork_parent(void);
void stats_after_fork_child(void);

#endif
