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
 * With the argument `mlockall`, the whole process is locked first
 * (mlockall(MCL_CURRENT | MCL_FUTURE), as real-time programs do), and
 * objects of 200 bytes and 70,000 bytes are allocated, checked for
 * zeros, filled and mostly dropped, with GC_gcollect_and_unmap every
 * 2,000 allocations: every object must read as zeros.  (Before the fix
 * the 386th did not; bdwgc 8.2.2 aborts there: "unmap: madvise failed".)
 *
 * Exit 77 (skipped) where mlock is not allowed for 1 MiB
 * (RLIMIT_MEMLOCK), or when no later object reuses the pages; the
 * mlockall run only as root (as in CI) or where RLIMIT_MEMLOCK is
 * unlimited.
 */
#define GC_THREADS
#include <gc.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* The whole process locked: every allocation must still read as zeros. */
static int run_locked_process(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  /* Their shadow memory is terabytes of reserved address space, which
   * MCL_CURRENT would try to fault in and lock. */
  t_note("mlockall under a sanitizer's shadow memory: skipped");
  return 77;
#endif
  struct rlimit limit;
  /* Root locks past RLIMIT_MEMLOCK (CAP_IPC_LOCK); anyone else could
   * lock the process, then fail to map the heap once past the limit. */
  bool unlimited = geteuid() == 0 ||
                   (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur == RLIM_INFINITY);
  if (!unlimited || mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    t_note("mlockall needs root or an unlimited RLIMIT_MEMLOCK: skipped");
    return 77;
  }
  GC_INIT();
  void **kept = GC_MALLOC(64 * sizeof *kept);
  CHECK(kept != NULL);
  for (int i = 0; i < 20000; i++) {
    size_t size = i % 7 == 0 ? 70000 : 200;
    unsigned char *p = GC_MALLOC(size);
    CHECK(p != NULL);
    for (size_t j = 0; j < size; j++)
      CHECK(p[j] == 0, "allocation %d of %zu bytes in a locked process: byte %zu is 0x%02x", i, size,
            j, p[j]);
    memset(p, 0x5a, size);
    kept[i % 64] = p;
    if (i % 2000 == 0) GC_gcollect_and_unmap();
  }
  t_note("20000 allocations in a locked process read as zeros (%lu collections)",
         (unsigned long)GC_get_gc_no());
  t_note("PASS");
  return 0;
}

int main(int argc, char **argv) {
  t_test_name = "decommit_refused";
  if (argc > 1 && !strcmp(argv[1], "mlockall")) return run_locked_process();
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
