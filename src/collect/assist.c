/* Marking by the program's threads during a concurrent cycle (thesis
 * §5.2): a thread at an allocation slow path marks in proportion to what
 * it takes (assist_budget: the marking left over the allocation left).
 * It borrows one of a few marker slots of its own, takes work from the
 * rescan queue and the GC threads' stacks by stealing, marks within its
 * budget and leaves what is left on the slot's stack, which the driver
 * (between phases) and the finish gather (collect/concurrent.c). */
#include "collect/assist.h"

#include <pthread.h>
#include <sched.h>

#include "alloc/collector.h"
#include "collect/collect.h"
#include "collect/concurrent.h"
#include "common.h"
#include "heap/accounting.h"
#include "mark/mark.h"
#include "threads/thread.h"

enum {
  /* Threads that mark at once: another finds no slot and allocates on. */
  ASSIST_SLOTS = 4,
  /* An assist does at most RESCAN_DRAINS_MAX drains of about
   * RANGES_PER_DRAIN ranges each during rounds (a few ms at the most). */
  RESCAN_DRAINS_MAX = 8,
  RANGES_PER_DRAIN = 64,
};

static struct assist_slot {
  pthread_mutex_t lock;
  struct marker marker;
  bool usable; /* its stack could be mapped */
} assist_slots[ASSIST_SLOTS];
/* Relaxed: a hint; checked again under the slot's lock, which the finish
 * takes after clearing it. */
static _Atomic bool assist_open;
/* The program threads' share of a round's rescans: the driver moves what
 * a round queued here, all of it public, and threads that assist steal
 * from it before the GC threads' stacks (which the GC threads drain
 * first and steal from each other, leaving assists little to find).  The
 * driver owns it and takes back half of what is left each time its own
 * share is drained. */
static struct marker rescan_queue;
static bool rescan_queue_usable;
/* Set at the start pause: what the last collection found live, and the
 * cycle's limit (cycle_limit: the allocation since the last collection
 * at which the stop collector would collect, where the cycle must be
 * done). */
static uint64_t live_at_start;
static size_t limit_at_start;
/* allocated_since_gc_bytes at the start. */
static size_t allocated_at_start;
/* This cycle's assists (slow paths that marked or meant to): how many,
 * how many found no work or no slot, the bytes their budgets asked for.
 * Relaxed: statistics, read at the finish after every slot was given
 * back. */
static _Atomic uint64_t assist_calls, assist_idle, assist_asked;
/* During rounds: the pages an assist is to rescan per MiB its thread
 * allocates (0 before the first round and once ready).  Written by the
 * driver, read by slow paths as a hint (relaxed). */
static _Atomic uint64_t rescan_pages_per_mib;
/* This cycle's steals from the rescan queue by assisting threads
 * (statistics; relaxed, read at the finish). */
static _Atomic uint64_t rescan_steals;
/* This cycle's assists that yielded the CPU (relaxed: statistics). */
static _Atomic uint64_t assist_yields;

void assist_prepare(void) {
  for (unsigned i = 0; i < ASSIST_SLOTS; i++) {
    pthread_mutex_init(&assist_slots[i].lock, NULL);
    assist_slots[i].usable = marker_init(&assist_slots[i].marker, 1000 + i);
  }
  rescan_queue_usable = marker_init(&rescan_queue, 1000 + ASSIST_SLOTS);
  static struct marker *slot_markers[ASSIST_SLOTS];
  unsigned usable = 0;
  for (unsigned i = 0; i < ASSIST_SLOTS; i++)
    if (assist_slots[i].usable) slot_markers[usable++] = &assist_slots[i].marker;
  parallel_set_extra_victims(slot_markers, usable);
}

void assist_cycle_begin(uint64_t live, size_t limit, size_t allocated) {
  for (unsigned i = 0; i < ASSIST_SLOTS; i++) {
    struct marker *m = &assist_slots[i].marker;
    m->marked_bytes = m->marked_atomic_bytes = m->marked_objects = 0;
    atomic_store_explicit(&m->progress, 0, memory_order_relaxed);
  }
  atomic_store_explicit(&assist_calls, 0, memory_order_relaxed);
  atomic_store_explicit(&assist_idle, 0, memory_order_relaxed);
  atomic_store_explicit(&assist_asked, 0, memory_order_relaxed);
  atomic_store_explicit(&rescan_pages_per_mib, 0, memory_order_relaxed);
  atomic_store_explicit(&rescan_steals, 0, memory_order_relaxed);
  atomic_store_explicit(&assist_yields, 0, memory_order_relaxed);
  live_at_start = live;
  limit_at_start = limit;
  allocated_at_start = allocated;
}

void assist_open_slots(void) { atomic_store_explicit(&assist_open, true, memory_order_relaxed); }

void assist_close_slots(void) { atomic_store_explicit(&assist_open, false, memory_order_relaxed); }

void assist_wait_slots(void) {
  for (unsigned i = 0; i < ASSIST_SLOTS; i++) {
    if (!assist_slots[i].usable) continue;
    pthread_mutex_lock(&assist_slots[i].lock);
    pthread_mutex_unlock(&assist_slots[i].lock);
  }
}

void assist_rescan_pace(uint64_t pages_per_mib) {
  atomic_store_explicit(&rescan_pages_per_mib, pages_per_mib, memory_order_relaxed);
}

static struct assist_slot *assist_slot_take(void) {
  for (unsigned i = 0; i < ASSIST_SLOTS; i++) {
    struct assist_slot *slot = &assist_slots[i];
    if (!slot->usable || pthread_mutex_trylock(&slot->lock) != 0) continue;
    if (atomic_load_explicit(&assist_open, memory_order_relaxed)) return slot;
    pthread_mutex_unlock(&slot->lock);
    return NULL;
  }
  return NULL;
}

/* Marking takes a few KiB of the caller's stack (a steal copies up to
 * 2 KiB of entries): not on a small one (PTHREAD_STACK_MIN's 16 KiB:
 * bb_tiny_stacks), nor on one sgc does not know the size of (a
 * coroutine's, a signal stack). */
enum { ASSIST_STACK_ROOM = 64 << 10 };
static bool stack_room_to_assist(void) {
  struct sgc_thread *t = sgc_self;
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  return t && thread_stack_mapping_holds(t, sp) && sp - t->stack_lo >= ASSIST_STACK_ROOM;
}

/* What the cycle's markers have marked so far, as their drains last
 * published it. */
uint64_t cycle_marked_so_far(void) {
  uint64_t sum = 0;
  unsigned n = parallel_markers_created();
  for (unsigned i = 0; i < n; i++)
    sum += atomic_load_explicit(&parallel_marker(i)->progress, memory_order_relaxed);
  for (unsigned i = 0; i < ASSIST_SLOTS; i++)
    sum += atomic_load_explicit(&assist_slots[i].marker.progress, memory_order_relaxed);
  return sum;
}

/* At most ASSIST_MAX_BYTES a slow path, about a millisecond of marking:
 * past the cycle's limit the rate asked for all the marking left, and a
 * request of latency -m 1024 marked 18-49 MB in one slow path (30-117
 * ms).  What it leaves is the GC threads' and the next slow paths', and
 * a heap used up with the marking unfinished finishes the cycle stopped
 * (concurrent_should_finish), all threads marking at once. */
enum { ASSIST_MAX_BYTES = 1 << 20 };

/* Thesis §5.2's GC speed k = (M - F) / F, the pages to mark over the free
 * pages, taken afresh at every slow path: the marking left over the
 * allocation left.  The marking is what the last collection found live,
 * or more when the live data grows during the cycle: at least what is
 * marked so far plus what was allocated since the start (new objects are
 * white, and all may turn out live).  The allocation left is the room to
 * the stop collector's trigger, where the cycle would finish stopped; as
 * it shrinks the rate rises, up to ASSIST_MAX_BYTES.  docs/concurrent.md,
 * "Pacing". */
static uint64_t assist_budget(size_t bytes) {
  size_t allocated = allocated_since_gc_bytes();
  uint64_t since = allocated > allocated_at_start ? allocated - allocated_at_start : 0;
  uint64_t marked = cycle_marked_so_far();
  uint64_t estimate = live_at_start > marked + since ? live_at_start : marked + since;
  uint64_t left = estimate - marked;
  size_t room = limit_at_start > allocated ? limit_at_start - allocated : 0;
  uint64_t budget = room <= bytes ? left : (uint64_t)((double)bytes * (double)left / (double)room) + 1;
  return budget < ASSIST_MAX_BYTES ? budget : ASSIST_MAX_BYTES;
}

/* Marks BUDGET bytes on SLOT's marker (held), then gives it back: its
 * slot's leftovers first, then work stolen from the GC threads' stacks,
 * again while the budget lasts (a steal takes at most 128 entries) and
 * the finish is not asking the markers to stop. */
static bool assist_mark(struct assist_slot *slot, uint64_t budget, unsigned rescan_drains) {
  struct marker *m = &slot->marker;
  unsigned n = parallel_markers_created();
  uint64_t first = m->marked_bytes;
  for (;;) {
    if (marker_empty(m) && rescan_queue_usable && marker_steal(m, &rescan_queue))
      atomic_fetch_add_explicit(&rescan_steals, 1, memory_order_relaxed);
    for (unsigned i = 0; i < n && marker_empty(m); i++) marker_steal(m, parallel_marker(i));
    uint64_t done = m->marked_bytes - first;
    if (marker_empty(m) || mark_yield_requested() || (done >= budget && !rescan_drains)) break;
    /* A rescan drain: a budget of one byte stops it at its first check
     * (every 64 ranges) that found something new. */
    m->drain_budget = done < budget ? budget - done : 1;
    mark_drain_own(m); /* publishes its progress */
    if (rescan_drains) rescan_drains--;
  }
  m->drain_budget = 0;
  bool marked = m->marked_bytes != first;
  /* What is left, for the cycle's drains to steal (mark/parallel.c's
   * extra victims) until a thread takes the slot again or the driver
   * gathers it. */
  if (!marker_empty(m)) marker_publish_all(m);
  pthread_mutex_unlock(&slot->lock);
  return marked;
}

/* Rounds rescan the pages written since the last; marked bytes do not
 * measure that work (a rescanned object is marked already), so during
 * rounds an assist also runs drains in proportion to the pages its
 * allocation is likely to have written: rescan_pages_per_mib, the last
 * round's written pages over what the program allocated meanwhile,
 * times the pressure (thesis §5.4: the finish is left only the last
 * few pages when the rounds outpace the program's writes). */
static unsigned rescan_drains_for(size_t bytes) {
  uint64_t per_mib = atomic_load_explicit(&rescan_pages_per_mib, memory_order_relaxed);
  if (!per_mib) return 0;
  uint64_t pages = ((uint64_t)bytes * per_mib >> 20) + 1;
  uint64_t drains = (pages + RANGES_PER_DRAIN - 1) / RANGES_PER_DRAIN;
  return drains < RESCAN_DRAINS_MAX ? (unsigned)drains : RESCAN_DRAINS_MAX;
}

/* An assist that found nothing to take while its cycle is behind (a
 * budget of at least the bytes taken: as much marking left as room) gives
 * up its CPU once.  The work is then private to the driver or a GC thread
 * that busy program threads keep off the CPUs, and the cycle would run
 * out of heap and finish stopped (history.md, "Idle assists yield").  A
 * cycle on pace leaves the threads alone: their waits are latency. */
static void assist_yield(void) {
  atomic_fetch_add_explicit(&assist_yields, 1, memory_order_relaxed);
  sched_yield();
}

bool concurrent_assist(size_t bytes) {
  if (!concurrent_cycle_running()) {
    collect_poll_cycle_start();
    return false;
  }
  if (concurrent_cycle_ready()) return collect_poll_cycle_finish();
  if (!atomic_load_explicit(&assist_open, memory_order_relaxed) || !stack_room_to_assist())
    return false;
  uint64_t budget = assist_budget(bytes);
  unsigned rescan_drains = rescan_drains_for(bytes);
  if (!budget && !rescan_drains) return false;
  atomic_fetch_add_explicit(&assist_calls, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&assist_asked, budget, memory_order_relaxed);
  /* Set before a slot is taken, cleared after it is given back: a
   * GC_suspend_thread meanwhile parks this thread only then (a finish
   * waits for every slot).  The handler runs on this thread: a signal
   * fence orders the flag against the slot's lock for it. */
  struct sgc_thread *self = sgc_self;
  atomic_store_explicit(&self->assisting, true, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  struct assist_slot *slot = assist_slot_take();
  bool idle = !slot || !assist_mark(slot, budget, rescan_drains);
  if (idle) atomic_fetch_add_explicit(&assist_idle, 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&self->assisting, false, memory_order_seq_cst);
  thread_park_if_asked(self);
  if (idle && budget >= bytes && sgc_settings.assist_yield) assist_yield();
  return false;
}

/* Moves the slots' leftover work to marker 0 (no phase running); true
 * when there was some. */
bool assist_gather(void) {
  bool found = false;
  for (unsigned i = 0; i < ASSIST_SLOTS; i++) {
    struct assist_slot *slot = &assist_slots[i];
    if (!slot->usable) continue;
    pthread_mutex_lock(&slot->lock);
    struct marker *m = &slot->marker;
    /* And the marker's own lock: a drain's marker may be stealing from
     * it (an extra victim). */
    pthread_mutex_lock(&m->lock);
    size_t from = atomic_load_explicit(&m->bottom, memory_order_relaxed);
    for (size_t k = from; k < m->top; k++) {
      marker_push(mark_collector, m->entries[k].lo, m->entries[k].hi);
      found = true;
    }
    marker_forget(m);
    pthread_mutex_unlock(&m->lock);
    pthread_mutex_unlock(&slot->lock);
  }
  return found;
}

/* Moves what is left on the rescan queue to marker 0 (its owner: the
 * driver, or the finish with the driver stopped); true when there was
 * some.  ALL, or half of its public part (marker_pop_slow's take-back):
 * the rest stays for the program's threads while marker 0's is drained. */
bool rescan_queue_gather(bool all) {
  if (!rescan_queue_usable) return false;
  bool found = false;
  struct mark_range r;
  while (marker_pop(&rescan_queue, &r)) {
    marker_push(mark_collector, r.lo, r.hi);
    found = true;
    if (!all && rescan_queue.top == atomic_load_explicit(&rescan_queue.watermark,
                                                         memory_order_relaxed))
      break;
  }
  return found;
}

/* Moves the ranges a round just queued on marker 0 (all private there:
 * its drain had emptied it) to the rescan queue, made public. */
void rescan_queue_fill(void) {
  if (!rescan_queue_usable || mark_config.deque != DEQUE_WATERMARK) return;
  struct mark_range r;
  while (marker_pop(mark_collector, &r)) marker_push(&rescan_queue, r.lo, r.hi);
  marker_publish_all(&rescan_queue);
}

void concurrent_assist_totals(uint64_t *bytes, uint64_t *atomic_bytes, uint64_t *objects) {
  *bytes = *atomic_bytes = *objects = 0;
  for (unsigned i = 0; i < ASSIST_SLOTS; i++) {
    struct marker *m = &assist_slots[i].marker;
    if (!assist_slots[i].usable) continue;
    *bytes += m->marked_bytes;
    *atomic_bytes += m->marked_atomic_bytes;
    *objects += m->marked_objects;
  }
}

void assist_record(SGC_gc_record_t *out) {
  uint64_t atomic_bytes, objects;
  concurrent_assist_totals(&out->mutator_marked_bytes, &atomic_bytes, &objects);
  out->assists = atomic_load_explicit(&assist_calls, memory_order_relaxed);
  out->assists_idle = atomic_load_explicit(&assist_idle, memory_order_relaxed);
  out->assist_asked_bytes = atomic_load_explicit(&assist_asked, memory_order_relaxed);
  out->assist_rescan_steals = atomic_load_explicit(&rescan_steals, memory_order_relaxed);
  out->assist_yields = atomic_load_explicit(&assist_yields, memory_order_relaxed);
}

/* The child of fork() has no driver and no GC threads: the slots' locks
 * made anew, their work and the rescan queue's dropped. */
void assist_after_fork_child(void) {
  assist_close_slots();
  for (unsigned i = 0; i < ASSIST_SLOTS; i++) {
    pthread_mutex_init(&assist_slots[i].lock, NULL);
    if (assist_slots[i].usable) marker_forget(&assist_slots[i].marker);
  }
  if (rescan_queue_usable) marker_forget(&rescan_queue);
}
