/* GC_malloc and friends: the inline fast path (thesis §2.2.2).
 *
 * A thread pops from its own free list for the object's kind and size
 * class: no lock, no atomic read-modify-write.  Objects on the lists are
 * already zeroed except their link word and GC_free's tag in the second
 * (sweeping and GC_free clear them), so the fast path clears two words. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "alloc/alloc.h"
#include "alloc/percpu.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"

SGC_NOINLINE static void *allocate_slow(size_t bytes, unsigned kind) {
  sgc_ensure_init();
  bytes = request_bytes(bytes);
  if (bytes > MAX_SMALL_BYTES) return large_allocate(bytes, kind);
  struct thread_alloc *t = alloc_self_or_register();
  return refill_and_allocate(t, kind, size_class_for_bytes(bytes));
}

SGC_INLINE void *allocate_fast(size_t bytes, unsigned kind) {
  struct thread_alloc *t = alloc_self();
  /* small_request_limit is MAX_SMALL_BYTES less the padding, so the
   * padded size cannot overflow on this path. */
  if (likely(t != NULL && bytes <= sgc_settings.small_request_limit)) {
    unsigned cls = size_class_for_bytes(bytes + sgc_settings.extra_bytes);
    /* The thread's own list first, whatever the cache mode: with per-CPU
     * caches it is empty (refills install into the CPU's slot), except
     * after SGC_LAB=flip turned them on, when this drains it.  So the
     * per-thread path tests no mode flag. */
    /* The list head's address in a register of its own, so its load and
     * store take no index register: each call reads back the head the
     * last one stored, and on the Intel VM that cost 3.63 ns a call with
     * base+index addressing against 2.96 without (bench-fastpath-sgc,
     * paired 1.27x; history.md, "The fast paths on an Intel VM"). */
    void **head = &t->free_lists[kind][cls];
    __asm__("" : "+r"(head));
    void *p = free_list_pop(head);
    if (likely(p != NULL)) {
      ((void **)p)[1] = NULL; /* GC_free's tag (alloc.h) */
      return p;
    }
    if (percpu_enabled) {
      /* SGC_LAB=cpu: this CPU's list, popped in an rseq sequence. */
      p = percpu_pop_inline(t->rseq, kind, cls);
      if (likely(p != NULL)) {
        ((void **)p)[0] = NULL;
        ((void **)p)[1] = NULL;
        return p;
      }
    }
  }
  return allocate_slow(bytes, kind);
}

SGC_HOT_ENTRY GC_API void *GC_malloc(size_t bytes) { return allocate_fast(bytes, KIND_NORMAL); }

SGC_HOT_ENTRY GC_API void *GC_malloc_atomic(size_t bytes) { return allocate_fast(bytes, KIND_ATOMIC); }

/* A small uncollectable object is not padded, as in bdwgc: no pointer
 * past its end is needed to keep it. */
static size_t uncollectable_bytes(size_t bytes) {
  return bytes <= MAX_SMALL_BYTES ? bytes : request_bytes(bytes);
}

GC_API void *GC_malloc_uncollectable(size_t bytes) {
  sgc_ensure_init();
  return uncollectable_allocate(uncollectable_bytes(bytes), KIND_UNCOLLECTABLE);
}

GC_API void *GC_malloc_atomic_uncollectable(size_t bytes) {
  sgc_ensure_init();
  return uncollectable_allocate(uncollectable_bytes(bytes), KIND_ATOMIC_UNCOLLECTABLE);
}

/* sgc never needs a hint that pointers stay near an object's start. */
GC_API void *GC_malloc_ignore_off_page(size_t bytes) { return GC_malloc(bytes); }
GC_API void *GC_malloc_atomic_ignore_off_page(size_t bytes) { return GC_malloc_atomic(bytes); }

/* A pointer-free copy of the N bytes at S (the dup functions). */
static void *atomic_copy(const void *s, size_t n) {
  void *copy = GC_malloc_atomic(n);
  if (copy) memcpy(copy, s, n);
  return copy;
}

GC_API char *GC_strdup(const char *s) { return s ? atomic_copy(s, strlen(s) + 1) : NULL; }

/* gc.h declares it under GC_REQUIRE_WCSDUP, as bdwgc's does. */
GC_API wchar_t *GC_wcsdup(const wchar_t *s);
GC_API wchar_t *GC_wcsdup(const wchar_t *s) {
  return s ? atomic_copy(s, (wcslen(s) + 1) * sizeof(wchar_t)) : NULL;
}

GC_API char *GC_strndup(const char *s, size_t max) {
  if (!s) return NULL;
  size_t n = strnlen(s, max);
  char *copy = GC_malloc_atomic(n + 1);
  if (copy) {
    memcpy(copy, s, n);
    copy[n] = 0; /* pointer-free objects are not cleared */
  }
  return copy;
}

/* A small page's objects lie at multiples of their class's size from the
 * page's start, a multiple of PAGE_BYTES: every object of a class whose
 * size is a multiple of ALIGN is so aligned.  So an aligned request takes
 * the smallest such class that fits, and only an alignment no class has
 * (a page's) or a size past the classes takes a large object, page
 * aligned.  Before, every alignment above a granule took a large object:
 * 2064 bytes for 100 aligned to 32 (bb_api_basic).  Alignments above a
 * page take a large object placed at such an address (large.c), whose
 * start is the aligned pointer: GC_base and GC_free take it as is. */
GC_API void *GC_memalign(size_t align, size_t bytes) {
  if (align <= GRANULE_BYTES) return GC_malloc(bytes);
  if (align & (align - 1)) {
    sgc_warn("GC_memalign: alignment %zu is not a power of two", align);
    return NULL;
  }
  if (align > PAGE_BYTES) {
    sgc_ensure_init();
    size_t padded = request_bytes(bytes);
    return large_allocate_aligned(padded > MAX_SMALL_BYTES ? padded : MAX_SMALL_BYTES + 1,
                                  KIND_NORMAL, align);
  }
  /* Asked for with SGC_EXTRA_BYTES taken off, so GC_malloc adds them
   * back and lands on that very class. */
  size_t extra = sgc_settings.extra_bytes;
  if (bytes <= MAX_SMALL_BYTES - extra) { /* not bytes + extra: that wraps */
    for (unsigned cls = size_class_for_bytes(bytes + extra); cls < SIZE_CLASS_COUNT; cls++)
      if ((size_class_bytes[cls] & (align - 1)) == 0) return GC_malloc(size_class_bytes[cls] - extra);
  }
  return GC_malloc(bytes > MAX_SMALL_BYTES ? bytes : MAX_SMALL_BYTES + 1);
}

static size_t system_page_bytes(void) { return (size_t)sysconf(_SC_PAGESIZE); }
GC_API void *GC_valloc(size_t bytes) { return GC_memalign(system_page_bytes(), bytes); }
GC_API void *GC_pvalloc(size_t bytes) {
  size_t page = system_page_bytes();
  if (bytes > SIZE_MAX - page) return sgc_out_of_memory(SIZE_MAX);
  return GC_memalign(page, (bytes + page - 1) & ~(page - 1));
}

GC_API int GC_posix_memalign(void **out, size_t align, size_t bytes) {
  if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
  void *p = GC_memalign(align, bytes);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
