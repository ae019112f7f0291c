/* For the white-box tests of the page path: take every free page out of
 * the shared pool, so that only threads' stores hold free pages, and give
 * them back afterwards.  Includes after sgc's internal headers. */
#ifndef SGC_POOL_HOLD_H
#define SGC_POOL_HOLD_H

enum { POOL_HOLD_SPANS = 4096 };

struct pool_hold {
  struct page_header *spans[POOL_HOLD_SPANS];
  size_t pages[POOL_HOLD_SPANS];
  unsigned count;
};

/* Takes the pool's pages in runs of 64 (single pages at the end); returns
 * the pages left in the pool, 0 unless HOLD filled up. */
static inline size_t pool_hold_all(struct pool_hold *hold) {
  hold->count = 0;
  pthread_mutex_lock(&heap_lock);
  while (hold->count < POOL_HOLD_SPANS && page_pool_free_pages()) {
    size_t n = page_pool_free_pages() < 64 ? 1 : 64;
    struct page_header *p = page_pool_take(n);
    if (!p) p = page_pool_take(n = 1);
    if (!p) break;
    hold->spans[hold->count] = p;
    hold->pages[hold->count++] = n;
  }
  size_t left = page_pool_free_pages();
  pthread_mutex_unlock(&heap_lock);
  return left;
}

static inline void pool_release_held(struct pool_hold *hold) {
  pthread_mutex_lock(&heap_lock);
  while (hold->count) {
    hold->count--;
    page_pool_put(hold->spans[hold->count], hold->pages[hold->count]);
  }
  pthread_mutex_unlock(&heap_lock);
}

#endif
