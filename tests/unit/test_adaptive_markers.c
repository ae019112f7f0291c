/* The adaptive marker count (mark/parallel.c) on its own: the statistics
 * of a collection are made up, handed to parallel_after_collection, and
 * the count it picks for the next collection is checked.
 *
 * - A collection whose helper was present but got almost no CPU (its
 *   thread's CPU ran something else) teaches nothing: the next collection
 *   still uses every marker.  Judged by wall time, as before cpu_ns, the
 *   helper looked idle and the next 8 collections marked alone.
 * - One whose helper ran and found nothing to steal (a list) makes the
 *   next ones mark alone, retrying every marker after 8 collections, then
 *   after 16 while retries find no parallelism.
 * - One with good parallelism keeps every marker.
 * - A heap with little live data gets one marker per 256 KiB; before the
 *   first collection, the bytes allocated bound the live data.
 * - A GC thread woken onto the collector's CPU moves itself off it
 *   (os_move_off_cpu): this thread asks to leave its own CPU and must
 *   land on another one with its affinity mask unchanged. */
#include <sched.h>

#include "common.h"
#include "mark/mark.h"
#include "os/os.h"
#include "unit.h"

enum { MS = 1000000, LIVE = 64 << 20 };

/* A collection with 2 markers: the collector busy COLLECTOR_BUSY ns; the
 * helper busy HELPER_BUSY, idle the rest of that time, on a CPU for
 * HELPER_CPU. */
static unsigned after_two(uint64_t collector_busy, uint64_t helper_busy, uint64_t helper_cpu) {
  parallel_set_active(2);
  struct marker *c = parallel_marker(0), *h = parallel_marker(1);
  c->busy_ns = collector_busy;
  c->idle_ns = 0;
  c->cpu_ns = collector_busy;
  h->busy_ns = helper_busy;
  h->idle_ns = collector_busy - helper_busy;
  h->cpu_ns = helper_cpu;
  struct mark_totals t = {.bytes = LIVE, .markers = 2};
  t.sum_busy_ns = collector_busy + helper_busy;
  t.max_busy_ns = collector_busy > helper_busy ? collector_busy : helper_busy;
  t.min_busy_ns = collector_busy < helper_busy ? collector_busy : helper_busy;
  parallel_after_collection(&t);
  return parallel_adaptive_markers(2);
}

static unsigned after_one(void) {
  parallel_set_active(1);
  struct marker *c = parallel_marker(0);
  c->busy_ns = c->cpu_ns = 4 * MS;
  c->idle_ns = 0;
  struct mark_totals t = {.bytes = LIVE, .markers = 1, .sum_busy_ns = 4 * MS,
                          .max_busy_ns = 4 * MS, .min_busy_ns = 4 * MS};
  parallel_after_collection(&t);
  return parallel_adaptive_markers(2);
}

int main(void) {
  GC_INIT();
  sgc_settings.markers_choice = MARKERS_RULE; /* the rule this file tests */
  parallel_ensure_markers(2);
  CHECK(parallel_markers_created() == 2, "need one GC thread, have %u markers",
        parallel_markers_created());

  /* No collection yet: what was allocated bounds the live data. */
  parallel_bound_first_live(100 << 10);
  CHECK(parallel_adaptive_markers(2) == 1, "first collection after 100 KiB: %u markers",
        parallel_adaptive_markers(2));
  parallel_bound_first_live(LIVE);
  CHECK(parallel_adaptive_markers(2) == 2, "first collection after 64 MiB: %u markers",
        parallel_adaptive_markers(2));

  /* Present for the whole 4 ms, 80 us on a CPU: nothing learnt. */
  CHECK(after_two(4 * MS, 20000, 80000) == 2,
        "a helper that got no CPU made the next collection mark alone");
  /* Good parallelism: both busy. */
  CHECK(after_two(4 * MS, 4 * MS - 100000, 4 * MS) == 2, "good parallelism dropped a marker");
  /* Present and running, nothing to steal: alone from now on. */
  CHECK(after_two(4 * MS, 20000, 4 * MS) == 1, "a poor collection did not go alone");
  for (int i = 1; i < 8; i++) CHECK(after_one() == 1, "retried after %d collections, not 8", i);
  CHECK(after_one() == 2, "no retry after 8 collections alone");
  /* The retry is poor too: the next one waits 16 collections. */
  CHECK(after_two(4 * MS, 20000, 4 * MS) == 1, "a poor retry did not go alone");
  for (int i = 1; i < 16; i++) CHECK(after_one() == 1, "retried after %d collections, not 16", i);
  CHECK(after_one() == 2, "no retry after 16 collections alone");
  /* A good retry restores every marker. */
  CHECK(after_two(4 * MS, 4 * MS, 4 * MS) == 2, "a good retry did not restore the markers");

  /* More markers than CPUs: 3 helpers that shared the CPUs beside the
   * collector's (at most 3) and found nothing to steal teach as much. */
  unsigned cpus = os_usable_cpus(), room = cpus > 1 ? cpus - 1 : 1;
  if (room > 3) room = 3;
  parallel_ensure_markers(4);
  parallel_set_active(4);
  for (unsigned k = 0; k < 4; k++) {
    struct marker *m = parallel_marker(k);
    m->busy_ns = k ? 20000 : 4 * MS;
    m->idle_ns = k ? 4 * MS - 20000 : 0;
    m->cpu_ns = k ? 4 * MS * room / 3 : 4 * MS;
  }
  struct mark_totals crowded = {.bytes = LIVE, .markers = 4, .sum_busy_ns = 4 * MS + 60000,
                                .max_busy_ns = 4 * MS, .min_busy_ns = 20000};
  parallel_after_collection(&crowded);
  CHECK(parallel_adaptive_markers(4) == 1,
        "4 markers on %u CPUs, helpers idle but running: next uses %u markers", cpus,
        parallel_adaptive_markers(4));
  CHECK(after_two(4 * MS, 4 * MS, 4 * MS) == 2, "a good collection did not restore the markers");

  /* Little live data: one marker per 256 KiB (waking a helper would cost
   * more than it marks). */
  struct mark_totals small = {.bytes = 200 << 10, .markers = 1};
  parallel_set_active(1);
  parallel_after_collection(&small);
  CHECK(parallel_adaptive_markers(2) == 1, "200 KiB live: %u markers", parallel_adaptive_markers(2));
  small.bytes = 600 << 10;
  parallel_after_collection(&small);
  CHECK(parallel_adaptive_markers(2) == 2, "600 KiB live: %u markers", parallel_adaptive_markers(2));
  cpu_set_t before, after;
  CHECK(sched_getaffinity(0, sizeof before, &before) == 0, "sched_getaffinity");
  if (CPU_COUNT(&before) < 2) {
    printf("one CPU allowed: the move has nowhere to go, not tested\n");
  } else {
    for (int i = 0; i < 5; i++) {
      int cpu = sched_getcpu();
      CHECK(os_move_off_cpu(cpu), "did not leave CPU %d", cpu);
      CHECK(sched_getcpu() != cpu, "still on CPU %d after moving off it", cpu);
      CHECK(sched_getaffinity(0, sizeof after, &after) == 0 && CPU_EQUAL(&before, &after),
            "affinity mask changed");
    }
    CHECK(!os_move_off_cpu(-1), "moved for no CPU");
  }
  return unit_finish();
}
