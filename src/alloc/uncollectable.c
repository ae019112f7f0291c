/* Uncollectable objects: allocated rarely, so they go through heap_lock
 * with one free list per kind and size class.  Their mark bit is set from
 * allocation until GC_free and never cleared by a collection, so every
 * such object is both live and a root (collect/roots push them). */
#include <string.h>

#include "alloc/alloc.h"
#include "collect/collect.h"
#include "common.h"

static void *free_lists[2][SIZE_CLASS_COUNT]; /* [kind - KIND_UNCOLLECTABLE] */

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

void *uncollectable_allocate(size_t bytes, unsigned kind) {
  if (bytes > MAX_SMALL_BYTES) return large_allocate(bytes, kind);
  unsigned cls = size_class_for_bytes(bytes);
  struct page_header *fresh;
  heap_lock_take(sgc_self);
  void *p = locked_list_pop(&free_lists[kind - KIND_UNCOLLECTABLE][cls], kind, cls, &fresh);
  if (!p) {
    pthread_mutex_unlock(&heap_lock);
    return sgc_out_of_memory(bytes);
  }
  struct page_header *page = page_of_address((uintptr_t)p);
  mark_bit_set(page, (uintptr_t)p);
  account_allocation(size_class_bytes[cls]);
  pthread_mutex_unlock(&heap_lock);
  collect_after_unlock();
  return p;
}

void uncollectable_free(struct page_header *page, void *obj) {
  heap_lock_take(sgc_self);
  free_count_bytes(sgc_self, object_size(page));
  if (page->state == PAGE_LARGE_HEAD) {
    large_free(page);
  } else {
    size_t size = (size_t)page->object_granules << GRANULE_SHIFT;
    if (!mark_bit_test(page, (uintptr_t)obj)) {
      pthread_mutex_unlock(&heap_lock);
      sgc_fatal("GC_free(%p): uncollectable object freed twice", obj);
    }
    mark_bit_clear(page, (uintptr_t)obj);
    if (page->kind == KIND_UNCOLLECTABLE) memset(obj, 0, size);
    void **list = &free_lists[page->kind - KIND_UNCOLLECTABLE][page->size_class];
    *(void **)obj = *list;
    *list = obj;
  }
  pthread_mutex_unlock(&heap_lock);
}
