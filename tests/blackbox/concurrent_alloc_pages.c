/* concurrent_alloc_pages: pages the program allocates into during a
 * concurrent cycle cost the uffd barrier nothing (docs/concurrent.md,
 * "Pages the barrier covers").  Free pages are not write-protected at
 * the cycle's start, so formatting and filling them takes no fault, and
 * pages holding only objects allocated during the cycle (white, unmarked)
 * are not reported written, so no round and not the finish looks at them.
 * Before, the arm protected every written page of the heap, free ones
 * too: each page the program then allocated into took a fault (a
 * kernel entry, and an IPI when a protection change was in flight) and
 * was reported at the next round and at the finish.
 *
 * Survivors and garbage are allocated first on a heap of HEAP_MIB, so
 * that the cycle starts with free pages the program touched before (no
 * first-touch fault); the cycle is held open (SGC_CONCURRENT_HOLD_MS) while the
 * program allocates FRESH_MIB of lists into them, counting its minor
 * faults (getrusage); then the cycle finishes by allocating and its
 * record says how many written pages were rescanned.  Needs uffd (exit 77
 * where the kernel does not offer it). */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <sys/resource.h>
#include <unistd.h>

#include "common.h"
#include "uffd_offered.h"

enum {
  OBJECT = 48,
  OLD = 40000,                 /* survivors: ~2 MiB */
  HEAP_MIB = 32,
  GARBAGE = (48 << 20) / OBJECT,
  FRESH_MIB = 4,
  FRESH = (FRESH_MIB << 20) / OBJECT,
  FRESH_PAGES = (FRESH_MIB << 20) / 4096,
  RECORDS = 256,
};

struct node {
  struct node *next;
  uintptr_t value[4];
};

static void *old[OLD];                /* .bss root: marked at the start */
static struct node *volatile fresh;   /* .bss root: read again at the finish */
static void *volatile sink;

static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

int main(void) {
  t_test_name = "concurrent_alloc_pages";
  t_skip_without_uffd(t_test_name);
  GC_INIT();
  CHECK(GC_is_incremental_mode(), "run with SGC_MODE=concurrent");
  /* Room for the cycle's allocation: the garbage below fills (touches)
   * it before a collection comes. */
  CHECK(GC_expand_hp(HEAP_MIB << 20), "GC_expand_hp");
  for (int i = 0; i < OLD; i++) CHECK((old[i] = GC_MALLOC(OBJECT)) != NULL);
  for (long i = 0; i < GARBAGE; i++) sink = GC_MALLOC(OBJECT);
  sink = NULL;
  GC_gcollect(); /* the garbage's pages wait for the next sweep: free at the start */

  GC_word before = GC_get_gc_no();
  GC_start_incremental_collection();
  usleep(150000); /* the start's marking drained; the hold keeps the cycle open */
  long faults_before = minor_faults();
  for (long i = 0; i < FRESH; i++) {
    struct node *n = GC_MALLOC(sizeof *n);
    CHECK(n != NULL);
    n->next = fresh;
    n->value[0] = (uintptr_t)i;
    fresh = n;
  }
  long faults = minor_faults() - faults_before;
  CHECK(GC_get_gc_no() == before, "the cycle finished while the program allocated (hold too short?)");

  /* Finished by allocating slowly: past what a cycle may take, it would
   * finish stopped (a fallback). */
  double deadline = t_now() + 60;
  while (GC_get_gc_no() == before) {
    for (int i = 0; i < 16; i++) sink = GC_MALLOC(32);
    usleep(1000);
    CHECK(t_now() < deadline, "the cycle did not finish within 60 s");
  }
  static SGC_gc_record_t rec[RECORDS];
  size_t n = SGC_get_gc_records(rec, RECORDS);
  const SGC_gc_record_t *cycle = NULL;
  for (size_t i = 0; i < n; i++)
    if (rec[i].gc_no == before + 1) cycle = &rec[i];
  CHECK(cycle && cycle->concurrent, "no record of the cycle");
  long count = 0;
  for (struct node *p = fresh; p; p = p->next) count++;
  CHECK(count == FRESH, "the fresh list lost objects: %ld of %d", count, FRESH);
  printf("concurrent_alloc_pages: %d pages allocated into during the cycle: %ld minor faults, "
         "%llu pages rescanned (%llu at the finish), %llu rounds\n",
         FRESH_PAGES, faults, (unsigned long long)cycle->rescanned_pages,
         (unsigned long long)cycle->finish_rescan_pages, (unsigned long long)cycle->rounds);
  CHECK(faults < FRESH_PAGES / 4, "%ld faults while allocating into %d pages", faults, FRESH_PAGES);
  CHECK(cycle->rescanned_pages < FRESH_PAGES / 4, "%llu pages rescanned, %d allocated into",
        (unsigned long long)cycle->rescanned_pages, FRESH_PAGES);
  printf("concurrent_alloc_pages: ok\n");
  return 0;
}
