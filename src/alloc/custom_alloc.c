/* Objects of the kinds a program makes with GC_new_kind
 * (mark/custom_kind.h), typed objects (gc_typed.h) among them.
 *
 * Allocation is thread-local, as for sgc's own kinds (thesis §2.2.2):
 * each thread that allocates such objects gets a cache, one free list per
 * kind and size class, popped without a lock or an atomic.  bdwgc serves
 * these kinds, and typed objects, under its global allocation lock
 * (SPEC §4), and so did sgc until `alloc -k typed` showed two threads at
 * a tenth of one thread's rate.  A thread's frees go on its own list,
 * which becomes one shared batch once it has taken FLUSH_BYTES of frees,
 * so memory stays bounded as for sgc's own kinds (alloc/batches.c).  A
 * refill, under heap_lock, takes a whole list: a batch if there is one,
 * else the free objects of a page it sweeps, else a fresh page: one lock
 * per page's worth of objects, not per object, and the page is swept or
 * formatted with the lock released.
 *
 * Sweeping is lazy, as for sgc's own kinds, but must be finished before
 * the next marking: a conservative pointer to a dead object makes the
 * marker run its kind's mark procedure, which must find zeros, not the
 * stale pointers of an object the sweep has not cleared yet (bdwgc clears
 * such kinds' free objects too).  So each collection first sweeps the
 * pages no refill swept since the last one, giving back to the pool those
 * it finds empty (their kind did not need them for a whole cycle), and
 * after marking queues all the kind's pages for sweeping again.  Objects
 * on thread caches are marked without being scanned (collect.c, through
 * custom_caches_for_each_free), so they stay where they are; every other
 * free list is undone before marking, so free objects read as zeros. */
#include <stdlib.h>

#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "alloc/collector.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "os/os.h"
#include "alloc/sweeper.h"

/* Under heap_lock.  Lists threads freed (or left at exit), counted as
 * allocated when first handed out, linked through their first objects'
 * second words (objects are at least two words). */
static void *given_back[CUSTOM_KIND_MAX][SIZE_CLASS_COUNT];
/* Every page of a kind is on one of these lists (linked by next): swept
 * since the last collection (or fresh), or waiting to be. */
static struct page_header *swept_pages[CUSTOM_KIND_MAX];
static struct page_header *unswept_pages[CUSTOM_KIND_MAX][SIZE_CLASS_COUNT];
/* Under heap_lock.  Pages whose refill left heap_lock to fill them and
 * has not taken their lists back under it (list_take): while none is,
 * custom_kinds_before_mark need not look for such lists. */
static unsigned fills_untaken;

/* A thread's cache, made on its first custom-kind allocation or free
 * (most threads of most programs never need one: 8 KiB each).  Only the
 * owner pushes and pops; the collector reads the lists with the owner
 * stopped, and they move to the shared stacks under heap_lock. */
struct custom_cache {
  void *lists[CUSTOM_KIND_MAX][SIZE_CLASS_COUNT];
  /* Objects freed onto each list since it last went back. */
  uint16_t freed[CUSTOM_KIND_MAX][SIZE_CLASS_COUNT];
};

enum { FLUSH_BYTES = 32 << 10 }; /* as GC_free's bound for sgc's own kinds */

static struct custom_cache *cache_of(struct thread_alloc *t) {
  if (likely(t->custom_cache != NULL)) return t->custom_cache;
  /* From the OS, zeroed: a thread's first malloc gives it a glibc arena,
   * 64 MiB of address space, which under a limit (ulimit -v) the heap
   * then lacks. */
  struct custom_cache *cache = os_alloc(sizeof *cache);
  if (!cache) return NULL;
  /* The collector may stop this thread anywhere: the zeroed table before
   * the pointer to it (a compiler barrier; the reader runs on this
   * thread's stop, or under heap_lock after it). */
  atomic_signal_fence(memory_order_seq_cst);
  t->custom_cache = cache;
  return cache;
}

/* Moves the list *HEAD to the given-back stack; heap_lock held. */
static void list_give_back(void **head, unsigned index, unsigned cls) {
  void *list = *head;
  if (!list) return;
  *head = NULL;
  list_stack_push(&given_back[index][cls], list);
}

static void page_keep(unsigned index, struct page_header *page) {
  page->next = swept_pages[index];
  swept_pages[index] = page;
}

/* The page work of a refill, done outside heap_lock: sweeps PAGE (unless
 * FRESH) and formats it if it is empty, leaving its free list in
 * page->free_head.  PAGE is already on swept_pages, so a collection that
 * runs after this (one waits for page operations to end before it looks
 * at the kinds' pages: collect_locked) finds the list there and undoes it
 * before marking (custom_kinds_before_mark). */
static void page_fill(struct page_header *page, unsigned kind, unsigned cls, bool fresh) {
  if (!fresh) sweep_page(page);
  if (fresh || page->live_objects == 0) {
    /* page_format_small resets the page's links; it stays where
     * page_keep put it (only heap_lock holders relink swept_pages, at
     * its head or after page operations have ended). */
    struct page_header *next = page->next;
    unsigned count;
    void *tail, *list = page_format_small(page, kind, cls, &count, &tail);
    page->next = next;
    page->free_head = list;
    page->free_tail = tail;
    page->free_count = count;
  }
}

/* A whole list of free (INDEX, CLS) objects, counted as allocated, or NULL
 * at the heap limit; heap_lock held, released while a page is swept or
 * formatted (a page op, collect/collect.h: that work was most of what two
 * threads allocating typed objects waited on this lock for).  Looks, in
 * order, at lists threads gave back, pages waiting to be swept, a due
 * collection (what it frees lands on these lists, not in the pool that
 * page_acquire would look at after collecting) and a fresh page. */
static void *list_take(unsigned index, unsigned kind, unsigned cls) {
  bool collected = false;
  for (;;) {
    void *list = list_stack_pop(&given_back[index][cls]);
    if (list) return list;
    struct page_header *page = unswept_pages[index][cls];
    bool fresh = page == NULL;
    if (page) {
      unswept_pages[index][cls] = page->next;
    } else if (collect_if_due(&collected)) {
      continue;
    } else if ((page = page_acquire(1)) == NULL) {
      return NULL;
    }
    page_keep(index, page);
    fills_untaken++;
    uint32_t epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
    page_op_begin();
    pthread_mutex_unlock(&heap_lock);
    page_fill(page, kind, cls, fresh);
    page_op_end();
    heap_lock_take(sgc_self);
    /* A collection meanwhile undid the list (and zeroed fills_untaken)
     * and queued the page for sweeping again: look again. */
    if (atomic_load_explicit(&gc_epoch, memory_order_relaxed) != epoch) continue;
    fills_untaken--;
    unsigned count;
    void *tail;
    list = sweep_detach(page, &count, &tail);
    if (list) {
      account_allocation((size_t)count * size_class_bytes[cls]);
      return list;
    }
  }
}

/* T's cache is empty for (KIND, CLS) (it found it so, and only T fills
 * it): a whole list from list_take; the first object is returned, the rest
 * goes to the cache. */
SGC_NOINLINE static void *custom_refill(size_t bytes, unsigned kind, unsigned cls) {
  unsigned index = kind - KIND_COUNT;
  struct thread_alloc *t = alloc_self_or_register();
  struct custom_cache *cache = cache_of(t);
  heap_lock_take(thread_of_alloc(t));
  if (collect_torture_turn(t)) collect_torture();
  void *list = list_take(index, kind, cls);
  if (!list) {
    pthread_mutex_unlock(&heap_lock);
    return sgc_out_of_memory(bytes);
  }
  void *rest = *(void **)list;
  if (rest && cache) {
    void **head = &cache->lists[index][cls];
    *head = rest;
  } else if (rest) {
    list_stack_push(&given_back[index][cls], rest); /* no cache: one object at a time */
  }
  /* The rest of LIST's first object is zero: formatted, swept or freed
   * so.  Its link goes after the list is installed (a stop in between
   * finds the objects on the cache). */
  atomic_signal_fence(memory_order_seq_cst);
  *(void **)list = NULL;
  pthread_mutex_unlock(&heap_lock);
  collect_after_unlock();
  return list;
}

void *custom_allocate(size_t bytes, unsigned kind) {
  if (bytes > MAX_SMALL_BYTES) return large_allocate(bytes, kind);
  unsigned cls = size_class_for_bytes(bytes);
  struct thread_alloc *t = alloc_self();
  if (likely(t != NULL && t->custom_cache != NULL)) {
    void *p = free_list_pop(&t->custom_cache->lists[kind - KIND_COUNT][cls]);
    if (likely(p != NULL)) return p;
  }
  return custom_refill(bytes, kind, cls);
}

void custom_free(struct page_header *page, void *obj) {
  if (atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_LARGE_HEAD) {
    free_count_bytes(alloc_self(), page->object_bytes);
    large_free_explicit(obj, page);
    return;
  }
  custom_free_small(alloc_self_or_register(), page, obj);
}

void custom_free_small(struct thread_alloc *t, struct page_header *page, void *obj) {
  unsigned index = page->kind - KIND_COUNT, cls = page->size_class;
  /* Cleared whole: a typed object's descriptor word too, so a stale
   * pointer to it scans nothing. */
  object_clear(obj, page->object_granules);
  t->freed_bytes_other += (size_t)page->object_granules << GRANULE_SHIFT;
  struct custom_cache *cache = cache_of(t);
  if (!cache) {
    heap_lock_acquire();
    list_stack_push(&given_back[index][cls], obj);
    pthread_mutex_unlock(&heap_lock);
    return;
  }
  void **head = &cache->lists[index][cls];
  free_list_push(head, obj);
  if (unlikely(++cache->freed[index][cls] * size_class_bytes[cls] >= FLUSH_BYTES)) {
    cache->freed[index][cls] = 0;
    heap_lock_acquire();
    list_give_back(head, index, cls);
    pthread_mutex_unlock(&heap_lock);
  }
}

void custom_caches_for_each_free(struct thread_alloc *t, void (*visit)(void *)) {
  struct custom_cache *cache = t->custom_cache;
  if (!cache) return;
  unsigned kinds = atomic_load_explicit(&custom_kind_count, memory_order_acquire);
  for (unsigned index = 0; index < kinds; index++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
      for (void *p = cache->lists[index][c]; p; p = *(void **)p) visit(p);
}

void custom_cache_retire(struct thread_alloc *t) {
  struct custom_cache *cache = t->custom_cache;
  if (!cache) return;
  for (unsigned index = 0; index < CUSTOM_KIND_MAX; index++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) list_give_back(&cache->lists[index][c], index, c);
  t->custom_cache = NULL;
  os_free(cache, sizeof *cache);
}

void custom_cache_forget(struct thread_alloc *t) {
  os_free(t->custom_cache, sizeof *t->custom_cache);
  t->custom_cache = NULL;
}

/* Clears the links of the free list LIST: its objects read as zeros.
 * VISIT, if any, is called for each object. */
static void list_unthread(void *list, void (*visit)(void *)) {
  for (void *p = list, *n; p; p = n) {
    n = *(void **)p;
    *(void **)p = NULL;
    if (visit) visit(p);
  }
}

/* Unthreads the free list left in PAGE. */
static void list_undo(struct page_header *page, void (*visit)(void *)) {
  list_unthread(page->free_head, visit);
  page->free_head = page->free_tail = NULL;
  page->free_count = 0;
}

/* Unthreads the lists on the given-back stack *STACK and empties it. */
static void given_back_undo(void **stack, void (*visit)(void *)) {
  void *list;
  while ((list = list_stack_pop(stack)) != NULL) list_unthread(list, visit);
}

/* heap_lock held, before marking (the mark bits are still the last
 * collection's): sweeps what no refill swept, so every dead object reads
 * as zeros in this marking, and gives back the pages found empty (free
 * pages hold no objects a stale pointer could reach).  Every free list
 * not on a thread's cache is undone -- the sweeps' lists, the lists
 * threads gave back, a refill's not yet taken -- so a stale pointer to a
 * free object meets zeros, not links (bb_stale_kinds); their objects are
 * unmarked, and after marking every page is swept again.  KEEP_LISTS
 * (leak mode): the lists stay, for custom_kinds_free_lists_undo after
 * the marks are cleared.  Otherwise UNLISTED, if any, is called for each
 * object of the lists threads gave back or a refill left (leak mode, at
 * a cycle's finish: an object allocated during the cycle, so marked, and
 * freed is on no list once undone, and must not stay marked). */
void custom_kinds_before_mark(bool keep_lists, void (*unlisted)(void *)) {
  unsigned kinds = atomic_load_explicit(&custom_kind_count, memory_order_acquire);
  for (unsigned index = 0; index < kinds; index++) {
    if (!keep_lists) {
      for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
        given_back_undo(&given_back[index][c], unlisted);
      /* A refill's page whose list it has not taken yet (list_take). */
      for (struct page_header *page = fills_untaken ? swept_pages[index] : NULL; page;
           page = page->next)
        if (page->free_head) list_undo(page, unlisted);
    }
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      struct page_header *page, *next;
      for (page = unswept_pages[index][c]; page; page = next) {
        next = page->next;
        sweep_page(page);
        if (page->live_objects == 0) {
          /* The sweep threaded the dead objects into a list: unthreaded,
           * they read as zeros, not as pointers to each other. */
          list_undo(page, NULL);
          page->next = NULL;
          small_page_release(page);
        } else {
          if (!keep_lists) list_undo(page, NULL);
          page_keep(index, page);
        }
      }
      unswept_pages[index][c] = NULL;
    }
  }
  fills_untaken = 0;
}

/* Leak mode: after the marks are cleared, before marking (heap_lock
 * held): every free list custom_kinds_before_mark kept is undone, VISIT
 * called for each of its objects (collect/leak_find.c marks them free,
 * so no unmarked object of these kinds is a free one). */
void custom_kinds_free_lists_undo(void (*visit)(void *)) {
  unsigned kinds = atomic_load_explicit(&custom_kind_count, memory_order_acquire);
  for (unsigned index = 0; index < kinds; index++) {
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) given_back_undo(&given_back[index][c], visit);
    for (struct page_header *page = swept_pages[index]; page; page = page->next)
      if (page->free_head) list_undo(page, visit);
  }
}

/* heap_lock held, marking done: every page waits to be swept (the
 * given-back lists went before marking). */
void custom_kinds_after_mark(void) {
  unsigned kinds = atomic_load_explicit(&custom_kind_count, memory_order_acquire);
  for (unsigned index = 0; index < kinds; index++) {
    struct page_header *page, *next;
    for (page = swept_pages[index]; page; page = next) {
      next = page->next;
      page->next = unswept_pages[index][page->size_class];
      unswept_pages[index][page->size_class] = page;
    }
    swept_pages[index] = NULL;
  }
}
