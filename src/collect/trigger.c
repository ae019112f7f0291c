/* When to collect and how much to grow the heap: bdwgc's threshold
 * (allocation since the last collection against live data), the
 * unlocked refills' counts, concurrent mode's step at the slow path that
 * holds heap_lock, torture turns, and growth when the heap is used up.
 * The collection itself, and the cycles' polls, are collect/collect.c. */
#include <stdatomic.h>

#include "alloc/alloc.h"
#include "collect/collect.h"
#include "collect/concurrent.h"
#include "collect/trigger.h"
#include "common.h"
#include "heap/heap.h"
#include "threads/thread.h"

/* The least allocation between collections.  Below it a small heap's
 * collections' fixed costs (stopping, waking GC threads, the page walks)
 * would come too often; above it small programs keep more memory than
 * they need: 4 MiB put a program with 2-3 MB live in an 8 MiB heap.
 * 2 MiB against 4, paired on the headline programs (history.md): peak
 * RSS 0.56 on cube with 1 thread, 0.71 on matmul, 0.72 on bh with 2
 * threads (the others 1.00, cky with 1 thread 1.08), wall times
 * 0.89-1.05. */
enum { MIN_COLLECT_BYTES = 2 << 20 };

static size_t divisor(void) {
  GC_word d = GC_free_space_divisor;
  return d ? d : 1;
}

/* bdwgc's rule (its min_bytes_allocd): collect after allocating about
 * (2 x live scanned + live pointer-free / 4 + roots) / divisor, never less
 * than MIN_COLLECT_BYTES, so the heap settles near live x (1 + 2/divisor)
 * when every object holds pointers.  Pointer-free data weighs a quarter:
 * marking it costs a mark bit, not a scan, so a collection of it is cheap
 * and can come sooner. */
size_t collect_threshold(void) {
  size_t atomic = heap_accounting.live_atomic_after_gc;
  size_t scanned = heap_accounting.live_after_gc - atomic;
  size_t scan = 2 * scanned + atomic / 4 + heap_accounting.root_bytes;
  size_t t = scan / divisor();
  size_t floor = sgc_settings.initial_heap_bytes / 2 > MIN_COLLECT_BYTES
                     ? sgc_settings.initial_heap_bytes / 2 : MIN_COLLECT_BYTES;
  return t > floor ? t : floor;
}

/* The first cycle after a flip to per-CPU caches is spent partly from
 * the per-thread lists the flip left, refilled (and counted) in the
 * cycle before: counted with this cycle's allocation, so that a heap
 * they used up collects instead of growing for good (issue 53: the
 * heap of 50 sleepers doubled at the flip; history.md). */
static size_t inherited_list_bytes;

static size_t cycle_allocated_bytes(void) {
  return allocated_since_gc_bytes() + inherited_list_bytes;
}

_Atomic size_t unlocked_flush_budget = MIN_COLLECT_BYTES / 4;

size_t unlocked_flush_step(void) {
  int threads = thread_registry_count();
  size_t step = atomic_load_explicit(&unlocked_flush_budget, memory_order_relaxed) /
                (size_t)(threads > 0 ? threads : 1);
  if (step > UNLOCKED_FLUSH_BYTES) step = UNLOCKED_FLUSH_BYTES;
  return step < PAGE_BYTES ? PAGE_BYTES : step;
}

/* With the world stopped and the page-path gate closed: nobody adds to
 * the unlocked counts meanwhile. */
void fold_unlocked_allocation(void) {
  size_t bytes = atomic_exchange_explicit(&allocated_unlocked, 0, memory_order_relaxed);
  FOR_EACH_THREAD_ALLOC(t) {
    bytes += t->unlocked_bytes;
    t->unlocked_bytes = 0;
    atomic_fetch_add_explicit(&refills_unlocked, t->unlocked_refills, memory_order_relaxed);
    t->unlocked_refills = 0;
  }
  account_allocation(bytes);
}

/* A concurrent cycle whose marking has converged is finished by the next
 * slow path of any thread (a relaxed load: a hint, read again under
 * heap_lock by collect_torture). */
bool collect_torture_turn(struct thread_alloc *t) {
  if (concurrent_cycle_ready()) return true;
  return sgc_settings.torture_interval &&
         ++t->slow_path_count % sgc_settings.torture_interval == 0 &&
         !collect_automatic_disabled();
}

bool collections_off(void) {
  return GC_dont_gc || heap_accounting.disable_count || heap_accounting.collecting ||
         collect_automatic_disabled();
}

/* Concurrent mode starts cycles, except in leak mode: a custom kind's
 * free objects are known to leak finding only when a stop-the-world
 * collection marks them so before marking (collect/leak_find.c). */
bool cycles_wanted(void) {
  return sgc_settings.concurrent && !__atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED);
}

/* Concurrent mode's step at an allocation slow path (heap_lock held):
 * finishes a cycle that converged or cannot keep up, else starts one
 * when due.  True when a cycle finished (memory may be free). */
static bool concurrent_step(void) {
  if (collections_off()) return false;
  size_t allocated = allocated_since_gc_bytes(), threshold = collect_threshold();
  bool fallback;
  if (concurrent_should_finish(allocated, threshold, &fallback)) {
    collect_locked(SGC_REASON_ALLOCATION);
    return true;
  }
  if (cycles_wanted() && concurrent_should_start(allocated, threshold))
    collect_start_cycle(SGC_REASON_ALLOCATION);
  return false;
}

/* Bytes refills outside heap_lock have not yet published (alloc/refill.c
 * adds them in steps of unlocked_flush_step a thread); registry_lock
 * keeps the walked threads registered, their owners write the counts. */
static size_t pending_unlocked_bytes(void) {
  size_t pending = 0;
  lock_counted(&registry_lock);
  FOR_EACH_THREAD_ALLOC(t) pending += __atomic_load_n(&t->unlocked_bytes, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&registry_lock);
  return pending;
}

bool collect_should_run(void) {
  if (collections_off()) return false;
  return cycle_allocated_bytes() >= collect_threshold();
}

/* The published count lags by up to a step a thread.  Where the lag
 * decides between growing the heap for good and collecting, the
 * threads' pending bytes are added: the heap of 50 sleepers grew at a
 * collection short of the threshold by less than what they held
 * unpublished, and stayed twice as large (issue 53).  Earlier checks
 * (collect_if_due, before free pages in stores are drained) keep the
 * published count: counted there, alloc-drop collected a tenth more
 * often in the same heap. */
static bool due_counting_pending(void) {
  if (collections_off()) return false;
  size_t allocated = cycle_allocated_bytes(), threshold = collect_threshold();
  if (allocated >= threshold) return true;
  size_t most_pending = unlocked_flush_step() * (size_t)thread_registry_count();
  return allocated + most_pending >= threshold &&
         allocated + pending_unlocked_bytes() >= threshold;
}

bool collect_if_due(bool *collected) {
  if (*collected) return false;
  if (cycles_wanted() || concurrent_cycle_running()) {
    *collected = concurrent_step();
    return *collected;
  }
  if (!collect_should_run()) return false;
  collect_locked(SGC_REASON_ALLOCATION);
  *collected = true;
  return true;
}

/* Concurrent mode, the heap used up with no cycle running: the trigger
 * counted room that was not there.  Where the stop collector would
 * collect, a cycle starts (late; the heap grows for it to run in) and
 * the next triggers learn the shortfall. */
static bool concurrent_heap_used_up(void) {
  if (!cycles_wanted() || concurrent_cycle_running() || collections_off()) return false;
  size_t allocated = allocated_since_gc_bytes(), threshold = collect_threshold();
  concurrent_note_heap_used_up(allocated, threshold);
  if (allocated < threshold) return false;
  collect_start_cycle(SGC_REASON_ALLOCATION);
  return concurrent_cycle_running();
}

/* A collection just ran, yet the refill found no page, though the heap
 * holds the threshold's room beyond live data and a thirty-second of it
 * is neither live nor allocated since: every page holds some survivors
 * and the free space is stranded in other classes' pages, so the heap
 * is not too small for the rule.  2,000 sleepers' 24 MiB heap, half of
 * it free in such fragments, grew there by the whole threshold rounded
 * to 8 MiB (issue 53).  A sixteenth more than NEEDED serves the refill
 * and the next few (heap_grow rounds it up to a step).  Only just after
 * a collection: earlier the live count is stale, and where live data
 * grows, growth by sixteenths cost the same program (without -K) 7% of
 * its bursts, in 18 growths of 4 MiB instead of quarters (history.md). */
static size_t fragmented_growth_bytes(size_t needed, bool collected) {
  size_t heap = heap_size_bytes(), live = heap_accounting.live_after_gc;
  size_t used = live + cycle_allocated_bytes();
  if (!collected || heap < live + collect_threshold() || heap < used + heap / 32) return 0;
  return heap / 16 + needed;
}

bool grow_or_collect(size_t bytes, bool *collected) {
  if (!*collected && !cycles_wanted() && !concurrent_cycle_running() && due_counting_pending()) {
    collect_locked(SGC_REASON_ALLOCATION);
    *collected = true;
    return true;
  }
  /* Uncollectable pages freed whole since the last collection, which
   * only collections gave back before: a program that news and deletes
   * objects of one size after another (bb_cpp_new's part F) grew the heap
   * by a step at every concurrent cycle, its free objects in other
   * classes' pages (52-64 MiB against stop mode's 32-40). */
  if (uncollectable_release_free_pages()) return true;
  /* A late cycle needs room for what the program allocates while it
   * runs, a threshold's worth (more, and it finishes stopped), not the
   * quarter of the heap that growth to the next collection takes. */
  size_t growth = concurrent_heap_used_up() ? collect_threshold()
                                           : fragmented_growth_bytes(bytes, *collected);
  /* A cycle behind grows the heap by halves of its allowance, at most
   * up to its cap (heap_grow rounds up to a step), not by the quarter
   * of the heap that growth to the next collection takes, so that its
   * marking finishes beside the program (concurrent_growth_step). */
  if (!growth) growth = concurrent_growth_step(collect_threshold());
  if (!growth) growth = collect_growth_bytes(bytes);
  if (growth < bytes) growth = bytes;
  if (heap_grow(growth) || heap_grow(bytes)) return true;
  if (*collected || GC_dont_gc || heap_accounting.disable_count) return false;
  collect_locked(SGC_REASON_HEAP_LIMIT);
  *collected = true;
  return true;
}

/* In concurrent mode a torture turn starts a cycle or finishes the
 * running one, so cycles come as often as stop collections would.  A
 * thread that came for a converged cycle (collect_torture_turn's hint)
 * which another finished first does nothing more: it used to start the
 * next cycle at once, with nothing allocated since the finish (cky -t 2:
 * twice the cycles). */
void collect_torture(void) {
  if (concurrent_cycle_ready()) {
    if (!collections_off()) collect_locked(SGC_REASON_ALLOCATION);
  } else if (!sgc_settings.torture_interval) {
    return;
  } else if (concurrent_cycle_running()) {
    if (!collections_off()) collect_locked(SGC_REASON_TORTURE);
  } else if (cycles_wanted()) {
    if (!collections_off()) collect_start_cycle(SGC_REASON_TORTURE);
  } else {
    collect_locked(SGC_REASON_TORTURE);
  }
}

/* Room to reach the next collection, at least a quarter of the heap (so
 * growth comes in few steps).  Growing by the whole threshold instead,
 * when the heap ran out part way to it, left the heap that part larger
 * than the rule needs: Nix's evaluator grew to 180 MiB around 78 MiB
 * live, where live plus the threshold is 135 (history.md). */
size_t collect_growth_bytes(size_t needed) {
  size_t grow = heap_size_bytes() / 4;
  size_t threshold = collect_threshold(), allocated = cycle_allocated_bytes();
  size_t to_threshold = threshold > allocated ? threshold - allocated : 0;
  if (grow < to_threshold) grow = to_threshold;
  /* To the nearest whole step (heap/heap.c rounds a growth up to one):
   * rounded up, a quarter of a 20 MiB heap grew it by 8 MiB. */
  size_t step = sgc_settings.heap_step_bytes ? sgc_settings.heap_step_bytes : CHUNK_BYTES;
  grow = (grow + step / 2) / step * step;
  if (grow < needed) grow = needed;
  return grow;
}

void trigger_after_collection(size_t lists_left_by_flip) {
  inherited_list_bytes = lists_left_by_flip;
  atomic_store_explicit(&unlocked_flush_budget, collect_threshold() / 4, memory_order_relaxed);
}
