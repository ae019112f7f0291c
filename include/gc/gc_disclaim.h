/* bdwgc's <gc/gc_disclaim.h> for sgc: a procedure a kind's objects pass
 * through when a collection is about to reclaim them, and the light,
 * unordered finalization built on it (GC_finalized_malloc).  Names and
 * signatures are bdwgc 8.2's, so its programs build unchanged.
 *
 * When sgc calls a disclaim procedure: right after the marking of the
 * collection that finds the object unreachable, before the world's next
 * allocation from its page -- so one GC_gcollect() is enough to run it --
 * on the collecting thread, or on a GC thread with SGC_SWEEP=parallel.
 * Calls never overlap (one lock serialises them, as bdwgc's allocation
 * lock does), and they are made with the collector's lock held: a
 * procedure must not allocate, free, register finalizers or collect (in
 * bdwgc too it runs with the allocation lock held); reading memory and
 * GC_base / GC_size are fine.  It may also be handed a free object of its
 * kind, which reads as zeros except, perhaps, a free-list link (a
 * pointer, low bits clear) in its first word. */
#ifndef SGC_GC_DISCLAIM_H
#define SGC_GC_DISCLAIM_H
#define GC_DISCLAIM_H /* bdwgc's guard */
#include "../gc.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Makes the kind GC_finalized_malloc allocates from; call it once before
 * the first GC_finalized_malloc (calling it again, from any thread, does
 * nothing; sgc also makes the kind on first use). */
GC_API void GC_init_finalized_malloc(void);

/* Return non-zero to keep OBJ (mark it live) for this collection; zero
 * lets the collector reclaim it, and sgc clears it at once. */
typedef int (*GC_disclaim_proc)(void *obj);

/* Calls PROC on each unmarked object of KIND (as GC_generic_malloc
 * numbers kinds) before it is reclaimed; a later call replaces it.
 * With MARK_FROM_ALL non-zero, the objects of KIND that are still in use
 * are scanned even when nothing reaches them, so what they point to is
 * intact when PROC runs; bdwgc tells an object in use from a free one by
 * its first word, which must have one of its two low bits set (free
 * objects hold zero or an aligned link there), and sgc follows that rule.
 * The cost is bdwgc's: a chain of such objects is reclaimed one link per
 * collection, and a cycle of them never.  GC_free reclaims an object
 * without calling PROC.  Register before allocating objects of KIND. */
GC_API void GC_register_disclaim_proc(int kind, GC_disclaim_proc proc, int mark_from_all)
    GC_ATTR_NONNULL(2);

/* What runs when a GC_finalized_malloc object is found unreachable:
 * proc(object, cd), at most once, after which the object is reclaimed. */
struct GC_finalizer_closure {
  GC_finalization_proc proc;
  void *cd;
};

/* BYTES of cleared, scanned memory finalized by FC: FC->proc runs from
 * the collection that finds the object unreachable, unordered (anything
 * the object references is kept intact until then, the closure itself
 * too when it lives in the collected heap), and must not resurrect it.
 * The closure's address is kept, tagged, in a word just before the
 * returned pointer, so GC_base gives that word's address and GC_size
 * counts it; FC must stay valid until the proc has run. */
GC_API GC_ATTR_MALLOC GC_ATTR_ALLOC_SIZE(1) void *GC_finalized_malloc(
    size_t bytes, const struct GC_finalizer_closure *fc) GC_ATTR_NONNULL(2);

#ifdef __cplusplus
}
#endif
#endif
