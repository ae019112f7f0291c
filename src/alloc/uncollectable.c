/* Uncollectable objects.  Their mark byte is nonzero from allocation until
 * GC_free and never cleared by a collection, so every such object is both
 * live and a root (mark_begin queues them); their pages are never swept.
 *
 * Free small objects wait on one shared list per kind and size class
 * (heap_lock), and in front of it on each thread's cache, which GC_free
 * fills and allocation empties without a lock: C++ programs linked with
 * libsgccpp get every plain `new` and `delete` here, and two threads doing
 * that through heap_lock alone ran at 0.26x the rate the caches give them
 * (bench-cppnew-sgc -t 2, tools/dev/ab.sh -n 21, paired; history.md).
 *
 * A small object's mark byte says where it is (enum below).  An object in
 * a thread's cache keeps a nonzero mark, so the cache changes no object
 * between "root" and "not a root": a collection reading the marks before
 * the world stops (mark_begin) sees the same roots whatever the caches do
 * meanwhile, and the cache needs neither heap_lock nor the page-path gate
 * (whose seq_cst store was the largest part of each `new` and `delete`;
 * history.md).  A cached object is cleared when freed, so scanning it as a
 * root finds at most its link to another cached object.  The marks that
 * do change between zero and nonzero, the shared lists', change under
 * heap_lock, which a collection holds throughout. */
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "alloc/collector.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"

static void *free_lists[2][SIZE_CLASS_COUNT]; /* [kind - KIND_UNCOLLECTABLE] */

/* The mark byte of a small uncollectable object.  Collections take any
 * nonzero byte as a root and change none; the marker may set the byte of
 * an object on a shared list that a stale word points to, which only
 * makes it a root (it is cleared) until a refill sets the byte again.
 * The marker neither scans such an object nor counts it live (mark.c):
 * its first word links the list.  GC_free tells a double free by a byte
 * other than STATE_ALLOCATED. */
enum uncollectable_state {
  STATE_SHARED = 0,    /* on a shared list (heap_lock) */
  STATE_ALLOCATED = 1, /* the program's */
  STATE_CACHED = 2,    /* on a thread's cache: cleared, found by no root */
};

static inline _Atomic uint8_t *state_of(void *p) {
  return mark_bit_of(page_of_address((uintptr_t)p), (uintptr_t)p);
}
/* Relaxed: only the owner of the object (the thread whose cache or
 * allocation it is, or heap_lock's holder) writes the byte, and a
 * collection that reads it concurrently needs only that it stays nonzero
 * (STATE_SHARED changes under heap_lock, which the collection holds). */
static inline void state_set(void *p, enum uncollectable_state s) {
  atomic_store_explicit(state_of(p), (uint8_t)s, memory_order_relaxed);
}

/* A thread's cache of one kind and class: refilled with up to
 * CACHE_REFILL_BYTES at a time, and handed back whole to the shared list
 * once GC_free has put more than CACHE_LIMIT_BYTES in it.  A thread's
 * caches together keep at most UNCOLLECTABLE_CACHED_LIMIT_BYTES after a
 * GC_free (header): the largest go back until they do.  Without that a
 * thread freeing into every class kept up to 2 kinds x 30 classes x 32
 * KiB, 1.9 MiB, that no other thread could use.  The limit is above what
 * refills alone can leave (2 x 30 x 8 KiB), so a program allocating in
 * every class does not hand back and refill by turns. */
enum { CACHE_REFILL_BYTES = 8 << 10, CACHE_LIMIT_BYTES = 32 << 10 };
_Static_assert(UNCOLLECTABLE_CACHED_LIMIT_BYTES > 2 * SIZE_CLASS_COUNT * CACHE_REFILL_BYTES,
               "refills alone must stay under the limit");

void *locked_list_pop(void **list, unsigned kind, unsigned cls, struct page_header **fresh) {
  *fresh = NULL;
  if (!*list) {
    /* page_acquire may collect, which may rebuild *LIST (custom kinds):
     * the new page's objects go in front of what is there. */
    struct page_header *page = page_acquire(1);
    if (!page) return NULL;
    unsigned n;
    void *tail;
    void *head = page_format_small(page, kind, cls, &n, &tail);
    *(void **)tail = *list;
    *list = head;
    *fresh = page;
  }
  void *p = *list;
  *list = *(void **)p;
  *(void **)p = NULL;
  return p;
}

/* Pages whose every object waits on a shared list go back to the pool at
 * the next collection (uncollectable_release_free_pages): these pages are
 * never swept, and before, a page that had once held an uncollectable
 * object served that kind and class alone for good.  A page's free_count
 * (which only sweeps use on other pages) counts its objects on the shared
 * list; WHOLE_PAGES, per list, the pages with all of theirs there. */
static unsigned whole_pages[2][SIZE_CLASS_COUNT];

/* heap_lock held: P, cleared where its kind is, onto its shared list. */
static void shared_push(unsigned k, unsigned cls, void *p) {
  struct page_header *page = page_of_address((uintptr_t)p);
  state_set(p, STATE_SHARED);
  free_list_push(&free_lists[k][cls], p);
  if (++page->free_count == page->capacity) whole_pages[k][cls]++;
}

/* heap_lock held: an object off the shared list of kind K + 
 * KIND_UNCOLLECTABLE and class CLS, a fresh page formatted when it is
 * empty; NULL when out of memory. */
static void *shared_pop(unsigned k, unsigned cls) {
  struct page_header *fresh;
  void *p = locked_list_pop(&free_lists[k][cls], k + KIND_UNCOLLECTABLE, cls, &fresh);
  if (!p) return NULL;
  if (fresh) {
    fresh->free_count = fresh->capacity - 1u; /* P came off it */
    return p;
  }
  struct page_header *page = page_of_address((uintptr_t)p);
  if (page->free_count-- == page->capacity) whole_pages[k][cls]--;
  return p;
}

/* live_objects of a page whose objects are leaving the shared list. */
enum { PAGE_DRAINING = UINT32_MAX };

bool uncollectable_release_free_pages(void) {
  bool released = false;
  for (unsigned k = 0; k < 2; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      if (!whole_pages[k][c]) continue;
      /* One walk unlinks the objects of every whole page; the last one
       * unlinked sends its page back. */
      void **link = &free_lists[k][c];
      while (*link) {
        void *p = *link;
        struct page_header *page = page_of_address((uintptr_t)p);
        if (page->live_objects != PAGE_DRAINING && page->free_count != page->capacity) {
          link = (void **)p;
          continue;
        }
        page->live_objects = PAGE_DRAINING;
        *link = *(void **)p;
        *(void **)p = NULL;
        if (--page->free_count) continue;
        page->live_objects = 0;
        page_clear_marks(page); /* stale words may have marked shared objects */
        small_page_release(page);
        whole_pages[k][c]--;
        released = true;
      }
    }
  return released;
}

/* heap_lock held: T's empty cache refilled from the shared list (fresh
 * pages formatted as needed), at least one object; false when out of
 * memory. */
static bool cache_refill(struct thread_alloc *t, unsigned kind, unsigned cls) {
  unsigned size = size_class_bytes[cls], n = CACHE_REFILL_BYTES / size;
  void **cache = &t->uncollectable_cache[kind - KIND_UNCOLLECTABLE][cls];
  unsigned taken = 0;
  for (; taken < (n ? n : 1); taken++) {
    void *p = shared_pop(kind - KIND_UNCOLLECTABLE, cls);
    if (!p) break;
    state_set(p, STATE_CACHED);
    free_list_push(cache, p);
  }
  t->uncollectable_cached_bytes[kind - KIND_UNCOLLECTABLE][cls] += taken * size;
  t->uncollectable_cached_total += taken * size;
  account_allocation((size_t)taken * size);
  return taken != 0;
}

/* One object off T's cache (T's own thread), allocated; NULL when the
 * cache is empty.  No lock and no gate (top of file). */
static inline void *cache_pop(struct thread_alloc *t, unsigned k, unsigned cls) {
  void *p = free_list_pop(&t->uncollectable_cache[k][cls]); /* zero now: cleared when freed */
  if (!p) return NULL;
  t->uncollectable_cached_bytes[k][cls] -= size_class_bytes[cls];
  t->uncollectable_cached_total -= size_class_bytes[cls];
  state_set(p, STATE_ALLOCATED);
  return p;
}

/* uncollectable_allocate's way when T's cache is empty: a refill under
 * heap_lock.  Apart, so the fast path saves no registers for it. */
SGC_NOINLINE static void *allocate_refilling(struct thread_alloc *t, size_t bytes, unsigned kind,
                                             unsigned cls) {
  void *p = NULL;
  heap_lock_take(thread_of_alloc(t));
  /* Popped before heap_lock goes: the collection collect_after_unlock
   * may run could run finalizers on this thread that empty the cache
   * again.  P is allocated, so a root, meanwhile. */
  if (cache_refill(t, kind, cls)) p = cache_pop(t, kind - KIND_UNCOLLECTABLE, cls);
  pthread_mutex_unlock(&heap_lock);
  if (!p) return sgc_out_of_memory(bytes);
  collect_after_unlock();
  return p;
}

void *uncollectable_allocate(size_t bytes, unsigned kind) {
  if (unlikely(bytes > MAX_SMALL_BYTES)) return large_allocate(bytes, kind);
  unsigned cls = size_class_for_bytes(bytes);
  struct thread_alloc *t = alloc_self();
  if (unlikely(!t)) t = alloc_self_or_register();
  void *p = cache_pop(t, kind - KIND_UNCOLLECTABLE, cls);
  return likely(p != NULL) ? p : allocate_refilling(t, bytes, kind, cls);
}

/* heap_lock held: T's cache of KIND and CLS onto the shared list. */
static void cache_hand_back(struct thread_alloc *t, unsigned kind, unsigned cls) {
  void **cache = &t->uncollectable_cache[kind][cls];
  for (void *p; (p = free_list_pop(cache));) shared_push(kind, cls, p);
  t->uncollectable_cached_total -= t->uncollectable_cached_bytes[kind][cls];
  t->uncollectable_cached_bytes[kind][cls] = 0;
}

/* heap_lock held: T's largest caches back until all keep at most the
 * limit. */
static void cache_hand_back_largest(struct thread_alloc *t) {
  while (t->uncollectable_cached_total > UNCOLLECTABLE_CACHED_LIMIT_BYTES) {
    unsigned kind = 0, cls = 0;
    for (unsigned k = 0; k < 2; k++)
      for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
        if (t->uncollectable_cached_bytes[k][c] > t->uncollectable_cached_bytes[kind][cls])
          kind = k, cls = c;
    cache_hand_back(t, kind, cls);
  }
}

/* heap_lock held: every cache of T, a thread leaving, onto the shared
 * lists. */
void uncollectable_cache_retire(struct thread_alloc *t) {
  for (unsigned k = 0; k < 2; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) cache_hand_back(t, k, c);
}

/* Whether P is an object a cache of kind K (less KIND_UNCOLLECTABLE) and
 * class CLS may hold: the start of an object on a small page of that kind
 * and class, in state STATE_CACHED. */
static bool cached_object_valid(void *p, unsigned k, unsigned cls) {
  if ((uintptr_t)p & (GRANULE_BYTES - 1)) return false;
  struct page_header *page = page_of_address((uintptr_t)p);
  if (!page || atomic_load_explicit(&page->state, memory_order_relaxed) != PAGE_SMALL ||
      page->kind != k + KIND_UNCOLLECTABLE || page->size_class != cls)
    return false;
  uintptr_t offset = (uintptr_t)p - page->start;
  size_t size = object_size(page);
  if ((uintptr_t)p < page->start || offset % size || offset / size >= page->capacity) return false;
  return atomic_load_explicit(mark_bit_of(page, (uintptr_t)p), memory_order_relaxed) == STATE_CACHED;
}

/* In a fork child, heap_lock held: the caches of T, a thread the child
 * does not have, onto the shared lists as far as they can be trusted.  T
 * may have been pushing or popping when the parent forked, and fork
 * copies memory page by page while other threads write, so the child may
 * see a list head without the link written before it, or an object's old
 * words.  So the walk takes only objects in STATE_CACHED on pages of the
 * cache's kind and class, stops at the first other link, and clears each
 * object again.  What it leaves (a few objects at most, in STATE_CACHED
 * or STATE_ALLOCATED) stays a root in the child, never handed out. */
void uncollectable_cache_retire_lost(struct thread_alloc *t) {
  for (unsigned k = 0; k < 2; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      void *p = t->uncollectable_cache[k][c];
      size_t size = size_class_bytes[c];
      /* Each object taken leaves STATE_CACHED, so a link back to one
       * already taken (a cycle, or another thread's list) ends the walk. */
      while (p && cached_object_valid(p, k, c)) {
        void *next = *(void **)p;
        if (k == 0) memset(p, 0, size); /* KIND_UNCOLLECTABLE's are cleared */
        shared_push(k, c, p);
        p = next;
      }
      t->uncollectable_cache[k][c] = NULL;
      t->uncollectable_cached_bytes[k][c] = 0;
    }
  t->uncollectable_cached_total = 0;
}

static SGC_NOINLINE void double_free(void *obj) {
  sgc_fatal("GC_free(%p): uncollectable object freed twice", obj);
}

/* Small OBJ, which GC_free was given, checked for a double free and
 * cleared where its kind is cleared; its state is the caller's to set. */
static inline void release_small(struct page_header *page, void *obj, _Atomic uint8_t *state) {
  if (atomic_load_explicit(state, memory_order_relaxed) != STATE_ALLOCATED) double_free(obj);
  if (page->kind == KIND_UNCOLLECTABLE) memset(obj, 0, object_size(page));
}

void uncollectable_free(struct page_header *page, void *obj) {
  struct thread_alloc *t = alloc_self();
  free_count_bytes(t, object_size(page));
  unsigned k = page->kind - KIND_UNCOLLECTABLE, cls = page->size_class;
  if (page->state == PAGE_LARGE_HEAD) {
    heap_lock_take(thread_of_alloc(t));
    large_free(page);
    pthread_mutex_unlock(&heap_lock);
    return;
  }
  _Atomic uint8_t *state = mark_bit_of(page, (uintptr_t)obj);
  release_small(page, obj, state);
  if (!t) { /* an unregistered thread: the shared list */
    heap_lock_take(thread_of_alloc(t));
    shared_push(k, cls, obj);
    pthread_mutex_unlock(&heap_lock);
    return;
  }
  /* No lock and no gate (top of file). */
  atomic_store_explicit(state, STATE_CACHED, memory_order_relaxed);
  free_list_push(&t->uncollectable_cache[k][cls], obj);
  unsigned size = size_class_bytes[cls];
  bool full = (t->uncollectable_cached_bytes[k][cls] += size) > CACHE_LIMIT_BYTES;
  bool over = (t->uncollectable_cached_total += size) > UNCOLLECTABLE_CACHED_LIMIT_BYTES;
  if (unlikely(full || over)) {
    heap_lock_take(thread_of_alloc(t));
    if (full) cache_hand_back(t, k, cls);
    cache_hand_back_largest(t);
    pthread_mutex_unlock(&heap_lock);
  }
}
