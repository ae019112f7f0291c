/* Black-listing: free pages that false pointers hit.
 *
 * A word a conservative scan finds that points into a free page keeps
 * nothing alive today, but it would keep whatever is placed there next:
 * a large object under it would be retained as long as the word stays
 * (a stale stack slot, an integer that looks like an address).  So the
 * marker notes such pages, on its miss path only, and the page pool hands
 * them out last: a window of pages for a new object is chosen clear of
 * them where the pool has one.  Notes age out: a page counts as
 * black-listed in the collection that hit it and until the end of the
 * next one (BLACKLIST_AGE), so a word that has gone stops costing space.
 * bdwgc has the same idea (its GC_add_to_black_list_*); this is sgc's
 * own, a stamp in the page header instead of separate bit tables. */
#ifndef SGC_HEAP_BLACKLIST_H
#define SGC_HEAP_BLACKLIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/heap.h"
#include "heap/heap_lock.h"

/* Collections a hit keeps its page black-listed: the one that found it,
 * and the next, which finds it again if the word is still there. */
enum { BLACKLIST_AGE = 2 };

/* Pages noted by the running (or latest) collection, and by the one
 * before: both zero, nothing is black-listed and the pool skips every
 * test.  Relaxed: a count for the allocator's shortcut and the stats,
 * read under heap_lock after the collection that wrote it. */
extern _Atomic uint64_t blacklist_noted_now, blacklist_noted_before;

/* SGC_BLACKLIST (default 1): 0 turns the notes off (mark/mark.c reads it). */
extern bool blacklist_enabled;

static inline bool blacklist_active(void) {
  return atomic_load_explicit(&blacklist_noted_now, memory_order_relaxed) +
             atomic_load_explicit(&blacklist_noted_before, memory_order_relaxed) !=
         0;
}

static inline bool page_blacklisted(const struct page_header *p) {
  uint32_t at = atomic_load_explicit(&p->blacklisted_at, memory_order_relaxed);
  return at && atomic_load_explicit(&gc_epoch, memory_order_relaxed) - at < BLACKLIST_AGE;
}

/* The marker's miss path: P, a free page (PAGE_FREE or PAGE_RESERVED), was
 * hit.  The exchange counts each page once even when GC threads race. */
static inline void blacklist_note(struct page_header *p) {
  uint32_t epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
  if (atomic_load_explicit(&p->blacklisted_at, memory_order_relaxed) == epoch) return;
  if (atomic_exchange_explicit(&p->blacklisted_at, epoch, memory_order_relaxed) != epoch)
    atomic_fetch_add_explicit(&blacklist_noted_now, 1, memory_order_relaxed);
}

/* At a collection's start (before marking): the counts move on. */
void blacklist_collection_start(void);

/* Page headers one placement may read looking for a clear window: the
 * search is bounded (a 1 GiB object would read 262,144 headers per span
 * it tries); past it the pool places the object as without
 * black-listing. */
enum { BLACKLIST_SEARCH_PAGES = 4096 };

/* The first offset O into the free span at HEAD (SPAN_PAGES long) such
 * that pages O..O+PAGES-1 hold no black-listed page -- only page O is
 * tested when WHOLE is false (no interior pointers: only a pointer to the
 * object's start keeps it) -- or SIZE_MAX when there is none or *BUDGET
 * (headers still to read) ran out. */
size_t blacklist_clear_offset(const struct page_header *head, size_t span_pages, size_t pages,
                              bool whole, size_t *budget);

#endif
