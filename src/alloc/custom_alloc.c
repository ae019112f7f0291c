/* Objects of the kinds a program makes with GC_new_kind
 * (mark/custom_kind.h).  Programs use them for few objects with
 * marking rules of their own -- Guile for its threads and weak tables --
 * so they go through heap_lock with one free list per kind and size
 * class, like uncollectable objects, and stay off the thread-local fast
 * path.  Their pages hang on one list per kind, which each collection
 * sweeps eagerly: the free lists are rebuilt from the mark bits, dead
 * objects are cleared, and emptied pages go back to the pool. */
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "collect/collect.h"
#include "common.h"
#include "mark/custom_kind.h"
#include "sweep/sweep.h"

static void *free_lists[CUSTOM_KIND_MAX][SIZE_CLASS_COUNT]; /* under heap_lock */
static struct page_header *kind_pages[CUSTOM_KIND_MAX];     /* linked by next */

void *custom_allocate(size_t bytes, unsigned kind) {
  if (bytes > MAX_SMALL_BYTES) return large_allocate(bytes, kind);
  unsigned cls = size_class_for_bytes(bytes), index = kind - KIND_COUNT;
  struct sgc_thread *t = thread_self_or_register();
  pthread_mutex_lock(&heap_lock);
  if (collect_torture_turn(t)) collect_locked(SGC_REASON_TORTURE);
  struct page_header *fresh;
  void *p = locked_list_pop(&free_lists[index][cls], kind, cls, &fresh);
  if (!p) {
    pthread_mutex_unlock(&heap_lock);
    return sgc_out_of_memory(bytes);
  }
  if (fresh) {
    fresh->next = kind_pages[index];
    kind_pages[index] = fresh;
  }
  /* The rest of P is zero: formatted, swept or freed so. */
  account_allocation(size_class_bytes[cls]);
  pthread_mutex_unlock(&heap_lock);
  collect_after_unlock();
  return p;
}

void custom_free(struct page_header *page, void *obj) {
  pthread_mutex_lock(&heap_lock);
  if (atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_LARGE_HEAD) {
    large_free(page);
  } else {
    memset(obj, 0, (size_t)page->object_granules << GRANULE_SHIFT);
    void **list = &free_lists[page->kind - KIND_COUNT][page->size_class];
    *(void **)obj = *list;
    *list = obj;
  }
  pthread_mutex_unlock(&heap_lock);
}

/* heap_lock held, marking done.  Objects on the free lists were not
 * marked (nothing points to them), so sweeping finds them again with the
 * other dead ones: the lists are dropped and rebuilt whole. */
void custom_kinds_sweep(void) {
  unsigned kinds = atomic_load_explicit(&custom_kind_count, memory_order_acquire);
  for (unsigned index = 0; index < kinds; index++) {
    memset(free_lists[index], 0, sizeof free_lists[index]);
    struct page_header *kept = NULL, *next;
    for (struct page_header *page = kind_pages[index]; page; page = next) {
      next = page->next;
      sweep_page(page);
      if (page->live_objects == 0) {
        page->next = NULL;
        small_page_release(page);
        continue;
      }
      page->next = kept;
      kept = page;
      unsigned count;
      void *tail, *head = sweep_detach(page, &count, &tail);
      if (!head) continue;
      void **list = &free_lists[index][page->size_class];
      *(void **)tail = *list;
      *list = head;
    }
    kind_pages[index] = kept;
  }
}
