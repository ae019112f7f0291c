/* bdwgc's other allocation entry points, mapped onto sgc's four kinds.
 *
 * bdwgc numbers its predefined kinds PTRFREE 0, NORMAL 1, UNCOLLECTABLE 2
 * and AUNCOLLECTABLE 3; kinds a program makes with GC_new_kind carry their
 * own free lists and mark procedures, which sgc does not have, so asking
 * for one is a fatal error rather than an object the collector would scan
 * by the wrong rule.  Typed (gc_typed.h) and gcj-style (gc_gcj.h) objects
 * are scanned conservatively as a whole: their layout descriptors only
 * let bdwgc skip words, so whole-object scanning keeps at least what they
 * would. */
#include <string.h>

#include "common.h"
#include "gc/gc_gcj.h"
#include "gc/gc_mark.h"
#include "gc/gc_typed.h"
#include "heap/layout.h"

enum bdwgc_kind { BDWGC_PTRFREE = 0, BDWGC_NORMAL = 1, BDWGC_UNCOLLECTABLE = 2, BDWGC_AUNCOLLECTABLE = 3 };

static void *allocate_kind(size_t bytes, int kind, const char *caller) {
  switch (kind) {
  case BDWGC_PTRFREE: return GC_malloc_atomic(bytes);
  case BDWGC_NORMAL: return GC_malloc(bytes);
  case BDWGC_UNCOLLECTABLE: return GC_malloc_uncollectable(bytes);
  case BDWGC_AUNCOLLECTABLE: return GC_malloc_atomic_uncollectable(bytes);
  }
  sgc_fatal("%s(%zu, kind %d): object kinds made by GC_new_kind are not supported", caller, bytes,
            kind);
}

GC_API void *GC_generic_malloc(size_t bytes, int kind) {
  return allocate_kind(bytes, kind, "GC_generic_malloc");
}
GC_API void *GC_malloc_kind(size_t bytes, int kind) {
  return allocate_kind(bytes, kind, "GC_malloc_kind");
}
GC_API void *GC_malloc_kind_global(size_t bytes, int kind) {
  return allocate_kind(bytes, kind, "GC_malloc_kind_global");
}
GC_API void *GC_generic_or_special_malloc(size_t bytes, int kind) {
  return allocate_kind(bytes, kind, "GC_generic_or_special_malloc");
}
GC_API void *GC_generic_malloc_ignore_off_page(size_t bytes, int kind) {
  return allocate_kind(bytes, kind, "GC_generic_malloc_ignore_off_page");
}
GC_API void *GC_generic_malloc_uncollectable(size_t bytes, int kind) {
  bool pointer_free = kind == BDWGC_PTRFREE || kind == BDWGC_AUNCOLLECTABLE;
  return allocate_kind(bytes, pointer_free ? BDWGC_AUNCOLLECTABLE : BDWGC_UNCOLLECTABLE,
                       "GC_generic_malloc_uncollectable");
}

/* A list of objects of BYTES linked through their first words (GC_NEXT),
 * the rest of each zeroed: up to a page's worth, at least one. */
GC_API void *GC_malloc_many(size_t bytes) {
  if (bytes < sizeof(void *)) bytes = sizeof(void *);
  size_t count = bytes >= PAGE_BYTES / 2 ? 1 : PAGE_BYTES / bytes;
  void *list = NULL;
  for (size_t i = 0; i < count; i++) {
    void **p = GC_malloc(bytes);
    if (!p) break; /* what was allocated so far is still a valid list */
    *p = list;
    list = p;
  }
  return list;
}

/* Stubborn objects (deprecated in bdwgc 7.x): ordinary ones here. */
GC_API void *GC_malloc_stubborn(size_t bytes) { return GC_malloc(bytes); }
GC_API void GC_change_stubborn(const void *p) { (void)p; }
GC_API void GC_end_stubborn_change(const void *p) { (void)p; }
/* sgc keeps no dirty bits (no incremental mode): a plain store. */
GC_API void GC_ptr_store_and_dirty(void *p, const void *q) { *(const void **)p = q; }

/* gc_typed.h */
GC_API GC_word GC_make_descriptor(const GC_word *bitmap, size_t bits) {
  (void)bitmap;
  (void)bits;
  return 0; /* every typed object is scanned whole */
}
GC_API void *GC_malloc_explicitly_typed(size_t bytes, GC_word descriptor) {
  (void)descriptor;
  return GC_malloc(bytes);
}
GC_API void *GC_malloc_explicitly_typed_ignore_off_page(size_t bytes, GC_word descriptor) {
  (void)descriptor;
  return GC_malloc(bytes);
}
GC_API void *GC_calloc_explicitly_typed(size_t count, size_t size, GC_word descriptor) {
  (void)descriptor;
  if (size && count > SIZE_MAX / size) return sgc_out_of_memory(SIZE_MAX);
  return GC_malloc(count * size);
}

/* gc_gcj.h: the first word points to the class's vtable. */
GC_API void GC_init_gcj_malloc(int mark_proc_index, void *mark_proc) {
  (void)mark_proc_index;
  (void)mark_proc;
}
GC_API void *GC_gcj_malloc(size_t bytes, void *vtable) {
  void **p = GC_malloc(bytes < sizeof(void *) ? sizeof(void *) : bytes);
  if (p) *p = vtable;
  return p;
}
GC_API void *GC_gcj_malloc_ignore_off_page(size_t bytes, void *vtable) {
  return GC_gcj_malloc(bytes, vtable);
}
GC_API void *GC_debug_gcj_malloc(size_t bytes, void *vtable, const char *file, int line) {
  (void)file;
  (void)line;
  return GC_gcj_malloc(bytes, vtable);
}

/* The debugging variants sgc's gc.h does not already route elsewhere. */
GC_API void *GC_debug_malloc_ignore_off_page(size_t bytes, const char *file, int line) {
  (void)file;
  (void)line;
  return GC_malloc(bytes);
}
GC_API void *GC_debug_malloc_atomic_ignore_off_page(size_t bytes, const char *file, int line) {
  (void)file;
  (void)line;
  return GC_malloc_atomic(bytes);
}
GC_API void *GC_debug_malloc_atomic_uncollectable(size_t bytes, const char *file, int line) {
  (void)file;
  (void)line;
  return GC_malloc_atomic_uncollectable(bytes);
}
GC_API void *GC_debug_malloc_stubborn(size_t bytes, const char *file, int line) {
  (void)file;
  (void)line;
  return GC_malloc(bytes);
}
GC_API void GC_debug_change_stubborn(const void *p) { (void)p; }
GC_API void GC_debug_end_stubborn_change(const void *p) { (void)p; }
GC_API void GC_debug_ptr_store_and_dirty(void *p, const void *q) { *(const void **)p = q; }
GC_API void *GC_debug_generic_or_special_malloc(size_t bytes, int kind, const char *file,
                                                int line) {
  (void)file;
  (void)line;
  return allocate_kind(bytes, kind, "GC_debug_generic_or_special_malloc");
}
GC_API void *GC_debug_malloc_replacement(size_t bytes) { return GC_malloc(bytes); }
GC_API void *GC_debug_realloc_replacement(void *p, size_t bytes) { return GC_realloc(p, bytes); }
GC_API char *GC_debug_strndup(const char *s, size_t max, const char *file, int line) {
  (void)file;
  (void)line;
  return GC_strndup(s, max);
}
GC_API void GC_debug_register_displacement(size_t offset) { GC_register_displacement(offset); }
GC_API void GC_debug_register_finalizer_ignore_self(void *obj, GC_finalization_proc fn, void *cd,
                                                    GC_finalization_proc *ofn, void **ocd) {
  GC_register_finalizer_ignore_self(obj, fn, cd, ofn, ocd);
}
GC_API void GC_debug_register_finalizer_no_order(void *obj, GC_finalization_proc fn, void *cd,
                                                 GC_finalization_proc *ofn, void **ocd) {
  GC_register_finalizer_no_order(obj, fn, cd, ofn, ocd);
}
GC_API void GC_debug_register_finalizer_unreachable(void *obj, GC_finalization_proc fn, void *cd,
                                                    GC_finalization_proc *ofn, void **ocd) {
  GC_register_finalizer_unreachable(obj, fn, cd, ofn, ocd);
}
