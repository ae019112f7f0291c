/* A fork child takes back the uncollectable caches of the threads it
 * lost (uncollectable_cache_retire_lost, alloc/uncollectable.c) as far as
 * they can be trusted.  Those threads fill and empty their caches with no
 * lock, and fork copies memory page by page while they write, so the
 * child may find a list whose links are half written or whose objects
 * hold their words from before they were freed.
 *
 *   A lost thread's caches are built here from real freed objects, then
 *   broken the ways such a copy can be: a link to a word outside the
 *   heap, a link to an object the program holds, a link back into the
 *   list (a cycle), a link to the middle of an object, and an object
 *   whose words were never cleared.  The walk must take exactly the
 *   objects before each break, clear them, leave the held object as it
 *   was, and hand out only zeroed objects afterwards. */
#include <string.h>

#include "alloc/alloc.h"
#include "collect/collect.h"
#include "common.h"
#include "alloc/thread_alloc.h"
#include "unit.h"

enum { OBJECTS = 8, OBJECT_BYTES = 64 };

static unsigned state_of(void *p) {
  return atomic_load(mark_bit_of(page_of_address((uintptr_t)p), (uintptr_t)p));
}

/* Frees OBJECTS objects of class CLS from this thread's cache into a
 * list of the lost record LOST, in allocation order: objs[0] at the head. */
static void build_lost_list(struct thread_alloc *lost, unsigned cls, void **objs) {
  struct thread_alloc *self = alloc_self();
  for (int i = 0; i < OBJECTS; i++) {
    objs[i] = GC_malloc_uncollectable(OBJECT_BYTES);
    CHECK(objs[i] != NULL, "allocation %d", i);
  }
  for (int i = OBJECTS - 1; i >= 0; i--) GC_free(objs[i]);
  /* The frees pushed objs[0] last: it heads this thread's cache.  The
   * first OBJECTS objects of that list become the lost thread's. */
  void **head = &self->uncollectable_cache[0][cls];
  CHECK(*head == objs[0], "the cache starts with the last object freed");
  void *rest = *(void **)objs[OBJECTS - 1];
  *(void **)objs[OBJECTS - 1] = NULL;
  *head = rest;
  unsigned bytes = OBJECTS * OBJECT_BYTES;
  self->uncollectable_cached_bytes[0][cls] -= bytes;
  self->uncollectable_cached_total -= bytes;
  lost->uncollectable_cache[0][cls] = objs[0];
  lost->uncollectable_cached_bytes[0][cls] = bytes;
  lost->uncollectable_cached_total += bytes;
  for (int i = 0; i < OBJECTS; i++) CHECK(state_of(objs[i]) == 2, "object %d cached", i);
}

/* Breaks the lost list after object BREAK_AT with LINK, retires it, and
 * checks that exactly the first BREAK_AT + 1 objects went back. */
static void run_case(const char *name, unsigned cls, int break_at, void *(*link)(void **objs)) {
  static struct thread_alloc lost; /* zero: no caches */
  void *objs[OBJECTS];
  build_lost_list(&lost, cls, objs);
  if (break_at >= 0) *(void **)objs[break_at] = link(objs);
  heap_lock_acquire();
  uncollectable_cache_retire_lost(&lost);
  pthread_mutex_unlock(&heap_lock);
  int taken = 0, taken_in_order = 1;
  for (int i = 0; i < OBJECTS; i++) {
    int back = state_of(objs[i]) == 0;
    taken += back;
    if (back != (break_at < 0 || i <= break_at)) taken_in_order = 0;
  }
  int expected = break_at < 0 ? OBJECTS : break_at + 1;
  printf("%s: %d of %d objects taken back (expected %d)\n", name, taken, OBJECTS, expected);
  CHECK(taken == expected && taken_in_order, "%s: took %d objects, expected the first %d", name,
        taken, expected);
  CHECK(lost.uncollectable_cache[0][cls] == NULL && lost.uncollectable_cached_total == 0,
        "%s: the lost record keeps a cache", name);
}

static void *outside_heap(void **objs) {
  (void)objs;
  static uintptr_t word;
  return &word;
}
static uintptr_t *held;
static void *held_object(void **objs) {
  (void)objs;
  return held;
}
static void *back_to_first(void **objs) { return objs[0]; }
static void *mid_object(void **objs) { return (char *)objs[5] + 16; }

int main(void) {
  GC_INIT();
  unsigned cls = size_class_for_bytes(OBJECT_BYTES);
  CHECK(size_class_bytes[cls] == OBJECT_BYTES, "class of %d bytes", OBJECT_BYTES);

  run_case("whole list", cls, -1, NULL);
  run_case("link outside the heap", cls, 2, outside_heap);
  held = GC_malloc_uncollectable(OBJECT_BYTES);
  for (int w = 0; w < OBJECT_BYTES / 8; w++) held[w] = 0x48454c44u + (uintptr_t)w;
  run_case("link to a held object", cls, 4, held_object);
  int intact = state_of(held) == 1;
  for (int w = 0; w < OBJECT_BYTES / 8; w++) intact &= held[w] == 0x48454c44u + (uintptr_t)w;
  CHECK(intact, "the held object changed");
  run_case("a cycle", cls, OBJECTS - 1, back_to_first);
  run_case("link into an object", cls, 3, mid_object);

  /* Words from before the free: the copy may show an object's old
   * contents under its new link.  Taken back, it must be cleared. */
  static struct thread_alloc lost;
  void *objs[OBJECTS];
  build_lost_list(&lost, cls, objs);
  for (int i = 0; i < OBJECTS; i++) memset((char *)objs[i] + 8, 0xa5, OBJECT_BYTES - 8);
  /* This thread's own caches go back first, and the lost objects then
   * in front of them on the shared list, so this thread's next refill of
   * the class takes them. */
  heap_lock_acquire();
  uncollectable_cache_retire(alloc_self());
  uncollectable_cache_retire_lost(&lost);
  pthread_mutex_unlock(&heap_lock);
  size_t dirty = 0, reused = 0;
  enum { AGAIN = 1024 };
  static void *again[AGAIN];
  for (int i = 0; i < AGAIN; i++) {
    unsigned char *p = again[i] = GC_malloc_uncollectable(OBJECT_BYTES);
    for (int j = 0; j < OBJECTS; j++) reused += p == objs[j];
    for (int b = 0; b < OBJECT_BYTES; b++) dirty += p[b] != 0;
  }
  printf("stale words: %zu of %d lost objects handed out again, %zu non-zero bytes\n", reused,
         OBJECTS, dirty);
  CHECK(reused == OBJECTS, "%zu of the lost objects came back", reused);
  CHECK(dirty == 0, "%zu non-zero bytes in objects handed out", dirty);
  for (int i = 0; i < AGAIN; i++) GC_free(again[i]);
  GC_free(held);
  return unit_finish();
}
