/* Back pointers at query time (collect/backptr.c). */
#ifndef SGC_COLLECT_BACKPTR_H
#define SGC_COLLECT_BACKPTR_H

#include <stddef.h>
#include <stdint.h>

#include "gc/gc_backptr.h"

/* GC_get_back_ptr_info for DEST, answering no heap object whose start is
 * one of AVOID's AVOID_COUNT; the calling thread's stack counts from
 * SELF_FROM up (the frame of the sgc call the program made).  Takes the
 * collector's locks and stops the world: call it with none held. */
GC_ref_kind backptr_find(void *dest, const uintptr_t *avoid, unsigned avoid_count,
                         uintptr_t self_from, void **base_p, size_t *offset_p);

/* GC_BACKTRACES=N: after each collection, outside every lock, N random
 * backtraces (GC_generate_random_backtrace without its collection), once
 * per collection whichever thread comes first. */
void backptr_after_collection(void);

#endif
