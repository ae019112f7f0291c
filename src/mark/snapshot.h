/* Heap snapshots for the slow predictor (thesis §4.3.4; docs/prediction.md):
 * the live graph as the marker sees it at a collection's start, written
 * before the marking begins with the world stopped. */
#ifndef SGC_SNAPSHOT_H
#define SGC_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

/* The next collection writes a snapshot into DIR (heap_lock held); false
 * when DIR is too long. */
bool snapshot_request(const char *dir);
/* Where the collector pre-wakes its GC threads, before the world stops:
 * when this collection writes a snapshot, notes the time and the system's
 * runnable threads for its snapshot_wake. */
void snapshot_before_prewake(void);
/* At the drain's start, the roots on the collector's stack: writes the
 * snapshot when SGC_SNAPSHOT or a request asks for one.  Reads the heap
 * and the stack only; no mark changes. */
void snapshot_before_drain(void);
/* What the latest collection's dump took (0: none), inside its mark_ns. */
uint64_t snapshot_last_ns(void);

#endif
