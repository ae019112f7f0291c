/* blacklist: a false pointer into free pages does not pin the large
 * objects allocated there later (issue 58; bdwgc's black-listing).
 *
 * A large object is freed and a static word is set to an address inside
 * its old pages: an integer that looks like a pointer, which a
 * conservative scan cannot tell from one.  Each round collects (the scan
 * finds the word pointing into free pages), allocates a new large object
 * of the same size, drops it and collects again.  Without black-listing
 * the pool hands out the freed pages again (best fit), the word lies
 * inside every new object, and each one is kept; with it, the new objects
 * go elsewhere and are all reclaimed.  Then the word is cleared, and the
 * collections after it black-list nothing (the notes age out).
 * SGC_BLACKLIST=0 turns black-listing off: the test then fails. */
#define _GNU_SOURCE
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include <gc.h>
#include <sgc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { OBJECT_BYTES = 256 << 10, ROUNDS = 8 };

/* In the data segment, a root: the "pointer" is an integer. */
static volatile uintptr_t false_pointer;
static void **link_slot; /* pointer-free: the link holds nothing alive */

/* Allocates the round's object, watches it with a disappearing link and
 * says whether the false pointer lies inside it; the object's address
 * stays in this frame only. */
__attribute__((noinline)) static int place_object(void) {
  char *obj = GC_MALLOC_ATOMIC(OBJECT_BYTES);
  if (!obj) {
    fprintf(stderr, "blacklist: allocation failed\n");
    exit(1);
  }
  *link_slot = obj;
  GC_general_register_disappearing_link(link_slot, obj);
  return false_pointer - (uintptr_t)obj < OBJECT_BYTES;
}

/* Overwrites the dead frames place_object left below main. */
__attribute__((noinline)) static void clear_below(void) {
  volatile char pad[16384];
  for (size_t i = 0; i < sizeof pad; i++) pad[i] = 0;
}

int main(void) {
  GC_INIT();
  link_slot = GC_MALLOC_ATOMIC(sizeof *link_slot);
  char *first = GC_MALLOC_ATOMIC(OBJECT_BYTES);
  false_pointer = (uintptr_t)first + OBJECT_BYTES / 2 + 40;
  GC_FREE(first);
  first = NULL;

  int covered = 0, kept = 0;
  uint64_t noted = 0;
  for (int r = 0; r < ROUNDS; r++) {
    GC_gcollect();
    SGC_stats_t s;
    SGC_get_stats(&s);
    noted += s.last_blacklisted_pages;
    covered += place_object();
    clear_below();
    GC_gcollect();
    GC_gcollect();
    if (*link_slot) {
      kept++;
      GC_unregister_disappearing_link(link_slot);
      *link_slot = NULL;
    }
  }
  printf("blacklist: %d of %d objects placed over the false pointer, %d kept; "
         "%llu black-listed page notes\n",
         covered, ROUNDS, kept, (unsigned long long)noted);
  int fail = 0;
  if (kept) {
    fprintf(stderr, "FAIL: %d dropped objects kept by a false pointer into free pages\n", kept);
    fail = 1;
  }
  if (!noted) {
    fprintf(stderr, "FAIL: the stats count no black-listed page\n");
    fail = 1;
  }
  /* The word gone, the notes age out: collections after the next one
   * black-list nothing. */
  false_pointer = 0;
  GC_gcollect();
  GC_gcollect();
  SGC_stats_t s;
  SGC_get_stats(&s);
  if (s.last_blacklisted_pages) {
    fprintf(stderr, "FAIL: %llu pages black-listed with no false pointer left\n",
            (unsigned long long)s.last_blacklisted_pages);
    fail = 1;
  }
  return fail;
}
