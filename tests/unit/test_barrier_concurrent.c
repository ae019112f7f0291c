/* A write barrier read while the program writes (barrier.h: the world
 * need not be stopped for barrier_collect_dirty).  Writer threads store
 * into a pointer-holding object, and one reads into it with read(2), while
 * a collector thread keeps collecting and copies every reported page into
 * a shadow, as the marker rescans them; once the writers stopped, a last
 * collect.  The shadow must then equal the object: a write the barrier
 * lost (reported before it landed, never after) leaves a stale page.
 * Runs per backend with SGC_BARRIER set; skips (77) where unavailable. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "barrier/barrier.h"
#include "common.h"
#include "heap/heap.h"
#include "os/os.h"
#include "unit.h"
#include "unit_marked.h"

enum { OBJECT_PAGES = 256, WRITERS = 3, RUN_MS = 600 };

static char *object, *shadow;
static enum barrier_kind kind;
static _Atomic bool stop;

static void copy_page(uintptr_t lo, uintptr_t hi, void *arg) {
  uintptr_t base = (uintptr_t)object, end = base + (uintptr_t)OBJECT_PAGES * PAGE_BYTES;
  if (lo < base) lo = base;
  if (hi > end) hi = end;
  if (lo < hi) memcpy(shadow + (lo - base), (void *)lo, hi - lo);
}

static void *writer(void *arg) {
  uint64_t state = (uintptr_t)arg * 7919 + 1;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    uint64_t r = unit_xorshift(&state);
    size_t at = (size_t)(r % ((size_t)OBJECT_PAGES * PAGE_BYTES / 8)) * 8;
    /* Relaxed atomic stores: the collector's copy reads them racily. */
    __atomic_store_n((uint64_t *)(void *)(object + at), r, __ATOMIC_RELAXED);
    if (kind == BARRIER_MANUAL) barrier_note_store(object + at);
  }
  return NULL;
}

static int pipe_fds[2];
static void *reader(void *arg) {
  uint64_t state = 99;
  char data[PAGE_BYTES];
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    size_t len = 1 + unit_xorshift(&state) % sizeof data;
    size_t at = unit_xorshift(&state) % ((size_t)OBJECT_PAGES * PAGE_BYTES - len);
    memset(data, (int)(state & 0xff), len);
    if (write(pipe_fds[1], data, len) != (ssize_t)len) break;
    ssize_t got = read(pipe_fds[0], object + at, len);
    CHECK(got == (ssize_t)len, "read(2) into the heap while armed: %zd", got);
    if (kind == BARRIER_MANUAL)
      for (size_t p = at & ~(size_t)(PAGE_BYTES - 1); p < at + len; p += PAGE_BYTES)
        barrier_note_store(object + p);
  }
  return NULL;
}

int main(void) {
  GC_init();
  const char *want = getenv("SGC_BARRIER");
  kind = barrier_init();
  if (want && strcmp(want, barrier_name(kind)) != 0) {
    printf("skipped: the %s barrier is not available here\n", want);
    return 77;
  }
  object = GC_malloc((size_t)OBJECT_PAGES * PAGE_BYTES);
  shadow = malloc((size_t)OBJECT_PAGES * PAGE_BYTES);
  if (!object || !shadow || pipe(pipe_fds) != 0) return 1;
  unit_mark_object(object); /* reached by the marker: its writes matter */
  memset(object, 1, (size_t)OBJECT_PAGES * PAGE_BYTES / 2); /* half touched before arm */
  barrier_arm();
  memcpy(shadow, object, (size_t)OBJECT_PAGES * PAGE_BYTES);
  pthread_t threads[WRITERS + 1];
  for (uintptr_t i = 0; i < WRITERS; i++) pthread_create(&threads[i], NULL, writer, (void *)i);
  pthread_create(&threads[WRITERS], NULL, reader, NULL);
  uint64_t end = os_now_ns() + (uint64_t)RUN_MS * 1000000;
  unsigned collects = 0;
  while (os_now_ns() < end) {
    barrier_collect_dirty(copy_page, NULL);
    collects++;
  }
  atomic_store(&stop, true);
  for (unsigned i = 0; i <= WRITERS; i++) pthread_join(threads[i], NULL);
  barrier_collect_dirty(copy_page, NULL); /* the finalize pause's */
  size_t stale = 0;
  for (size_t p = 0; p < OBJECT_PAGES; p++)
    stale += memcmp(shadow + p * PAGE_BYTES, object + p * PAGE_BYTES, PAGE_BYTES) != 0;
  CHECK(stale == 0, "%zu pages written and never reported after the write", stale);
  struct barrier_counts c = barrier_counts();
  printf("%s: %u collects, %llu pages reported, %llu faults\n", barrier_name(kind), collects,
         (unsigned long long)c.dirty_pages, (unsigned long long)c.faults);
  barrier_disarm();
  return unit_finish();
}
