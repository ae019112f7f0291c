/* The free-page pool: runs of free pages ("spans") kept in size buckets,
 * coalesced with their free neighbours when returned, so large objects
 * find contiguous pages.  All calls hold heap_lock. */
#include <string.h>

#include "common.h"
#include "heap/heap.h"
#include "os/os.h"

enum { EXACT_BUCKETS = 64 };

/* buckets[n] holds spans of exactly n pages for n < EXACT_BUCKETS;
 * buckets[0] holds the longer ones. */
static struct page_header *buckets[EXACT_BUCKETS];
static size_t free_pages;
static size_t released_pages; /* free pages whose memory the OS took back */
/* Free pages written since the OS gave them (PAGE_DIRTY): what releasing
 * can give back.  Fresh pages of a new chunk are free but not dirty. */
static size_t dirty_free_pages;

size_t page_pool_free_pages(void) { return free_pages; }

/* Collections counted (page_pool_count_collection): a span's freed_at is the
 * count when a page of it was last freed (merging starts the span's age
 * again, as bdwgc's GC_freehblk does), and a split keeps it. */
static uint32_t pool_collections;

void page_pool_for_each_span(void (*visit)(struct page_header *head, size_t pages, void *arg),
                             void *arg) {
  for (unsigned b = 0; b < EXACT_BUCKETS; b++)
    for (struct page_header *s = buckets[b]; s; s = s->next) visit(s, s->span_pages, arg);
}

static unsigned bucket_of(size_t pages) { return pages < EXACT_BUCKETS ? (unsigned)pages : 0; }

/* A span head is on its bucket's list: inner pages of a span may keep a
 * stale span_pages from before a merge, so the fields alone do not say. */
bool page_pool_is_span_head(const struct page_header *p) {
  return atomic_load_explicit(&p->state, memory_order_relaxed) == PAGE_FREE && p->span_pages &&
         p->head_offset == 0 &&
         (p->next || p->prev || buckets[bucket_of(p->span_pages)] == p);
}

/* HEAD's start is written; its tail's is set here. */
static void span_link(struct page_header *head, size_t pages) {
  head->span_pages = (uint32_t)pages;
  head->head_offset = 0;
  atomic_store_explicit(&head->state, PAGE_FREE, memory_order_relaxed);
  if (pages > 1) {
    struct page_header *tail = head + pages - 1;
    atomic_store_explicit(&tail->state, PAGE_FREE, memory_order_relaxed);
    tail->head_offset = (uint32_t)(pages - 1);
    tail->span_pages = 0;
    tail->start = head->start + ((pages - 1) << PAGE_SHIFT);
  }
  unsigned b = bucket_of(pages);
  head->prev = NULL;
  head->next = buckets[b];
  if (buckets[b]) buckets[b]->prev = head;
  buckets[b] = head;
  free_pages += pages;
}

static void span_unlink(struct page_header *head) {
  unsigned b = bucket_of(head->span_pages);
  if (head->prev) head->prev->next = head->next;
  else buckets[b] = head->next;
  if (head->next) head->next->prev = head->prev;
  head->next = head->prev = NULL;
  free_pages -= head->span_pages;
}

void page_pool_add_chunk(struct chunk *c) {
  c->pages[0].start = c->base;
  c->pages[0].freed_at = pool_collections;
  span_link(&c->pages[0], c->page_count);
}

/* Links the free run FIRST..FIRST+PAGES-1 (FIRST's start written) as a
 * span, joined with the free span that ends at PREV, the page before it
 * in the same chunk (NULL: none), when there is one. */
static void link_joined(struct page_header *first, size_t pages, struct page_header *prev) {
  if (prev && atomic_load_explicit(&prev->state, memory_order_relaxed) == PAGE_FREE) {
    struct page_header *head = prev - prev->head_offset;
    if (page_pool_is_span_head(head) && head->span_pages == (size_t)(prev - head) + 1) {
      size_t n = head->span_pages;
      span_unlink(head);
      first->span_pages = 0;
      first = head;
      pages += n;
    }
  }
  first->freed_at = pool_collections;
  span_link(first, pages);
}

/* The new pages join a free span ending at the old end, as page_pool_put
 * joins a freed run with the span before it. */
void page_pool_add_grown(struct chunk *c, size_t from) {
  struct page_header *first = &c->pages[from];
  first->start = c->base + (from << PAGE_SHIFT);
  link_joined(first, c->page_count - from, from ? first - 1 : NULL);
}

/* Takes the first PAGES pages of SPAN (a free span head of at least that
 * many), relinking the rest as a span of its own, unclaimed.  Pages from
 * address LAZY_AT on whose headers are untouched stay so (heap.h,
 * large_lazy_at). */
static struct page_header *span_take_head(struct page_header *span, size_t pages, uintptr_t lazy_at) {
  size_t have = span->span_pages;
  span_unlink(span);
  if (have > pages) {
    span[pages].start = span->start + (pages << PAGE_SHIFT);
    span[pages].owner_store = NULL;
    span[pages].freed_at = span->freed_at;
    span_link(span + pages, have - pages);
  }
  span->span_pages = (uint32_t)pages;
  /* Released pages come back on first touch, zeroed by the kernel.  Taken
   * pages stop being PAGE_FREE here, under heap_lock: a store's run
   * cursor (page_pool_take_run) may name a page another thread has just
   * taken, and must see that before it reads the fields the new owner is
   * writing outside the lock.  The owner sets the state it needs. */
  size_t lazy_from = lazy_at == UINTPTR_MAX ? pages
                     : lazy_at <= span->start ? 0 /* pages added to an object past its mark */
                                              : (lazy_at - span->start) >> PAGE_SHIFT;
  for (size_t i = 0; i < pages; i++) {
    if (i >= lazy_from && page_header_untouched(&span[i])) continue;
    atomic_store_explicit(&span[i].state, PAGE_RESERVED, memory_order_relaxed);
    span[i].start = span->start + (i << PAGE_SHIFT);
    span[i].owner_store = NULL; /* a claim (below) ends with the span */
    if (span[i].flags & PAGE_DIRTY) dirty_free_pages--;
    if (span[i].flags & PAGE_RELEASED) {
      span[i].flags &= (uint8_t)~PAGE_RELEASED;
      released_pages--;
    }
  }
  return span;
}

/* The smallest span of at least PAGES pages (the exact buckets first,
 * then best fit among the long spans, which keeps big holes for big
 * objects) that SKIP does not rule out; NULL when there is none. */
static struct page_header *span_find(size_t pages, bool (*skip)(const struct page_header *, const struct page_store *),
                                     const struct page_store *claimant) {
  for (size_t n = pages; n < EXACT_BUCKETS; n++)
    for (struct page_header *s = buckets[n]; s; s = s->next)
      if (!skip || !skip(s, claimant)) return s;
  struct page_header *span = NULL;
  for (struct page_header *s = buckets[0]; s; s = s->next)
    if (s->span_pages >= pages && (!span || s->span_pages < span->span_pages) &&
        (!skip || !skip(s, claimant)))
      span = s;
  return span;
}

struct page_header *page_pool_take_at(struct page_header *span, size_t pages, uintptr_t lazy_at) {
  if (!page_pool_is_span_head(span) || span->span_pages < pages) return NULL;
  return span_take_head(span, pages, lazy_at);
}

static void keep_largest(struct page_header *head, size_t pages, void *largest) {
  struct page_header **best = largest;
  if (!*best || pages > (*best)->span_pages) *best = head;
}

struct page_header *page_pool_take_largest(size_t pages) {
  struct page_header *largest = NULL;
  page_pool_for_each_span(keep_largest, &largest);
  return largest && largest->span_pages >= pages
             ? span_take_head(largest, pages, large_lazy_at(largest->start, pages))
             : NULL;
}

struct page_header *page_pool_take(size_t pages) {
  struct page_header *span = span_find(pages, NULL, NULL);
  return span ? span_take_head(span, pages, large_lazy_at(span->start, pages)) : NULL;
}

/* Fresh pages in runs (thesis §2.2's free-page path; the layout is
 * sgc's).  Two threads taking fresh pages from one span took its next
 * pages in turn, 8 at a time, so each thread's objects lay in 32 KiB runs
 * alternating with the other's.  Threads working on neighbouring pages
 * cost more than on pages apart (tools/dev/page_interleave.c: alternating
 * single pages doubled the time, 8-page runs cost 1.16x), likely through
 * the prefetchers that fetch across a page boundary.  Alone this gained
 * little (1.025x at 2 threads, history.md "Batch swapping, and fresh
 * pages in runs"), because steals kept mixing the threads' pages; with
 * steals that no longer beget steals (alloc/batches.c, "Lent batches")
 * it is worth 2-6% at 2 threads on the Intel VM, while the 16-CPU
 * machine's rounds were too noisy to tell (history.md, "Steals that
 * beget steals").
 *
 * So a page store takes fresh pages from a span it claims: its cursor is
 * the page after its last fresh one, and while that page heads a free
 * span the next page comes from there, the rest of the span staying
 * claimed (a free span head's owner_store names the claimant; the field
 * has no other use there).  A store with no span of its own takes an
 * unclaimed one, smallest first like page_pool_take; only when every span
 * is another store's does it cut the largest in two and claim the upper
 * half.  Nothing is held back: a claimed span stays in the pool, and every
 * other take uses it as any span. */
enum { RUN_CUT_MIN_PAGES = 16 };

static bool claimed_by_other(const struct page_header *s, const struct page_store *claimant) {
  return s->owner_store && s->owner_store != claimant;
}

/* Splits the free span HEAD at OFFSET pages (0 < OFFSET < its length) and
 * returns the upper span's head; the lower keeps HEAD and its claim. */
static struct page_header *span_cut(struct page_header *head, size_t offset) {
  size_t have = head->span_pages;
  span_unlink(head);
  span_link(head, offset);
  struct page_header *upper = head + offset;
  upper->start = head->start + (offset << PAGE_SHIFT);
  upper->owner_store = NULL;
  upper->freed_at = head->freed_at;
  span_link(upper, have - offset);
  return upper;
}

struct page_header *page_pool_take_run(struct page_store *claimant, struct page_header **cursor) {
  struct page_header *span = *cursor;
  /* The cursor no longer heads a free span of this store's (taken, merged
   * away, or claimed by another): a new span. */
  if (!span || !page_pool_is_span_head(span) || claimed_by_other(span, claimant)) {
    span = span_find(1, claimed_by_other, claimant);
    if (!span) {
      struct page_header *largest = NULL;
      page_pool_for_each_span(keep_largest, &largest);
      if (!largest) return NULL;
      span = largest->span_pages >= RUN_CUT_MIN_PAGES
                 ? span_cut(largest, largest->span_pages / 2)
                 : largest;
    }
  }
  size_t have = span->span_pages;
  struct page_header *page = span_take_head(span, 1, UINTPTR_MAX);
  *cursor = have > 1 ? page + 1 : NULL;
  if (have > 1) page[1].owner_store = claimant;
  return page;
}

/* Neighbours are found through the page map, which also tells whether the
 * neighbouring page belongs to the same chunk. */
void page_pool_put(struct page_header *first, size_t pages) {
  for (size_t i = 0; i < pages; i++) {
    if (page_header_untouched(&first[i])) continue; /* free, clean and unmarked as it is */
    if (first[i].flags & PAGE_RELEASED) released_pages--; /* not expected: in use pages */
    first[i].flags = (uint8_t)((first[i].flags & ~PAGE_RELEASED) | PAGE_DIRTY);
    dirty_free_pages++;
    atomic_store_explicit(&first[i].state, PAGE_FREE, memory_order_relaxed);
    first[i].next = first[i].prev = NULL;
    first[i].owner_store = NULL;
    /* Pages in the pool keep no marks: the start of a collection skips
     * free spans (mark_begin), and a page leaves the pool unmarked. */
    page_clear_marks(&first[i]);
  }
  /* Merge with the span after. */
  uintptr_t after = first->start + (pages << PAGE_SHIFT);
  struct page_header *next = page_of_address(after);
  if (next && next == first + pages && page_pool_is_span_head(next)) {
    size_t n = next->span_pages;
    span_unlink(next);
    next->span_pages = 0;
    pages += n;
  }
  /* Merge with the span before. */
  struct page_header *prev = NULL;
  if (first->start >= PAGE_BYTES) prev = page_of_address(first->start - PAGE_BYTES);
  link_joined(first, pages, prev == first - 1 ? prev : NULL);
}

bool page_span_is_zeroed(struct page_header *first, size_t pages) {
  for (size_t i = 0; i < pages; i++)
    if (first[i].flags & PAGE_DIRTY) return false;
  return true;
}

size_t page_pool_released_bytes(void) { return released_pages << PAGE_SHIFT; }

/* bdwgc unmaps long-free blocks too (GC_unmap_threshold); sgc keeps the
 * address range and drops the memory (MADV_DONTNEED), so a span needs no
 * remapping when it is used again, and reads as zero: no memset then.
 * Spans younger than MIN_AGE collections stay. */
static size_t release_spans(size_t min_pages, uint32_t min_age) {
  size_t released = 0;
  /* Nothing left to give back: skip the walk over every free page, which
   * on a large, mostly free heap cost each collection 0.8 ms a GiB. */
  if (dirty_free_pages < min_pages) return 0;
  for (unsigned b = 0; b < EXACT_BUCKETS; b++) {
    if (b && b < min_pages) continue;
    for (struct page_header *s = buckets[b]; s; s = s->next) {
      if (s->span_pages < min_pages || pool_collections - s->freed_at < min_age) continue;
      /* Only dirty pages' headers are written: a clean page's (fresh from
       * the OS, never used) may not be resident, and reading it is free. */
      size_t n = 0;
      for (size_t i = 0; i < s->span_pages; i++) n += (s[i].flags & PAGE_DIRTY) != 0;
      if (!n) continue;
      /* Refused (mlockall, say), the pages keep their contents: they stay
       * dirty, or the next allocation would skip clearing them. */
      if (!os_decommit((void *)s->start, (size_t)s->span_pages << PAGE_SHIFT)) continue;
      for (size_t i = 0; i < s->span_pages; i++)
        if (s[i].flags & PAGE_DIRTY) s[i].flags = (uint8_t)((s[i].flags & ~PAGE_DIRTY) | PAGE_RELEASED);
      released_pages += n;
      dirty_free_pages -= n;
      released += n << PAGE_SHIFT;
    }
  }
  return released;
}

size_t page_pool_release(size_t min_pages) { return release_spans(min_pages, 0); }

/* bdwgc 8.2 waits 6 collections (MUNMAP_THRESHOLD) before it unmaps a
 * free block.  Released at the first collection that found them free, a
 * buffer grown by realloc found its next size in pages the kernel had
 * taken back, and every copy faulted them in again: bench-shapes -s grow
 * (a buffer grown by eighths to 32 MiB, 20 times) took 2.26 s against
 * bdwgc's 0.45-0.58 s, most of it in page faults and the kernel's page
 * clearing (perf), and takes 0.65 s now. */
enum { POOL_RELEASE_AGE = 6 };

void page_pool_count_collection(void) { pool_collections++; }

size_t page_pool_release_old(size_t min_pages) {
  return release_spans(min_pages, POOL_RELEASE_AGE);
}
