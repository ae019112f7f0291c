/* bdwgc's <gc/gc_backptr.h>: asking why an object is kept.  bdwgc answers
 * only in a build that keeps back pointers (KEEP_BACK_PTRS), which
 * Debian's libgc is not; sgc keeps none either, so the calls are there
 * for programs to build and answer that nothing is known. */
#ifndef SGC_GC_BACKPTR_H
#define SGC_GC_BACKPTR_H
#define GC_BACKPTR_H /* bdwgc's guard */
#include "../gc.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GC_UNREFERENCED,   /* nothing known refers to it */
  GC_NO_SPACE,       /* no back pointer kept: sgc's answer, always */
  GC_REFD_FROM_ROOT, /* *base_p is the root that refers to it */
  GC_REFD_FROM_REG,  /* a register refers to it */
  GC_REFD_FROM_HEAP, /* the object at *base_p, at *offset_p, refers to it */
  GC_FINALIZER_REFD  /* kept for its finalizer */
} GC_ref_kind;

/* What keeps DEST alive; sgc returns GC_NO_SPACE. */
GC_API GC_ref_kind GC_get_back_ptr_info(void *dest, void **base_p, size_t *offset_p)
    GC_ATTR_NONNULL(1);
/* Some address inside the heap, and the start of some object in use. */
GC_API void *GC_generate_random_heap_address(void);
GC_API void *GC_generate_random_valid_address(void);
/* Print the chain that keeps a random object (or P) alive: sgc prints
 * that it keeps no back pointers. */
GC_API void GC_generate_random_backtrace(void);
GC_API void GC_print_backtrace(void *p) GC_ATTR_NONNULL(1);

#ifdef __cplusplus
}
#endif
#endif
