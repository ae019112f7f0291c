/* Definitions every part of sgc uses: attributes, settings, messages. */
#ifndef SGC_COMMON_H
#define SGC_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "gc.h"
#include "sgc.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define SGC_INLINE static inline __attribute__((always_inline))
#define SGC_NOINLINE __attribute__((noinline))
/* The allocation and free entry points start a cache line: their fast
 * paths span two or three, and where an unrelated change moved GC_free
 * from 32 to 48 bytes into one, alloc -m free ran 3-5% slower with the
 * same instructions (callgrind; history.md, "Fast paths on a line"). */
#define SGC_HOT_ENTRY __attribute__((aligned(64)))
#define SGC_INTERNAL __attribute__((visibility("hidden")))
/* Definition of an exported variable (GC_API is for declarations). */
#define SGC_EXPORT __attribute__((visibility("default")))

/* The most marker counts SGC_MARKERS_CYCLE lists (api/init.c).  The most
 * GC threads is os_markers_limit(), which follows the machine. */
enum { MARKERS_CYCLE_MAX = 16 };

/* Who chooses each collection's GC threads, up to sgc_settings.markers
 * (SGC_MARKERS, SGC_ADAPTIVE; docs/settings.md). */
enum markers_choice {
  MARKERS_AUTO,  /* the fast predictor (mark/predict.c), the default */
  MARKERS_RULE,  /* SGC_MARKERS=rule: one per 256 KiB live, alone after a list (mark/parallel.c) */
  MARKERS_FIXED, /* SGC_ADAPTIVE=0: exactly sgc_settings.markers */
};

/* Run-time settings, read once at start-up (api/init.c). */
struct sgc_settings {
  size_t initial_heap_bytes;
  size_t max_heap_bytes;      /* 0 = unlimited */
  size_t heap_step_bytes;     /* SGC_HEAP_STEP: the heap grows by multiples of it */
  unsigned torture_interval;  /* 0 = off */
  /* SGC_MODE=concurrent (or GC_ENABLE_INCREMENTAL, GC_enable_incremental):
   * collections as concurrent cycles (collect/concurrent.c).  Only set
   * before the first cycle, under heap_lock. */
  bool concurrent;
  unsigned concurrent_trigger;  /* SGC_CONCURRENT_TRIGGER: % of the threshold; 0 = adaptive */
  unsigned concurrent_hold_ms;  /* SGC_CONCURRENT_HOLD_MS: a test's hold on the marking */
  bool assist_yield;            /* SGC_ASSIST_YIELD: idle assists of a late cycle yield */
  bool finish_rescan_parallel;  /* SGC_FINISH_RESCAN: the finish's rescan by every GC thread */
  unsigned cycle_growth;        /* SGC_CYCLE_GROWTH: % of the threshold a cycle behind may grow */
  unsigned extra_bytes;       /* bytes added to every request (bdwgc: 1) */
  size_t small_request_limit; /* MAX_SMALL_BYTES - extra_bytes */
  unsigned markers;
  /* SGC_MARKERS_CYCLE: collection n marks with markers_cycle[n % length]
   * markers (0 length: off), a benchmarking setting (mark/parallel.c). */
  unsigned markers_cycle[MARKERS_CYCLE_MAX];
  unsigned markers_cycle_length;
  bool sweep_parallel;        /* SGC_SWEEP=parallel */
  enum markers_choice markers_choice;
  uint64_t stop_spin_ns;     /* SGC_STOP_SPIN_US: watch for stop acks before sleeping */
  uint64_t prewake_ns;       /* SGC_PREWAKE_US: GC threads woken before the stop wait this long */
  unsigned usable_cpus;      /* os_usable_cpus() at start-up */
  int print_stats;            /* SGC_STATS: 1 summary, 2 also a line per page store */
  bool print_each_gc;         /* GC_PRINT_STATS */
  bool abort_on_leak;         /* GC_ABORT_ON_LEAK: abort once leaks or smashes are reported */
  unsigned backtraces;        /* GC_BACKTRACES: random backtraces after each collection */
  int trace_fd;               /* SGC_TRACE's file once opened, else -1 */
  const char *trace_path;     /* SGC_TRACE, NULL = off (stats/stats.c opens it) */
};
extern struct sgc_settings sgc_settings SGC_INTERNAL;

/* Messages (base/messages.c).  sgc_fatal prints "sgc: fatal: ..." and
 * aborts; sgc_warn goes through the GC_set_warn_proc hook, as
 * "GC Warning: sgc: ...". */
void sgc_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2))) SGC_INTERNAL;
void sgc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2))) SGC_INTERNAL;
/* Hands the warn procedure PREFIX, then TEXT with every '%' doubled (so
 * the line stays a format with no stray conversion), then SUFFIX, which
 * may hold the one "%lu" for ARG: bdwgc's convention, a whole line. */
/* What every warning starts with: bdwgc's prefix, then sgc's name. */
#define SGC_WARNING_PREFIX "GC Warning: sgc: "
void sgc_warn_line(const char *prefix, const char *text, const char *suffix, GC_word arg) SGC_INTERNAL;
void *sgc_out_of_memory(size_t bytes) SGC_INTERNAL;

/* Lazy start-up for callers that arrive before the constructor ran. */
void sgc_ensure_init(void) SGC_INTERNAL;
/* Preloaded beside libgc: fails (or warns) when an import would bind to
 * bdwgc (api/preload_check.c). */
void preload_check(void) SGC_INTERNAL;
/* Whether libgc is loaded, or sgc was loaded under libgc's name (the
 * default padding follows bdwgc's then). */
bool preload_stands_in_for_libgc(void) SGC_INTERNAL;
/* GC_set_all_interior_pointers: the default padding follows it (api/init.c). */
void settings_interior_pointers_set(bool on) SGC_INTERNAL;
/* Sets sgc_settings.markers and bdwgc's GC_parallel with it (api/misc.c). */
void settings_set_markers(unsigned n) SGC_INTERNAL;
extern _Atomic int sgc_initialised SGC_INTERNAL;

#define SGC_ASSERT(cond)                                                       \
  do {                                                                         \
    if (unlikely(!(cond)))                                                     \
      sgc_fatal("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__);   \
  } while (0)

#endif
