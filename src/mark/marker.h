/* A marker: one GC thread's mark stack and statistics (thesis §3.4.2).
 *
 * The stack holds address ranges.  Entries in [watermark, top) are private
 * to the owner, which pushes and pops them without a lock; entries in
 * [bottom, watermark) are public, and thieves take them from the bottom
 * under the stack's lock.  The owner moves the watermark (under the lock)
 * when its private part runs dry or when the public part is empty and it
 * has work to share: to the middle between bottom and top, as the thesis
 * does. */
#ifndef SGC_MARKER_H
#define SGC_MARKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os/numa.h"

struct mark_range {
  uintptr_t lo, hi;
};

/* An entry whose object's mark procedure runs when the entry is popped
 * (mark/custom_kind.c): lo = the object's address with this bit set, hi
 * = the procedure's descriptor.  Ranges are word-aligned, so the bit
 * tells them apart: the drain neither splits nor scans such an entry.
 * On the stack the object waits in the prefetch window and can be
 * stolen, as any range can: run where they were found, from a private
 * list, procedures left one GC thread to mark a tree of such objects,
 * each fetched only when its procedure read it (bench-markshape -s
 * proc). */
enum { MARK_ENTRY_PROC = 1 };

/* Table 3.2 of the thesis, chosen by SGC_MARK_VARIANT. */
enum mark_variant {
  MARK_OPT = 0,   /* everything below on */
  MARK_SIMPLE,    /* no load balancing: roots dealt round-robin, no stealing */
  MARK_NOOPT,     /* stealing only: no SLO, counter termination, plain CAS marking */
  MARK_NO_SLO,    /* all but splitting large objects */
  MARK_NO_NSB,    /* all but the non-serializing termination (a locked counter) */
  MARK_NO_BMB,    /* all but balanced mark bitmaps (SGC_BMB off whatever it says) */
};

/* The work-stealing structure, chosen by SGC_MARK_DEQUE (mark/chase_lev.c). */
enum mark_deque { DEQUE_WATERMARK = 0, DEQUE_CHASE_LEV = 1 };

struct cl_buffer {
  int64_t mask; /* capacity - 1, a power of two */
  struct cl_buffer *retired_next;
  struct cl_slot {
    _Atomic uintptr_t lo, hi;
  } slots[];
};

struct proc_context;
struct marker {
  /* Owner side: written on every push and pop, so on lines of its own;
   * thieves polling the shared side must not pull them away. */
  struct mark_range *entries;
  size_t capacity;
  size_t top;
  unsigned index;
  uint64_t rng;
  /* While a procedure entry runs, the drain's state its
   * GC_mark_and_push calls mark and push with (mark.c); NULL otherwise. */
  struct proc_context *proc_context;
  /* Statistics of the current collection (owner only). */
  uint64_t marked_bytes, marked_objects;
  uint64_t marked_atomic_bytes; /* of them, in objects with no pointers */
  /* A program thread's share of a concurrent cycle (collect/assist.c):
   * its drain stops once it has marked this many bytes (0: no bound). */
  uint64_t drain_budget;
  /* Its marked_bytes as a concurrent drain last published them (every
   * 64 ranges and at its end), for the cycle's pacing to read from any
   * thread (collect/assist.c).  Relaxed: an estimate. */
  _Atomic uint64_t progress;
  uint64_t steal_attempts, steal_successes;
  uint64_t busy_ns, idle_ns;
  /* CPU time the marker's thread got in the phase: less than busy + idle
   * when its CPU ran something else (another process, on a shared machine). */
  uint64_t cpu_ns;
  /* How this helper came to the phase: the time from the phase's start to
   * its first work, and whether it was awake (pre-woken, yield-waiting)
   * or asleep on the futex when the phase began (mark/parallel.c). */
  uint64_t join_ns;
  bool prewoken;
  bool counted_idle; /* No-NSB: this marker is in the idle counter */
  /* Shared side, under lock (bottom and watermark are also read without
   * it as a hint). */
  _Alignas(64) pthread_mutex_t lock;
  _Atomic size_t bottom;
  _Atomic size_t watermark;
  /* NSB: set while the marker has no work and looks for some. */
  _Alignas(64) _Atomic int idle;
  /* Chase-Lev deque (Chase & Lev 2005; C11 orderings of Le et al. 2013):
   * the owner pushes and takes at bottom, thieves take one at top. */
  _Alignas(64) _Atomic int64_t cl_top;
  _Alignas(64) _Atomic int64_t cl_bottom;
  _Atomic(struct cl_buffer *) cl_buffer;
  struct cl_buffer *cl_retired; /* grown-out buffers thieves may still read */
  /* NUMA (os/numa.h): the node it runs on (pinned or last seen; written
   * by its owner, read by thieves choosing a victim: relaxed, a hint),
   * and, owner only, the bytes of heap objects it scanned per node this
   * collection, counted only while numa_counting (mark.c). */
  _Alignas(64) _Atomic unsigned node;
  _Atomic bool pinned; /* set by its own thread as it starts; read by statistics */
  uint64_t node_scanned_bytes[NUMA_MAX_NODES];
} __attribute__((aligned(64)));

struct mark_config {
  enum mark_variant variant;
  size_t split_bytes;       /* SLO threshold, 0 = never split */
  bool optimistic_bits;     /* read the mark before setting it */
  bool plain_mark_store;    /* SGC_MARK_SET=store: set it without a lock (mark.c) */
  bool balance;             /* stealing on */
  bool nsb;                 /* flag-based termination */
  enum mark_deque deque;
  /* How the coming drain runs, derived by mark_configure_drain from the
   * inputs above (variant, SGC_MARK_SET) and whether one marker or more
   * takes part, so the mark loop reads one field each, not three.
   * set_rule: how set_mark sets a mark. */
  enum mark_set_rule {
    MARK_SET_READ_EXCHANGE = 0, /* read, then the atomic exchange: exactly once */
    MARK_SET_READ_STORE,        /* read, then a plain store */
    MARK_SET_EXCHANGE,          /* No-Opt: the exchange without reading first */
  } set_rule;
  /* ... for the objects of a kind the program made: read and exchange
   * where several markers run, so each procedure runs once per object. */
  enum mark_set_rule custom_set_rule;
  /* The drain moves work to its stack's public part for thieves: stealing
   * on and another marker to steal.  A marker alone skips the test after
   * every object (and the shares, which only its own slow pop took back). */
  bool share;
  /* The pieces the drain halves long ranges into: split_bytes when others
   * may steal them, and at least LONE_SPLIT_BYTES for a marker alone
   * (mark.c), which has no one to share them with. */
  size_t drain_split_bytes;
  /* SGC_MARK_STACK_LIMIT: entries a watermark stack may hold before it
   * overflows (overflow.c); 0, the default, grows while the OS allows. */
  size_t stack_limit;
};


extern struct mark_config mark_config;
/* NSB's global flag: set by every successful steal. */
extern _Atomic int mark_detection_interrupted;

/* False when its stack cannot be mapped (nothing is left allocated). */
bool marker_init(struct marker *m, unsigned index);
/* Between collections, the stack empty: a stack grown past
 * SGC_MARK_STACK_LIMIT (for ranges no rescan finds again) goes back to
 * its first size, so the limit holds for every collection. */
void marker_trim(struct marker *m);
/* Unmaps what marker_init mapped, for a GC thread that did not start. */
void marker_destroy(struct marker *m);
/* mark.c: sets mark_config's set_rule and share for a drain by one marker
 * or more. */
void mark_configure_drain(bool single_marker);
/* Full: makes room (slides or grows); false when the stack is at
 * SGC_MARK_STACK_LIMIT or the OS refuses, unless PAST_LIMIT. */
bool marker_grow(struct marker *m, bool past_limit);

/* overflow.c: a full stack that cannot grow (thesis §3.4 leaves overflow
 * to the base collector; bdwgc drops entries and marks again from the
 * heap).  Set when an entry was dropped; cleared by mark_overflow_recover. */
extern _Atomic int mark_overflowed;
/* M's stack is full and cannot grow: keeps [LO, HI) in it if nothing but
 * a rescan of the heap could find that range again, else drops it. */
void mark_overflow_push(struct marker *m, uintptr_t lo, uintptr_t hi);
/* For a Chase-Lev deque that cannot grow: true, the overflow noted, when
 * a rescan would find the range starting at LO again, so it may be
 * dropped. */
bool mark_overflow_drop(uintptr_t lo);
/* After a drain, with no marker at work: while entries were dropped,
 * scans every marked object again with the collector's marker. */
void mark_overflow_recover(void);
/* Totals since start: entries dropped, heap rescans (SGC_STATS). */
uint64_t mark_overflow_dropped(void);
uint64_t mark_overflow_rescans(void);

/* chase_lev.c */
/* False when the first buffer cannot be mapped. */
bool cl_init(struct marker *m);
/* Unmaps the current buffer and the retired ones. */
void cl_destroy(struct marker *m);
void cl_push(struct marker *m, uintptr_t lo, uintptr_t hi);
bool cl_take(struct marker *m, struct mark_range *out);
bool cl_steal(struct marker *thief, struct marker *victim);
bool cl_has_work(struct marker *m);
/* Between collections: frees retired buffers, restarts the indices. */
void cl_reset(struct marker *m);

static inline void marker_push(struct marker *m, uintptr_t lo, uintptr_t hi) {
  if (mark_config.deque == DEQUE_CHASE_LEV) {
    cl_push(m, lo, hi);
    return;
  }
  if (__builtin_expect(m->top == m->capacity, 0) && !marker_grow(m, false)) {
    mark_overflow_push(m, lo, hi);
    return;
  }
  m->entries[m->top++] = (struct mark_range){lo, hi};
}

/* Pops a private entry, or refills the private part from the public one;
 * false when the whole stack is empty. */
bool marker_pop_slow(struct marker *m, struct mark_range *out);
static inline bool marker_pop(struct marker *m, struct mark_range *out) {
  if (__builtin_expect(m->top > atomic_load_explicit(&m->watermark, memory_order_relaxed), 1)) {
    *out = m->entries[--m->top];
    return true;
  }
  return marker_pop_slow(m, out);
}

/* Makes half of the private entries public when the public part is empty
 * (called by the owner now and then while it has work). */
void marker_share(struct marker *m);
/* The owner, no drain running on M: every entry public, so that thieves
 * (a concurrent cycle's assisting threads among them) find work even
 * while the owner does not run. */
void marker_publish_all(struct marker *m);
/* M's entries dropped, its stack empty again: no drain on M, and no
 * thief (its lock held, or none can run: a fork's child). */
void marker_forget(struct marker *m);
/* Moves up to half of VICTIM's public entries to THIEF's stack. */
bool marker_steal(struct marker *thief, struct marker *victim);
static inline bool marker_empty(struct marker *m) {
  if (mark_config.deque == DEQUE_CHASE_LEV) return !cl_has_work(m);
  return m->top == atomic_load_explicit(&m->bottom, memory_order_relaxed);
}

#endif
