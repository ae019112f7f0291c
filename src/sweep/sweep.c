/* Sweeping small pages and large objects.  Unmarked objects of scanned
 * kinds are cleared here, so free-list objects hold zeros (the allocation
 * fast path only clears the link word) and a stray pointer to a free
 * object retains nothing. */
#include <string.h>

#include "alloc/alloc.h"
#include "collect/collect.h"
#include "common.h"
#include "heap/heap.h"
#include "sweep/sweep.h"

static struct page_header *unswept[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
static struct page_header *partial[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
static size_t partial_free_bytes;

/* Builds PAGE's free list from its unmarked objects.  Runs of dead objects
 * are cleared with one memset each, and a page with no mark at all is
 * cleared whole: far fewer calls than one per object. */
static void sweep_small_page(struct page_header *page) {
  size_t size = (size_t)page->object_granules << GRANULE_SHIFT;
  char *base = (char *)page->start;
  bool clear = page->kind == KIND_NORMAL;
  uint64_t any = 0;
  for (unsigned w = 0; w < MARK_WORDS_PER_PAGE; w++)
    any |= atomic_load_explicit(&page->mark_bits[w], memory_order_relaxed);
  void *head = NULL, **link = &head;
  unsigned live = 0, free_count = 0;
  if (!any) {
    if (clear) memset(base, 0, page->capacity * size);
    for (unsigned i = 0; i < page->capacity; i++) {
      *link = base + i * size;
      link = (void **)(base + i * size);
    }
    free_count = page->capacity;
  } else {
    char *run = NULL; /* first dead object of the current run */
    for (unsigned i = 0; i < page->capacity; i++) {
      char *obj = base + i * size;
      if (mark_bit_test(page, (uintptr_t)obj)) {
        live++;
        if (run && clear) memset(run, 0, (size_t)(obj - run));
        run = NULL;
        continue;
      }
      if (!run) run = obj;
      free_count++;
    }
    if (run && clear) memset(run, 0, (size_t)(base + page->capacity * size - run));
    for (unsigned i = 0; i < page->capacity; i++) {
      char *obj = base + i * size;
      if (mark_bit_test(page, (uintptr_t)obj)) continue;
      *link = obj;
      link = (void **)obj;
    }
  }
  *link = NULL;
  page->free_head = head;
  page->free_count = free_count;
  page->live_objects = live;
  page->swept_epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
}

static void *detach_list(struct page_header *page, unsigned *count, void **tail) {
  void *head = page->free_head;
  *count = page->free_count;
  void *last = head;
  while (*(void **)last) last = *(void **)last;
  *tail = last;
  page->free_head = NULL;
  page->free_count = 0;
  return head;
}

void *sweep_take_free_list(unsigned kind, unsigned cls, unsigned *count, void **tail) {
  struct page_header *page = partial[kind][cls];
  if (page) {
    partial[kind][cls] = page->next;
    page->next = NULL;
    partial_free_bytes -= (size_t)page->free_count * size_class_bytes[cls];
    return detach_list(page, count, tail);
  }
  while ((page = unswept[kind][cls]) != NULL) {
    unswept[kind][cls] = page->next;
    page->next = NULL;
    sweep_small_page(page);
    if (page->free_count) return detach_list(page, count, tail);
  }
  return NULL;
}

bool sweep_finish_all(void) {
  bool freed = false;
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      struct page_header *page;
      while ((page = unswept[k][c]) != NULL) {
        unswept[k][c] = page->next;
        page->next = NULL;
        sweep_small_page(page);
        if (page->live_objects == 0) {
          page->free_head = NULL;
          page->free_count = 0;
          page_pool_put(page, 1);
          freed = true;
        } else if (page->free_count) {
          page->next = partial[k][c];
          partial[k][c] = page;
          partial_free_bytes += (size_t)page->free_count * size_class_bytes[c];
        }
      }
    }
  return freed;
}

size_t sweep_free_bytes_estimate(void) { return partial_free_bytes; }

void sweep_after_mark(void) {
  memset(unswept, 0, sizeof unswept);
  memset(partial, 0, sizeof partial);
  partial_free_bytes = 0;
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0; i < c->page_count;) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      if (state == PAGE_SMALL && p->kind < KIND_THREAD_LOCAL_COUNT) {
        p->free_head = NULL;
        p->free_count = 0;
        p->next = unswept[p->kind][p->size_class];
        unswept[p->kind][p->size_class] = p;
        i++;
      } else if (state == PAGE_LARGE_HEAD) {
        size_t span = p->span_pages;
        if (p->kind < KIND_THREAD_LOCAL_COUNT && !mark_bit_test(p, p->start)) large_free(p);
        i += span;
      } else if (state == PAGE_FREE && p->span_pages && p->head_offset == 0) {
        i += p->span_pages;
      } else {
        i++;
      }
    }
  }
}
