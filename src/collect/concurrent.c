/* Concurrent cycles: the cycle's state, the GC threads' marking beside
 * the program and the policy of when to start and finish (thesis §5.2;
 * docs/concurrent.md for the invariants).  collect.c runs the two stops;
 * the program threads' share of the marking is assist.c's.
 *
 * The marking is driven by a thread of sgc's own (the driver), not
 * registered with the collector and with every signal blocked, like the
 * GC threads: it runs marking phases on marker 0 with the GC threads
 * stealing from it (mark/parallel.c), and between phases a round that
 * asks the barrier which pages were written and queues their marked
 * objects again.  It never stops the world; a registered thread that
 * holds heap_lock finishes the cycle (collect.c), after
 * concurrent_marking_stop has taken the driver off the markers. */
#include "collect/concurrent.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "alloc/collector.h"
#include "alloc/page_path.h"
#include "barrier/barrier.h"
#include "collect/assist.h"
#include "collect/collect.h"
#include "common.h"
#include "heap/heap.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "mark/custom_kind.h"
#include "mark/mark.h"
#include "os/os.h"
#include "threads/thread.h"

enum {
  /* A round that finds this few written pages is the last: its drain is
   * short, so the finish's pause rescans about as few (the pages written
   * meanwhile).  Under random writes the rounds' counts swing widely,
   * and a lower bound is rarely met before MAX_ROUNDS. */
  FEW_WRITTEN_PAGES = 512,
  /* A last drain that marks more than this was not the end of the
   * marking (mark_rounds). */
  LATE_MARKING_BYTES = 8 << 20,
  MAX_ROUNDS = 8,
  /* Rounds' pacing (mark_rounds): the program's threads rescan PRESSURE
   * times the pages they wrote in the last round (collect/assist.c),
   * doubled up to the most while rounds do not shrink. */
  FIRST_PRESSURE = 2,
  MAX_PRESSURE = 16,
};

static pthread_mutex_t driver_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t driver_cond = PTHREAD_COND_INITIALIZER;
/* Under driver_lock: the driver thread exists; marking is ordered; the
 * driver is marking (off its wait). */
static bool driver_exists, order_mark, driver_busy;

/* Written under heap_lock (running) or by the driver (ready); read
 * without it by the slow paths as a hint (relaxed). */
static _Atomic bool running, ready;

/* The cycle's figures (heap_lock held, or the driver between its
 * start and its stop, which concurrent_marking_stop orders). */
static uint64_t cycle_began_ns, start_pause_ns, rescanned_pages, rounds;
/* The barrier's arm: its time, and whether it came before the stop. */
static uint64_t start_arm_ns;
static bool armed_before_stop;
/* Bytes of the ranges the rescans queued (a round's, or the finish's). */
static uint64_t rescan_bytes;
static uint64_t finish_rescan_pages, finish_rescan_bytes;
static size_t allocated_at_start;
/* Across cycles: what the last cycle let the program allocate. */
static size_t last_cycle_allocated;
static _Atomic uint64_t cycles_done, fallbacks_done;

bool concurrent_cycle_running(void) { return atomic_load_explicit(&running, memory_order_relaxed); }
bool concurrent_cycle_ready(void) { return atomic_load_explicit(&ready, memory_order_relaxed); }
uint64_t concurrent_cycles(void) { return atomic_load_explicit(&cycles_done, memory_order_relaxed); }
uint64_t concurrent_fallbacks(void) {
  return atomic_load_explicit(&fallbacks_done, memory_order_relaxed);
}

void concurrent_set_mode(bool on) { sgc_settings.concurrent = on; }

void concurrent_prepare(void) {
  static bool prepared;
  if (prepared) return;
  prepared = true;
  barrier_init();
  assist_prepare();
}

/* Room heap − live counts as free what is not: partly used pages,
 * objects in the threads' lists, pages kept in stores.  When the heap was
 * used up short of the limit with no cycle running, the shortfall (heap
 * lock held) is taken off later limits; it shrinks by an eighth a cycle.
 * Without it, gctest under load started no cycle before the heap ran out,
 * grew it by a quarter instead, five times over (48 to 178 MiB, 12 live). */
static size_t room_shortfall;

/* Where the stop collector would collect, in bytes allocated since the
 * last collection: once the heap is used up (what the last collection
 * left free of it) and the threshold reached, whichever comes later; the
 * heap grows rather than collect before the threshold.  A cycle paced to
 * end there collects as often as the stop collector; against the
 * threshold alone, on a heap grown past live + threshold, cycles came
 * far more often, each marking the whole live data.  The limit as
 * counted, before the shortfall comes off (cycle_limit). */
static size_t cycle_limit_counted(size_t threshold) {
  size_t heap = heap_size_bytes(), live = heap_accounting.live_after_gc;
  size_t free_room = heap > live ? heap - live : 0;
  return free_room > threshold ? free_room : threshold;
}

static size_t cycle_limit(size_t threshold) {
  size_t limit = cycle_limit_counted(threshold);
  limit = limit > room_shortfall ? limit - room_shortfall : 0;
  return limit > threshold ? limit : threshold;
}

void concurrent_note_heap_used_up(size_t allocated, size_t threshold) {
  size_t counted = cycle_limit_counted(threshold);
  size_t shortfall = counted > allocated ? counted - allocated : 0;
  if (shortfall > room_shortfall) room_shortfall = shortfall;
}

/* Thesis §5.2: a cycle starts when free pages fall under 15%; here the
 * room left before the cycle's limit falls under 15% of it, or under
 * what the last cycle let the program allocate (a quarter more),
 * whichever is larger, so that a cycle usually ends before the heap is
 * used up.  At most three quarters of the limit: a cycle never starts
 * right after the last.  A cycle that converges early ends early (the
 * next comes sooner); one that uses its room ends where a stop
 * collection would have come. */
bool concurrent_should_start(size_t allocated, size_t threshold) {
  if (concurrent_cycle_running()) return false;
  if (sgc_settings.concurrent_trigger)
    return allocated >= threshold / 100 * sgc_settings.concurrent_trigger;
  size_t limit = cycle_limit(threshold);
  size_t reserve = limit / 100 * 15;
  size_t needed = last_cycle_allocated + last_cycle_allocated / 4;
  if (reserve < needed) reserve = needed;
  if (reserve > limit / 4 * 3) reserve = limit / 4 * 3;
  return allocated + reserve >= limit;
}

/* SGC_CYCLE_GROWTH% of the threshold. */
static size_t growth_allowance(size_t threshold) {
  return threshold / 100 * sgc_settings.cycle_growth;
}

/* What a cycle that has not converged may still grow the heap by: up
 * to the heap the stop collector's rule asks for (live data and a
 * threshold) and SGC_CYCLE_GROWTH% of the threshold more.  A cap, not
 * an allowance per cycle: counted from each cycle's start, cycles that
 * kept falling behind on two busy CPUs ratcheted the heap up
 * (bb_concurrent_heap_room past twice stop mode's peak in 3 runs of 8
 * beside two busy loops, none with the setting 0).  The heap grows in
 * whole steps, so a step that would pass the cap by more than half a
 * step is not taken.  A cycle that ran out of room with marking left
 * used to finish stopped at once (gcbench -t 2: worst pauses of 2-3 ms,
 * the fallbacks, against 0.6-1.2 for converged finishes; history.md). */
static size_t growth_left(size_t threshold) {
  if (!sgc_settings.cycle_growth) return 0;
  size_t cap = heap_accounting.live_after_gc + threshold + growth_allowance(threshold);
  size_t heap = heap_size_bytes(), step = sgc_settings.heap_step_bytes;
  return heap + step <= cap + step / 2 ? cap - heap : 0;
}

/* Half the allowance at a time, so that a cycle that catches up after
 * the first step takes no more. */
size_t concurrent_growth_step(size_t threshold) {
  if (!concurrent_cycle_running() || concurrent_cycle_ready()) return 0;
  size_t left = growth_left(threshold), half = growth_allowance(threshold) / 2;
  return left < half ? left : half;
}

/* Asked when no free page is at hand: a cycle that has not converged
 * once the program allocated as much as the stop collector lets it
 * between collections, and that has used the growth it may have,
 * finishes stop-the-world, where the stop collector would have
 * collected rather than grown the heap. */
bool concurrent_should_finish(size_t allocated, size_t threshold, bool *fallback) {
  *fallback = false;
  if (!concurrent_cycle_running()) return false;
  if (concurrent_cycle_ready()) return true;
  *fallback = allocated >= threshold && growth_left(threshold) == 0;
  return *fallback;
}

/* ---- the pages the program wrote ---- */

/* Where a rescan of written pages queues their marked objects: a
 * marker's stack (marker 0's, or each GC thread's own in the finish's
 * parallel rescan), with the bytes queued and the base of the
 * custom-kind large object pushed whole last, so that several of its
 * written pages in one collect push it once. */
struct rescan_push {
  struct marker *m;
  uint64_t bytes;
  uintptr_t custom_base;
};

/* Queues on R's marker the marked objects of the page at A (their part
 * on it, for a large one): an object scanned before the program wrote
 * into it is scanned again.  Pages do not change meanwhile (the page
 * path is closed and page operations waited for, or the world is
 * stopped). */
static void push_marked_on_page(struct rescan_push *r, uintptr_t a) {
  struct page_header *p = page_of_address(a);
  if (!p) return;
  uint8_t state = atomic_load_explicit(&p->state, memory_order_acquire);
  if (state == PAGE_SMALL) {
    if (!kind_may_hold_pointers(p->kind) || !page_any_marked(p)) return;
    size_t size = (size_t)p->object_granules << GRANULE_SHIFT;
    if (kind_is_custom(p->kind)) {
      for (unsigned j = 0; j < p->capacity; j++) {
        uintptr_t obj = p->start + j * size;
        if (mark_bit_test(p, obj)) {
          mark_push_contents_on(r->m, p, obj);
          r->bytes += size;
        }
      }
      return;
    }
    /* A run of marked neighbours as one range (scanned word by word all
     * the same): the push happens under heap_lock, one per run rather
     * than per object. */
    uintptr_t run = 0, obj = p->start;
    for (unsigned j = 0; j < p->capacity; j++, obj += size) {
      bool marked = mark_bit_test(p, obj);
      if (marked && !run) run = obj;
      if (!marked && run) {
        mark_push_range_on(r->m, run, obj);
        r->bytes += obj - run;
        run = 0;
      }
    }
    if (run) {
      mark_push_range_on(r->m, run, obj);
      r->bytes += obj - run;
    }
    return;
  }
  struct page_header *head = NULL;
  uintptr_t base = object_start_in_page(p, a, &head, true);
  if (!base || !kind_may_hold_pointers(head->kind) || !mark_bit_test(head, base)) return;
  if (kind_is_custom(head->kind)) {
    /* Its descriptor scans it whole: once per collect, from whichever of
     * its pages was written (its first page may not have been). */
    if (base != r->custom_base) {
      r->custom_base = base;
      mark_push_contents_on(r->m, head, base);
      r->bytes += head->object_bytes;
    }
    return;
  }
  uintptr_t lo = base > a ? base : a, end = base + head->object_bytes;
  uintptr_t hi = end < a + PAGE_BYTES ? end : a + PAGE_BYTES;
  if (hi > lo) {
    mark_push_range_on(r->m, lo, hi);
    r->bytes += hi - lo;
  }
}

void concurrent_object_blackened(struct page_header *page, uintptr_t base) {
  if (!kind_may_hold_pointers(page->kind)) return; /* nothing to scan */
  size_t bytes = atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_LARGE_HEAD
                     ? page->object_bytes
                     : (size_t)page->object_granules << GRANULE_SHIFT;
  /* A locked OR of zero: a write for the MMU (uffd, mprotect, soft-dirty
   * see it) that loses no store the program makes to the word meanwhile.
   * One word on each page: a large object's written page is rescanned
   * alone, except a custom kind's, scanned whole from its first page. */
  for (uintptr_t a = base; a < base + bytes; a = (a | (PAGE_BYTES - 1)) + 1) {
    atomic_fetch_or_explicit((_Atomic uintptr_t *)a, 0, memory_order_relaxed);
    barrier_note_store((const void *)a);
  }
}

/* A barrier's visit: ARG the rescan_push. */
static void push_written(uintptr_t lo, uintptr_t hi, void *arg) {
  for (uintptr_t a = lo & ~(uintptr_t)(PAGE_BYTES - 1); a < hi; a += PAGE_BYTES)
    push_marked_on_page(arg, a);
}

/* The rescans of one holder of the locks (the driver's round, or the
 * finish's serial path) go on marker 0, their bytes counted in
 * rescan_bytes when done. */
static struct rescan_push serial_push;

static void serial_push_begin(void) { serial_push = (struct rescan_push){mark_collector, 0, 0}; }
static void serial_push_end(void) { rescan_bytes += serial_push.bytes; }

/* ---- the driver ---- */

/* LOCK without waiting behind whoever holds it while the cycle's finish
 * is asked for: the finishing thread holds heap_lock and waits for the
 * driver.  False when the finish came first. */
static bool lock_unless_finishing(pthread_mutex_t *lock) {
  while (pthread_mutex_trylock(lock) != 0) {
    if (mark_yield_requested()) return false;
    thread_nap(50000);
  }
  return true;
}

/* What a round holds while it takes written pages and queues their
 * marked objects: heap_lock and registry_lock, with the page path closed
 * (no page formatted meanwhile).  False when the finish came first. */
static bool round_lock(void) {
  if (!lock_unless_finishing(&heap_lock)) return false;
  page_ops_wait();
  if (!lock_unless_finishing(&registry_lock)) {
    pthread_mutex_unlock(&heap_lock);
    return false;
  }
  page_path_close();
  serial_push_begin();
  return true;
}

static void round_unlock(void) {
  serial_push_end();
  page_path_open();
  pthread_mutex_unlock(&registry_lock);
  pthread_mutex_unlock(&heap_lock);
}

/* One round: the pages written since the last, their marked objects
 * queued, ROUND_STEP_PAGES written pages at a time with the locks given
 * up in between where the barrier can (barrier_collect_begin): a whole
 * round of 13,000-20,000 pages held heap_lock 9-12 ms on latency-256m
 * (every refill waits), 27-45 ms before runs were protected together.
 * False when the finish came first; what was queued stays on marker 0
 * and the finish's collect reports the rest. */
enum { ROUND_STEP_PAGES = 2048 };
static bool rescan_written_pages(size_t *pages) {
  *pages = 0;
  if (!round_lock()) return false;
  if (!barrier_collect_begin()) {
    *pages = barrier_collect_dirty(push_written, &serial_push);
    round_unlock();
    return true;
  }
  for (bool done = false;;) {
    *pages += barrier_collect_step(push_written, &serial_push, ROUND_STEP_PAGES, &done);
    round_unlock();
    if (done) return true;
    if (mark_yield_requested() || !round_lock()) return false;
  }
}

/* SGC_CONCURRENT_HOLD_MS: after its first drain the marking waits this
 * long, so a test can act on the program's side while the cycle is
 * surely concurrent, with what was reachable at the start already marked
 * and scanned (black) and what it allocates now unmarked (white). */
static void hold_for_tests(void) {
  uint64_t until = os_now_ns() + (uint64_t)sgc_settings.concurrent_hold_ms * 1000000;
  while (sgc_settings.concurrent_hold_ms && os_now_ns() < until && !mark_yield_requested()) {
    thread_nap(1000000);
  }
}

/* After a round that found PAGES written while the program allocated
 * ALLOCATED bytes: what the assists are to rescan per MiB until the next
 * (rescan_drains_for). */
static void set_rescan_pace(size_t pages, size_t allocated, unsigned pressure) {
  if (allocated < PAGE_BYTES) allocated = PAGE_BYTES;
  uint64_t per_mib = (uint64_t)((double)pages * pressure * (1 << 20) / (double)allocated) + 1;
  assist_rescan_pace(per_mib);
}

/* Marker 0's work with the GC threads, then what the program's threads
 * left of theirs on the rescan queue and their slots, until none is
 * left; false when the finish asks the markers to stop. */
static bool drain_all(void) {
  do {
    if (mark_yield_requested()) return false;
    marker_publish_all(mark_collector); /* for threads assisting meanwhile */
    parallel_drain_concurrent();
  } while (assist_gather() | rescan_queue_gather(false));
  return true;
}

static void mark_rounds(void) {
  size_t last = SIZE_MAX;
  size_t allocated_before = allocated_since_gc_bytes();
  unsigned pressure = FIRST_PRESSURE;
  for (;;) {
    if (!drain_all()) return;
    if (rounds == 0) hold_for_tests();
    size_t pages = 0;
    if (mark_yield_requested() || !rescan_written_pages(&pages)) return;
    rounds++;
    rescanned_pages += pages;
    /* Random writes over a large heap dirty as many pages during a
     * round's drain as it rescanned, when the program outpaces the
     * markers: then the program threads' share of the rescans doubles
     * (up to MAX_PRESSURE), and rounds stop only once the written pages
     * no longer shrink by a quarter at the most pressure: another round
     * would only repeat the work the finish does anyway (docs/
     * concurrent.md, "Rounds"). */
    bool shrinking = pages <= last / 4 * 3;
    if (!shrinking && last != SIZE_MAX && pressure < MAX_PRESSURE) {
      pressure *= 2;
      shrinking = true;
    }
    size_t allocated = allocated_since_gc_bytes();
    set_rescan_pace(pages, allocated > allocated_before ? allocated - allocated_before : 0, pressure);
    rescan_queue_fill();
    allocated_before = allocated;
    if (pages <= FEW_WRITTEN_PAGES || !shrinking || rounds >= MAX_ROUNDS) {
      /* The last round's rescans are shared with the program's threads
       * as every round's, and paced as them until they are done.  Left to
       * the driver alone with the program set free, the program wrote on
       * at full speed during that drain (the driver sharing a CPU with
       * two busy request threads), and the finish rescanned it: latency
       * -m 256's worst pauses 13.7-33.0 ms in 3 runs, 7.2-15.7 with this alone. */
      uint64_t marked_before = cycle_marked_so_far();
      if (!drain_all() || mark_yield_requested()) return;
      assist_rescan_pace(0);
      /* The drain marked much more than the round's pages hold: most of
       * the marking had been left on the assisting threads' slots, and
       * the program wrote meanwhile as during any long drain: another
       * round, not the finish. */
      if (cycle_marked_so_far() - marked_before > LATE_MARKING_BYTES && !mark_yield_requested()) {
        last = SIZE_MAX;
        continue;
      }
      atomic_store_explicit(&ready, true, memory_order_relaxed);
      return;
    }
    last = pages;
  }
}

static void *driver_main(void *arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  pthread_mutex_lock(&driver_lock);
  for (;;) {
    while (!order_mark) thread_cond_wait(&driver_cond, &driver_lock);
    order_mark = false;
    driver_busy = true;
    pthread_mutex_unlock(&driver_lock);
    mark_rounds();
    pthread_mutex_lock(&driver_lock);
    driver_busy = false;
    pthread_cond_broadcast(&driver_cond);
  }
  return NULL;
}

/* Orders the marking; false when no driver thread could start (the
 * cycle is then finished by the next slow path, all in its pause). */
static bool order_marking(void) {
  pthread_mutex_lock(&driver_lock);
  if (!driver_exists) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    driver_exists = pthread_create(&thread, &attr, driver_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (!driver_exists) sgc_warn("cannot start the concurrent marking thread; cycles finish stopped");
  }
  if (driver_exists) {
    order_mark = true;
    pthread_cond_broadcast(&driver_cond);
  }
  pthread_mutex_unlock(&driver_lock);
  return driver_exists;
}

/* ---- the cycle's steps ---- */

/* Writes between this arm and the stop are reported too: a round
 * rescans their pages' marked objects, of which there are none yet but
 * those marked by then (the marks were cleared before), which is only
 * work, never a loss (docs/concurrent.md, invariant 3). */
/* The arm, timed for the record. */
static void arm_timed(void) {
  uint64_t began = os_now_ns();
  barrier_arm();
  start_arm_ns = os_now_ns() - began;
}

void concurrent_arm_before_stop(void) {
  custom_kind_defer_procs();
  armed_before_stop = barrier_arm_beside_program();
  if (armed_before_stop) arm_timed();
}

void concurrent_arm(size_t allocated, size_t threshold) {
  assist_cycle_begin(heap_accounting.live_after_gc, cycle_limit(threshold), allocated);
  atomic_store_explicit(&mark_yield_request, 0, memory_order_relaxed);
  if (!armed_before_stop) arm_timed();
  armed_before_stop = false;
  cycle_began_ns = os_now_ns();
  rescanned_pages = rounds = rescan_bytes = 0;
  finish_rescan_pages = finish_rescan_bytes = 0;
  allocated_at_start = allocated;
  atomic_store_explicit(&ready, false, memory_order_relaxed);
  atomic_store_explicit(&running, true, memory_order_relaxed);
  /* Relaxed: the GC threads read it at the start of a phase, whose
   * epoch store (release) orders it (mark/parallel.c). */
  atomic_store_explicit(&mark_concurrently, true, memory_order_relaxed);
}

void concurrent_note_start_pause(uint64_t ns) { start_pause_ns = ns; }

void concurrent_marking_begin(void) {
  /* What the start's root scan queued, stealable at once: the driver may
   * not run for a while on a busy machine, and threads that assist take
   * their work by stealing. */
  marker_publish_all(mark_collector);
  assist_open_slots();
  if (!order_marking()) atomic_store_explicit(&ready, true, memory_order_relaxed);
}

void concurrent_marking_stop(void) {
  assist_close_slots();
  atomic_store_explicit(&mark_yield_request, 1, memory_order_relaxed);
  pthread_mutex_lock(&driver_lock);
  order_mark = false; /* one not yet taken up is cancelled */
  while (driver_busy) thread_cond_wait(&driver_cond, &driver_lock);
  pthread_mutex_unlock(&driver_lock);
  /* And for threads marking at their slow paths, before any stop (one
   * stopped holding its slot would be waited for forever); none starts
   * after, assist_open being clear. */
  assist_wait_slots();
  /* The driver is off the markers: the finish's own drain must not stop. */
  atomic_store_explicit(&mark_yield_request, 0, memory_order_relaxed);
}

/* The finish's rescan of written pages by every GC thread at once
 * (thesis §5.2: dirty pages rescanned in parallel), where the barrier
 * splits its report into parts (uffd: its walk of the page tables and
 * the choice of pages holding marked objects were the finish's longest
 * steps, 0.3 of gcbench's 0.33 ms pauses); each thread takes parts in
 * turn and queues what they hold on its own stack, and those stacks are
 * gathered onto marker 0 for the drain (world stopped). */
static size_t part_count;
static _Atomic size_t next_part;
static _Atomic uint64_t parts_pages, parts_bytes;
static _Atomic bool part_refused;

static void rescan_parts(struct marker *m, void *arg) {
  (void)arg;
  struct rescan_push r = {m, 0, 0};
  size_t pages = 0;
  for (;;) {
    size_t k = atomic_fetch_add_explicit(&next_part, 1, memory_order_relaxed);
    if (k >= part_count) break;
    size_t reported;
    if (barrier_collect_last_part(k, push_written, &r, &reported)) pages += reported;
    else atomic_store_explicit(&part_refused, true, memory_order_relaxed);
  }
  /* Relaxed: the phase's end orders them before the collector's reads. */
  atomic_fetch_add_explicit(&parts_pages, pages, memory_order_relaxed);
  atomic_fetch_add_explicit(&parts_bytes, r.bytes, memory_order_relaxed);
}

static size_t rescan_written_in_parallel(void) {
  part_count = sgc_settings.finish_rescan_parallel && sgc_settings.markers > 1
                   ? barrier_collect_last_parts()
                   : 0;
  if (part_count < 2) {
    serial_push_begin();
    size_t pages = barrier_collect_last(push_written, &serial_push);
    serial_push_end();
    return pages;
  }
  atomic_store_explicit(&next_part, 0, memory_order_relaxed);
  atomic_store_explicit(&parts_pages, 0, memory_order_relaxed);
  atomic_store_explicit(&parts_bytes, 0, memory_order_relaxed);
  atomic_store_explicit(&part_refused, false, memory_order_relaxed);
  parallel_set_active(sgc_settings.markers);
  parallel_run_phase(rescan_parts, NULL, false);
  parallel_gather_work();
  rescan_bytes += atomic_load_explicit(&parts_bytes, memory_order_relaxed);
  serial_push_begin();
  size_t pages = barrier_collect_last_end(atomic_load_explicit(&parts_pages, memory_order_relaxed),
                                          atomic_load_explicit(&part_refused, memory_order_relaxed),
                                          push_written, &serial_push);
  serial_push_end();
  return pages;
}

void concurrent_finish_mark(void) {
  /* What the cycle let the program allocate, for the next trigger: read
   * here, the unlocked refills folded in, before the collection resets
   * the count (concurrent_end comes after). */
  size_t allocated = heap_accounting.allocated_since_gc;
  last_cycle_allocated = allocated > allocated_at_start ? allocated - allocated_at_start : 0;
  room_shortfall -= room_shortfall / 8;
  atomic_store_explicit(&mark_concurrently, false, memory_order_relaxed);
  parallel_gather_work();
  assist_gather();
  rescan_queue_gather(true);
  custom_kind_run_deferred(mark_collector);
  uint64_t bytes_before = rescan_bytes;
  finish_rescan_pages = rescan_written_in_parallel();
  finish_rescan_bytes = rescan_bytes - bytes_before;
  rescanned_pages += finish_rescan_pages;
  barrier_stop_recording();
}

void concurrent_end(SGC_gc_record_t *out, bool fallback) {
  struct barrier_counts counts = barrier_counts();
  out->start_pause_ns = start_pause_ns;
  out->cycle_ns = os_now_ns() - cycle_began_ns;
  out->rescanned_pages = counts.dirty_pages > rescanned_pages ? counts.dirty_pages : rescanned_pages;
  out->rounds = rounds;
  out->concurrent = 1;
  out->fallback = fallback;
  assist_record(out);
  out->cycle_allocated_bytes = last_cycle_allocated;
  out->finish_rescan_pages = finish_rescan_pages;
  out->finish_rescan_bytes = finish_rescan_bytes;
  out->rescanned_bytes = rescan_bytes;
  out->start_arm_ns = start_arm_ns;
  atomic_store_explicit(&running, false, memory_order_relaxed);
  atomic_store_explicit(&ready, false, memory_order_relaxed);
  atomic_fetch_add_explicit(&cycles_done, 1, memory_order_relaxed);
  if (fallback) atomic_fetch_add_explicit(&fallbacks_done, 1, memory_order_relaxed);
}

/* ---- fork ---- */

void concurrent_before_fork(void) {
  if (concurrent_cycle_running()) concurrent_marking_stop();
}

void concurrent_after_fork_parent(void) {
  if (!concurrent_cycle_running()) return;
  assist_open_slots();
  if (!concurrent_cycle_ready()) order_marking();
}

/* The child has neither the driver nor the GC threads: the cycle is
 * abandoned, its marks are never read (no page waits to be swept during
 * a cycle) and the next collection starts afresh. */
void concurrent_after_fork_child(void) {
  assist_after_fork_child();
  /* The abandoned cycle's work, left where the fork stopped its marking:
   * the next collection starts with empty stacks. */
  marker_forget(mark_collector);
  custom_kind_forget_deferred();
  pthread_mutex_init(&driver_lock, NULL);
  pthread_cond_init(&driver_cond, NULL);
  driver_exists = order_mark = driver_busy = false;
  if (!concurrent_cycle_running()) return;
  atomic_store_explicit(&mark_concurrently, false, memory_order_relaxed);
  barrier_disarm();
  atomic_store_explicit(&running, false, memory_order_relaxed);
  atomic_store_explicit(&ready, false, memory_order_relaxed);
}
