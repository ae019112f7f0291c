/* bdwgc's <gc/leak_detector.h>: a C program includes it (after the
 * system headers) to have its malloc, free and the rest served by the
 * collector's debugging calls, and calls GC_set_find_leak(1) before
 * GC_INIT(): objects it drops without freeing them are then reported,
 * with the file and line that allocated them, at the next collection
 * (CHECK_LEAKS() runs one, and leak mode runs one at exit). */
#ifndef SGC_LEAK_DETECTOR_H
#define SGC_LEAK_DETECTOR_H
#define GC_LEAK_DETECTOR_H /* bdwgc's guard */
#ifndef GC_DEBUG
#define GC_DEBUG
#endif
#include "../gc.h"
#ifndef GC_DONT_INCLUDE_STDLIB
#include <stdlib.h>
#include <string.h>
#endif

#undef malloc
#undef calloc
#undef free
#undef realloc
#undef strdup
#undef strndup
#undef memalign
#undef posix_memalign
#define malloc(n) GC_MALLOC(n)
#define calloc(m, n) GC_MALLOC((m) * (n))
#define free(p) GC_FREE(p)
#define realloc(p, n) GC_REALLOC(p, n)
#define strdup(s) GC_STRDUP(s)
#define strndup(s, n) GC_STRNDUP(s, n)
#define memalign(a, n) GC_memalign(a, n)
#define posix_memalign(p, a, n) GC_posix_memalign(p, a, n)
/* And, as bdwgc's development branch: the aligned forms have no
 * debugging counterpart (free() of them says the pointer has no
 * debugging information, then frees it). */
#undef reallocarray
#undef aligned_alloc
#undef valloc
#undef pvalloc
#undef free_sized
#undef free_aligned_sized
#undef malloc_usable_size
#define reallocarray(p, m, n) GC_REALLOC(p, (m) * (n))
#define aligned_alloc(a, n) GC_memalign(a, n)
#define valloc(n) GC_valloc(n)
#define pvalloc(n) GC_pvalloc(n)
#define free_sized(p, n) (free(p), (void)(n))
#define free_aligned_sized(p, a, n) (GC_free(p), (void)(a), (void)(n))
#define malloc_usable_size(p) GC_size(p)
#ifdef GC_REQUIRE_WCSDUP
#include <wchar.h>
#undef wcsdup
#define wcsdup(s) GC_WCSDUP(s)
#endif
#ifndef CHECK_LEAKS
#define CHECK_LEAKS() GC_gcollect()
#endif

#endif
