/* How long ranges are split (SLO, thesis §3.4.3) for a marker alone and
 * for several (mark.c, mark_configure_drain): SGC_SPLIT_BYTES pieces where other
 * GC threads may steal them, 4 KiB ones for a lone marker, never for
 * No-SLO and No-Opt; under SGC_MARK_STACK_LIMIT, lone pieces whose
 * referents fill at most half the stack.  And what the lone rule must
 * still bound: a lone marker that scans an array of half a million
 * pointers to fresh objects keeps its mark stack at the size it started
 * with (a piece pushes at most 512 referents), where scanning the array
 * whole would push every referent at once and grow the stack to hold
 * them. */
#include <stdlib.h>

#include "common.h"
#include "mark/mark.h"
#include "mark/marker.h"
#include "unit.h"

static void check_rule(size_t split, size_t alone, size_t shared) {
  mark_config.split_bytes = split;
  mark_configure_drain(true);
  CHECK(mark_config.drain_split_bytes == alone, "SGC_SPLIT_BYTES=%zu alone: pieces of %zu, want %zu",
        split, mark_config.drain_split_bytes, alone);
  mark_configure_drain(false);
  CHECK(mark_config.drain_split_bytes == shared,
        "SGC_SPLIT_BYTES=%zu shared: pieces of %zu, want %zu", split,
        mark_config.drain_split_bytes, shared);
}

static void *volatile root;

int main(void) {
  GC_init();
  size_t configured = mark_config.split_bytes;
  check_rule(256, 4096, 256);
  check_rule(64, 4096, 64);
  check_rule(4096, 4096, 4096);
  check_rule(1 << 20, 1 << 20, 1 << 20); /* a larger setting stands */
  check_rule(0, 0, 0);                   /* No-SLO, No-Opt */
  /* Under a stack limit, pieces whose referents fill half the stack. */
  size_t limit = mark_config.stack_limit;
  mark_config.stack_limit = 256;
  check_rule(256, 1024, 256);
  mark_config.stack_limit = 64;
  check_rule(256, 256, 256);
  mark_config.stack_limit = limit;
  mark_config.split_bytes = configured;

  /* One marker, the default split: a 4 MiB array, every word pointing to
   * an object of its own. */
  sgc_settings.markers = 1;
  sgc_settings.markers_choice = MARKERS_FIXED;
  enum { N = 1 << 19 };
  GC_disable();
  void **array = GC_malloc(N * sizeof(void *));
  CHECK(array != NULL, "the array");
  for (size_t i = 0; i < N; i++) array[i] = GC_malloc(16);
  root = array;
  GC_enable();
  size_t capacity_before = mark_collector->capacity;
  GC_gcollect();
  SGC_gc_record_t rec;
  CHECK(SGC_get_gc_records(&rec, 1) == 1, "no record");
  CHECK(rec.markers == 1, "%d markers ran, asked for 1", rec.markers);
  CHECK(rec.marked_objects >= N + 1, "marked %lu objects, want at least %d",
        (unsigned long)rec.marked_objects, N + 1);
  size_t unmarked = 0;
  for (size_t i = 0; i < N; i++) {
    struct page_header *page;
    uintptr_t base = object_start((uintptr_t)array[i], &page);
    if (!base || !mark_bit_test(page, base)) unmarked++;
  }
  CHECK(unmarked == 0, "%zu of the array's objects unmarked", unmarked);
  CHECK(mark_collector->capacity == capacity_before,
        "the lone marker's stack grew from %zu to %zu entries for a %d-word array",
        capacity_before, mark_collector->capacity, N);
  return unit_finish();
}
