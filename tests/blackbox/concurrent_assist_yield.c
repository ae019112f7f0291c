/* concurrent_assist_yield: an allocating thread whose cycle is behind and
 * which finds no marking to take gives up its CPU (SGC_ASSIST_YIELD,
 * collect/assist.c), and one whose cycle is on pace does not.
 *
 * Run with SGC_MODE=concurrent and SGC_CONCURRENT_HOLD_MS: each cycle's
 * driver marks what the start's roots reach, then waits, so the
 * program's slow paths find nothing to take while the allocation since
 * the start eats the room to the cycle's limit.  Once what it allocated
 * reaches the room left, the budgets reach the bytes taken: those assists
 * must yield, and only idle ones (yields <= idle assists, every record).
 * EXPECT_YIELDS=0 (with SGC_ASSIST_YIELD=0): no record counts a yield. */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <stdbool.h>
#include <stdlib.h>

#include "common.h"

enum { KEPT = 1 << 14, RECORDS = 64, WANT_CYCLES = 6 };

struct node {
  struct node *next;
  uintptr_t value;
};

int main(void) {
  t_test_name = "concurrent_assist_yield";
  GC_INIT();
  CHECK(GC_is_incremental_mode(), "run with SGC_MODE=concurrent");
  const char *expect = getenv("EXPECT_YIELDS");
  bool want_yields = !expect || atoi(expect) != 0;
  struct node **kept = GC_MALLOC(KEPT * sizeof *kept);
  CHECK(kept != NULL);
  SGC_stats_t s;
  for (uintptr_t i = 0;; i++) {
    struct node *n = GC_MALLOC(sizeof *n);
    CHECK(n != NULL);
    n->value = i;
    n->next = kept[i % KEPT] && i % 7 ? kept[i % KEPT]->next : NULL;
    kept[i % KEPT] = n;
    if (i % 4096 == 0) {
      SGC_get_stats(&s);
      if (s.concurrent_cycles >= WANT_CYCLES) break;
    }
  }
  static SGC_gc_record_t rec[RECORDS];
  size_t n = SGC_get_gc_records(rec, RECORDS), cycles = 0, yielded = 0;
  for (size_t i = 0; i < n; i++) {
    if (!rec[i].concurrent) continue;
    cycles++;
    CHECK(rec[i].assist_yields <= rec[i].assists_idle,
          "collection %llu: %llu yields but %llu idle assists", (unsigned long long)rec[i].gc_no,
          (unsigned long long)rec[i].assist_yields, (unsigned long long)rec[i].assists_idle);
    if (!want_yields)
      CHECK(rec[i].assist_yields == 0, "collection %llu: %llu yields with SGC_ASSIST_YIELD=0",
            (unsigned long long)rec[i].gc_no, (unsigned long long)rec[i].assist_yields);
    yielded += rec[i].assist_yields > 0;
  }
  CHECK(cycles >= WANT_CYCLES, "%zu concurrent records of %zu", cycles, n);
  /* Every held cycle runs out of room with nothing to take but the first
   * (no live data known yet); most must have yielded. */
  if (want_yields) CHECK(yielded * 2 >= cycles, "%zu of %zu cycles yielded", yielded, cycles);
  printf("concurrent_assist_yield: ok (%zu of %zu cycles yielded)\n", yielded, cycles);
  return 0;
}
