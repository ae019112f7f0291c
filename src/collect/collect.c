/* One stop-the-world collection (thesis §3.3), and concurrent cycles'
 * start and finish around it (collect/trigger.c decides when).
 *
 * Steps, with heap_lock held throughout:
 *   1. read the loaded objects' segments, and hold the list still until
 *      marking ends (roots/roots.h: dlclose must not unmap them meanwhile)
 *   2. stop the world (threads/stop_world.c)
 *   3. clear mark bits; mark objects sitting in thread free lists without
 *      scanning them, so sweeping never hands them out twice
 *   4. mark from uncollectable objects, static and registered roots,
 *      thread stacks and registers, finalizer data
 *   5. finalization and disappearing links (collect/finalize.c)
 *   6. restart the world
 *   7. free unmarked large objects, queue small pages for lazy sweeping */
#include <sched.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/page_path.h"
#include "alloc/page_store.h"
#include "alloc/percpu.h"
#include "collect/backptr.h"
#include "collect/collect.h"
#include "collect/assist.h"
#include "collect/concurrent.h"
#include "collect/events.h"
#include "collect/debug_alloc.h"
#include "collect/finalize.h"
#include "collect/leak_find.h"
#include "collect/thread_roots.h"
#include "collect/trigger.h"
#include "mark/custom_kind.h"
#include "mark/disclaim.h"
#include "common.h"
#include "heap/blacklist.h"
#include "heap/heap.h"
#include "mark/predict.h"
#include "mark/snapshot.h"
#include "mark/mark.h"
#include "os/os.h"
#include "roots/roots.h"
#include "stats/stats.h"
#include "sweep/sweep.h"
#include "threads/thread.h"

/* bdwgc's exported variables. */
SGC_EXPORT GC_word GC_free_space_divisor = 3;
SGC_EXPORT int GC_dont_gc;
SGC_EXPORT GC_word GC_gc_no;
SGC_EXPORT int GC_find_leak, GC_quiet, GC_full_freq, GC_use_entire_heap;
SGC_EXPORT GC_word GC_non_gc_bytes, GC_max_retries;
SGC_EXPORT unsigned long GC_time_limit = GC_TIME_UNLIMITED;

GC_API void *GC_call_with_alloc_lock(GC_fn_type fn, void *cd) {
  sgc_ensure_init();
  heap_lock_acquire();
  void *result = call_with_lock_held(fn, cd); /* named, should FN wait for heap_lock */
  pthread_mutex_unlock(&heap_lock);
  return result;
}

/* Pushes thread T's stack from FROM (its stack pointer SP, less the red
 * zone where it has one) up to the stack's end, or what else it runs on
 * (an alternate signal stack, a coroutine's: threads/stacks.c). */
static void push_thread_stack(struct sgc_thread *t, uintptr_t sp, uintptr_t from) {
  if (!from) return;
  struct stack_ranges ranges;
  thread_stack_ranges(t, sp, from, &ranges);
  for (unsigned i = 0; i < ranges.count; i++) mark_push_range(ranges.range[i].lo, ranges.range[i].hi);
}

/* Pushes the collecting thread's own stack last and marks everything
 * queued so far with all markers.  The caller spilled the callee-saved
 * registers into its frame, which lies above this one, so scanning from
 * this frame up covers them; the drain happens here, while that frame
 * still exists. */
SGC_NOINLINE static void mark_from_this_frame(struct sgc_thread *self) {
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  /* Collecting from the allocation slow path: its frames hold nothing
   * live, only stale words (alloc/refill.c): this thread collects there
   * only before it has gathered or taken any object. */
  if (self->alloc.slow_path_sp > sp) sp = self->alloc.slow_path_sp;
  push_thread_stack(self, sp, sp);
  mark_drain_parallel();
}

SGC_NOINLINE static void push_own_stack_and_mark(struct sgc_thread *self) {
  __builtin_unwind_init();
  mark_from_this_frame(self);
  __asm__ volatile("" : : : "memory"); /* no tail call: keep the spills */
}

static void push_root_range(uintptr_t lo, uintptr_t hi, enum thread_root_place place, void *arg) {
  (void)place;
  (void)arg;
  mark_push_range(lo, hi);
}

static void push_root_word(uintptr_t word, enum thread_root_place place, void *arg) {
  (void)place;
  (void)arg;
  mark_word(word);
}

static void push_thread_roots(struct sgc_thread *self) {
  static const struct thread_root_visitor push = {push_root_range, push_root_word, NULL};
  thread_roots_for_each(self, &push);
}

/* Bytes sitting unused in allocation caches at this collection (thread
 * or per-CPU lists): papers/001's "wasted in partly used buffers". */
static uint64_t cached_bytes;

static void mark_free_object(void *p) {
  struct page_header *page = page_of_address((uintptr_t)p);
  if (!page) return;
  mark_without_scan(page, (uintptr_t)p);
  cached_bytes += (size_t)page->object_granules << GRANULE_SHIFT;
}

static uint64_t cpu_cached_bytes, thread_cached_bytes;

/* Per-thread lists a flip to per-CPU caches left behind: their owners
 * allocate from them in the next cycle, though their refills were
 * counted in this one (see cycle_allocated_bytes). */
static uint64_t lists_left_by_flip;

/* Objects on thread free lists are free, not live: mark them without
 * scanning so the sweep leaves them on their lists.  Per-CPU lists too:
 * with the world stopped by signals no rseq sequence is in flight (a
 * signal aborts it), so they are consistent. */
static void mark_thread_free_lists(void) {
  cached_bytes = 0;
  percpu_for_each_free(mark_free_object);
  cpu_cached_bytes = cached_bytes;
  FOR_EACH_THREAD_ALLOC(t) {
    for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
      for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
        for (void *p = t->free_lists[k][c]; p; p = *(void **)p) mark_free_object(p);
    custom_caches_for_each_free(t, mark_free_object);
  }
  thread_cached_bytes = cached_bytes - cpu_cached_bytes;
  /* SGC_LAB=flip: the world is stopped, so no fast path is between its
   * mode test and its pop. */
  bool to_cpu =
      percpu_flip_decide(thread_cached_bytes, cpu_cached_bytes, (unsigned)thread_registry_count());
  lists_left_by_flip = to_cpu ? thread_cached_bytes : 0;
}

/* One collection's record and times, filled in as it goes. */
/* What a collection does: all of a stop-the-world one, or a concurrent
 * cycle's start or finish (collect/concurrent.h). */
enum collect_kind { COLLECT_STOP, COLLECT_CYCLE_START, COLLECT_CYCLE_FINISH };

struct collection {
  struct sgc_thread *self;
  enum collect_kind kind;
  SGC_gc_record_t rec;
  uint64_t t0, t1, t2;
  struct mark_totals totals, after_finalize;
  /* A cycle's finish: the pause's parts (the written pages' rescan, the
   * roots' push, the drain) and what its markers had marked before it. */
  uint64_t finish_began, rescanned_at, roots_at, drained_at, marked_before;
};

/* A cycle's start pushes its own stack and then scans every root queued
 * since FROM at once, in the pause (mark_scan_roots_now), while the
 * frame that holds the spilled registers still exists. */
SGC_NOINLINE static void scan_roots_from_this_frame(struct sgc_thread *self, size_t from) {
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  if (self->alloc.slow_path_sp > sp) sp = self->alloc.slow_path_sp;
  push_thread_stack(self, sp, sp);
  mark_scan_roots_now(from);
}

SGC_NOINLINE static void push_own_stack_and_scan_roots(struct sgc_thread *self, size_t from) {
  __builtin_unwind_init();
  scan_roots_from_this_frame(self, from);
  __asm__ volatile("" : : : "memory"); /* no tail call: keep the spills */
}

/* Both kinds of pause begin so: the world stopped, its times noted. */
static void stop_world_timed(struct collection *c) {
  c->t0 = os_now_ns();
  c->rec.start_ns = c->t0;
  collection_event(EVENT_PRE_STOP_WORLD);
  c->rec.threads = stop_world() + 1;
  collection_event(EVENT_POST_STOP_WORLD);
  c->t1 = os_now_ns();
}

/* A concurrent cycle's start pause (thesis §5.2): the roots are read and
 * what they point to marked and queued, the barrier armed; the marking
 * itself comes after the world restarts.  Objects on thread free lists
 * stay unmarked: the finish marks those still free. */
static void stop_and_push_roots(void *arg) {
  struct collection *c = arg;
  stop_world_timed(c);
  fold_unlocked_allocation();
  size_t from = mark_collector->top; /* after the uncollectable objects */
  heap_accounting.root_bytes = roots_push_all();
  collection_push_other_roots();
  finalize_push_roots();
  push_thread_roots(c->self);
  push_own_stack_and_scan_roots(c->self, from);
  concurrent_arm(heap_accounting.allocated_since_gc, collect_threshold());
  c->t2 = os_now_ns();
}

/* The stopped part of a collection: from the stop to the end of marking.
 * It runs with the loaded objects' list held still (roots/roots.h): a
 * dlclose cannot unmap a segment the marking reads, whether its thread
 * is registered or not. */
static void stop_and_mark(void *arg) {
  struct collection *c = arg;
  stop_world_timed(c);

  fold_unlocked_allocation();
  free_counts_at_collection();
  c->rec.allocated_bytes = heap_accounting.allocated_since_gc;
  if (atomic_load_explicit(&heap_accounting.gc_count, memory_order_relaxed) == 0)
    parallel_bound_first_live(heap_accounting.allocated_since_gc);
  atomic_fetch_add_explicit(&gc_epoch, 1, memory_order_relaxed);
  /* Every root goes on the collector's stack; the markers share it out
   * by stealing. */
  collection_event(EVENT_MARK_START);
  mark_thread_free_lists();
  /* A cycle's finish: the GC threads' leftover work and the objects on
   * pages written since the last round join the roots. */
  if (c->kind == COLLECT_CYCLE_FINISH) {
    c->marked_before = mark_collect_totals().bytes;
    c->finish_began = os_now_ns();
    concurrent_finish_mark();
    c->rescanned_at = os_now_ns();
  }
  heap_accounting.root_bytes = roots_push_all();
  collection_push_other_roots();
  finalize_push_roots();
  toggleref_before_mark();
  push_thread_roots(c->self);
  c->roots_at = os_now_ns();
  push_own_stack_and_mark(c->self);
  c->drained_at = os_now_ns();
  c->totals = mark_collect_totals();
  finalize_after_mark();
  c->after_finalize = mark_collect_totals();
  if (c->kind == COLLECT_CYCLE_FINISH) {
    /* What the program's threads marked counts as live too. */
    uint64_t bytes, atomic_bytes, objects;
    concurrent_assist_totals(&bytes, &atomic_bytes, &objects);
    c->after_finalize.bytes += bytes;
    c->after_finalize.atomic_bytes += atomic_bytes;
    c->after_finalize.objects += objects;
  }
  collection_event(EVENT_MARK_END);
  /* Batches of freed objects go back to their pages by sweeping; dropped
   * here, with every thread stopped and registry_lock held, because they
   * hang off the thread records (alloc/batches.c). */
  leak_find_before_batches_drop();
  batches_drop_all();
  c->t2 = os_now_ns();
}

/* The thread whose collection runs the program's start functions with
 * heap_lock released, or NULL; read and written under heap_lock. */
static struct sgc_thread *start_hooks_thread;

static void collect_run(struct sgc_thread *self, enum SGC_gc_reason reason,
                        enum collect_kind kind);
/* A cycle's finish that a stop collection follows at once (under
 * heap_lock): debugging objects are checked by that one only, so a
 * smashed object is not reported twice in one call. */
static bool finish_before_stop;

void collect_locked(enum SGC_gc_reason reason) {
  struct sgc_thread *self = thread_self_or_register();
  /* Another thread's collection is in the program's start functions:
   * this one comes after it (an explicit collection must not return
   * without one).  Its own thread, collecting again from there, does not
   * wait for itself. */
  while (start_hooks_thread && start_hooks_thread != self) {
    pthread_mutex_unlock(&heap_lock);
    sched_yield();
    heap_lock_take(self);
  }
  /* GC_dont_gc and GC_disable suppress every kind of collection,
   * explicit ones included (as bdwgc). */
  if (heap_accounting.collecting || GC_dont_gc || heap_accounting.disable_count) return;
  if (concurrent_cycle_running()) {
    /* Finished first, whatever the mode now; an explicit collection, or
     * one for a heap that cannot grow, then collects what died during
     * the cycle too. */
    bool full_after = reason == SGC_REASON_EXPLICIT || reason == SGC_REASON_HEAP_LIMIT;
    finish_before_stop = full_after;
    collect_run(self, reason, COLLECT_CYCLE_FINISH);
    finish_before_stop = false;
    if (!full_after) return;
    if (heap_accounting.collecting || GC_dont_gc || heap_accounting.disable_count) return;
  }
  collect_run(self, reason, COLLECT_STOP);
}

/* Concurrent mode, at an allocation slow path with no lock held: a
 * cycle starts once due, whether or not free pages remain (the trigger
 * leaves room for the cycle to run).  Skipped when heap_lock is busy: the
 * next slow path tries again. */
void collect_poll_cycle_start(void) {
  if (!cycles_wanted() || concurrent_cycle_running() || collections_off()) return;
  if (!concurrent_should_start(allocated_since_gc_bytes(), collect_threshold())) return;
  if (pthread_mutex_trylock(&heap_lock) != 0) return;
  if (!collections_off() &&
      concurrent_should_start(allocated_since_gc_bytes(), collect_threshold()))
    collect_start_cycle(SGC_REASON_ALLOCATION);
  pthread_mutex_unlock(&heap_lock);
}

/* Concurrent mode, at an allocation slow path with no lock held: a cycle
 * whose marking has converged finishes now.  Only the refill path that
 * takes heap_lock asked before, and most refills take none (batches,
 * swept pages, a thread's own store): latency -m 1024 ran on for 29 ms
 * after a cycle was ready and wrote 2,977 pages meanwhile, 18 ms of
 * rescans in the finish's pause.  Skipped when heap_lock is busy, as a
 * start is: the next slow path asks again.  True when it finished one:
 * the caller runs collect_after_unlock where finalizers may run (the
 * refill path, once its stack cut is undone: thread_alloc.h). */
bool collect_poll_cycle_finish(void) {
  if (collections_off() || pthread_mutex_trylock(&heap_lock) != 0) return false;
  bool finish = concurrent_cycle_running() && concurrent_cycle_ready() && !collections_off();
  if (finish) collect_locked(SGC_REASON_ALLOCATION);
  pthread_mutex_unlock(&heap_lock);
  return finish;
}

void collect_start_cycle(enum SGC_gc_reason reason) {
  struct sgc_thread *self = thread_self_or_register();
  /* The cycle moves the GC threads' leftover work between stacks
   * (parallel_gather_work), which a Chase-Lev deque does not allow. */
  if (mark_config.deque == DEQUE_CHASE_LEV) {
    sgc_warn("SGC_MARK_DEQUE=chase-lev is not for concurrent cycles; using the watermark stacks");
    mark_config.deque = DEQUE_WATERMARK;
  }
  if (start_hooks_thread || heap_accounting.collecting || GC_dont_gc ||
      heap_accounting.disable_count || concurrent_cycle_running() || !cycles_wanted())
    return;
  concurrent_prepare();
  collect_run(self, reason, COLLECT_CYCLE_START);
}

static void collect_run(struct sgc_thread *self, enum SGC_gc_reason reason,
                        enum collect_kind kind) {
  heap_accounting.collecting = true;
  uint64_t begun = os_now_ns();
  struct collection c;
  memset(&c, 0, sizeof c);
  c.self = self;
  c.kind = kind;
  c.rec.reason = reason;
  c.rec.markers = 1;
  /* The finish's fallback: its marking had not converged. */
  bool fallback = kind == COLLECT_CYCLE_FINISH && !concurrent_cycle_ready() &&
                  (reason == SGC_REASON_ALLOCATION || reason == SGC_REASON_HEAP_LIMIT);
  if (kind == COLLECT_CYCLE_FINISH) concurrent_marking_stop();
  /* The program's functions for a collection's start run with heap_lock
   * released: they may take the program's own locks, and a thread holding
   * one of those may be waiting for heap_lock (Guile's start callback
   * takes a mutex under which other threads call GC_get_heap_size, and a
   * program's mutex held across any GC_ call would hang so).  bdwgc runs
   * them under its lock; nothing of sgc's is held here.  Other threads'
   * collections wait for this one meanwhile (start_hooks_thread). */
  /* A cycle's start callback runs at its start, not again at its finish. */
  bool hooks = kind != COLLECT_CYCLE_FINISH && collection_start_hooks_set();
  if (hooks) {
    start_hooks_thread = self;
    pthread_mutex_unlock(&heap_lock);
  }
  if (kind != COLLECT_CYCLE_FINISH) {
    collection_event(EVENT_START);
    collection_start_callback();
  }
  if (hooks) {
    heap_lock_take(self);
    start_hooks_thread = NULL;
  }

  /* Threads sweeping or formatting a page outside heap_lock finish first
   * (they take no lock before they are done; custom_kinds_before_mark
   * undoes the lists they leave on custom kinds' pages), and so do refills
   * on the page path without heap_lock, whose gate stays closed until the
   * sweep lists are rebuilt (alloc/page_path.h). */
  /* A cycle's start: no page may wait to be swept while it marks (a
   * sweep reads the marks), so every one is swept now, outside the pause. */
  if (kind == COLLECT_CYCLE_START) sweep_finish_all();
  page_ops_wait();
  /* Before the world stops: it needs no more than heap_lock.  In leak
   * mode the kinds' free lists stay until the marks are cleared, so their
   * objects can be marked free (collect/leak_find.c). */
  bool leak_custom = kind == COLLECT_STOP && leak_find_custom_kinds_begin();
  bool leak_finish =
      kind == COLLECT_CYCLE_FINISH && __atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED);
  custom_kinds_before_mark(leak_custom, leak_finish ? leak_find_unmark_free : NULL);
  parallel_ensure_markers(sgc_settings.markers);
  /* The GC threads are woken now, so their wake-up (30-70 us on the VM)
   * overlaps clearing the marks and the stop (mark/parallel.c).  The wake
   * is this thread's cost, paid before the other threads' pause (t0).
   * Woken after clearing the marks instead, right before the stop, they
   * joined 16-21 us into the mark (median) once the threads waiting for
   * heap_lock were no longer signalled (threads/pthread_api.c), against
   * 0.4-0.5 us woken here (history.md, tools/analysis/helper_cpu.py). */
  parallel_finish_takes_all(kind == COLLECT_CYCLE_FINISH);
  if (kind != COLLECT_CYCLE_START) { /* a start pause does not mark */
    snapshot_before_prewake();
    parallel_prewake();
  }
  lock_counted(&registry_lock);
  page_path_close();
  pthread_mutex_lock(&meta_lock);
  /* The marks are cleared before the world stops, not in the pause: from
   * here on nothing but this collection reads or writes a collectable
   * object's mark.  Sweeps read marks only inside a page op (waited for
   * above, and heap_lock keeps new ones from starting) or inside the page
   * path (closed); large objects change marks only under heap_lock, and
   * uncollectable ones between zero and nonzero only under it (a thread's
   * cache moves its objects between two nonzero states, which mark_begin
   * takes alike as roots: alloc/uncollectable.c); the allocation and free
   * fast paths of the collectable kinds never touch marks.
   * A walk over every page in use, this took 18-75 us of each pause
   * (cube, gcbench, cky with 2 threads), the marking's only serial part
   * that grows with the heap. */
  if (kind == COLLECT_CYCLE_FINISH) {
    /* The start's marks stay; pages of kinds marked from all are noted
     * afresh, and mark procedures get the heap's bounds again (heap_lock
     * held: it does not grow until the finish is over).  Uncollectable
     * objects allocated during the cycle need no walk of the pages: they
     * are black from their allocation (docs/concurrent.md). */
    disclaim_note_pages();
    custom_kind_publish_heap_bounds(atomic_load_explicit(&heap_lowest, memory_order_relaxed),
                                    atomic_load_explicit(&heap_highest, memory_order_relaxed));
  } else {
    mark_begin();
    if (leak_custom) custom_kinds_free_lists_undo(leak_find_mark_free);
    /* A cycle's mark procedures run while the heap may grow: every
     * address the page map covers is plausible to GC_MARK_AND_PUSH (its
     * GC_mark_and_push tests the page map), or an object in a chunk added
     * meanwhile would be skipped (bb_custom_kinds, a large record). */
    if (kind == COLLECT_CYCLE_START)
      custom_kind_publish_heap_bounds(0, ((uintptr_t)1 << ADDRESS_BITS) - 1);
  }
  parallel_prewake_settle();
  /* The start's root scan queues an object per root word at most, with
   * no drain in between: room for the last collection's roots and
   * stacks' worth, made before any range is found. */
  if (kind == COLLECT_CYCLE_START) {
    mark_reserve(heap_accounting.root_bytes / sizeof(uintptr_t) + (1u << 16));
    concurrent_arm_before_stop();
  }
  roots_snapshot_static_then(kind == COLLECT_CYCLE_START ? stop_and_push_roots : stop_and_mark, &c);
  parallel_finish_takes_all(false);
  collection_event(EVENT_PRE_START_WORLD);
  start_world();
  collection_event(EVENT_POST_START_WORLD);
  uint64_t t3 = os_now_ns();
  pthread_mutex_unlock(&meta_lock);
  pthread_mutex_unlock(&registry_lock);
  thread_stacks_warn();
  /* What the next collection's GC thread count learns from this mark
   * (the fast predictor's update, the rule's), after the restart: in the
   * pause it lengthened every mark under auto (cube's 135 µs marks by
   * about 6%). */
  if (kind != COLLECT_CYCLE_START) parallel_after_collection(&c.totals);
  if (kind == COLLECT_CYCLE_START) {
    concurrent_note_start_pause(t3 - c.t0);
    heap_accounting.collecting = false;
    page_path_open();
    concurrent_marking_begin();
    return;
  }

  /* Marks are final and no sweep has read them yet (the page path is
   * still closed): debugging objects are checked, leaks found. */
  if (!finish_before_stop) {
    debug_objects_after_mark();
    leak_find_after_mark();
  }
  collection_event(EVENT_RECLAIM_START);
  if (sgc_settings.sweep_parallel) sweep_after_mark_parallel();
  else sweep_after_mark();
  leak_find_after_sweep();
  custom_kinds_after_mark();
  uncollectable_release_free_pages();
  page_stores_drain_idle(); /* a sleeping thread's free pages serve others */
  /* More than a quarter of the heap lying in free spans: give the long
   * ones (64 pages and more) that have stayed free a while back to the
   * OS (heap/page_pool.c). */
  page_pool_count_collection();
  if ((page_pool_free_pages() << PAGE_SHIFT) > heap_size_bytes() / 4) page_pool_release_old(64);
  uint64_t t4 = os_now_ns();
  collection_event(EVENT_RECLAIM_END);

  heap_accounting.live_after_gc = c.after_finalize.bytes;
  page_policy_after_collection(c.after_finalize.bytes);
  heap_accounting.live_atomic_after_gc = c.after_finalize.atomic_bytes;
  heap_accounting.allocated_since_gc = 0;
  trigger_after_collection(lists_left_by_flip);
  lists_left_by_flip = 0;
  uint64_t gc_no = atomic_load_explicit(&heap_accounting.gc_count, memory_order_relaxed) + 1;
  atomic_store_explicit(&heap_accounting.gc_count, gc_no, memory_order_relaxed);
  GC_gc_no = gc_no;
  heap_accounting.collecting = false;
  page_path_open();

  c.rec.markers = (int)c.totals.markers;
  c.rec.steal_attempts = c.totals.steal_attempts;
  c.rec.steal_successes = c.totals.steal_successes;
  c.rec.mark_idle_ns = c.totals.idle_ns;
  c.rec.mark_busy_max_ns = c.totals.max_busy_ns;
  c.rec.mark_busy_min_ns = c.totals.min_busy_ns;
  c.rec.gc_no = gc_no;
  c.rec.prestop_ns = c.t0 - begun;
  c.rec.stop_ns = c.t1 - c.t0;
  c.rec.mark_ns = c.t2 - c.t1;
  c.rec.pause_ns = t3 - c.t0;
  c.rec.sweep_ns = t4 - t3;
  c.rec.marked_bytes = c.after_finalize.bytes;
  c.rec.marked_objects = c.after_finalize.objects;
  c.rec.live_bytes = c.after_finalize.bytes;
  c.rec.heap_bytes = heap_size_bytes();
  c.rec.cache_bytes = cached_bytes;
  struct page_counters pages;
  page_counters_read(&pages);
  c.rec.pages_consumed = (uint64_t)pages.a;
  c.rec.pages_used = (uint64_t)pages.u;
  c.rec.pages_live = (uint64_t)pages.l;
  c.rec.pages_taken = (uint64_t)pages.taken;
  c.rec.remote_pages = (uint64_t)pages.remote;
  c.rec.store_free_bytes = (uint64_t)pages.store_free << PAGE_SHIFT;
  c.rec.pool_free_bytes = (uint64_t)page_pool_free_pages() << PAGE_SHIFT;
  c.rec.predicted_mark_ns = predict_last_ns();
  c.rec.auto_markers = (int)predict_last_choice();
  c.rec.snapshot_ns = snapshot_last_ns();
  c.rec.blacklisted_pages = atomic_load_explicit(&blacklist_noted_now, memory_order_relaxed);
  struct marker_record shares[TRACE_MAX_MARKERS];
  unsigned share_count = c.totals.markers < TRACE_MAX_MARKERS ? c.totals.markers : TRACE_MAX_MARKERS;
  for (unsigned i = 0; i < share_count; i++) {
    struct marker *m = parallel_marker(i);
    shares[i] = (struct marker_record){m->marked_bytes, m->marked_objects, m->steal_attempts,
                                       m->steal_successes, m->busy_ns, m->idle_ns,
                                       m->cpu_ns, m->join_ns, m->prewoken};
  }
  if (kind == COLLECT_CYCLE_FINISH) {
    concurrent_end(&c.rec, fallback);
    c.rec.finish_rescan_ns = c.rescanned_at - c.finish_began;
    c.rec.finish_roots_ns = c.roots_at - c.rescanned_at;
    c.rec.finish_drain_ns = c.drained_at - c.roots_at;
    c.rec.finish_marked_bytes = c.totals.bytes - c.marked_before;
  }
  stats_record_collection(&c.rec, shares, share_count);
  collection_event(EVENT_END);
}

void collect_after_unlock(void) {
  stats_flush_pending();
  debug_objects_print_reports();
  backptr_after_collection();
  finalize_run_or_notify();
}

/* ---- the bdwgc calls that drive collection ---- */

/* A collection the program asks for lets a waiter for the collector's
 * locks in first (base/lock_wait.h), not only a starving one: it will
 * hold them for a whole collection.  Behind a 3.8 MB list collected in a
 * loop, starting and joining a thread that allocates took 3.4-7.6 s on
 * average on the Intel VM without this (bb_cancel_stop); bdwgc 3-57 ms.
 * Its own wait counts too, so two threads collecting in loops take turns. */
static void collect_lock_after_waiters(void) {
  if (atomic_load_explicit(&lock_waiters, memory_order_relaxed) > 0) lock_yield_while(&lock_waiters);
  if (pthread_mutex_trylock(&heap_lock) != 0) heap_lock_wait(sgc_self);
}

/* The bytes of dead stack an explicit collection zeroes on its way out:
 * the collector's own frames ran there (threads/stack_clear.c). */
enum { GC_GCOLLECT_STACK_CLEAR = 16 << 10 };

/* An explicit collection scans the calling thread from the program's
 * frame, not from deep inside the collector: the frames below this one
 * (locking, stopping, marking) are laid over dead stack, and their slots
 * left unwritten hold whatever the program's earlier, deeper calls left
 * there -- objects the program has dropped, found live (a Guile guardian's
 * object so, guardians.test).  slow_path_sp marks the cut, as on the
 * allocation slow path (alloc/refill.c); __builtin_unwind_init puts the
 * caller's callee-saved registers in this frame, above the cut, so they
 * are still scanned.  The program's code a collection runs (finalizers,
 * after the locks are released) runs after the cut is restored. */
SGC_NOINLINE GC_API void GC_gcollect(void) {
  sgc_ensure_init();
  struct thread_alloc *self = alloc_self_or_register();
  uintptr_t outer = slow_path_cut(self);
  collect_lock_after_waiters();
  collect_locked(SGC_REASON_EXPLICIT);
  /* An explicit collection sweeps eagerly so the heap statistics the
   * caller reads next are exact. */
  sweep_finish_all();
  if (collect_force_unmap()) page_pool_release(1);
  pthread_mutex_unlock(&heap_lock);
  slow_path_uncut(self, outer);
  /* Before the finalizers are run or announced: a program that collects
   * and then runs them itself (Guile's gc) races a finalizer thread the
   * notifier wakes, and any delay here widens that window. */
  thread_stack_clear_dead(thread_of_alloc(self), GC_GCOLLECT_STACK_CLEAR);
  collect_after_unlock();
  __asm__ volatile("" : : : "memory"); /* no tail call: keep the spills */
}

GC_API void GC_gcollect_and_unmap(void) {
  GC_gcollect();
  heap_lock_acquire();
  page_pool_release(1);
  pthread_mutex_unlock(&heap_lock);
}

GC_API int GC_try_to_collect(GC_stop_func stop) {
  (void)stop; /* a stop-the-world collection is not abandoned midway */
  if (GC_dont_gc || heap_accounting.disable_count) return 0;
  GC_gcollect();
  return 1;
}

GC_API void GC_disable(void) {
  heap_lock_acquire();
  heap_accounting.disable_count++;
  pthread_mutex_unlock(&heap_lock);
}

GC_API void GC_enable(void) {
  heap_lock_acquire();
  if (heap_accounting.disable_count > 0) heap_accounting.disable_count--;
  pthread_mutex_unlock(&heap_lock);
}

GC_API int GC_is_disabled(void) { return heap_accounting.disable_count != 0; }

GC_API int GC_expand_hp(size_t bytes) {
  sgc_ensure_init();
  heap_lock_acquire();
  bool ok = heap_grow(bytes);
  pthread_mutex_unlock(&heap_lock);
  return ok;
}

GC_API void GC_set_max_heap_size(GC_word bytes) { sgc_settings.max_heap_bytes = bytes; }

GC_API void GC_set_free_space_divisor(GC_word d) { GC_free_space_divisor = d; }
GC_API GC_word GC_get_free_space_divisor(void) { return GC_free_space_divisor; }

GC_API size_t GC_get_heap_size(void) { return heap_size_bytes(); }

GC_API size_t GC_get_free_bytes(void) {
  heap_lock_acquire();
  size_t bytes = (page_pool_free_pages() << PAGE_SHIFT) + sweep_free_bytes_estimate();
  pthread_mutex_unlock(&heap_lock);
  return bytes;
}

GC_API size_t GC_get_unmapped_bytes(void) {
  heap_lock_acquire();
  size_t bytes = page_pool_released_bytes();
  pthread_mutex_unlock(&heap_lock);
  return bytes;
}
/* The caller's own refills outside heap_lock not yet added to the shared
 * count (they are added in steps: refill.c's count_unlocked_refill), so
 * that a thread sees at least what it allocated itself.  Other threads'
 * pending bytes are theirs to publish. */
static size_t own_pending_bytes(void) {
  struct thread_alloc *self = alloc_self();
  return self ? self->unlocked_bytes : 0;
}

GC_API size_t GC_get_bytes_since_gc(void) {
  return allocated_since_gc_bytes() + own_pending_bytes();
}
GC_API size_t GC_get_total_bytes(void) {
  return atomic_load_explicit(&heap_accounting.total_allocated, memory_order_relaxed) +
         atomic_load_explicit(&allocated_unlocked, memory_order_relaxed) + own_pending_bytes();
}
GC_API GC_word GC_get_gc_no(void) {
  return atomic_load_explicit(&heap_accounting.gc_count, memory_order_relaxed);
}

GC_API void GC_get_heap_usage_safe(GC_word *heap_size, GC_word *free_bytes,
                                   GC_word *unmapped_bytes, GC_word *bytes_since_gc,
                                   GC_word *total_bytes) {
  if (heap_size) *heap_size = GC_get_heap_size();
  if (free_bytes) *free_bytes = GC_get_free_bytes();
  if (unmapped_bytes) *unmapped_bytes = GC_get_unmapped_bytes();
  if (bytes_since_gc) *bytes_since_gc = GC_get_bytes_since_gc();
  if (total_bytes) *total_bytes = GC_get_total_bytes();
}
