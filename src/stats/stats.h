/* Per-collection records, totals, the trace file and the exit summary. */
#ifndef SGC_STATS_H
#define SGC_STATS_H

#include "sgc.h"

void stats_init(void);
/* Stores a record (heap_lock held; does no I/O). */
void stats_record_collection(const SGC_gc_record_t *rec);
/* Writes trace lines and GC_PRINT_STATS lines for new records (no lock
 * of the collector held). */
void stats_flush_pending(void);
void stats_count_large_allocation(void);

#endif
