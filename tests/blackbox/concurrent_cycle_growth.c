/* concurrent_cycle_growth: a concurrent cycle that has not converged when
 * the heap is used up grows the heap by at most SGC_CYCLE_GROWTH% of the
 * threshold before it finishes stopped (docs/concurrent.md, "Triggering").
 *
 * About 16 MB live, the heap then expanded by 64 MiB, a cycle started and
 * held (SGC_CONCURRENT_HOLD_MS: it cannot converge), and garbage allocated
 * until the cycle finishes.  It must finish as a fallback.  With
 * SGC_CYCLE_GROWTH=0 the heap must not grow during the cycle (64 MiB of
 * room is past the threshold); otherwise it must grow, by at most the
 * allowance and half a step (the heap grows in whole steps): growing by
 * a quarter of the heap, as the heap grows towards the next collection,
 * is 20 MiB here, past that bound. */
#include "gc.h"
#include "sgc.h"

#include <stdlib.h>

#include "common.h"

enum { LIVE_NODES = 250 * 1000, NODE_BYTES = 64, EXPAND_BYTES = 64 << 20, MIB = 1 << 20 };

static void **live_list; /* .bss root */

int main(void) {
  t_test_name = "concurrent_cycle_growth";
  GC_INIT();
  CHECK(GC_is_incremental_mode(), "run with SGC_MODE=concurrent");
  const char *setting = getenv("SGC_CYCLE_GROWTH");
  long percent = setting ? atol(setting) : 50;
  for (int i = 0; i < LIVE_NODES; i++) {
    void **n = GC_MALLOC(NODE_BYTES);
    CHECK(n != NULL);
    n[0] = live_list;
    live_list = n;
  }
  GC_gcollect();
  SGC_gc_record_t before;
  CHECK(SGC_get_gc_records(&before, 1) == 1);
  CHECK(GC_expand_hp(EXPAND_BYTES));
  size_t heap_at_start = GC_get_heap_size();
  GC_word gc_no = GC_get_gc_no();
  GC_start_incremental_collection();
  static void *volatile sink;
  while (GC_get_gc_no() == gc_no) sink = GC_MALLOC(NODE_BYTES);
  CHECK(sink != NULL);
  SGC_gc_record_t cycle;
  CHECK(SGC_get_gc_records(&cycle, 1) == 1);
  CHECK(cycle.concurrent && cycle.fallback, "the held cycle ended as concurrent %d, fallback %d",
        (int)cycle.concurrent, (int)cycle.fallback);
  size_t grown = cycle.heap_bytes > heap_at_start ? cycle.heap_bytes - heap_at_start : 0;
  /* The threshold: bdwgc's rule from the live data (roots are a few KB
   * here), at least 2 MiB (collect/trigger.c). */
  size_t threshold = (2 * (size_t)before.live_bytes + MIB) / 3;
  if (threshold < 2 * MIB) threshold = 2 * MIB;
  size_t bound = threshold / 100 * (size_t)percent + 2 * MIB; /* half a 4 MiB step */
  t_note("live %zu KiB, heap %zu MiB at the start, grown by %zu KiB during the cycle "
         "(bound %zu KiB), %zu KiB allocated in it",
         (size_t)before.live_bytes >> 10, heap_at_start >> 20, grown >> 10, bound >> 10,
         (size_t)cycle.cycle_allocated_bytes >> 10);
  if (percent == 0) {
    CHECK(grown == 0, "the heap grew by %zu KiB during a cycle with SGC_CYCLE_GROWTH=0", grown >> 10);
  } else {
    CHECK(grown > 0, "the cycle fell back without growing the heap");
    CHECK(grown <= bound, "the heap grew by %zu KiB during the cycle, past %zu", grown >> 10,
          bound >> 10);
  }
  for (void **n = live_list; n; n = n[0]) CHECK(GC_is_heap_ptr(n));
  return 0;
}
