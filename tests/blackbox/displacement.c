/* displacement: without interior pointers, a pointer at a registered
 * displacement into an object (a tagged pointer, GC_register_displacement)
 * keeps it alive, and one at any other offset does not.  Runs against
 * bdwgc too.
 *
 * OBJECTS objects with finalizers are held only through tagged pointers
 * in an uncollectable array: at offset 1 (registered) none may die; moved
 * to offset 3 (not registered) most must (a few may stay conservatively).
 */
#include <gc.h>

#include "common.h"

enum { OBJECTS = 200, OBJECT_BYTES = 32 };
static int finalized;
static void count(void *obj, void *cd) { finalized++; }

static void collect(void) {
  GC_gcollect();
  GC_invoke_finalizers();
  GC_gcollect();
  GC_invoke_finalizers();
}

static T_NOINLINE void fill(char **tagged) {
  for (int i = 0; i < OBJECTS; i++) {
    char *p = GC_malloc(OBJECT_BYTES);
    CHECK(p != NULL);
    GC_register_finalizer(p, count, NULL, NULL, NULL);
    tagged[i] = p + 1;
  }
}

static T_NOINLINE void retag(char **tagged, int from, int to) {
  for (int i = 0; i < OBJECTS; i++) tagged[i] = tagged[i] - from + to;
}

static T_NOINLINE void clear_stack(void) {
  volatile char junk[8192];
  memset((char *)junk, 0, sizeof junk);
}

int main(void) {
  t_test_name = "displacement";
  GC_set_all_interior_pointers(0); /* before GC_INIT, as bdwgc requires */
  GC_INIT();
  GC_set_finalize_on_demand(1);
  GC_register_displacement(1);
  char **tagged = GC_malloc_uncollectable(OBJECTS * sizeof(char *));
  CHECK(tagged != NULL);
  fill(tagged);
  clear_stack();
  collect();
  CHECK(finalized == 0, "%d objects held at displacement 1 were finalized", finalized);
  retag(tagged, 1, 3);
  clear_stack();
  collect();
  CHECK(finalized > OBJECTS / 2, "only %d of %d objects held at displacement 3 died", finalized,
        OBJECTS);
  t_note("%d of %d died at an unregistered displacement\n", finalized, OBJECTS);
  return 0;
}
