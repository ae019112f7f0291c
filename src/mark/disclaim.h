/* Disclaim procedures (bdwgc's gc_disclaim.h) inside sgc: where the
 * collector calls into mark/disclaim.c.
 *
 * Two hooks, each a walk of its own over the pages that runs only when a
 * program registered a procedure, so a collection without one pays a
 * test, not a test a page:
 *  - marking: mark_begin has the pages of kinds marked "from all" noted
 *    (disclaim_note_pages), and after the main drain the objects on them
 *    that are in use yet unmarked have their contents pushed
 *    (disclaim_push_unreached), so what they reference survives until
 *    their procedure has run;
 *  - sweeping: right after marking, before the walk that queues pages for
 *    the lazy sweep and frees unmarked large objects (sweep_after_mark),
 *    or before a GC thread sweeps a unit of the parallel sweep,
 *    disclaim_pages runs the procedures.  So a procedure runs in the
 *    collection that found its object unreachable, and never in the lazy
 *    sweep: that sweep (sweep_page) is unchanged.
 * Registration takes heap_lock, which every collection holds from start
 * to end, so one collection sees one set of procedures. */
#ifndef SGC_DISCLAIM_H
#define SGC_DISCLAIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/heap.h"

/* Bit K: sgc kind K (page_header.kind) has a disclaim procedure; and is
 * marked from all.  Written under heap_lock; read by collections, which
 * hold it (or run on GC threads it started): relaxed loads suffice. */
extern _Atomic uint32_t disclaim_kinds, disclaim_from_all_kinds;

static inline uint32_t disclaim_kinds_now(void) {
  return atomic_load_explicit(&disclaim_kinds, memory_order_relaxed);
}
static inline uint32_t disclaim_from_all_kinds_now(void) {
  return atomic_load_explicit(&disclaim_from_all_kinds, memory_order_relaxed);
}
static inline bool disclaim_kind_in(uint32_t kinds, unsigned kind) { return (kinds >> kind) & 1; }

/* After marking, before the pages [FIRST, FIRST + COUNT) of chunk C are
 * swept, queued or freed: on each page of a kind in disclaim_kinds the
 * procedure runs for every unmarked object; one it keeps gets its mark
 * set, every other is cleared (so a page that waits unswept into the next
 * collection never shows the procedure the same object twice), and the
 * sweep goes on by the marks as before.  Collector or GC thread, heap_lock
 * held by the collection. */
void disclaim_pages(struct chunk *c, size_t first, size_t count);

/* mark_begin (heap_lock held, before the stop): notes every page in use
 * of a kind in disclaim_from_all_kinds, forgetting the last collection's. */
void disclaim_note_pages(void);
/* After the main drain (world stopped): pushes onto the collector's
 * marker the contents of every noted object still unmarked and in use
 * (bdwgc's rule: a first word with one of its two low bits set); true
 * when it pushed any, for the caller to drain them. */
bool disclaim_push_unreached(void);

#endif
