/* The allocation slow path for small objects: refill a thread's free list
 * from swept pages of the same size class, or from a free page, collecting
 * or growing the heap when the policy says so (collect/trigger.c). */
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_path.h"
#include "alloc/percpu.h"
#include "alloc/page_store.h"
#include "alloc/collector.h"
#include "barrier/barrier.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "alloc/sweeper.h"

void *page_format_small(struct page_header *page, unsigned kind, unsigned cls,
                        unsigned *count, void **tail) {
  unsigned granules = size_class_bytes[cls] >> GRANULE_SHIFT;
  unsigned capacity = PAGE_BYTES / size_class_bytes[cls];
  barrier_pages_formatted(page->start, page->start + PAGE_BYTES);
  if (kind != KIND_ATOMIC && kind != KIND_ATOMIC_UNCOLLECTABLE && (page->flags & PAGE_DIRTY))
    memset((void *)page->start, 0, PAGE_BYTES);
  page->flags |= PAGE_DIRTY;
  page->kind = (uint8_t)kind;
  page->size_class = (uint8_t)cls;
  page->free_slot = kind < KIND_THREAD_LOCAL_COUNT ? (uint16_t)(kind * SIZE_CLASS_COUNT + cls)
                                                   : (uint16_t)FREE_SLOT_NONE;
  page->object_granules = (uint16_t)granules;
  page->capacity = (uint16_t)capacity;
  page->reciprocal = (65536 + granules - 1) / granules;
  page_set_start_test(page, granules << GRANULE_SHIFT);
  page->swept_epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
  page->live_objects = 0;
  page->span_pages = 1;
  page->head_offset = 0;
  page->free_head = NULL;
  page->free_count = 0;
  page->next = page->prev = NULL;
  page_clear_marks(page);
  /* Thread the list in address order: allocation then walks the page
   * sequentially, which the hardware prefetcher likes. */
  size_t size = size_class_bytes[cls];
  char *first = (char *)page->start;
  for (unsigned i = 0; i + 1 < capacity; i++) *(void **)(first + i * size) = first + (i + 1) * size;
  *(void **)(first + (capacity - 1) * size) = NULL;
  *tail = first + (capacity - 1) * size;
  *count = capacity;
  /* Publish the state last: a racing GC_base sees a complete header. */
  atomic_store_explicit(&page->state, PAGE_SMALL, memory_order_release);
  return first;
}

struct page_header *page_acquire(size_t pages) {
  bool collected = false;
  for (;;) {
    struct page_header *p = page_pool_take(pages);
    if (p) return p;
    /* Free memory may still sit in pages no refill has swept yet: use it
     * before deciding to collect, or the heap would be collected while
     * largely free (as bdwgc, which sweeps before collect-or-expand). */
    if (sweep_finish_all()) continue;
    if (collect_if_due(&collected)) continue;
    /* Free pages threads keep in their stores (AL, LPS) go back to the
     * pool before the heap grows: this path serves large, uncollectable
     * and custom-kind objects, which no store is for, and it would
     * otherwise grow the heap while most of it lies free.  (Guile's
     * compiler under LPS grew its heap to 28 MiB where PS kept 8: each of
     * its typed or large allocations found the pool empty and every freed
     * page in the allocating thread's store.) */
    if (page_stores_drain()) continue;
    if (grow_or_collect(pages << PAGE_SHIFT, &collected)) continue;
    return NULL;
  }
}

/* How many objects one refill gathers: a page's worth for small classes,
 * several pages for the big ones so they do not take heap_lock every
 * second allocation. */
static unsigned refill_target(unsigned cls) {
  unsigned per_page = PAGE_BYTES / size_class_bytes[cls];
  unsigned target = per_page >= 32 ? 32 : 4 * per_page < 32 ? 4 * per_page : 32;
  /* With many more threads than CPUs, a quarter: each thread then waits
   * far longer than it runs, and what its lists hold meanwhile is memory
   * no one uses (and a walk at every collection).  2,000 threads on 2
   * CPUs kept 50-80 MB in their lists; with a quarter, peak RSS 0.824 of
   * before (bench-shapes -s threads) and 0.803 (bench-bursty, 200
   * threads), wall time 1.001 and 0.957, alloc -t 32 throughput 1.005
   * (-m free) and 1.056 (-m drop), gcbench -t 32 wall 0.994 (tools/dev/ab.sh,
   * 3-7 paired runs, AMD VM; history.md). */
  if ((unsigned)thread_registry_count() > 8 * sgc_settings.usable_cpus)
    target = target >= 4 ? target / 4 : 1;
  return target;
}

static void *tail_of(void *list) {
  while (*(void **)list) list = *(void **)list;
  return list;
}

/* Per-CPU caches: LIST's first object is the caller's, the rest goes to
 * this CPU's slot (BYTES of them), sidelined into the shared batches
 * under heap_lock (LOCKED) or into T's own on the page path. */
static void *install_on_cpu(struct thread_alloc *t, unsigned kind, unsigned cls, void *list,
                            size_t bytes, bool locked) {
  void *rest = *(void **)list;
  *(void **)list = NULL;
  if (rest) percpu_install(kind, cls, rest, bytes, locked ? NULL : t);
  return list;
}

/* Flip mode switched to per-CPU caches: T's own list of (KIND, CLS), if
 * any, detached to move into its CPU's cache (only its owner may detach
 * it). */
static void *own_list_for_cpu(struct thread_alloc *t, unsigned kind, unsigned cls) {
  void *list = t->free_lists[kind][cls];
  t->free_lists[kind][cls] = NULL;
  return list;
}

/* Installs BATCH, a free list of (KIND, CLS) objects already counted
 * when first allocated, for T and returns its first object; under
 * heap_lock (LOCKED) or on the page path. */
static void *install_batch(struct thread_alloc *t, unsigned kind, unsigned cls, void *batch,
                           bool locked) {
  if (percpu_enabled) return install_on_cpu(t, kind, cls, batch, 0, locked);
  /* The caller's list is empty (that is why it is here) unless a
   * finalizer refilled it; only then is the batch's tail needed. */
  if (t->free_lists[kind][cls]) *(void **)tail_of(batch) = t->free_lists[kind][cls];
  atomic_signal_fence(memory_order_seq_cst);
  t->free_lists[kind][cls] = *(void **)batch;
  atomic_signal_fence(memory_order_seq_cst);
  *(void **)batch = NULL;
  return batch;
}

/* Puts the list HEAD..TAIL of HAVE objects on T's free list (per-thread
 * caches) and returns the first object.  Objects already on the list (a
 * finalizer may have refilled it) go behind the new ones. */
static void *install_list(struct thread_alloc *t, unsigned kind, unsigned cls, void *head,
                          void *tail) {
  *(void **)tail = t->free_lists[kind][cls];
  atomic_signal_fence(memory_order_seq_cst);
  t->free_lists[kind][cls] = *(void **)head;
  atomic_signal_fence(memory_order_seq_cst);
  *(void **)head = NULL;
  return head;
}

/* Appends LIST..LIST_TAIL (N objects) to the list HEAD..TAIL being
 * gathered for a refill. */
static void gather(void **head, void **tail, unsigned *have, void *list, void *list_tail,
                   unsigned n) {
  if (*tail) *(void **)*tail = list;
  else *head = list;
  *tail = list_tail;
  *have += n;
}

/* PAGE, just swept by T's refill: its free list (with *N and *TAIL), or
 * NULL when it has no free object (it then leaves the sweep lists).  An
 * emptied page becomes T's, formatted afresh (the sweep left it as it
 * was: sweep_page). */
static void *claim_swept(struct thread_alloc *t, struct page_header *page, unsigned *n,
                         void **tail) {
  if (!page->free_count) return NULL;
  if (page->live_objects == 0) {
    small_page_adopt(t, page);
    return page_format_small(page, page->kind, page->size_class, n, tail);
  }
  return sweep_detach(page, n, tail);
}

/* BYTES newly handed out (0 for a batch: counted when first allocated)
 * by a refill outside heap_lock, added to the shared counts in steps. */
static void count_unlocked_refill(struct thread_alloc *t, size_t bytes) {
  t->unlocked_refills++;
  /* Only the owner writes its count; a slow path of another thread reads
   * it (collect_should_run): relaxed stores, no read-modify-write. */
  size_t pending = t->unlocked_bytes + bytes;
  if (pending >= unlocked_flush_step() || t->unlocked_refills >= 64) {
    atomic_fetch_add_explicit(&allocated_unlocked, pending, memory_order_relaxed);
    atomic_fetch_add_explicit(&refills_unlocked, t->unlocked_refills, memory_order_relaxed);
    pending = 0;
    t->unlocked_refills = 0;
  }
  __atomic_store_n(&t->unlocked_bytes, pending, __ATOMIC_RELAXED);
}

/* The page path without heap_lock (alloc/page_path.h): T's own batches,
 * then swept and unswept pages of the class, then a page from T's own
 * store -- each under its own small lock -- inside the gate that keeps
 * collections out.  NULL when none of them has anything, or the gate is
 * closed: the caller takes the heap_lock path, which can also steal, take
 * fresh pages, grow the heap and collect.  Torture mode's collecting
 * refills always take that path.
 *
 * Per-CPU caches refill here too, into the CPU's slot.  They once always
 * took heap_lock: with 2,000 threads on 2 CPUs (bench-shapes -s threads)
 * nearly every refill then waited for it, behind holders the scheduler
 * had preempted, and the run took 1.5 times as long as with per-thread
 * caches (history.md, "Per-CPU refills without heap_lock"). */
static void *refill_unlocked(struct thread_alloc *t, unsigned kind, unsigned cls) {
  if (!t->page_store) return NULL;
  if (!page_path_enter(t)) return NULL;
  /* Read inside the gate: flip mode changes it in collections. */
  bool on_cpu = percpu_enabled;
  void *batch = batch_pop_own(t, kind, cls);
  if (!batch && on_cpu) batch = own_list_for_cpu(t, kind, cls);
  if (batch) {
    void *first = install_batch(t, kind, cls, batch, false);
    count_unlocked_refill(t, 0);
    page_path_exit(t);
    return first;
  }
  void *head = NULL, *tail = NULL;
  unsigned have = 0, target = refill_target(cls);
  while (have < target) {
    unsigned n = 0;
    void *ptail = NULL;
    void *list = sweep_take_partial(kind, cls, &n, &ptail);
    if (!list) {
      struct page_header *page = sweep_pop_unswept(t, kind, cls);
      if (page) {
        sweep_page(page);
        if (!(list = claim_swept(t, page, &n, &ptail))) continue;
      } else {
        if (have) break;
        page = small_page_take_own(t);
        if (!page) break;
        list = page_format_small(page, kind, cls, &n, &ptail);
      }
    }
    gather(&head, &tail, &have, list, ptail, n);
  }
  if (head) {
    size_t bytes = size_class_bytes[cls];
    count_unlocked_refill(t, (size_t)have * bytes);
    if (on_cpu) install_on_cpu(t, kind, cls, head, (size_t)(have - 1) * bytes, false);
    else install_list(t, kind, cls, head, tail);
    batch_lent_repaid(t, kind, cls, have);
  }
  page_path_exit(t);
  return head;
}

static void *refill_and_allocate_inner(struct thread_alloc *t, unsigned kind, unsigned cls,
                                       bool *finish);

/* How often and how much of the dead stack below it the slow path
 * zeroes: a refill takes a page's worth of objects, so 2 KiB every 8th
 * refill stays well under its cost; after a collection (by any thread:
 * the count moved), whose frames ran deep here, 16 KiB. */
enum { STACK_CLEAR_REFILLS = 8, REFILL_STACK_CLEAR = 2 << 10, COLLECTION_STACK_CLEAR = 16 << 10 };

/* The small-object slow path, as seen by a collection it runs: below the
 * stack pointer this records, the thread's stack holds only this path's
 * frames (its own, the page policy's, the collection's), so the
 * collection scans this thread from here up (collect.c).  Those frames keep stale words from
 * earlier refills -- the first and last objects of lists gathered then,
 * long since handed out -- and a collection run from here found them
 * live: one such word kept a whole 5 MiB list of `unfair -m drop` alive,
 * its heap 28 MiB where 8 do.  Nothing there is needed: the path
 * collects only before it has gathered or taken an object.  (Other
 * threads are scanned whole: one stopped here may hold the object it is
 * about to return, on no free list.)  __builtin_unwind_init puts the caller's
 * callee-saved registers in this frame, above the recorded pointer, so
 * they are still scanned.  The program's code that a refill may run --
 * finalizers, the out-of-memory function -- runs after the pointer is
 * restored, so its frames are scanned like any other. */
SGC_NOINLINE void *refill_and_allocate(struct thread_alloc *t, unsigned kind, unsigned cls) {
  uintptr_t outer = slow_path_cut(t);
  uint64_t gc_before = atomic_load_explicit(&heap_accounting.gc_count, memory_order_relaxed);
  page_store_note_active(t);
  /* A cycle finished here has its finalizers run below, after the cut. */
  bool finish = concurrent_assist((size_t)size_class_bytes[cls] * refill_target(cls));
  void *first = refill_and_allocate_inner(t, kind, cls, &finish);
  /* Every object this path hands out, from a page, a batch or a CPU's
   * list, may carry GC_free's tag (alloc.h); the link is cleared. */
  if (first) ((void **)first)[1] = NULL;
  slow_path_uncut(t, outer);
  /* This path's frames, and a collection's it ran, leave list heads and
   * other stale words below; zeroed now and then (threads/stack_clear.c). */
  bool collected =
      atomic_load_explicit(&heap_accounting.gc_count, memory_order_relaxed) != gc_before;
  if (collected || ++t->refills_since_stack_clear >= STACK_CLEAR_REFILLS) {
    t->refills_since_stack_clear = 0;
    thread_stack_clear_dead(thread_of_alloc(t), collected ? COLLECTION_STACK_CLEAR : REFILL_STACK_CLEAR);
  }
  if (finish) {
    collect_after_unlock();
    if (!first) first = sgc_out_of_memory(size_class_bytes[cls]);
  }
  __asm__ volatile("" : : "r"(first) : "memory"); /* no tail call: keep the spills */
  return first;
}

/* *FINISH: whether the caller still has to run collect_after_unlock (and
 * report a NULL as out of memory). */
static void *refill_and_allocate_inner(struct thread_alloc *t, unsigned kind, unsigned cls,
                                       bool *finish) {
  /* Torture mode collects at every Nth refill; the others still take the
   * path without heap_lock, so SGC_TORTURE=N>1 runs collections against
   * it too. */
  bool torture = collect_torture_turn(t);
  if (!torture) {
    void *first = refill_unlocked(t, kind, cls);
    if (first) return first;
  }
  heap_lock_take(thread_of_alloc(t));
  page_store_of(t);
  if (torture) collect_torture();
  void *head = NULL, *tail = NULL;
  unsigned have = 0, target = refill_target(cls);
  size_t bytes = size_class_bytes[cls];
  void *batch = batch_pop(t, kind, cls);
  if (!batch && percpu_enabled) batch = own_list_for_cpu(t, kind, cls);
  if (batch) {
    void *first = install_batch(t, kind, cls, batch, true);
    heap_accounting.page_refills++;
    pthread_mutex_unlock(&heap_lock);
    return first;
  }
  /* Page work happens outside heap_lock (a page op, collect/collect.h).
   * If a collection ran meanwhile, everything gathered so far is dropped:
   * the collection queued those pages for sweeping again, and objects of
   * atomic pages are not scanned, so a list of them held in this frame
   * would not keep its tail marked.  Sweeping finds them again. */
  uint32_t epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
  bool collected = false;
  /* Once a collection has come between a page op and heap_lock taken
   * again, the page ops are done under heap_lock: beside a thread that
   * collects every millisecond (large objects in a small heap), one that
   * let go each time found a new collection each time and started over,
   * for seconds (tests/blackbox/cancel_stop.c). */
  /* Leak finding (GC_find_leak) holds it from the start: a fresh page's
   * list dropped so would lie on no list at that collection, and be
   * reported as leaked (collect/leak_find.c). */
  bool hold_lock = __atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED) != 0;
  while (have < target) {
    unsigned n = 0;
    void *ptail = NULL;
    void *list = sweep_take_partial(kind, cls, &n, &ptail);
    if (!list) {
      struct page_header *page = sweep_pop_unswept(t, kind, cls);
      bool fresh = false;
      if (!page) {
        if (have) break; /* enough to go on without growing the heap */
        /* Another thread's freed objects before a fresh page: memory
         * stays bounded as with one shared stack (alloc/batches.c) --
         * unless this thread is short because it was robbed while using
         * its own, which fresh pages make up for (batches.c, "Lent
         * batches"). */
        if (!batch_lent_outstanding(t, kind, cls) &&
            (batch = batch_steal(t, kind, cls)) != NULL) {
          void *first = install_batch(t, kind, cls, batch, true);
          heap_accounting.page_refills++;
          heap_accounting.stolen_batches++;
          pthread_mutex_unlock(&heap_lock);
          return first;
        }
        /* By the page policy; when it collects first, this class's pages
         * wait to be swept again: look there before taking one. */
        bool had_collected = collected;
        page = small_page_take(t, &collected);
        if (!page && collected && !had_collected) continue;
        if (!page) break;
        fresh = true;
      }
      if (atomic_load_explicit(&gc_epoch, memory_order_relaxed) != epoch) {
        epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
        head = tail = NULL; /* collected meanwhile (page_acquire) */
        have = 0;
      }
      page_op_begin();
      if (!hold_lock) pthread_mutex_unlock(&heap_lock);
      if (fresh) list = page_format_small(page, kind, cls, &n, &ptail);
      else sweep_page(page);
      page_op_end();
      if (!hold_lock) heap_lock_take(thread_of_alloc(t));
      if (atomic_load_explicit(&gc_epoch, memory_order_relaxed) != epoch) {
        /* The collection re-queued this page (and the gathered ones). */
        epoch = atomic_load_explicit(&gc_epoch, memory_order_relaxed);
        head = tail = NULL;
        have = 0;
        hold_lock = true;
        continue;
      }
      if (!fresh && !(list = claim_swept(t, page, &n, &ptail))) continue;
    }
    gather(&head, &tail, &have, list, ptail, n);
  }
  if (head) {
    heap_accounting.page_refills++;
    account_allocation(have * bytes);
    batch_lent_repaid(t, kind, cls, have);
    /* Install under heap_lock, so no collection sees the new objects
     * outside every free list.  Objects already on the list (a finalizer
     * may have refilled it) go behind the new ones. */
    if (percpu_enabled) install_on_cpu(t, kind, cls, head, (size_t)(have - 1) * bytes, true);
    else install_list(t, kind, cls, head, tail);
  }
  pthread_mutex_unlock(&heap_lock);
  *finish = true;
  return head;
}
