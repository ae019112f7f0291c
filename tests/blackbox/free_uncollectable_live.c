/* free_uncollectable_live: uncollectable objects the program freed are not
 * live, even where a stale word still points at one.
 *
 * Freed small uncollectable objects wait on free lists linked through
 * their first word (alloc/uncollectable.c).  A stale pointer to one of
 * them -- a C++ vector's storage past its size, holding the objects it
 * held before their `delete` -- used to have the marker scan it and follow
 * the link to the next free object, and the next, so a whole list of free
 * objects was marked, counted live and made roots: bb_cpp_new's rounds of
 * new[]/delete[] had a concurrent cycle count 46 MB live of 8.  The check:
 * after half of OBJECTS objects are freed (the others kept, so their pages
 * stay) and a few stale words point at freed ones, a collection counts
 * less than a tenth of the freed bytes live.  Run in stop and in
 * concurrent mode (tests/CMakeLists.txt).
 *
 *   FREE_UNCOLL_OBJECTS (default 200000) objects of 48 bytes. */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include <gc.h>
#include <sgc.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

enum { OBJECT_BYTES = 48, STALE_WORDS = 8 };

/* Roots in the data segment: the stale words. */
static void *volatile stale[STALE_WORDS];

int main(void) {
  t_test_name = "free_uncollectable_live";
  GC_INIT();
  long objects = 200000;
  const char *env = getenv("FREE_UNCOLL_OBJECTS");
  if (env) objects = atol(env);
  /* malloc'd: sgc does not scan it, so only the stale words remain. */
  void **all = malloc(objects * sizeof(void *));
  CHECK(all != NULL);
  for (long i = 0; i < objects; i++) {
    all[i] = GC_MALLOC_UNCOLLECTABLE(OBJECT_BYTES);
    CHECK(all[i] != NULL, "object %ld", i);
  }
  /* Every other one freed: their pages stay in use (a page with no
   * object left goes back to the pool, and a stale word into it finds
   * nothing). */
  for (long i = 0; i < objects; i += 2) GC_FREE(all[i]);
  /* The last ones freed head the lists; the others lie along them. */
  for (int k = 0; k < STALE_WORDS; k++) stale[k] = all[(objects - 2 - k * (objects / STALE_WORDS)) & ~1L];
  /* One collection: the marks it sets stay (a free object it marked is a
   * root until handed out again), so a second one would count nothing
   * anew. */
  GC_gcollect();
  SGC_gc_record_t rec;
  CHECK(SGC_get_gc_records(&rec, 1) == 1);
  uint64_t freed_bytes = (uint64_t)(objects / 2) * OBJECT_BYTES;
  CHECK(rec.live_bytes < freed_bytes / 10,
        "%llu bytes live after %llu bytes of uncollectable objects were freed (stale words "
        "point at %d of them)",
        (unsigned long long)rec.live_bytes, (unsigned long long)freed_bytes, STALE_WORDS);
  t_note("%llu bytes live after %llu freed", (unsigned long long)rec.live_bytes,
         (unsigned long long)freed_bytes);
  for (long i = 1; i < objects; i += 2) GC_FREE(all[i]);
  free(all);
  return 0;
}
