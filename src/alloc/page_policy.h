/* Free-page policies of thesis ch. 2: PS (one shared free-page list), AL
 * (every thread keeps the pages it freed), LPS(k) (thread-local lists,
 * with pages stolen from other threads once heap_expansion_allowed() says
 * no).  The decision functions are pure, so the allocator and the
 * trace-replay test (tests/unit/test_page_policy.c) run the same code. */
#ifndef SGC_PAGE_POLICY_H
#define SGC_PAGE_POLICY_H

#include <stdbool.h>

enum page_policy { PAGE_POLICY_PS = 0, PAGE_POLICY_AL = 1, PAGE_POLICY_LPS = 2 };

/* Where a thread that needs a free page takes it from. */
enum page_source {
  PAGE_FROM_SHARED, /* PS: the shared free-page list (fresh pages when empty) */
  PAGE_FROM_OWN,    /* its own free-page list */
  PAGE_FROM_FRESH,  /* new pages: consumption a grows */
  PAGE_FROM_STEAL,  /* another thread's free-page list */
};

/* The counters heap_expansion_allowed() reads (thesis §2.2.4), in pages. */
struct page_policy_view {
  enum page_policy policy;
  double k;        /* allowable consumption ratio, 1 <= k <= threads */
  long a;          /* pages consumed (taken from the OS) */
  long max_l;      /* max pages holding objects that survived a collection */
  long sum_max_u;  /* sum over threads of max u_i */
};

/* LPS: new pages only while a < k * max(l) and a < sum(max u_i). */
static inline bool heap_expansion_allowed(const struct page_policy_view *v) {
  return (double)v->a < v->k * (double)v->max_l && v->a < v->sum_max_u;
}

/* The source of thread i's next page: OWN_FREE says whether its list has
 * pages, OTHERS_FREE whether any other thread's has (for PS both mean the
 * shared list). */
static inline enum page_source page_policy_choose(const struct page_policy_view *v, bool own_free,
                                                  bool others_free) {
  switch (v->policy) {
  case PAGE_POLICY_PS: return own_free || others_free ? PAGE_FROM_SHARED : PAGE_FROM_FRESH;
  case PAGE_POLICY_AL: return own_free ? PAGE_FROM_OWN : PAGE_FROM_FRESH;
  case PAGE_POLICY_LPS:
  default:
    if (own_free) return PAGE_FROM_OWN;
    if (!heap_expansion_allowed(v) && others_free) return PAGE_FROM_STEAL;
    return PAGE_FROM_FRESH;
  }
}

/* Whether an emptied page goes back to its owner (AL, LPS) or to the
 * shared list (PS). */
static inline bool page_policy_returns_to_owner(enum page_policy p) { return p != PAGE_POLICY_PS; }

#endif
