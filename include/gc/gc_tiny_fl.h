/* bdwgc's <gc/gc_tiny_fl.h>: the granule, sgc's as bdwgc's on 64-bit
 * targets (16 bytes), and the sizes of the tiny free lists a program
 * keeps with gc_inline.h's macros. */
#ifndef SGC_GC_TINY_FL_H
#define SGC_GC_TINY_FL_H
#define GC_TINY_FL_H /* bdwgc's guard */

#define GC_GRANULE_BYTES 16
#define GC_GRANULE_WORDS (GC_GRANULE_BYTES / sizeof(void *))
#define GC_TINY_FREELISTS 25
#define GC_RAW_BYTES_FROM_INDEX(i) ((i) * GC_GRANULE_BYTES)
#define GC_WORDS_TO_GRANULES(n) ((n) * sizeof(void *) / GC_GRANULE_BYTES)
#define GC_WORDS_TO_WHOLE_GRANULES(n) GC_WORDS_TO_GRANULES((n) + GC_GRANULE_WORDS - 1)

#endif
