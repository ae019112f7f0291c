/* decommit_refused: memory the kernel would not take back is still
 * cleared before it is handed out again.
 *
 * sgc gives long free spans back with madvise(MADV_DONTNEED) and then
 * skips clearing them when they are reused, since such pages read as
 * zero.  The kernel refuses for locked pages (mlock), which keep their
 * contents: such spans must stay counted as written.  The test locks a
 * large object's pages, fills them, drops the object, asks for the free
 * memory back (GC_gcollect_and_unmap) and allocates objects of the same
 * size until one lands on those pages: it must read as zeros.
 *
 * Exit 77 (skipped) where mlock is not allowed for 1 MiB
 * (RLIMIT_MEMLOCK), or when no later object reuses the pages.
 */
#define GC_THREADS
#include <gc.h>
#include <pthread.h>
#include <sys/mman.h>

#include "common.h"

enum { OBJECT_BYTES = 1 << 20, ATTEMPTS = 64 };

/* In a thread of its own, which exits: no stale copy of the pointer stays
 * on a stack or in a register the collector scans. */
static void *make_locked_object(void *out) {
  char *p = GC_MALLOC(OBJECT_BYTES);
  CHECK(p != NULL);
  if (mlock(p, OBJECT_BYTES) != 0) {
    t_note("mlock of %d bytes refused (RLIMIT_MEMLOCK?): skipped", OBJECT_BYTES);
    exit(77);
  }
  memset(p, 0xa5, OBJECT_BYTES);
  *(GC_word *)out = GC_HIDE_POINTER(p);
  return NULL;
}

int main(void) {
  t_test_name = "decommit_refused";
  GC_INIT();
  GC_word hidden = 0; /* hidden: the object must die */
  pthread_t maker;
  CHECK(pthread_create(&maker, NULL, make_locked_object, &hidden) == 0);
  CHECK(pthread_join(maker, NULL) == 0);
  GC_gcollect_and_unmap();
  GC_gcollect_and_unmap();
  void *kept[ATTEMPTS];
  int reused = -1;
  for (int i = 0; i < ATTEMPTS && reused < 0; i++) {
    kept[i] = GC_MALLOC(OBJECT_BYTES);
    CHECK(kept[i] != NULL);
    if (kept[i] == GC_REVEAL_POINTER(hidden)) reused = i;
  }
  if (reused < 0) {
    t_note("no object of %d reused the locked pages: skipped", ATTEMPTS);
    return 77;
  }
  const unsigned char *p = kept[reused];
  for (size_t i = 0; i < OBJECT_BYTES; i++)
    CHECK(p[i] == 0, "byte %zu of an object on pages the kernel kept is 0x%02x, not 0", i, p[i]);
  munlock(kept[reused], OBJECT_BYTES);
  t_note("the object on the locked pages (attempt %d) reads as zeros", reused);
  t_note("PASS");
  return 0;
}
