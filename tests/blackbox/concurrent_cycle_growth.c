/* concurrent_cycle_growth: a concurrent cycle that has not converged when
 * the heap is used up at the threshold grows the heap, up to the heap
 * the stop collector's rule asks for (live data and a threshold) and
 * SGC_CYCLE_GROWTH% of the threshold more, before it finishes stopped
 * (docs/concurrent.md, "Fallback").
 *
 * About 40 MB live, the heap then set between live + threshold and that
 * cap (less a step), a cycle started and held (SGC_CONCURRENT_HOLD_MS:
 * it cannot converge), and garbage allocated until the cycle finishes.
 * It must finish as a fallback; then a second such cycle.  With
 * SGC_CYCLE_GROWTH=0 the heap must not grow (its room is past the
 * threshold); otherwise the first cycle must grow it, and neither past
 * the cap and a 4 MiB step: growth by a quarter of the heap, as toward
 * the next collection, passes it in the first cycle, and an allowance
 * counted afresh from each cycle's start (as 1f654587 had it) in the
 * second. */
#include "gc.h"
#include "sgc.h"

#include <stdlib.h>

#include "common.h"

enum { LIVE_NODES = 625 * 1000, NODE_BYTES = 64, MIB = 1 << 20, STEP = 4 << 20 };

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
  /* The threshold: bdwgc's rule from the live data, all scanned (roots,
   * a few KB here, add a little: the margin below covers them). */
  size_t live = (size_t)before.live_bytes, threshold = 2 * live / 3;
  size_t cap = live + threshold + threshold / 100 * (size_t)(percent > 0 ? percent : 50);
  size_t low = live + threshold + MIB, high = cap - STEP / 2 - MIB;
  if (GC_get_heap_size() < low) CHECK(GC_expand_hp(low - GC_get_heap_size()));
  size_t heap_at_start = GC_get_heap_size();
  if (heap_at_start > high) {
    printf("%s: skipped (the heap is %zu KiB, past %zu)\n", t_test_name, heap_at_start >> 10,
           high >> 10);
    return 77;
  }
  /* Two held cycles: the second must not grow the heap past the cap
   * again, as an allowance counted from each cycle's start would. */
  size_t heap = heap_at_start;
  for (int c = 0; c < 2; c++) {
    GC_word gc_no = GC_get_gc_no();
    size_t heap_before = GC_get_heap_size();
    GC_start_incremental_collection();
    static void *volatile sink;
    while (GC_get_gc_no() == gc_no) sink = GC_MALLOC(NODE_BYTES);
    CHECK(sink != NULL);
    SGC_gc_record_t cycle;
    CHECK(SGC_get_gc_records(&cycle, 1) == 1);
    CHECK(cycle.concurrent && cycle.fallback, "held cycle %d ended as concurrent %d, fallback %d",
          c, (int)cycle.concurrent, (int)cycle.fallback);
    heap = (size_t)cycle.heap_bytes;
    t_note("cycle %d: live %zu KiB, threshold about %zu KiB; heap %zu KiB at the start, %zu at "
           "the finish (cap %zu), %zu KiB allocated in the cycle",
           c, live >> 10, threshold >> 10, heap_before >> 10, heap >> 10, cap >> 10,
           (size_t)cycle.cycle_allocated_bytes >> 10);
    if (percent == 0) {
      CHECK(heap == heap_at_start, "the heap grew from %zu to %zu KiB with SGC_CYCLE_GROWTH=0",
            heap_at_start >> 10, heap >> 10);
      continue;
    }
    if (c == 0) CHECK(heap > heap_at_start, "the cycle fell back without growing the heap");
    /* A step's slack: the threshold counts the roots too, which this
     * estimate leaves out (a sanitizer's data among them: up to about
     * 2 MiB more of cap). */
    CHECK(heap <= cap + STEP, "cycle %d grew the heap to %zu KiB, past %zu", c, heap >> 10,
          (cap + STEP) >> 10);
  }
  for (void **n = live_list; n; n = n[0]) CHECK(GC_is_heap_ptr(n));
  return 0;
}
