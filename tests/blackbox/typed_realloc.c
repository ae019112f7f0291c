/* typed_realloc: GC_realloc of a typed object (gc_typed.h) keeps its
 * descriptor.
 *
 * A typed object carries its descriptor in a word past the caller's
 * bytes.  Reallocated like any object, the new one would hold a zero
 * there when grown (no pointer scanned: what only it held is freed), a
 * copied data word when shrunk, and in place the caller's last word could
 * land on it.  Each object here holds, in the one word its descriptor
 * names, the only pointer to a target carrying a pattern; every other
 * word is filled with a value that, read as a descriptor, would name a
 * mark procedure nobody registered.  Grown, shrunk and kept in place,
 * across collections, the targets must keep their patterns.
 *
 * sgc only: bdwgc's GC_realloc does not keep typed objects' descriptors
 * (the program must not reallocate them there). */
#define GC_THREADS
#include <gc.h>
#include <gc/gc_mark.h>
#include <gc/gc_typed.h>

#include "common.h"

enum { OBJECTS = 200, TARGET_WORDS = 8 };
/* A procedure descriptor (GC_MAKE_PROC) for a procedure index no program
 * registered here. */
#define BOGUS_DESCRIPTOR ((GC_word)GC_MAKE_PROC(60, 0))

static GC_descr first_word_only;

static void *make_target(unsigned i) {
  GC_word *t = GC_MALLOC_ATOMIC(TARGET_WORDS * sizeof(GC_word));
  CHECK(t != NULL);
  for (unsigned w = 0; w < TARGET_WORDS; w++) t[w] = t_mix64(i * 131u + w);
  return t;
}

static void check_target(const GC_word *t, unsigned i, const char *when) {
  for (unsigned w = 0; w < TARGET_WORDS; w++)
    CHECK(t[w] == t_mix64(i * 131u + w), "%s: target %u word %u changed (freed and reused?)", when, i, w);
}

/* Fills every word of O's BYTES but the first with BOGUS_DESCRIPTOR. */
static void fill_rest(GC_word *o, size_t bytes) {
  for (size_t w = 1; w < bytes / sizeof(GC_word); w++) o[w] = BOGUS_DESCRIPTOR;
}

static void collect(void) {
  t_clear_stack();
  for (int i = 0; i < 3; i++) GC_gcollect();
}

int main(void) {
  t_test_name = "typed_realloc";
  GC_INIT();
  GC_word bitmap[1] = {0};
  GC_set_bit(bitmap, 0);
  first_word_only = GC_make_descriptor(bitmap, 2);
  static const size_t sizes[] = {40, 48, 400, 24, 16, 8192, 3000, 56};
  GC_word **objects = GC_MALLOC(OBJECTS * sizeof *objects);
  CHECK(objects != NULL);
  for (unsigned i = 0; i < OBJECTS; i++) {
    objects[i] = GC_malloc_explicitly_typed(sizes[0], first_word_only);
    CHECK(objects[i] != NULL);
    objects[i][0] = (GC_word)make_target(i);
    fill_rest(objects[i], sizes[0]);
  }
  collect();
  for (size_t s = 1; s < sizeof sizes / sizeof *sizes; s++) {
    for (unsigned i = 0; i < OBJECTS; i++) {
      GC_word *o = GC_REALLOC(objects[i], sizes[s]);
      CHECK(o != NULL, "GC_realloc to %zu bytes", sizes[s]);
      objects[i] = o;
      check_target((GC_word *)o[0], i, "right after GC_realloc");
      fill_rest(o, sizes[s]); /* every word the caller owns */
    }
    collect();
    for (unsigned i = 0; i < OBJECTS; i++) check_target((GC_word *)objects[i][0], i, "after collections");
    t_note("%u typed objects reallocated to %zu bytes kept their targets", OBJECTS, sizes[s]);
  }
  t_note("PASS");
  return 0;
}
