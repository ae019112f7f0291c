/* The parts of bdwgc's <gc/gc_mark.h> sgc provides.  sgc has no custom
 * object kinds or mark procedures (GC_new_kind, GC_new_proc): its four
 * kinds are bdwgc's predefined ones, numbered as bdwgc numbers them. */
#ifndef SGC_GC_MARK_H
#define SGC_GC_MARK_H
#include "../gc.h"
#ifdef __cplusplus
extern "C" {
#endif

/* bdwgc names these two in its gc_inline.h, with GC_malloc_kind. */
#define GC_I_PTRFREE 0
#define GC_I_NORMAL 1

/* Objects of a predefined kind (0 to 3; others are a fatal error). */
GC_API void *GC_generic_malloc(size_t, int kind);
GC_API void *GC_generic_malloc_ignore_off_page(size_t, int kind);
GC_API void *GC_generic_malloc_uncollectable(size_t, int kind);
GC_API void *GC_generic_or_special_malloc(size_t, int kind);
GC_API void *GC_debug_generic_or_special_malloc(size_t, int kind, const char *file, int line);
GC_API void *GC_malloc_kind(size_t, int kind);
GC_API void *GC_malloc_kind_global(size_t, int kind);
/* The object's kind (as above) and, through the pointer, its size. */
GC_API int GC_get_kind_and_size(const void *, size_t *);
/* Whether the object's mark bit is set: inside or right after a collection. */
GC_API int GC_is_marked(const void *);

/* Called at the start of every collection, heap lock held. */
typedef void (*GC_start_callback_proc)(void);
GC_API void GC_set_start_callback(GC_start_callback_proc);
GC_API GC_start_callback_proc GC_get_start_callback(void);
/* Called while roots are pushed, world stopped; it names extra roots
 * with GC_push_all (ranges scanned conservatively). */
typedef void (*GC_push_other_roots_proc)(void);
GC_API void GC_set_push_other_roots(GC_push_other_roots_proc);
GC_API GC_push_other_roots_proc GC_get_push_other_roots(void);
GC_API void GC_push_all(void *bottom, void *top);
GC_API void GC_push_all_eager(void *bottom, void *top);
GC_API void GC_push_conditional(void *bottom, void *top, int all); /* all pages, always */
/* The object survives the collection in progress, unscanned. */
GC_API void GC_set_mark_bit(const void *);
GC_API void GC_clear_mark_bit(const void *);
GC_API void *GC_clear_stack(void *);

#ifdef __cplusplus
}
#endif
#endif
