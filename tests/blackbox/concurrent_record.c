/* concurrent_record: a concurrent cycle's record adds its markers' busy
 * time over every drain of the cycle (its rounds, its finish), so no
 * marker is busier than the cycle lasted.  Each drain used to take the
 * idle time of all the cycle's drains off its own length: busy times
 * wrapped to about 1.8e19 ns in some records (2-5 of 17-19 in cky -t 2).
 *
 * Two threads churn lists over a kept structure under SGC_MODE=concurrent
 * until several cycles with rounds have finished; every concurrent record
 * must then have min <= max busy <= the cycle's length.
 *
 * With FINISH_MARKERS=N in the environment (SGC_MARKERS=N, the choice
 * left to the predictor): every cycle's finish marked with N GC threads.
 * The predictor, taught by drains beside busy program threads, chose one
 * for most finishes, and the worst pauses were those (collect.c). */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "common.h"

enum { THREADS = 2, KEPT = 1 << 15, LIST = 500, RECORDS = 64, WANT_CYCLES = 24 };

struct node {
  struct node *next;
  uintptr_t value;
};

static atomic_int stop;

static void *churn(void *arg) {
  struct node **kept = GC_MALLOC(KEPT * sizeof *kept);
  CHECK(kept != NULL);
  uintptr_t seed = (uintptr_t)arg, i = 0;
  while (!atomic_load(&stop)) {
    struct node *head = NULL;
    for (int k = 0; k < LIST; k++) {
      struct node *n = GC_MALLOC(sizeof *n);
      CHECK(n != NULL);
      n->next = head;
      n->value = seed + k;
      head = n;
    }
    kept[i++ % KEPT] = head; /* writes across the kept table: rounds */
  }
  return kept;
}

int main(void) {
  t_test_name = "concurrent_record";
  GC_INIT();
  CHECK(GC_is_incremental_mode(), "run with SGC_MODE=concurrent");
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, churn, (void *)i) == 0);
  SGC_stats_t s;
  for (int waited = 0; waited < 600; waited++) { /* at most 60 s */
    SGC_get_stats(&s);
    if (s.concurrent_cycles >= WANT_CYCLES) break;
    struct timespec tick = {0, 100000000};
    nanosleep(&tick, NULL);
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
  CHECK(s.concurrent_cycles >= WANT_CYCLES, "%llu cycles in 60 s",
        (unsigned long long)s.concurrent_cycles);

  static SGC_gc_record_t rec[RECORDS];
  size_t n = SGC_get_gc_records(rec, RECORDS), checked = 0, drained_apart = 0;
  const char *finish_markers = getenv("FINISH_MARKERS");
  for (size_t i = 0; i < n; i++) {
    if (!rec[i].concurrent) continue;
    checked++;
    /* The records the bug was in: several markers, a round's drains
     * before the finish's, idle time in them. */
    if (rec[i].markers >= 2 && rec[i].rounds >= 1 && rec[i].mark_idle_ns > 0) drained_apart++;
    CHECK(rec[i].mark_busy_min_ns <= rec[i].mark_busy_max_ns &&
              rec[i].mark_busy_max_ns <= rec[i].cycle_ns,
          "collection %llu: markers busy %llu to %llu ns in a cycle of %llu ns (%llu rounds)",
          (unsigned long long)rec[i].gc_no, (unsigned long long)rec[i].mark_busy_min_ns,
          (unsigned long long)rec[i].mark_busy_max_ns, (unsigned long long)rec[i].cycle_ns,
          (unsigned long long)rec[i].rounds);
    if (finish_markers)
      CHECK(rec[i].markers == atoi(finish_markers), "collection %llu: its finish marked with %d GC threads",
            (unsigned long long)rec[i].gc_no, rec[i].markers);
  }
  CHECK(checked > 0, "no concurrent record among %zu", n);
  if (!finish_markers)
    CHECK(drained_apart > 0, "no cycle of %zu had 2 markers, a round and idle time", checked);
  printf("concurrent_record: ok (%zu cycles' records checked, %zu with rounds and idle markers)\n",
         checked, drained_apart);
  return 0;
}
