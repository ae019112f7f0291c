/* The allocator's internal interface (thesis ch. 2): thread-local free
 * lists in front, pages behind heap_lock. */
#ifndef SGC_ALLOC_H
#define SGC_ALLOC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "heap/heap.h"
#include "alloc/thread_alloc.h"

/* refill.c: a list of free objects of (KIND, CLS) for thread T, the first
 * one returned and the rest installed in T's free list; NULL when out of
 * memory.  Takes heap_lock. */
void *refill_and_allocate(struct thread_alloc *t, unsigned kind, unsigned cls);
/* Prepares PAGE for objects of (KIND, CLS) and returns its free list. */
void *page_format_small(struct page_header *page, unsigned kind, unsigned cls,
                        unsigned *count, void **tail);
/* Finds a free page, collecting or growing the heap as the policy says;
 * heap_lock held; NULL when the heap limit is reached. */
struct page_header *page_acquire(size_t pages);

/* large.c */
void *large_allocate(size_t bytes, unsigned kind);
/* large_allocate at an address that is a multiple of ALIGN, a power of
 * two above PAGE_BYTES. */
void *large_allocate_aligned(size_t bytes, unsigned kind, size_t align);
void large_free(struct page_header *head);
/* GC_free's: the object a root until its pages are back (heap_lock not held). */
void large_free_explicit(void *obj, struct page_header *head);
/* Grows large object HEAD (a built-in kind) to BYTES without moving it,
 * when the pages after it are free; false when they are not. */
bool large_grow_in_place(struct page_header *head, size_t bytes);
/* large_allocate for an object that grows: placed with free pages after
 * it where the pool has them. */
void *large_allocate_to_grow(size_t bytes, unsigned kind);

/* uncollectable.c (heap_lock inside) */
/* Pops an object from *LIST, a free list of (KIND, CLS) under heap_lock
 * (held), after adding a fresh page's objects when it is empty (that page
 * in *FRESH, else NULL); the object's link word is cleared.  NULL when the
 * heap limit is reached. */
void *locked_list_pop(void **list, unsigned kind, unsigned cls, struct page_header **fresh);
void *uncollectable_allocate(size_t bytes, unsigned kind);
void uncollectable_free(struct page_header *page, void *obj);
/* heap_lock held: T's caches of free uncollectable objects go back to the
 * shared lists: T leaving, or (_lost) gone in a fork child, whose caches
 * may have been half updated when the parent forked. */
void uncollectable_cache_retire(struct thread_alloc *t);
void uncollectable_cache_retire_lost(struct thread_alloc *t);
/* What a thread's caches of free uncollectable objects keep at most after
 * a GC_free (an allocation's refill may add 8 KiB). */
enum { UNCOLLECTABLE_CACHED_LIMIT_BYTES = 512 << 10 };

/* custom_alloc.c: kinds made by GC_new_kind, thread-local lists in front
 * of shared ones under heap_lock (a collection calls the last two with it
 * held, before and after marking). */
void *custom_allocate(size_t bytes, unsigned kind);
/* api/compat_alloc.c: whether KIND is gc_typed.h's, and GC_realloc of an
 * object of it (HAVE: its size), which keeps its descriptor. */
bool typed_kind_is(unsigned kind);
void *typed_realloc(void *old, size_t have, size_t bytes);
void custom_free(struct page_header *page, void *obj);
/* OBJ, at the start of a small object of PAGE (a custom kind), freed by
 * the registered thread SELF: GC_free's fast path. */
void custom_free_small(struct thread_alloc *self, struct page_header *page, void *obj);
void custom_kinds_before_mark(bool keep_lists, void (*unlisted)(void *));
void custom_kinds_free_lists_undo(void (*visit)(void *));
void custom_kinds_after_mark(void);
/* heap_lock held, after each collection's sweep and before the heap
 * grows: the small uncollectable pages whose objects are all free go
 * back to the free-page pool.  True when one did. */
bool uncollectable_release_free_pages(void);
/* Calls VISIT on every object on T's custom-kind cache (world stopped). */
void custom_caches_for_each_free(struct thread_alloc *t, void (*visit)(void *));
/* T exits: its cached objects go to the shared lists; heap_lock held. */
void custom_cache_retire(struct thread_alloc *t);
/* T's custom cache dropped unreturned (a fork child's lost threads). */
void custom_cache_forget(struct thread_alloc *t);

/* free.c: objects of class CLS a thread frees before its list becomes a
 * batch. */
uint16_t free_flush_objects(unsigned cls);
/* GC_get_expl_freed_bytes_since_gc's counts (alloc/free.c): bytes freed
 * by SELF (NULL: a thread sgc does not know) on a path other than the
 * thread-local kinds' lists; all of T's frees; the collection's and an
 * exiting thread's bookkeeping. */
extern _Atomic uint64_t freed_bytes_elsewhere;
static inline void free_count_bytes(struct thread_alloc *self, size_t bytes) {
  /* Relaxed: a count, and only slow paths add to the shared one. */
  if (self) self->freed_bytes_other += bytes;
  else atomic_fetch_add_explicit(&freed_bytes_elsewhere, bytes, memory_order_relaxed);
}
uint64_t free_bytes_of(const struct thread_alloc *t);
void free_counts_at_collection(void);
void free_counts_thread_exit(const struct thread_alloc *t);

/* batches.c: free lists handed back by threads that freed much.  T's own
 * stack: inside the page-path gate or under heap_lock; the rest under
 * heap_lock. */
void batch_push_own(struct thread_alloc *t, unsigned kind, unsigned cls, void *list);
void *batch_pop_own(struct thread_alloc *t, unsigned kind, unsigned cls);
void batch_push(unsigned kind, unsigned cls, void *list); /* no owner */
/* T's own batch, else an unowned one. */
void *batch_pop(struct thread_alloc *t, unsigned kind, unsigned cls);
/* Another thread's batch (takes registry_lock); heap_lock held. */
void *batch_steal(struct thread_alloc *t, unsigned kind, unsigned cls);
/* Whether T, out of objects of (KIND, CLS), should take fresh pages
 * rather than steal: it is short because a thread stole from it while it
 * was using its batches (heap_lock held).  batch_lent_repaid: a refill
 * of T's (T's own thread) took N objects from pages instead. */
bool batch_lent_outstanding(struct thread_alloc *t, unsigned kind, unsigned cls);
void batch_lent_repaid(struct thread_alloc *t, unsigned kind, unsigned cls, unsigned n);
/* T exits: its batches, and its free lists as batches, become unowned
 * (heap_lock held).  The lists were left behind before, unmarked and
 * unreferenced, for the next collection to reclaim: to leak finding they
 * looked like objects dropped without GC_free. */
void batches_retire(struct thread_alloc *t);
/* Calls VISIT for every object in a batch, owned or not (world stopped). */
void batches_for_each_object(void (*visit)(void *object));
void batches_after_fork(struct thread_alloc *self);
/* With the world stopped and registry_lock held. */
void batches_drop_all(void);
void free_init(void);
/* Sets up the GC_free state of a new thread record T (free.c). */
void free_record_init(struct thread_alloc *t);

/* Free lists, as the fast paths use them: the owner pops and pushes, and
 * the collector walks the list from a signal handler on the owner's
 * thread.  So a pop moves the head before it clears the popped object's
 * link, and a push links the object before publishing it: a stop in
 * between never hides the rest of the list (compiler barriers, no
 * instruction). */
static inline void *free_list_pop(void **head) {
  void *p = *head;
  if (p) {
    *head = *(void **)p;
    atomic_signal_fence(memory_order_seq_cst);
    *(void **)p = NULL;
  }
  return p;
}

static inline void free_list_push(void **head, void *p) {
  *(void **)p = *head;
  atomic_signal_fence(memory_order_seq_cst);
  *head = p;
}

/* Stacks of whole free lists, linked through each list's first object's
 * second word (objects are at least two words); under the stack's lock.
 * The head is stored atomically (relaxed: the lock orders everything
 * else) because some stacks' heads are peeked at without the lock
 * (batches.c), and a plain store beside those loads would be a data race
 * (the one ThreadSanitizer reported for the sweep lists' heads). */
static inline void list_stack_push(void **stack, void *list) {
  ((void **)list)[1] = *stack;
  __atomic_store_n(stack, list, __ATOMIC_RELAXED);
}

static inline void *list_stack_pop(void **stack) {
  void **list = *stack;
  if (list) {
    __atomic_store_n(stack, list[1], __ATOMIC_RELAXED);
    list[1] = NULL; /* free objects are zero but for their first word */
  }
  return list;
}

/* A double free of a small object.  GC_free puts an object of a
 * thread-local kind on a free list with a tag in its second word, its
 * address mixed with a constant, and every path that hands a
 * thread-local object out clears that word (the fast paths with the link,
 * refill_and_allocate for the rest).  So a second GC_free of an object
 * still free finds its tag; a live object never holds it but by an
 * accident of its data (1 in 2^64: the tag is no user-space address, its
 * top bits are the constant's).  Without the check a second free linked
 * the object into a list twice: a cycle, so that every allocation of the
 * class returned one object and the collection's walk over the lists
 * never ended.  Free objects whose second word the collector overwrites
 * (a batch's first, linked through it, and those the sweep clears) carry
 * no tag: a second free of one is missed, never a first free refused. */
static const uintptr_t freed_tag_key = 0x9e3779b97f4a7c15u;

static inline uintptr_t freed_tag(const void *p) { return (uintptr_t)p ^ freed_tag_key; }

static inline bool object_tagged_freed(const void *p) {
  return ((const uintptr_t *)p)[1] == freed_tag(p);
}

static inline void object_tag_freed(void *p) { ((uintptr_t *)p)[1] = freed_tag(p); }

/* Clears the last granule of an object of at most 4 granules and, past
 * 2, the two in the middle: everything but the first granule (all of a
 * 1-granule object).  A few stores cost less than a memset call; they
 * overlap for 1 and 3 granules, one branch instead of one per size. */
static inline void object_clear_past_first(void *p, unsigned granules) {
  uint64_t *w = p, *last = w + 2 * (granules - 1);
  last[0] = 0;
  last[1] = 0;
  if (granules > 2) {
    w[2] = 0;
    w[3] = 0;
    w[4] = 0;
    w[5] = 0;
  }
}

/* Clears a freed object of at most 4 granules. */
static inline void object_clear_small(void *p, unsigned granules) {
  ((uint64_t *)p)[0] = 0;
  ((uint64_t *)p)[1] = 0;
  object_clear_past_first(p, granules);
}

/* The same for GC_free, but for the first two words, where the link and
 * the tag go (the tag after the clear, which covers it in a 1-granule
 * object): as many stores, none twice. */
static inline void object_clear_small_tagged(void *p, unsigned granules) {
  object_clear_past_first(p, granules);
  object_tag_freed(p);
}

static inline void object_clear(void *p, unsigned granules) {
  if (granules <= 4) object_clear_small(p, granules);
  else memset(p, 0, (size_t)granules << GRANULE_SHIFT);
}

/* The size a request really takes: bdwgc-style padding if configured. */
static inline size_t request_bytes(size_t bytes) {
  size_t extra = sgc_settings.extra_bytes;
  return bytes + extra < bytes ? SIZE_MAX : bytes + extra;
}

#endif
