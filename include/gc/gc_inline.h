/* bdwgc's <gc/gc_inline.h>: filling a program's own inline free list,
 * and the allocation macros over one.  bdwgc's macros pop the program's
 * list of tiny objects inline; sgc's allocator already pops a
 * thread-local list, so here they call it (the list arguments go
 * unused), and a program written for either builds unchanged. */
#ifndef SGC_GC_INLINE_H
#define SGC_GC_INLINE_H
#define GC_INLINE_H /* bdwgc's guard */
#include "gc_mark.h"
#include "gc_tiny_fl.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Sets *RESULT to a list of objects of LB bytes and kind K, linked
 * through their first words (GC_NEXT), or NULL when out of memory.  The
 * objects are the caller's: they live while it can reach them, so a
 * pointer-free kind's list must be reachable some other way than its
 * links (a mark procedure, or holding every object). */
GC_API void GC_generic_malloc_many(size_t lb, int k, void **result);


/* bdwgc's helpers for inline allocators a program writes itself. */
#if defined(__GNUC__) || defined(__clang__)
#define GC_EXPECT(expr, outcome) __builtin_expect(expr, outcome)
#define GC_PREFETCH_FOR_WRITE(x) __builtin_prefetch((x), 1)
#else
#define GC_EXPECT(expr, outcome) (expr)
#define GC_PREFETCH_FOR_WRITE(x) (void)0
#endif
#ifndef GC_ASSERT
#ifdef NDEBUG
#define GC_ASSERT(expr) /* nothing */
#else
#include <assert.h>
#define GC_ASSERT(expr) assert(expr)
#endif
#endif
/* A store to a program's own free-list head (sgc's marker never reads
 * those lists, so a plain store). */
#define GC_FAST_M_AO_STORE(my_fl, next) (void)(*(my_fl) = (next))

/* DEFAULT_EXPR is what bdwgc evaluates when the list is empty: always,
 * here (INIT readies an object taken from the list, so it is not needed). */
#define GC_FAST_MALLOC_GRANS(result, granules, tiny_fl, num_direct, kind, default_expr, init) \
  do {                                                                                       \
    (void)(tiny_fl);                                                                         \
    (result) = (default_expr);                                                               \
  } while (0)
#define GC_MALLOC_WORDS_KIND(result, n, tiny_fl, kind, init)                       \
  do {                                                                             \
    (void)(tiny_fl);                                                               \
    (result) = GC_malloc_kind((n) * sizeof(GC_word), (kind));                     \
  } while (0)
#define GC_MALLOC_WORDS(result, n, tiny_fl) \
  GC_MALLOC_WORDS_KIND(result, n, tiny_fl, GC_I_NORMAL, (void)0)
#define GC_MALLOC_ATOMIC_WORDS(result, n, tiny_fl) \
  GC_MALLOC_WORDS_KIND(result, n, tiny_fl, GC_I_PTRFREE, (void)0)
/* A two-word object holding FIRST and SECOND. */
#define GC_CONS(result, first, second, tiny_fl)                  \
  do {                                                           \
    void *sgc_first_ = (void *)(first);                          \
    void *sgc_second_ = (void *)(second);                        \
    GC_MALLOC_WORDS(result, 2, tiny_fl);                         \
    if ((result) != NULL) {                                      \
      ((void **)(result))[0] = sgc_first_;                       \
      ((void **)(result))[1] = sgc_second_;                      \
    }                                                            \
  } while (0)

/* Prints the calling thread's free list of KIND (GC_I_NORMAL or
 * GC_I_PTRFREE) and of objects of SZ_IN_GRANULES granules. */
GC_API void GC_print_free_list(int kind, size_t sz_in_granules);

#ifdef __cplusplus
}
#endif
#endif
