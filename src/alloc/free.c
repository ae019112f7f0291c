/* Explicit deallocation and object queries.
 *
 * GC_free of a small collectable object pushes it on the caller's own
 * free list: no lock, no atomic.  The object is cleared first so the
 * free-list invariant (zero but for the link and, in the second word, the
 * tag that tells a double free: alloc.h) holds.  An object freed by
 * another thread than its allocator simply migrates to that thread. */
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_path.h"
#include "alloc/percpu.h"
#include "barrier/barrier.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"

/* The object P starts, or a fatal error naming CALLER: freeing something
 * that is not an object is a program bug, and going on would corrupt the
 * heap. */
static struct page_header *checked_object_in(struct page_header *page, void *p,
                                             const char *caller) {
  uint8_t state = page ? atomic_load_explicit(&page->state, memory_order_acquire) : PAGE_FREE;
  if (state == PAGE_SMALL) {
    /* The object index by the page's reciprocal, as the marker does: no
     * division on the free path. */
    size_t offset = (uintptr_t)p - page->start;
    unsigned granule = (unsigned)(offset >> GRANULE_SHIFT);
    unsigned index = (granule * page->reciprocal) >> 16;
    if (index < page->capacity && ((uintptr_t)index * page->object_granules << GRANULE_SHIFT) == offset)
      return page;
    size_t size = (size_t)page->object_granules << GRANULE_SHIFT;
    sgc_fatal("%s(%p): not the start of an object (%zu bytes into a %zu-byte object)",
              caller, p, offset % size, size);
  }
  if (state == PAGE_LARGE_HEAD && (uintptr_t)p == page->start) return page;
  struct page_header *holder;
  if (state == PAGE_LARGE_HEAD || state == PAGE_LARGE_TAIL ||
      (state == PAGE_FREE && page && page_header_untouched(page) &&
       large_lazy_object_start((uintptr_t)p, &holder)))
    sgc_fatal("%s(%p): points inside a large object, not at its start", caller, p);
  if (page)
    sgc_fatal("%s(%p): points to a free heap page (freed twice?)", caller, p);
  sgc_fatal("%s(%p): not an address sgc allocated", caller, p);
}

enum { FREE_FLUSH_BYTES = 32 << 10 };

/* Objects of class CLS freed before a list is handed back (at most 2,048,
 * so a budget fits 16 bits); a division, but only on the slow paths, and
 * valid in a record made before sgc's initialisation (in another
 * library's constructor). */
uint16_t free_flush_objects(unsigned cls) {
  unsigned n = FREE_FLUSH_BYTES / size_class_bytes[cls];
  return (uint16_t)(n < 16 ? 16 : n);
}

/* Detaching a list and pushing it as a batch happen with no collection
 * between them (the collector would see the objects on neither list, or
 * drop a batch the push then restores): inside the page-path gate, which
 * a collection closes first, or else under heap_lock, which it holds.
 * Returns whether the gate was entered, for collections_allow. */
static bool collections_hold_off(struct thread_alloc *t) {
  bool gated = page_path_enter(t);
  if (!gated) heap_lock_take(thread_of_alloc(t));
  return gated;
}

static void collections_allow(struct thread_alloc *t, bool gated) {
  if (gated) page_path_exit(t);
  else pthread_mutex_unlock(&heap_lock);
}

/* The caller freed FREE_FLUSH_BYTES of this class: its whole list becomes
 * one of its batches (alloc/batches.c). */
SGC_NOINLINE static void hand_back(struct thread_alloc *t, unsigned kind, unsigned cls) {
  t->free_budget[kind][cls] = free_flush_objects(cls);
  t->free_flushes[kind][cls]++;
  bool gated = collections_hold_off(t);
  void *list = t->free_lists[kind][cls];
  t->free_lists[kind][cls] = NULL;
  if (list) batch_push_own(t, kind, cls, list);
  collections_allow(t, gated);
}

/* GC_free's fastest path takes slots 0 and 1 for KIND_NORMAL's 16- and
 * 32-byte classes, objects that tile their page. */
_Static_assert(KIND_NORMAL == 0 && PAGE_BYTES % (2 * GRANULE_BYTES) == 0,
               "GC_free's aligned-start test");
/* free_flush_objects by class, for free_bytes_of: no division in the
 * collection's pause. */
static uint16_t flush_objects_of[SIZE_CLASS_COUNT];

void free_init(void) {
  if (size_class_bytes[0] != GRANULE_BYTES || size_class_bytes[1] != 2 * GRANULE_BYTES)
    sgc_fatal("size classes 0 and 1 must be 1 and 2 granules (GC_free's fast path)");
  for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) flush_objects_of[c] = free_flush_objects(c);
}

void free_record_init(struct thread_alloc *t) {
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) t->free_budget[k][c] = free_flush_objects(c);
  t->free_cache_page = FREE_CACHE_BYPASS; /* caches no page yet */
}

/* ---- GC_get_expl_freed_bytes_since_gc ---- */

/* Frees by threads sgc does not know, and by threads that exited since
 * the last collection (relaxed: a count, and only slow paths add). */
_Atomic uint64_t freed_bytes_elsewhere;

/* Bytes T has freed since it started.  The fast path counts nothing: a
 * class's objects freed are its lists handed back times a budget, plus
 * what the budget has counted down since.  Called for every thread in a
 * collection's pause: a few multiplications a class. */
uint64_t free_bytes_of(const struct thread_alloc *t) {
  uint64_t bytes = t->freed_bytes_other;
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      uint64_t per_list = flush_objects_of[c];
      uint64_t objects = t->free_flushes[k][c] * per_list + (per_list - t->free_budget[k][c]);
      bytes += objects * size_class_bytes[c];
    }
  return bytes;
}

/* With the world stopped, at each collection. */
void free_counts_at_collection(void) {
  atomic_store_explicit(&freed_bytes_elsewhere, 0, memory_order_relaxed);
  FOR_EACH_THREAD_ALLOC(t) t->freed_bytes_at_gc = free_bytes_of(t);
}

/* With registry_lock held, as T leaves the registry. */
void free_counts_thread_exit(const struct thread_alloc *t) {
  atomic_fetch_add_explicit(&freed_bytes_elsewhere, free_bytes_of(t) - t->freed_bytes_at_gc,
                            memory_order_relaxed);
}

/* bdwgc's getter is unsynchronized; this one reads other threads'
 * counts under registry_lock while they may be freeing, so a thread's
 * last few frees may be missing. */
GC_API size_t GC_get_expl_freed_bytes_since_gc(void) {
  sgc_ensure_init();
  uint64_t bytes = atomic_load_explicit(&freed_bytes_elsewhere, memory_order_relaxed);
  registry_lock_take();
  FOR_EACH_THREAD_ALLOC(t) bytes += free_bytes_of(t) - t->freed_bytes_at_gc;
  pthread_mutex_unlock(&registry_lock);
  return (size_t)bytes;
}

static struct page_header *checked_object(void *p, const char *caller) {
  return checked_object_in(page_of_address((uintptr_t)p), p, caller);
}

SGC_NOINLINE static void freed_twice(void *p) {
  sgc_fatal("GC_free(%p): freed twice (the object is already free)", p);
}

/* Pushes P, already cleared, on SELF's list of SLOT (a page's
 * free_slot: kind * SIZE_CLASS_COUNT + class).  The flat index saves the
 * fast path computing one from kind and class; the char arithmetic stays
 * inside the two-dimensional arrays. */
static inline void push_freed(struct thread_alloc *self, void *p, unsigned slot) {
  void **list = (void **)((char *)self->free_lists + slot * sizeof(void *));
  uint16_t *budget = (uint16_t *)((char *)self->free_budget + slot * sizeof(uint16_t));
  free_list_push(list, p);
  if (unlikely(--*budget == 0))
    hand_back(self, slot / SIZE_CLASS_COUNT, slot % SIZE_CLASS_COUNT);
}

/* Pushes P, cleared and tagged, on this CPU's list of (KIND, CLS).  The
 * thread's frees bound what it leaves on CPU lists, as in per-thread
 * mode: past the bound this CPU's list becomes one of the thread's
 * batches, which its own refills take back first (without heap_lock)
 * and a thread short of objects steals before a fresh page.  Pushed on
 * the shared stack instead, which only refills under heap_lock read, a
 * thread with pages in its store never met them: of 1,000 freed 48-byte
 * objects 327 came back (bb_api_basic under SGC_LAB=cpu). */
static void push_freed_on_cpu(struct thread_alloc *t, void *p, unsigned kind, unsigned cls) {
  percpu_push(kind, cls, p);
  if (unlikely(--t->free_budget[kind][cls] == 0)) {
    t->free_budget[kind][cls] = free_flush_objects(cls);
    t->free_flushes[kind][cls]++;
    bool gated = collections_hold_off(t);
    void *list = percpu_detach(kind, cls);
    if (list) batch_push_own(t, kind, cls, list);
    collections_allow(t, gated);
  }
}

/* Everything but a small object of a thread-local kind freed into the
 * caller's own list from the page it freed into last. */
SGC_NOINLINE static void free_slow(struct thread_alloc *self, void *p) {
  uintptr_t page_address = (uintptr_t)p & ~(uintptr_t)(PAGE_BYTES - 1);
  struct page_header *page;
  /* With per-CPU caches the cached page address carries
   * FREE_CACHE_BYPASS: the fast path misses and every free comes here, to
   * percpu_push below, so the fast path tests no mode flag. */
  if (self && (self->free_cache_page & ~(uintptr_t)FREE_CACHE_BYPASS) == page_address) {
    page = checked_object_in(self->free_cache_header, p, "GC_free");
  } else {
    /* The checked object starts on its own page (a large object at its
     * head), so PAGE is that page's header: no second page-map walk. */
    page = checked_object(p, "GC_free");
    if (self) self->free_cache_header = page;
  }
  if (self) self->free_cache_page = page_address | (percpu_enabled ? FREE_CACHE_BYPASS : 0);
  unsigned kind = page->kind;
  if (kind_is_custom(kind)) {
    custom_free(page, p);
    return;
  }
  if (kind >= KIND_THREAD_LOCAL_COUNT) {
    uncollectable_free(page, p);
    return;
  }
  if (atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_LARGE_HEAD) {
    free_count_bytes(self, page->object_bytes);
    large_free_explicit(p, page);
    return;
  }
  struct thread_alloc *t = self ? self : alloc_self_or_register();
  if (object_tagged_freed(p)) freed_twice(p);
  if (kind == KIND_NORMAL) object_clear(p, page->object_granules);
  object_tag_freed(p);
  unsigned cls = page->size_class;
  if (percpu_enabled) {
    push_freed_on_cpu(t, p, kind, cls);
    return;
  }
  push_freed(t, p, page->free_slot);
}

/* Per-CPU caches' GC_free of an object on the page SELF freed into last
 * (its cached address carries FREE_CACHE_BYPASS): the fast path's tests
 * for a small object of a thread-local kind, then onto this CPU's list;
 * anything else goes on to free_slow, to be freed or to die there.
 * Before, every per-CPU free took free_slow's general path: 32 threads
 * freeing explicitly (bench-alloc -t 32) ran 1.03-1.17 times slower than
 * now (history.md, "Per-CPU refills without heap_lock"). */
SGC_NOINLINE static void free_on_cpu(struct thread_alloc *self, void *p) {
  struct page_header *page = self->free_cache_header;
  unsigned slot = page->free_slot;
  /* Flip mode back on per-thread caches leaves the mark on a cached
   * address until free_slow caches the next one. */
  if (!percpu_enabled || atomic_load_explicit(&page->state, memory_order_relaxed) != PAGE_SMALL ||
      slot >= KIND_THREAD_LOCAL_COUNT * SIZE_CLASS_COUNT ||
      !page_is_object_start(page, (uint32_t)((uintptr_t)p - page->start)) ||
      object_tagged_freed(p))
    return free_slow(self, p);
  unsigned kind = slot / SIZE_CLASS_COUNT, cls = slot % SIZE_CLASS_COUNT;
  if (kind == KIND_NORMAL) object_clear(p, page->object_granules);
  object_tag_freed(p);
  push_freed_on_cpu(self, p, kind, cls);
}

/* The fast path's objects over 4 granules: a memset call, reached by a
 * tail call so that the fast path itself saves no registers. */
SGC_NOINLINE static void free_cleared_large(struct thread_alloc *self, void *p, unsigned granules,
                                            unsigned slot) {
  memset(p, 0, (size_t)granules << GRANULE_SHIFT);
  object_tag_freed(p);
  push_freed(self, p, slot);
}

SGC_HOT_ENTRY GC_API void GC_free(void *p) {
  struct thread_alloc *self = alloc_self();
  uintptr_t page_address = (uintptr_t)p & ~(uintptr_t)(PAGE_BYTES - 1);
  /* The fast path: a small object on the page the caller freed into last
   * (a fresh record caches no page, and with per-CPU caches the cached
   * address is marked: a marked address never matches, so neither does
   * NULL's page address 0). */
  if (likely(self && self->free_cache_page == page_address)) {
    struct page_header *page = self->free_cache_header;
    if (likely(atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_SMALL)) {
      /* One field says the kind and class: slots below SIZE_CLASS_COUNT
       * are KIND_NORMAL's (cleared), the rest of a thread-local kind
       * KIND_ATOMIC's. */
      unsigned slot = page->free_slot;
      if (likely(slot < 2)) {
        /* KIND_NORMAL's 16- and 32-byte objects tile their page from its
         * first byte, so an address aligned to the size starts an object:
         * a mask instead of the division test, and a clear of 16-byte
         * stores without a branch on the class: 34 instructions where the
         * general path took 42 and two taken branches (38 since the
         * double-free tag, alloc.h).  On the Intel VM the
         * general path made a 16-byte free take 1.30x the time
         * (bench-fastpath-sgc, 4.48 against 3.48 ns; history.md, "The
         * fast paths on an Intel VM"). */
        if (likely(((uintptr_t)p & ((uintptr_t)slot << GRANULE_SHIFT | (GRANULE_BYTES - 1))) == 0)) {
          /* The words the link and the tag leave: the second granule of
           * a 32-byte object, or again the 16 bytes they then fill. */
          if (unlikely(object_tagged_freed(p))) return free_slow(self, p); /* to die there */
          memset((char *)p + ((size_t)slot << GRANULE_SHIFT), 0, GRANULE_BYTES);
          object_tag_freed(p);
          push_freed(self, p, slot);
          return;
        }
      } else if (likely(page_is_object_start(page, (uint32_t)((uintptr_t)p - page->start)))) {
        /* To die in free_slow, which also takes the other kinds' objects
         * (never tagged) on to their own frees. */
        if (unlikely(object_tagged_freed(p))) return free_slow(self, p);
        if (likely(slot < SIZE_CLASS_COUNT)) {
          unsigned granules = page->object_granules;
          if (unlikely(granules > 4)) return free_cleared_large(self, p, granules, slot);
          object_clear_small_tagged(p, granules);
          push_freed(self, p, slot);
          return;
        } else if (unlikely(slot >= KIND_THREAD_LOCAL_COUNT * SIZE_CLASS_COUNT)) {
          /* Custom kinds (typed objects among them) have caches of their
           * own (alloc/custom_alloc.c); uncollectable ones go the slow way. */
          if (kind_is_custom(page->kind)) return custom_free_small(self, page, p);
          return free_slow(self, p);
        }
        object_tag_freed(p);
        push_freed(self, p, slot);
        return;
      }
    }
  }
  if (!p) return;
  /* Per-CPU caches mark the cached address; a fresh record's (page 0)
   * matches no object. */
  if (self && page_address && self->free_cache_page == (page_address | FREE_CACHE_BYPASS))
    return free_on_cpu(self, p);
  free_slow(self, p);
}

GC_API void *GC_base(void *p) {
  /* GC_base answers for interior pointers whatever the marking rule. */
  struct page_header *page;
  return (void *)object_start_rule((uintptr_t)p, &page, true);
}

GC_API int GC_is_heap_ptr(const void *p) { return heap_holds((uintptr_t)p); }

GC_API size_t GC_size(const void *p) {
  struct page_header *page;
  uintptr_t base = object_start_rule((uintptr_t)p, &page, true);
  return base ? object_size(page) : 0;
}

GC_API void *GC_reallocarray(void *old, size_t count, size_t size) {
  if (count && size > SIZE_MAX / count) return sgc_out_of_memory(SIZE_MAX);
  return GC_realloc(old, count * size);
}

GC_API void *GC_realloc(void *old, size_t bytes) {
  if (!old) return GC_malloc(bytes);
  if (bytes == 0) {
    GC_free(old);
    return NULL;
  }
  struct page_header *page = checked_object(old, "GC_realloc");
  size_t have = object_size(page);
  unsigned kind = page->kind;
  if (typed_kind_is(kind)) return typed_realloc(old, have, bytes);
  size_t need = request_bytes(bytes);
  /* Stay in place when the size class still fits and is not wasteful. */
  if (need <= have && (have <= MAX_SMALL_BYTES ? need > have / 2 : need > have - PAGE_BYTES)) {
    if (kind == KIND_NORMAL || kind == KIND_UNCOLLECTABLE)
      memset((char *)old + bytes, 0, have - bytes);
    return old;
  }
  /* A large object grows where it lies when the pages after it are
   * free, and moves to where they will be (alloc/large.c). */
  bool builtin = kind < KIND_COUNT;
  if (need > have && builtin &&
      atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_LARGE_HEAD &&
      large_grow_in_place(page, need))
    return old;
  void *fresh;
  if (builtin && need > have && need > MAX_SMALL_BYTES) fresh = large_allocate_to_grow(need, kind);
  else switch (kind) {
  case KIND_ATOMIC: fresh = GC_malloc_atomic(bytes); break;
  case KIND_UNCOLLECTABLE: fresh = GC_malloc_uncollectable(bytes); break;
  case KIND_ATOMIC_UNCOLLECTABLE: fresh = GC_malloc_atomic_uncollectable(bytes); break;
  case KIND_NORMAL: fresh = GC_malloc(bytes); break;
  default: fresh = custom_allocate(request_bytes(bytes), kind); break;
  }
  if (!fresh) return NULL;
  memcpy(fresh, old, have < bytes ? have : bytes);
  /* Pointers copied into an object a cycle's finish may not scan again (an
   * uncollectable one allocated during the cycle is black): the manual
   * barrier is told, as the program tells it of its own stores. */
  barrier_note_object(fresh);
  /* bdwgc frees the old object too; a program keeping pointers to it
   * after realloc is wrong under malloc semantics anyway. */
  GC_free(old);
  return fresh;
}
