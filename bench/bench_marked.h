/*
 * bench_marked.h: the objects and bytes each collection marked, counted
 * the same way under sgc and bdwgc (included by bench_common.h in the
 * garbage-collected builds).
 *
 * Why: the two collectors count marked bytes differently.  bdwgc adds a
 * byte to every request (so that a pointer one past the end still points
 * into the object), and a 32-byte object fills 48 bytes of its heap and
 * of its "In-use heap" figure, 32 of sgc's; cky's items and derivations
 * are 32 bytes.  Marked bytes per mark time then favour bdwgc on such
 * programs, and the objects marked per mark time do not.
 *
 * With BENCH_COUNT_MARKED=1 in the environment, a collection-event hook
 * walks the marked objects at the end of every collection
 * (GC_enumerate_reachable_objects_inner, with the allocation lock held,
 * as bdwgc's hook runs) and adds their number and sizes to two totals
 * that the RESULT line reports as marked_objects_enum and
 * marked_bytes_enum.  The walk runs after bdwgc has timed the collection
 * ("Complete collection took" is logged before GC_EVENT_END) and after
 * sgc's trace record is closed, so neither collector's mark time
 * includes it; the runs' wall times do, so the runner sets it only where
 * it reads mark rates.
 */
#ifndef BENCH_MARKED_H
#define BENCH_MARKED_H

#include <gc/gc_mark.h>
#include <stdlib.h>

/* Written by the hook only, which runs under the allocation lock, one
 * collection at a time; read at exit, after the last collection. */
static unsigned long long bench_marked_objects, bench_marked_bytes;
static int bench_marked_enabled;

static void bench_marked_add(void *obj, size_t bytes, void *data) {
  (void)obj;
  (void)data;
  bench_marked_objects++;
  bench_marked_bytes += bytes;
}

static void bench_marked_on_event(GC_EventType event) {
  if (event == GC_EVENT_END) GC_enumerate_reachable_objects_inner(bench_marked_add, NULL);
}

/* Call after GC_INIT(). */
static inline void bench_marked_init(void) {
  const char *s = getenv("BENCH_COUNT_MARKED");
  if (!s || !*s || *s == '0') return;
  bench_marked_enabled = 1;
  GC_set_on_collection_event(bench_marked_on_event);
}

#endif /* BENCH_MARKED_H */
