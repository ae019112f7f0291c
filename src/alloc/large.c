/* Large objects: more than MAX_SMALL_BYTES, a run of whole pages whose
 * first page header describes the object.  Allocated and freed under
 * heap_lock; the page map sends pointers into any of its pages to the
 * head (interior pointers). */
#include <string.h>

#include "alloc/alloc.h"
#include "collect/collect.h"
#include "common.h"

void *large_allocate(size_t bytes, unsigned kind) {
  if (bytes > ((size_t)1 << ADDRESS_BITS)) return sgc_out_of_memory(bytes);
  size_t rounded = (bytes + GRANULE_BYTES - 1) & ~(size_t)(GRANULE_BYTES - 1);
  size_t pages = (rounded + PAGE_BYTES - 1) >> PAGE_SHIFT;
  if (sgc_settings.max_heap_bytes && (pages << PAGE_SHIFT) > sgc_settings.max_heap_bytes)
    return sgc_out_of_memory(bytes);
  struct sgc_thread *t = thread_self_or_register();
  heap_lock_take(t);
  if (collect_torture_turn(t)) collect_locked(SGC_REASON_TORTURE);
  struct page_header *head = page_acquire(pages);
  if (!head) {
    pthread_mutex_unlock(&heap_lock);
    return sgc_out_of_memory(bytes);
  }
  /* Cleared outside heap_lock, so other threads' slow paths do not wait
   * for a big memset.  Until the caller holds the pointer, in_flight is a
   * root: a collection meanwhile must not free the object.  It may then
   * find the pages' previous contents: harmless for sgc's own kinds, but
   * a kind the program made reads its descriptor, or runs its mark
   * procedure, from them -- a typed object's stale last word was once
   * read as a procedure descriptor and sgc called a null procedure.  So
   * `clearing` tells the marker the object holds nothing yet
   * (mark/custom_kind.c): released after the memset, read with the world
   * stopped. */
  bool clear = !page_span_is_zeroed(head, pages) && kind != KIND_ATOMIC &&
               kind != KIND_ATOMIC_UNCOLLECTABLE;
  for (size_t i = 1; i < pages; i++) {
    head[i].head_offset = (uint32_t)i;
    head[i].flags |= PAGE_DIRTY;
    atomic_store_explicit(&head[i].state, PAGE_LARGE_TAIL, memory_order_relaxed);
  }
  head->flags |= PAGE_DIRTY;
  head->kind = (uint8_t)kind;
  head->span_pages = (uint32_t)pages;
  head->head_offset = 0;
  head->object_bytes = rounded;
  head->next = head->prev = NULL;
  page_clear_marks(head);
  if (kind == KIND_UNCOLLECTABLE || kind == KIND_ATOMIC_UNCOLLECTABLE)
    mark_bit_set(head, head->start);
  account_allocation(pages << PAGE_SHIFT);
  heap_accounting.large_allocations++;
  atomic_store_explicit(&head->clearing, clear, memory_order_relaxed);
  atomic_store_explicit(&head->state, PAGE_LARGE_HEAD, memory_order_release);
  void *obj = (void *)head->start;
  t->in_flight = obj;
  pthread_mutex_unlock(&heap_lock);
  if (clear) {
    memset(obj, 0, rounded);
    atomic_store_explicit(&head->clearing, 0, memory_order_release);
  }
  collect_after_unlock();
  atomic_signal_fence(memory_order_seq_cst);
  t->in_flight = NULL;
  return obj;
}

/* heap_lock held. */
void large_free(struct page_header *head) {
  page_pool_put(head, head->span_pages); /* which clears the marks */
}
