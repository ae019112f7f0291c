/* Large objects: more than MAX_SMALL_BYTES, a run of whole pages whose
 * first page header describes the object.  Allocated and freed under
 * heap_lock; the page map sends pointers into any of its pages to the
 * head (interior pointers). */
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/collector.h"
#include "barrier/barrier.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "os/os.h"

/* Pages FROM..TO-1 of the object at HEAD become its tail: the page map
 * sends a pointer into any of them to HEAD (interior pointers).  Pages
 * the pool left with untouched headers (heap.h, large_lazy_at) stay so:
 * the page map's large_head finds HEAD for them. */
static void link_tail_pages(struct page_header *head, size_t from, size_t to) {
  pagemap_set_large_head(head->start + (from << PAGE_SHIFT), head->start + (to << PAGE_SHIFT), head);
  for (size_t i = from; i < to; i++) {
    if (page_header_untouched(&head[i])) continue;
    head[i].head_offset = (uint32_t)i;
    head[i].flags |= PAGE_DIRTY;
    atomic_store_explicit(&head[i].state, PAGE_LARGE_TAIL, memory_order_relaxed);
  }
}

/* A run of PAGES pages whose first page's address is a multiple of ALIGN
 * (a power of two above PAGE_BYTES): taken ALIGN/PAGE_BYTES - 1 pages
 * longer, and the pages before and after the aligned run go straight
 * back to the pool.  The object then starts at the aligned address, so
 * GC_base and GC_free take that pointer as they take any object's.
 * heap_lock held. */
static struct page_header *acquire_aligned(size_t pages, size_t align) {
  size_t spare = (align >> PAGE_SHIFT) - 1;
  struct page_header *run = page_acquire(pages + spare);
  if (!run) return NULL;
  uintptr_t aligned = (run->start + align - 1) & ~(uintptr_t)(align - 1);
  size_t lead = (aligned - run->start) >> PAGE_SHIFT;
  if (lead) page_pool_put(run, lead);
  if (spare > lead) page_pool_put(run + lead + pages, spare - lead);
  return run + lead;
}

/* A collection it runs scans this thread from the caller's frame up
 * (slow_path_cut, alloc/thread_alloc.h): below lie the last large
 * allocation's frames, which held the object the program dropped since. */
SGC_NOINLINE static void *allocate_pages(size_t bytes, unsigned kind, bool with_room,
                                         size_t align) {
  if (bytes > ((size_t)1 << ADDRESS_BITS) || align > ((size_t)1 << ADDRESS_BITS))
    return sgc_out_of_memory(bytes);
  size_t rounded = (bytes + GRANULE_BYTES - 1) & ~(size_t)(GRANULE_BYTES - 1);
  size_t pages = (rounded + PAGE_BYTES - 1) >> PAGE_SHIFT;
  if (sgc_settings.max_heap_bytes && (pages << PAGE_SHIFT) > sgc_settings.max_heap_bytes)
    return sgc_out_of_memory(bytes);
  struct thread_alloc *t = alloc_self_or_register();
  concurrent_assist(pages << PAGE_SHIFT); /* a cycle it finishes: collect_after_unlock below */
  uintptr_t outer = slow_path_cut(t);
  heap_lock_take(thread_of_alloc(t));
  if (collect_torture_turn(t)) collect_torture();
  struct page_header *head = with_room ? page_pool_take_largest(pages) : NULL;
  if (!head) head = align > PAGE_BYTES ? acquire_aligned(pages, align) : page_acquire(pages);
  slow_path_uncut(t, outer);
  if (!head) {
    pthread_mutex_unlock(&heap_lock);
    /* As on success: finalizers of a cycle the poll finished, or of the
     * collection page_acquire ran at the limit, before the program hears
     * of the failure. */
    collect_after_unlock();
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
  barrier_pages_formatted(head->start, head->start + (pages << PAGE_SHIFT));
  link_tail_pages(head, 1, pages);
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

void *large_allocate(size_t bytes, unsigned kind) {
  return allocate_pages(bytes, kind, false, PAGE_BYTES);
}

/* GC_memalign's alignments above a page (a power of two). */
void *large_allocate_aligned(size_t bytes, unsigned kind, size_t align) {
  return allocate_pages(bytes, kind, false, align);
}

/* An object GC_realloc moves to grow goes to the head of the longest
 * free span, not the shortest that fits (page_acquire's best fit, which
 * leaves it no room): its next growths then take the pages after it in
 * place (large_grow_in_place).  Nothing is reserved; the rest of the
 * span stays free for any use. */
void *large_allocate_to_grow(size_t bytes, unsigned kind) {
  return allocate_pages(bytes, kind, true, PAGE_BYTES);
}

/* The pages of HEAD's object whose headers are untouched, which may hold
 * what the program wrote, read as zero again: their memory goes back to
 * the OS, in runs.  Where the OS refuses, their headers are written (as
 * the pool's dirty pages) after all. */
static void lazy_pages_release(struct page_header *head) {
  size_t pages = head->span_pages;
  pagemap_set_large_head(head->start + PAGE_BYTES, head->start + (pages << PAGE_SHIFT), NULL);
  uintptr_t lazy_at = large_lazy_at(head->start, pages);
  if (lazy_at == UINTPTR_MAX) return;
  for (size_t i = (lazy_at - head->start) >> PAGE_SHIFT, run; i < pages; i += run) {
    run = 0;
    while (i + run < pages && page_header_untouched(&head[i + run])) run++;
    if (!run) {
      run = 1;
      continue;
    }
    uintptr_t from = head->start + (i << PAGE_SHIFT);
    if (os_decommit((void *)from, run << PAGE_SHIFT)) continue;
    for (size_t j = i; j < i + run; j++) {
      head[j].start = head->start + (j << PAGE_SHIFT);
      head[j].flags = PAGE_DIRTY;
    }
  }
}

/* heap_lock held. */
void large_free(struct page_header *head) {
  lazy_pages_release(head);
  page_pool_put(head, head->span_pages); /* which clears the marks */
}

/* GC_free of the large object OBJ at HEAD.  The wait for heap_lock may
 * outlast a collection, and meanwhile OBJ's address may be nowhere the
 * collection looks: the program's last pointer was the argument, and from
 * here on only HEAD, a page header outside the heap, is needed.  That
 * collection then freed the pages, and this free put them in the pool a
 * second time, whence two later objects got them (two threads freeing
 * 9000-byte objects: a kept object handed out again within seconds).  So
 * OBJ is in_flight, a root, until its pages are back; the previous value
 * is restored, for a free from a finalizer that runs while an allocation
 * of this thread holds its own object there. */
void large_free_explicit(void *obj, struct page_header *head) {
  struct thread_alloc *t = alloc_self_or_register();
  void *outer = t->in_flight;
  t->in_flight = obj;
  atomic_signal_fence(memory_order_seq_cst); /* before any stop can find it */
  heap_lock_take(thread_of_alloc(t));
  large_free(head);
  pthread_mutex_unlock(&heap_lock);
  atomic_signal_fence(memory_order_seq_cst);
  t->in_flight = outer;
}

/* GC_realloc growing HEAD's object (one of sgc's own kinds) to BYTES
 * where it lies: within its last page, or over the free pages right
 * after it when they head a free span long enough (the rest of the span
 * an object was cut from, most often).  No copy then: bdwgc, and sgc
 * before, copied every step of a buffer grown by eighths to 32 MiB
 * (bench-shapes -s grow: 5.5 GB copied, and a heap twice the buffer's
 * peak, as each copy needed a hole larger than the last).  The added
 * bytes are cleared for the scanned kinds, outside heap_lock; until then
 * a collection may scan stale words there, which only retains. */
bool large_grow_in_place(struct page_header *head, size_t bytes) {
  /* Rounding more up to granules would wrap (to 0, "grown" in place);
   * allocate_pages refuses such a size. */
  if (bytes > HEAP_BYTES_MAX) return false;
  size_t rounded = (bytes + GRANULE_BYTES - 1) & ~(size_t)(GRANULE_BYTES - 1);
  size_t pages = (rounded + PAGE_BYTES - 1) >> PAGE_SHIFT;
  struct thread_alloc *t = alloc_self_or_register();
  heap_lock_take(thread_of_alloc(t));
  size_t have = head->span_pages, old_bytes = head->object_bytes;
  bool grown = pages <= have, clear_new_pages = false;
  if (!grown) {
    /* The next page's header, if it is in the same chunk (the page map
     * gives that header only then). */
    struct page_header *next = head + have;
    if (page_of_address(head->start + (have << PAGE_SHIFT)) == next &&
        page_pool_take_at(next, pages - have, large_lazy_at(head->start, pages))) {
      clear_new_pages = !page_span_is_zeroed(next, pages - have);
      link_tail_pages(head, have, pages);
      head->span_pages = (uint32_t)pages;
      account_allocation((pages - have) << PAGE_SHIFT);
      grown = true;
    }
  }
  if (grown) head->object_bytes = rounded;
  pthread_mutex_unlock(&heap_lock);
  if (!grown) return false;
  if (head->kind == KIND_NORMAL || head->kind == KIND_UNCOLLECTABLE) {
    /* The gained bytes of the old last page always; the new pages only
     * when they are not fresh from the OS. */
    size_t to = clear_new_pages || rounded < (have << PAGE_SHIFT) ? rounded : have << PAGE_SHIFT;
    if (to > old_bytes) memset((char *)head->start + old_bytes, 0, to - old_bytes);
  }
  collect_after_unlock();
  return true;
}
