/* Free-page stores for the page policies (alloc/page_policy.h): each
 * thread's own free pages, the shared list (PS: the page pool), and the
 * counters u, u_i, l, a of thesis §2.2.4.
 *
 * A store's free list is under its own spin lock: its owner pops it, and
 * LPS steals from it, inside the page-path gate (alloc/page_path.h)
 * without heap_lock; the rest (returning pages, making and retiring
 * stores) runs with heap_lock held.  The per-store counters have one writer, the owner,
 * except `used`, which sweeping threads decrement too. */
#ifndef SGC_PAGE_STORE_H
#define SGC_PAGE_STORE_H

#include "alloc/page_policy.h"
#include "heap/heap_lock.h"
#include "heap/heap.h"
#include "os/spin_lock.h"
#include "alloc/thread_alloc.h"

/* Pages waiting to be swept, one list per kind and size class (sweep.c):
 * the shared set, and under AL and LPS one set per store holding the
 * pages its thread owns (thesis §2.2: a page a thread used goes back to
 * it).  `tail` is used only while a collection builds the lists. */
struct unswept_lists {
  struct page_header *head[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  struct page_header *tail[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  _Atomic long pages; /* in all classes: a hint for skipping empty stores */
};

struct page_store {
  struct spin_lock lock;     /* the lists and their counts */
  struct page_header *free;  /* pages threads emptied, linked through next */
  _Atomic long free_count;   /* written under lock, peeked without */
  struct page_header *reserve; /* fresh pages taken ahead; only the owner's */
  struct page_header *fresh_cursor; /* page_pool_take_run's; under heap_lock */
  _Atomic long reserve_count;
  _Atomic long used;         /* u_i: pages this thread holds now */
  _Atomic long max_used;     /* max u_i */
  _Atomic long taken;        /* pages handed to this thread */
  _Atomic long remote;       /* ... of which another thread consumed first */
  _Atomic long stolen;       /* ... of which taken from another thread's store */
  _Atomic bool alive;        /* its thread runs (a retired store is reused) */
  /* gc_epoch at its thread's latest refill: a store whose thread took
   * nothing through a whole mutator interval is idle (store_idle). */
  _Atomic uint32_t active_epoch;
  _Atomic int owner_tid;     /* gettid() of the latest owner */
  /* Stores are never freed, so the list of all of them can be walked
   * without a lock (stealing inside the page-path gate); a thread's store
   * is a retired one with no pages in use when there is one. */
  struct page_store *next_all;
  /* The store this one last stole from, tried first at the next steal
   * (only the owner reads or writes it; stores are never freed). */
  struct page_store *steal_hint;
  /* Memory node its thread ran on at its latest refill (os/numa.h):
   * where local placement takes its pages, and which stores a steal
   * tries first.  Written by the owner; others read it as a hint
   * (relaxed: it orders nothing). */
  _Atomic unsigned node;
  struct unswept_lists unswept; /* its pages waiting to be swept (AL, LPS) */
} __attribute__((aligned(64)));

struct page_counters {
  long a;          /* pages consumed for small objects since start */
  long u;          /* pages holding small objects now */
  long l;          /* pages with survivors at the last collection */
  long max_l;
  long sum_max_u;  /* sum of max u_i */
  long taken;      /* pages handed to threads */
  long remote;     /* ... of which another thread consumed first */
  long stolen;     /* ... of which taken from another thread's store */
  long store_free; /* free pages kept in the stores (emptied and reserved) */
};
/* The counters now, heap_lock held. */
void page_counters_read(struct page_counters *out);
/* One store's counters (SGC_get_page_store_stats). */
struct page_store_counters {
  int tid;
  bool alive;
  long used, max_used, taken, remote, stolen, free;
  int node;
};
/* Calls VISIT with each store's counters, newest first.  heap_lock held. */
void page_stores_visit(void (*visit)(const struct page_store_counters *, void *), void *arg);
extern enum page_policy page_policy;
extern double page_policy_k;

void page_policy_init(void);
/* T's store, made on first use (heap_lock held). */
struct page_store *page_store_of(struct thread_alloc *t);
/* Without touching the pool, by the policy: a page T emptied, else (LPS,
 * growth not allowed) a page another thread emptied, else one of T's
 * reserved fresh pages; NULL under PS or when there is none.  Inside the
 * page-path gate or under heap_lock. */
struct page_header *small_page_take_own(struct thread_alloc *t);
/* A free page for small objects of thread T, by the policy; NULL when the
 * heap is exhausted.  May collect or grow the heap.  *COLLECTED says
 * whether a collection already ran for this request; when none has and
 * one is due, it collects and returns NULL with *COLLECTED set: what a
 * collection frees lies mostly in pages that still hold live objects,
 * which only the caller's sweep lists hand out, so it looks there before
 * asking again (and only then may the heap grow). */
struct page_header *small_page_take(struct thread_alloc *t, bool *collected);
/* An emptied small page goes back by the policy. */
void small_page_release(struct page_header *page);
/* T's refill found PAGE empty while sweeping and uses it at once (inside
 * the gate too: T's store exists). */
void small_page_adopt(struct thread_alloc *t, struct page_header *page);
/* The number of small pages with survivors, counted after marking. */
void page_policy_after_mark(long live_pages);
/* After the collection, the bytes it found live: LPS's l is the smaller of
 * the pages with survivors and the pages those bytes fill (page_store.c). */
void page_policy_after_collection(size_t live_bytes);
/* T refills (alloc/refill.c): its store is active in this epoch. */
static inline void page_store_note_active(struct thread_alloc *t) {
  struct page_store *s = t->page_store;
  uint32_t e = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
  if (s && atomic_load_explicit(&s->active_epoch, memory_order_relaxed) != e)
    atomic_store_explicit(&s->active_epoch, e, memory_order_relaxed);
}
/* With the marks of the collection of epoch EPOCH: whether S's thread
 * refilled nothing in the interval before it (thesis ch. 2 lets a page go
 * back to the thread that used it; a thread asleep uses none of them). */
static inline bool page_store_idle(const struct page_store *s, uint32_t epoch) {
  return atomic_load_explicit(&s->active_epoch, memory_order_relaxed) + 1 < epoch;
}
/* After a collection: the free pages of idle stores go to the pool. */
void page_stores_drain_idle(void);
/* A thread leaves: its free pages go to the pool. */
void page_store_retire(struct thread_alloc *t);
/* After fork: the stores of threads that do not exist here retire. */
void page_stores_after_fork(struct page_store *keep);
/* Heap exhausted for a large object: every store's pages go to the pool. */
bool page_stores_drain(void);
/* Every store made so far, linked through next_all (never freed). */
struct page_store *page_stores_all(void);
/* LPS, when growth is not allowed: a page of (KIND, CLS) waiting to be
 * swept in another thread's store, counted as stolen by OWN; else NULL. */
struct page_header *page_store_steal_unswept(struct page_store *own, unsigned kind,
                                             unsigned cls);

#endif
