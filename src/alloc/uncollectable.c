/* Uncollectable objects.  Their mark bit is set from allocation until
 * GC_free and never cleared by a collection, so every such object is both
 * live and a root (mark_begin queues them); their pages are never swept.
 *
 * Free small objects wait on one shared list per kind and size class
 * (heap_lock), and in front of it on each thread's cache, which GC_free
 * fills and allocation empties without a lock: C++ programs linked with
 * libsgccpp get every plain `new` and `delete` here, and two threads doing
 * that through heap_lock alone ran at 0.26x the rate the caches give them
 * (bench-cppnew-sgc -t 2, tools/ab.sh -n 21, paired; history.md).  The
 * cache is used inside the page-path gate (alloc/page_path.h): a
 * collection closes the gate before mark_begin reads the marks, so no
 * object changes between allocated and free while the collector decides
 * which are roots. */
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_path.h"
#include "collect/collect.h"
#include "common.h"

static void *free_lists[2][SIZE_CLASS_COUNT]; /* [kind - KIND_UNCOLLECTABLE] */

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

/* heap_lock held: one object off the shared list, marked (allocated). */
static void *locked_allocate(unsigned kind, unsigned cls) {
  struct page_header *fresh;
  void *p = locked_list_pop(&free_lists[kind - KIND_UNCOLLECTABLE][cls], kind, cls, &fresh);
  if (!p) return NULL;
  mark_bit_set(page_of_address((uintptr_t)p), (uintptr_t)p);
  account_allocation(size_class_bytes[cls]);
  return p;
}

/* heap_lock held: T's empty cache refilled from the shared list (fresh
 * pages formatted as needed), at least one object; false when out of
 * memory. */
static bool cache_refill(struct sgc_thread *t, unsigned kind, unsigned cls) {
  unsigned size = size_class_bytes[cls], n = CACHE_REFILL_BYTES / size;
  void **cache = &t->uncollectable_cache[kind - KIND_UNCOLLECTABLE][cls];
  unsigned taken = 0;
  for (; taken < (n ? n : 1); taken++) {
    struct page_header *fresh;
    void *p = locked_list_pop(&free_lists[kind - KIND_UNCOLLECTABLE][cls], kind, cls, &fresh);
    if (!p) break;
    free_list_push(cache, p);
  }
  t->uncollectable_cached_bytes[kind - KIND_UNCOLLECTABLE][cls] += taken * size;
  t->uncollectable_cached_total += taken * size;
  account_allocation((size_t)taken * size);
  return taken != 0;
}

/* Pops one object off T's cache inside the gate, marked; NULL when the
 * cache is empty or a collection holds the gate. */
static void *cache_pop(struct sgc_thread *t, unsigned kind, unsigned cls) {
  void **cache = &t->uncollectable_cache[kind - KIND_UNCOLLECTABLE][cls];
  if (!*cache || !page_path_enter(t)) return NULL;
  void *p = free_list_pop(cache); /* zero now: cleared when freed */
  t->uncollectable_cached_bytes[kind - KIND_UNCOLLECTABLE][cls] -= size_class_bytes[cls];
  t->uncollectable_cached_total -= size_class_bytes[cls];
  /* A plain store of the mark byte: the object is this thread's, and no
   * collection reads marks while the gate is held. */
  atomic_store_explicit(mark_bit_of(page_of_address((uintptr_t)p), (uintptr_t)p), 1,
                        memory_order_relaxed);
  page_path_exit(t);
  return p;
}

void *uncollectable_allocate(size_t bytes, unsigned kind) {
  if (bytes > MAX_SMALL_BYTES) return large_allocate(bytes, kind);
  unsigned cls = size_class_for_bytes(bytes);
  struct sgc_thread *t = thread_self_or_register();
  void *p = cache_pop(t, kind, cls);
  if (p) return p;
  heap_lock_take(t);
  /* An empty cache is refilled; one the gate kept us from is left. */
  if (!t->uncollectable_cache[kind - KIND_UNCOLLECTABLE][cls] && cache_refill(t, kind, cls)) {
    pthread_mutex_unlock(&heap_lock);
    collect_after_unlock();
    if ((p = cache_pop(t, kind, cls))) return p;
    heap_lock_take(t);
  }
  p = locked_allocate(kind, cls);
  pthread_mutex_unlock(&heap_lock);
  if (!p) return sgc_out_of_memory(bytes);
  collect_after_unlock();
  return p;
}

/* heap_lock held: T's cache of KIND and CLS onto the shared list. */
static void cache_hand_back(struct sgc_thread *t, unsigned kind, unsigned cls) {
  void **cache = &t->uncollectable_cache[kind][cls];
  void **shared = &free_lists[kind][cls];
  for (void *p; (p = free_list_pop(cache));) free_list_push(shared, p);
  t->uncollectable_cached_total -= t->uncollectable_cached_bytes[kind][cls];
  t->uncollectable_cached_bytes[kind][cls] = 0;
}

/* heap_lock held: T's largest caches back until all keep at most the
 * limit. */
static void cache_hand_back_largest(struct sgc_thread *t) {
  while (t->uncollectable_cached_total > UNCOLLECTABLE_CACHED_LIMIT_BYTES) {
    unsigned kind = 0, cls = 0;
    for (unsigned k = 0; k < 2; k++)
      for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
        if (t->uncollectable_cached_bytes[k][c] > t->uncollectable_cached_bytes[kind][cls])
          kind = k, cls = c;
    cache_hand_back(t, kind, cls);
  }
}

/* heap_lock held: every cache of T (a thread leaving, or one the fork
 * child no longer has) onto the shared lists. */
void uncollectable_cache_retire(struct sgc_thread *t) {
  for (unsigned k = 0; k < 2; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) cache_hand_back(t, k, c);
}

/* Small OBJ, which GC_free was given, becomes free: cleared where its
 * kind is cleared, then unmarked (no longer a root).  Inside the gate or
 * under heap_lock, so no collection reads the mark meanwhile; false when
 * OBJ was free already. */
static bool release_small(struct page_header *page, void *obj) {
  if (!mark_bit_test(page, (uintptr_t)obj)) return false;
  if (page->kind == KIND_UNCOLLECTABLE) memset(obj, 0, object_size(page));
  mark_bit_clear(page, (uintptr_t)obj);
  return true;
}

static SGC_NOINLINE void double_free(void *obj) {
  sgc_fatal("GC_free(%p): uncollectable object freed twice", obj);
}

void uncollectable_free(struct page_header *page, void *obj) {
  struct sgc_thread *t = sgc_self;
  free_count_bytes(t, object_size(page));
  unsigned k = page->kind - KIND_UNCOLLECTABLE, cls = page->size_class;
  if (page->state != PAGE_LARGE_HEAD && t && page_path_enter(t)) {
    bool released = release_small(page, obj);
    if (released) free_list_push(&t->uncollectable_cache[k][cls], obj);
    unsigned size = size_class_bytes[cls];
    bool full = released && (t->uncollectable_cached_bytes[k][cls] += size) > CACHE_LIMIT_BYTES;
    bool over = released && (t->uncollectable_cached_total += size) >
                                UNCOLLECTABLE_CACHED_LIMIT_BYTES;
    page_path_exit(t);
    if (!released) double_free(obj);
    if (full || over) {
      heap_lock_take(t);
      if (full) cache_hand_back(t, k, cls);
      cache_hand_back_largest(t);
      pthread_mutex_unlock(&heap_lock);
    }
    return;
  }
  heap_lock_take(t);
  bool released = true;
  if (page->state == PAGE_LARGE_HEAD) large_free(page);
  else if ((released = release_small(page, obj))) free_list_push(&free_lists[k][cls], obj);
  pthread_mutex_unlock(&heap_lock);
  if (!released) double_free(obj);
}
