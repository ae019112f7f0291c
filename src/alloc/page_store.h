/* Free-page stores for the page policies (alloc/page_policy.h): each
 * thread's own free pages, the shared list (PS: the page pool), and the
 * counters u, u_i, l, a of thesis §2.2.4.  Everything here runs with
 * heap_lock held. */
#ifndef SGC_PAGE_STORE_H
#define SGC_PAGE_STORE_H

#include "alloc/page_policy.h"
#include "heap/heap.h"
#include "threads/thread.h"

struct page_store {
  struct page_header *free; /* free pages, linked through page->next */
  long free_count;
  long used, max_used;      /* u_i and max u_i */
  bool alive;
  struct page_store *next_alive, *prev_alive;
};

struct page_counters {
  long a;          /* pages consumed for small objects since start */
  long u;          /* pages holding small objects now */
  long l;          /* pages with survivors at the last collection */
  long max_l;
  long sum_max_u;  /* sum of max u_i */
  long taken;      /* pages handed to threads */
  long remote;     /* ... of which another thread consumed first */
  long stolen;     /* ... of which taken from another thread's store */
  long stores_free;
};
extern struct page_counters page_counters;
extern enum page_policy page_policy;
extern double page_policy_k;

void page_policy_init(void);
/* A free page for small objects of thread T, by the policy; NULL when the
 * heap is exhausted.  May collect or grow the heap. */
struct page_header *small_page_take(struct sgc_thread *t);
/* An emptied small page goes back by the policy. */
void small_page_release(struct page_header *page);
/* T's refill found PAGE empty while sweeping and uses it at once. */
void small_page_adopt(struct sgc_thread *t, struct page_header *page);
/* The number of small pages with survivors, counted after marking. */
void page_policy_after_mark(long live_pages);
/* A thread leaves: its free pages go to the pool. */
void page_store_retire(struct sgc_thread *t);
/* After fork: the stores of threads that do not exist here retire. */
void page_stores_after_fork(struct page_store *keep);
/* Heap exhausted for a large object: every store's pages go to the pool. */
bool page_stores_drain(void);

#endif
