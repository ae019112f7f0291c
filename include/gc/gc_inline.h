/* The part of bdwgc's <gc/gc_inline.h> sgc provides: filling a
 * program's own inline free list.  (bdwgc's GC_FAST_MALLOC_GRANS macros,
 * which index its internal free-list layout, are not provided.) */
#ifndef SGC_GC_INLINE_H
#define SGC_GC_INLINE_H
#include "gc_mark.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Sets *RESULT to a list of objects of LB bytes and kind K, linked
 * through their first words (GC_NEXT), or NULL when out of memory.  The
 * objects are the caller's: they live while it can reach them, so a
 * pointer-free kind's list must be reachable some other way than its
 * links (a mark procedure, or holding every object). */
GC_API void GC_generic_malloc_many(size_t lb, int k, void **result);

#ifdef __cplusplus
}
#endif
#endif
