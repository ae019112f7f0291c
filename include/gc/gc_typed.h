/* bdwgc's <gc/gc_typed.h> for sgc.  A descriptor says which words of an
 * object may be pointers, and the collector scans only those (a word left
 * out is a weak reference, as Guile's weak tables use).  Objects up to 62
 * words follow the bitmap exactly; longer ones are scanned up to their
 * last pointer word; arrays from GC_calloc_explicitly_typed are scanned
 * whole.  The descriptor is kept in the object's last word, which
 * GC_size counts (as bdwgc). */
#ifndef SGC_GC_TYPED_H
#define SGC_GC_TYPED_H
#define GC_TYPED_H /* bdwgc's guard */
#include "../gc.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef GC_word *GC_bitmap;
typedef GC_word GC_descr;
#define GC_WORDSZ (8 * sizeof(GC_word))
#define GC_get_bit(bm, index) (((bm)[(index) / GC_WORDSZ] >> ((index) % GC_WORDSZ)) & 1)
#define GC_set_bit(bm, index) ((bm)[(index) / GC_WORDSZ] |= (GC_word)1 << ((index) % GC_WORDSZ))
#define GC_WORD_OFFSET(t, f) (offsetof(t, f) / sizeof(GC_word))
#define GC_WORD_LEN(t) (sizeof(t) / sizeof(GC_word))
#define GC_BITMAP_SIZE(t) ((GC_WORD_LEN(t) + GC_WORDSZ - 1) / GC_WORDSZ)

GC_API GC_descr GC_make_descriptor(const GC_word *bitmap, size_t bits);
GC_API void *GC_malloc_explicitly_typed(size_t, GC_descr);
GC_API void *GC_malloc_explicitly_typed_ignore_off_page(size_t, GC_descr);
GC_API void *GC_calloc_explicitly_typed(size_t count, size_t size, GC_descr);
#define GC_MALLOC_EXPLICITLY_TYPED(bytes, d) GC_malloc_explicitly_typed(bytes, d)
#define GC_CALLOC_EXPLICITLY_TYPED(n, bytes, d) GC_calloc_explicitly_typed(n, bytes, d)

#ifdef __cplusplus
}
#endif
#endif
