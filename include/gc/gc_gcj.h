/* bdwgc's <gc/gc_gcj.h> for sgc: objects whose first word points to a
 * vtable holding a mark descriptor.  sgc stores the vtable pointer and
 * scans the object whole (the vtable stays alive through that word). */
#ifndef SGC_GC_GCJ_H
#define SGC_GC_GCJ_H
#define GC_GCJ_H /* bdwgc's guard */
#include "../gc.h"
#ifdef __cplusplus
extern "C" {
#endif

GC_API void GC_init_gcj_malloc(int mark_proc_index, void *mark_proc);
/* The kind GC_generic_malloc gives gcj-style objects: scanned whole, as
 * sgc scans them, so GC_I_NORMAL. */
GC_API int GC_gcj_kind;
GC_API int GC_gcj_debug_kind;
GC_API void *GC_gcj_malloc(size_t, void *vtable);
GC_API void *GC_gcj_malloc_ignore_off_page(size_t, void *vtable);
GC_API void *GC_debug_gcj_malloc(size_t, void *vtable, const char *file, int line);
#ifdef GC_DEBUG
#define GC_GCJ_MALLOC(s, d) GC_debug_gcj_malloc(s, d, __FILE__, __LINE__)
#else
#define GC_GCJ_MALLOC(s, d) GC_gcj_malloc(s, d)
#endif
#define GC_GCJ_MALLOC_IGNORE_OFF_PAGE(s, d) GC_gcj_malloc_ignore_off_page(s, d)

#ifdef __cplusplus
}
#endif
#endif
