/* A mark procedure never meets a dead object's stale contents.  Custom
 * kinds are swept lazily (alloc/custom_alloc.c), so after a collection a
 * dead record may sit uncleared on a page no refill has swept; the next
 * collection must sweep it before marking, or a stale pointer that
 * reaches it then makes the marker run the kind's procedure over fields
 * that point into freed or reused memory.
 *
 * The program makes RECORDS records, keeps every tenth (so every page
 * stays with the kind) and lets the rest die (their addresses kept
 * disguised), collects once, then points a scanned array at all of them
 * -- stale pointers, as a conservative stack word would be -- and
 * collects again.  The procedure must run on each and meet no dead
 * record's tag and no free-list link.  Taking custom_kinds_before_mark
 * out makes most calls meet the old tag; leaving the sweep's links in
 * the dead objects makes them meet links. */
#include <gc/gc_mark.h>

#include "alloc/alloc.h"
#include "common.h"
#include "unit.h"

enum { RECORDS = 300, KEEP_EVERY = 10, DEAD_TAG = 0x7a9, KEPT_TAG = 0x5e7, SPURIOUS = 8 };

/* What the procedure saw: every call, calls on a record that died (its
 * old tag), and calls on anything else that is not zero or a kept record
 * (a free-list link left behind). */
static long calls, saw_dead, saw_junk;

static struct GC_ms_entry *mark_record(GC_word *addr, struct GC_ms_entry *top,
                                       struct GC_ms_entry *limit, GC_word env) {
  (void)limit;
  (void)env;
  __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  if (addr[0] == DEAD_TAG) __atomic_add_fetch(&saw_dead, 1, __ATOMIC_RELAXED);
  else if (addr[0] != KEPT_TAG && (addr[0] != 0 || addr[1] != 0))
    __atomic_add_fetch(&saw_junk, 1, __ATOMIC_RELAXED);
  return top;
}

static unsigned record_kind;
static uintptr_t disguised[RECORDS]; /* not pointers: ~address */
static GC_word **kept;               /* every KEEP_EVERY-th record: its page stays */
/* The scanned array of stale pointers.  A root here, not a local: the
 * loop that fills a local array may leave only a pointer one past its
 * end in a register (as an AddressSanitizer build of this test did),
 * and the array then dies before the collection it is for. */
static void **stale_pointers;

static __attribute__((noinline)) void make_records(void) {
  for (int i = 0; i < RECORDS; i++) {
    GC_word *r = GC_generic_malloc(4 * sizeof(GC_word), (int)record_kind);
    CHECK(r != NULL, "allocation");
    r[0] = i % KEEP_EVERY ? DEAD_TAG : KEPT_TAG;
    r[1] = (GC_word)r; /* a pointer into the heap, as live data would hold */
    disguised[i] = ~(uintptr_t)r;
    if (i % KEEP_EVERY == 0) kept[i / KEEP_EVERY] = r;
  }
}

int main(void) {
  GC_INIT();
  record_kind = GC_new_kind(GC_new_free_list(), GC_MAKE_PROC(GC_new_proc(mark_record), 0), 0, 1);
  kept = GC_malloc(RECORDS / KEEP_EVERY * sizeof *kept);
  CHECK(kept != NULL, "allocation");
  make_records();
  /* The dead records' pages are not swept before the next collection:
   * nothing else of the kind is allocated from here on. */
  GC_gcollect();
  stale_pointers = GC_malloc(RECORDS * sizeof(void *));
  CHECK(stale_pointers != NULL, "allocation");
  for (int i = 0; i < RECORDS; i++) stale_pointers[i] = (void *)~disguised[i];
  calls = saw_dead = saw_junk = 0;
  GC_gcollect();
  CHECK(calls >= RECORDS, "the mark procedure ran %ld times for %d reachable records", calls,
        RECORDS);
  /* A few dead records may have survived the first collection through
   * stale words on the stack or in registers: those keep their tag. */
  CHECK(saw_dead <= SPURIOUS, "%ld of %ld calls met a dead record's stale contents", saw_dead,
        calls);
  CHECK(saw_junk == 0, "%ld of %ld calls met a free-list link", saw_junk, calls);
  stale_pointers[0] = NULL;
  return unit_finish();
}
