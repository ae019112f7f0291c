/* root_ranges: many GC_add_roots ranges, and the same one added again.
 *
 * sgc kept root ranges in fixed tables and ended the program past 4,096
 * ("too many GC_add_roots ranges"); bdwgc ends it past 2,048 ("Too many
 * root sets").  A program that registers the same area at every module
 * load reached that limit too, where bdwgc extends the range it has
 * (a range starting where one does replaces it when longer).  Checks:
 *  1. the same range added 10,000 times, then again longer, is one range:
 *     an object referenced only from its far end survives collections;
 *  2. ROOT_RANGES (default 20,000) separate one-word ranges in malloc'd
 *     memory, each holding the only reference to its object: every
 *     object survives three collections with garbage made between them,
 *     its pattern intact (a collected object would come back zeroed);
 *  3. GC_remove_roots over the whole area: the objects are collected
 *     (at least 90% of their disappearing links cleared: conservative
 *     retention may keep a few);
 *  4. 10,000 exclusions of one static range (sgc ended the program past
 *     4,096): at least 90% of the objects only it references are collected.
 * sgc only: bdwgc aborts in part 2.
 */
#include "gc.h"

#include "common.h"

enum { OBJECT_WORDS = 6, SPACING = 4 /* words between ranges */ };

static uintptr_t pattern(long i, int w) { return ((uintptr_t)i << 8) ^ (uintptr_t)(w * 977 + 13); }

T_NOINLINE static void *patterned_object(long i) {
  uintptr_t *o = GC_malloc(OBJECT_WORDS * sizeof *o);
  CHECK(o != NULL);
  for (int w = 0; w < OBJECT_WORDS; w++) o[w] = pattern(i, w);
  return o;
}

T_NOINLINE static void check_object(const uintptr_t *o, long i, const char *when) {
  for (int w = 0; w < OBJECT_WORDS; w++)
    CHECK(o[w] == pattern(i, w), "%s: object %ld lost word %d (0x%lx): collected while a root range held it",
          when, i, w, (unsigned long)o[w]);
}

T_NOINLINE static void make_garbage(void) {
  for (int i = 0; i < 200000; i++) {
    void **p = GC_malloc(OBJECT_WORDS * sizeof(void *));
    CHECK(p != NULL);
  }
}

/* Part 1: one area registered again and again. */
T_NOINLINE static void same_range_again(void) {
  static void **area; /* malloc'd, so only GC_add_roots makes it a root */
  area = calloc(64, sizeof *area);
  CHECK(area != NULL);
  for (int i = 0; i < 10000; i++) GC_add_roots(area, area + 8);
  GC_add_roots(area, area + 64); /* the same start, longer: extends it */
  area[63] = patterned_object(-1);
  for (int round = 0; round < 3; round++) {
    make_garbage();
    GC_gcollect();
    check_object(area[63], -1, "the far end of a range added again longer");
  }
  GC_remove_roots(area, area + 64);
  t_note("part 1: one range added 10,001 times holds its object");
}

enum { EXCLUDED = 64 };
static void *excluded[EXCLUDED]; /* static data: a root unless excluded */
static void **excluded_links[EXCLUDED];

T_NOINLINE static void fill_excluded(void) {
  for (int i = 0; i < EXCLUDED; i++) {
    excluded[i] = patterned_object(i);
    excluded_links[i] = calloc(1, sizeof(void *));
    CHECK(excluded_links[i] != NULL);
    *excluded_links[i] = excluded[i];
    CHECK(GC_general_register_disappearing_link(excluded_links[i], excluded[i]) == GC_SUCCESS);
  }
}

int main(void) {
  t_test_name = "root_ranges";
  GC_INIT();
  same_range_again();

  long n = t_env_long("ROOT_RANGES", 20000);
  /* Slots SPACING words apart: ranges that neither touch nor overlap. */
  void **slots = calloc((size_t)n * SPACING, sizeof *slots);
  void ***links = calloc((size_t)n, sizeof *links);
  CHECK(slots != NULL && links != NULL);
  for (long i = 0; i < n; i++) GC_add_roots(&slots[i * SPACING], &slots[i * SPACING + 1]);
  for (long i = 0; i < n; i++) {
    slots[i * SPACING] = patterned_object(i);
    links[i] = calloc(1, sizeof(void *));
    CHECK(links[i] != NULL);
    *links[i] = slots[i * SPACING];
    CHECK(GC_general_register_disappearing_link(links[i], slots[i * SPACING]) == GC_SUCCESS);
  }
  for (int round = 0; round < 3; round++) {
    make_garbage();
    GC_gcollect();
    for (long i = 0; i < n; i++) check_object(slots[i * SPACING], i, "separate ranges");
  }
  t_note("part 2: %ld separate ranges held their objects through 3 collections", n);

  /* Part 3: one removal covering every range; the references stay in
   * the (malloc'd, unscanned) slots, so only the ranges kept them. */
  GC_remove_roots(slots, slots + n * SPACING);
  make_garbage();
  GC_gcollect();
  GC_gcollect();
  long cleared = 0;
  for (long i = 0; i < n; i++) cleared += *links[i] == NULL;
  t_note("part 3: after GC_remove_roots, %ld of %ld objects collected", cleared, n);
  CHECK(cleared * 10 >= n * 9, "only %ld of %ld objects collected after GC_remove_roots", cleared, n);

  /* Part 4: one exclusion added again and again stays one, and works:
   * objects referenced only from the excluded static area die. */
  for (int i = 0; i < 10000; i++) GC_exclude_static_roots(excluded, excluded + EXCLUDED);
  fill_excluded();
  make_garbage();
  GC_gcollect();
  GC_gcollect();
  long excluded_cleared = 0;
  for (int i = 0; i < EXCLUDED; i++) excluded_cleared += *excluded_links[i] == NULL;
  t_note("part 4: 10,000 exclusions of one range; %ld of %d objects it alone held collected",
         excluded_cleared, EXCLUDED);
  CHECK(excluded_cleared * 10 >= EXCLUDED * 9, "only %ld of %d objects in the excluded range collected",
        excluded_cleared, EXCLUDED);
  GC_clear_exclusion_table();
  printf("root_ranges: ok\n");
  return 0;
}
