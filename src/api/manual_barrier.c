/* bdwgc's manual write barrier (gc.h): the program reports its stores
 * into the heap, and the manual barrier (barrier/manual.c) records them
 * while a concurrent cycle marks.  GC_reachable_here is gc.h's macro, a
 * compiler barrier that keeps its argument live: nothing to record. */
#include "barrier/barrier.h"
#include "common.h"

GC_API void GC_set_manual_vdb_allowed(int on) { barrier_set_manual_allowed(on != 0); }
GC_API int GC_get_manual_vdb_allowed(void) { return barrier_manual_allowed(); }

/* P names an object that changed: all its pages. */
GC_API void GC_end_stubborn_change(const void *p) { barrier_note_object(p); }
GC_API void GC_debug_end_stubborn_change(const void *p) { barrier_note_object(p); }

/* The store, then its note (barrier/manual.c says why in that order). */
GC_API void GC_ptr_store_and_dirty(void *p, const void *q) {
  *(const void **)p = q;
  barrier_note_store(p);
}
GC_API void GC_debug_ptr_store_and_dirty(void *p, const void *q) { GC_ptr_store_and_dirty(p, q); }
