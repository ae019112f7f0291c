/* bdwgc's <gc/leak_detector.h>: a C program includes it (after the
 * system headers) to have its malloc, free and the rest served by the
 * collector's debugging calls, and calls GC_set_find_leak(1) before
 * GC_INIT(): objects it drops without freeing them are then reported,
 * with the file and line that allocated them, at the next collection
 * (CHECK_LEAKS() runs one). */
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
#ifdef GC_REQUIRE_WCSDUP
#include <wchar.h>
#undef wcsdup
#define wcsdup(s) GC_WCSDUP(s)
#endif
#ifndef CHECK_LEAKS
#define CHECK_LEAKS() GC_gcollect()
#endif

#endif
