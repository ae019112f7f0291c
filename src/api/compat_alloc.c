/* bdwgc's other allocation entry points, mapped onto sgc's kinds.
 *
 * bdwgc numbers its predefined kinds PTRFREE 0, NORMAL 1, UNCOLLECTABLE 2
 * and AUNCOLLECTABLE 3; kinds a program makes with GC_new_kind follow
 * (mark/custom_kind.h), and any other number is a fatal error rather than
 * an object the collector would scan by the wrong rule.  Typed objects
 * (gc_typed.h) are scanned by their descriptors, through a kind of their
 * own; gcj-style ones (gc_gcj.h) and typed arrays are scanned
 * conservatively as a whole, which keeps at least what their descriptors
 * would. */
#include <pthread.h>
#include <string.h>

#include "common.h"
#include "gc/gc_gcj.h"
#include "gc/gc_mark.h"
#include "gc/gc_typed.h"
#include "alloc/alloc.h"
#include "collect/collect.h"
#include "gc/gc_inline.h"
#include "heap/layout.h"
#include "mark/custom_kind.h"

enum bdwgc_kind { BDWGC_PTRFREE = 0, BDWGC_NORMAL = 1, BDWGC_UNCOLLECTABLE = 2, BDWGC_AUNCOLLECTABLE = 3 };

static void *allocate_kind(size_t bytes, int kind, const char *caller) {
  switch (kind) {
  case BDWGC_PTRFREE: return GC_malloc_atomic(bytes);
  case BDWGC_NORMAL: return GC_malloc(bytes);
  case BDWGC_UNCOLLECTABLE: return GC_malloc_uncollectable(bytes);
  case BDWGC_AUNCOLLECTABLE: return GC_malloc_atomic_uncollectable(bytes);
  }
  if (custom_kind_valid(kind)) return custom_allocate(request_bytes(bytes), (unsigned)kind);
  sgc_fatal("%s(%zu, kind %d): no such object kind (GC_new_kind did not return it)", caller, bytes,
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

/* A list of objects linked through their first words (GC_NEXT), the rest
 * of each zeroed where the kind is cleared: up to a page's worth of
 * OBJECT_BYTES, at least one, or NULL when out of memory.  Each is
 * allocate_kind's object for REQUEST.  The objects wait in an array on
 * this frame until linked: a collection while the list grows sees them
 * there, where the links of pointer-free objects would hide them. */
static void allocate_many(size_t request, size_t object_bytes, int kind, void **result) {
  enum { MOST = PAGE_BYTES / GRANULE_BYTES };
  void *objects[MOST];
  size_t count = object_bytes >= PAGE_BYTES / 2 ? 1 : PAGE_BYTES / object_bytes, have = 0;
  if (count > MOST) count = MOST;
  while (have < count) {
    void *p = allocate_kind(request, kind, "GC_generic_malloc_many");
    if (!p) break; /* what was allocated so far is still a valid list */
    objects[have++] = p;
  }
  void *list = NULL;
  while (have) {
    void *p = objects[--have];
    *(void **)p = list;
    list = p;
  }
  *result = list;
}

/* Language runtimes fill their own inline free lists with this (Guile's
 * allocation path), asking for a size class's bytes: as in bdwgc, a
 * small object is exactly that, so the padding allocate_kind adds comes
 * off the request (a Guile pair stays 16 bytes when sgc stands in for
 * libgc, docs/behaviour.md "Padding"). */
GC_API void GC_generic_malloc_many(size_t bytes, int kind, void **result) {
  if (bytes < sizeof(void *)) bytes = sizeof(void *);
  size_t extra = sgc_settings.extra_bytes, request = bytes;
  if (bytes <= MAX_SMALL_BYTES) request = bytes > extra ? bytes - extra : 0;
  allocate_many(request, bytes, kind, result);
}

/* GC_malloc's objects, padded as GC_malloc pads. */
GC_API void *GC_malloc_many(size_t bytes) {
  void *list;
  size_t padded = request_bytes(bytes);
  allocate_many(bytes, padded < sizeof(void *) ? sizeof(void *) : padded, BDWGC_NORMAL, &list);
  return list;
}

/* bdwgc's private/gc_alloc_ptrs.h, which Debian does not install but
 * libgc.so.1 exports and bdwgc's own gctest calls: a program that hands
 * out objects from lists of its own says how much it allocated, so the
 * collection rule sees it, and how much it freed, for
 * GC_get_expl_freed_bytes_since_gc.  bdwgc's are unsynchronized (call
 * them holding the allocation lock); these are safe from any thread.
 * The gc_alloc_ptrs.h free-list pointers are not provided: sgc has no
 * global free lists a program could pop. */
GC_API void GC_incr_bytes_allocd(size_t bytes);
GC_API void GC_incr_bytes_freed(size_t bytes);
GC_API void GC_incr_bytes_allocd(size_t bytes) {
  /* Relaxed: a count the next collection folds in (collect.c). */
  atomic_fetch_add_explicit(&allocated_unlocked, bytes, memory_order_relaxed);
}
GC_API void GC_incr_bytes_freed(size_t bytes) { free_count_bytes(alloc_self(), bytes); }

/* Stubborn objects (deprecated in bdwgc 7.x): ordinary ones here. */
GC_API void *GC_malloc_stubborn(size_t bytes) { return GC_malloc(bytes); }
GC_API void GC_change_stubborn(const void *p) { (void)p; }

/* gc_typed.h.  A typed object carries its descriptor in its last word,
 * and its kind (made here on first use) reads it from there: a per-object
 * descriptor at offset -1 word, adjusted by the object's size (bdwgc's
 * layout, so GC_size counts that word too).  The descriptor names the
 * words that may be pointers and the marker scans only those: Guile's
 * weak tables rely on it, keeping a weak key in a word the descriptor
 * leaves out.  They come from thread-local lists, like every custom kind
 * (alloc/custom_alloc.c). */
static pthread_once_t typed_kind_once = PTHREAD_ONCE_INIT;
/* 0 until made (no custom kind is 0); read first without pthread_once,
 * which costs a call on every allocation.  acquire: pairs with the
 * release below, though the kind's record is published by GC_new_kind
 * itself. */
static _Atomic unsigned typed_kind;
static void make_typed_kind(void) {
  unsigned kind = (unsigned)GC_new_kind(NULL, (GC_word)-(intptr_t)sizeof(GC_word) | GC_DS_PER_OBJECT, 1, 1);
  custom_kind_without_procs(kind); /* before any object of it exists */
  atomic_store_explicit(&typed_kind, kind, memory_order_release);
}

/* bitmap bit i (LSB first, as GC_set_bit) says word i may be a pointer.
 * Words 0..last all pointers: a length; up to 62 words: bdwgc's bitmap
 * descriptor (word 0 in bit 63); longer: a length covering every pointer
 * word, which scans some non-pointer words too (bdwgc would build an
 * extended descriptor) and so keeps at least what the bitmap says. */
static bool bitmap_bit(const GC_word *bitmap, size_t i) {
  return (bitmap[i / (8 * sizeof(GC_word))] >> (i % (8 * sizeof(GC_word)))) & 1;
}

GC_API GC_word GC_make_descriptor(const GC_word *bitmap, size_t bits) {
  enum { WORD_BITS = 8 * sizeof(GC_word), BITMAP_WORDS = WORD_BITS - GC_DS_TAG_BITS };
  size_t used = 0; /* 1 + the last pointer word */
  for (size_t i = 0; i < bits; i++)
    if (bitmap_bit(bitmap, i)) used = i + 1;
  bool all = true;
  for (size_t i = 0; i < used; i++) all = all && bitmap_bit(bitmap, i);
  if (all || used > BITMAP_WORDS) return (GC_word)(used * sizeof(GC_word)) | GC_DS_LENGTH;
  GC_word descriptor = GC_DS_BITMAP;
  for (size_t i = 0; i < used; i++)
    if (bitmap_bit(bitmap, i)) descriptor |= (GC_word)1 << (WORD_BITS - 1 - i);
  return descriptor;
}

GC_API void *GC_malloc_explicitly_typed(size_t bytes, GC_word descriptor) {
  /* The descriptor word past the caller's bytes serves as bdwgc's
   * padding does (it too pads a typed object only by that word). */
  size_t extra = sgc_settings.extra_bytes, pad = extra > sizeof(GC_word) ? extra : sizeof(GC_word);
  if (bytes > SIZE_MAX - pad) return sgc_out_of_memory(SIZE_MAX);
  unsigned kind = atomic_load_explicit(&typed_kind, memory_order_acquire);
  if (unlikely(kind == 0)) {
    pthread_once(&typed_kind_once, make_typed_kind);
    kind = atomic_load_explicit(&typed_kind, memory_order_acquire);
  }
  size_t need = bytes + pad;
  GC_word *obj = custom_allocate(need, kind);
  if (!obj) return NULL;
  /* The descriptor goes in the object's last word (its size class's,
   * not the request's).  Zero until then: a collection meanwhile reads a
   * length of 0. */
  size_t size = need <= MAX_SMALL_BYTES ? size_class_bytes[size_class_for_bytes(need)] : GC_size(obj);
  obj[size / sizeof(GC_word) - 1] = descriptor;
  return obj;
}
/* GC_realloc of a typed object (alloc/free.c): a new typed object with
 * the old one's descriptor, which sits in the old object's last word.  A
 * plain realloc would leave the new object's last word zero (growing:
 * scanned as holding no pointers, so what only it held is freed) or a
 * copied data word (shrinking: read as a descriptor), and in place the
 * caller's bytes could reach the descriptor's word.  bdwgc leaves it to
 * the program (its typed objects are not meant to be reallocated). */
bool typed_kind_is(unsigned kind) {
  /* typed_kind is 0, which is no custom kind, until made. */
  return kind_is_custom(kind) && kind == atomic_load_explicit(&typed_kind, memory_order_acquire);
}
void *typed_realloc(void *old, size_t have, size_t bytes) {
  GC_word descriptor = ((GC_word *)old)[have / sizeof(GC_word) - 1];
  void *fresh = GC_malloc_explicitly_typed(bytes, descriptor);
  if (!fresh) return NULL;
  size_t old_bytes = have - sizeof(GC_word); /* the caller's part */
  memcpy(fresh, old, old_bytes < bytes ? old_bytes : bytes);
  GC_free(old);
  return fresh;
}

GC_API void *GC_malloc_explicitly_typed_ignore_off_page(size_t bytes, GC_word descriptor) {
  return GC_malloc_explicitly_typed(bytes, descriptor);
}
/* Arrays of typed elements are scanned whole (bdwgc builds an array
 * descriptor): at least what the descriptor would keep. */
GC_API void *GC_calloc_explicitly_typed(size_t count, size_t size, GC_word descriptor) {
  (void)descriptor;
  if (size && count > SIZE_MAX / size) return sgc_out_of_memory(SIZE_MAX);
  return GC_malloc(count * size);
}

/* gc_gcj.h: the first word points to the class's vtable. */
SGC_EXPORT int GC_gcj_kind = BDWGC_NORMAL, GC_gcj_debug_kind = BDWGC_NORMAL;
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

GC_API void GC_debug_change_stubborn(const void *p) { (void)p; }
GC_API void GC_debug_register_displacement(size_t offset) { GC_register_displacement(offset); }
