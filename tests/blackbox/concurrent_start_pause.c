/* concurrent_start_pause: with the uffd barrier a cycle's start arms the
 * barrier before its stop, so the walk over the heap's page tables is not
 * part of the pause (docs/concurrent.md, "Start").  Armed in the pause,
 * it made the start pause grow with the heap: 14 ms at 2 GiB (the
 * latency program with 1 GiB live), over the 10 ms target by itself.
 *
 * One thread holds 256 MiB of blocks that may hold pointers (zeros),
 * touched so that every page has a page table entry (pointer-free blocks
 * the arm leaves unprotected: they would make it short whatever its
 * place), and allocates short-lived lists until
 * several cycles have finished.  Each record gives the start's pause and
 * the arm's time: armed in the pause, the pause is never shorter than the
 * arm; armed before the stop, a single thread's pause (no thread to stop,
 * a few roots) is far shorter.  Most starts must be, not all: a start
 * preempted in its pause on a busy machine may not be.  Needs uffd (exit
 * 77 where the kernel does not offer it). */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <stdbool.h>

#include "common.h"
#include "uffd_offered.h"

enum {
  BLOCK = 64 << 10,
  BLOCKS = 4096, /* 256 MiB kept */
  LIST = 1000,
  WANT_CYCLES = 8,
  RECORDS = 64,
};

struct node {
  struct node *next;
  uintptr_t value;
};

int main(void) {
  t_test_name = "concurrent_start_pause";
  t_skip_without_uffd(t_test_name);
  GC_INIT();
  CHECK(GC_is_incremental_mode(), "run with SGC_MODE=concurrent");
  char **kept = GC_MALLOC(BLOCKS * sizeof *kept);
  CHECK(kept != NULL);
  for (int i = 0; i < BLOCKS; i++) {
    kept[i] = GC_MALLOC(BLOCK);
    CHECK(kept[i] != NULL);
    memset(kept[i], 0, BLOCK);
  }
  size_t start = GC_get_gc_no();
  struct node *volatile head = NULL;
  for (long lists = 0; GC_get_gc_no() < start + WANT_CYCLES; lists++) {
    CHECK(lists < 200000, "only %zu cycles after %ld lists", GC_get_gc_no() - start, lists);
    head = NULL;
    for (int k = 0; k < LIST; k++) {
      struct node *n = GC_MALLOC(sizeof *n);
      CHECK(n != NULL);
      n->next = head;
      n->value = (uintptr_t)k;
      head = n;
    }
  }

  static SGC_gc_record_t rec[RECORDS];
  size_t n = SGC_get_gc_records(rec, RECORDS), big = 0, shorter = 0;
  for (size_t i = 0; i < n; i++) {
    /* Cycles over the whole kept heap, whose arm is long enough to see. */
    if (!rec[i].concurrent || rec[i].heap_bytes < (size_t)BLOCKS * BLOCK) continue;
    big++;
    if (rec[i].start_pause_ns < rec[i].start_arm_ns) shorter++;
    printf("cycle %llu: start pause %llu ns, arm %llu ns\n", (unsigned long long)rec[i].gc_no,
           (unsigned long long)rec[i].start_pause_ns, (unsigned long long)rec[i].start_arm_ns);
  }
  CHECK(big >= WANT_CYCLES / 2, "%zu cycles over the kept heap", big);
  CHECK(2 * shorter >= big, "the start pause was shorter than the barrier's arm in %zu of %zu cycles",
        shorter, big);
  printf("concurrent_start_pause: ok (%zu of %zu starts shorter than the arm)\n", shorter, big);
  (void)kept;
  return 0;
}
