/* Lazy sweeping (thesis §3.3): after a collection every small page waits in
 * an "unswept" list of its kind and size class -- its owner's (in the
 * owner's page store) under AL and LPS, a shared one under PS or when the
 * owner has exited -- and is swept when a thread needs objects of that
 * class.  A shared list is under its class's spin lock, a store's under
 * the store's (sweep.c); callers hold heap_lock or are inside the
 * page-path gate (alloc/page_path.h), so no collection runs meanwhile. */
#ifndef SGC_SWEEP_H
#define SGC_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/sweeper.h"

/* After marking: frees unmarked large objects and queues every small page
 * for sweeping in the new epoch. */
void sweep_after_mark(void);
/* The same, but every page swept now by all GC threads (SGC_SWEEP=parallel). */
void sweep_after_mark_parallel(void);
/* Bytes in swept pages' free lists (for GC_get_free_bytes). */
size_t sweep_free_bytes_estimate(void);

#endif
