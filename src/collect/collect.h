/* The collection driver: when to collect, and one collection's steps. */
#ifndef SGC_COLLECT_H
#define SGC_COLLECT_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgc.h"
#include "alloc/collector.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"

/* GC_set_disable_automatic_collection and GC_set_force_unmap_on_gcollect
 * (api/compat_hooks.c). */
bool collect_automatic_disabled(void);
bool collect_force_unmap(void);


/* Both with heap_lock held. */
bool collect_should_run(void);
void collect_locked(enum SGC_gc_reason reason);
/* Starts a concurrent cycle (collect/concurrent.h) unless one runs or
 * collections are off; collect_locked finishes it. */
void collect_start_cycle(enum SGC_gc_reason reason);
/* At an allocation slow path, no lock held: starts a cycle when due. */
void collect_poll_cycle_start(void);
/* The same place: finishes a cycle whose marking has converged; true
 * when it did (the caller then runs collect_after_unlock). */
bool collect_poll_cycle_finish(void);
/* Heap growth when no free page is left and no collection is due. */
size_t collect_growth_bytes(size_t needed);
/* What all threads together may hold back of their unlocked refills
 * bytes (heap/accounting.h): a quarter of the collection threshold, so
 * the trigger is never late by much (500 threads at 64 KiB held 32 MB
 * back from an 8 MB threshold).  Set by each collection; read by
 * refills, relaxed (a hint). */
extern _Atomic size_t unlocked_flush_budget;
#endif
