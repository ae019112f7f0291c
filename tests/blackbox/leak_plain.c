/* leak_plain: leak mode reports objects of the plain calls (GC_malloc
 * without GC_DEBUG) that became unreachable without GC_free, once each,
 * and nothing else (issue 55).  bdwgc reports them as
 * "object at ADDRESS of appr. SIZE bytes (composite|atomic)".
 *
 * Built against sgc's gc.h and -lsgc (bb_leak_plain), and against bdwgc's
 * gc.h and -lgc, run on bdwgc and with sgc preloaded in its place
 * (tests/preload/leak_plain_preload.sh): the same checks pass on both.
 *
 * 1. No leaks: threads allocate objects of many sizes, free most with
 *    GC_FREE (so freed objects sit on free lists and in batches), keep
 *    the rest, and exit; collections meanwhile and after must report
 *    nothing.  Then every kept object is freed: still nothing.
 * 2. Leaks: objects of several sizes and kinds, small and large, are
 *    dropped without GC_FREE; one collection must report each exactly
 *    once, the next none again.
 * Leak mode comes from GC_set_find_leak(1) before GC_INIT, or (with
 * LEAK_PLAIN_ENV_ONLY set) from GC_FIND_LEAK in the environment alone.  Reports go to stderr (fd 2), which
 * the program sends to a file and reads back. */
#define _GNU_SOURCE
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include <gc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { THREADS = 4, PER_THREAD = 20000, KEEP_EVERY = 4 };

static void **kept[THREADS + 1];
static char capture_path[] = "/tmp/sgc_leak_plain_XXXXXX";
static int capture_fd;
static size_t capture_read; /* bytes of the capture already looked at */
static int failures;

static void fail(const char *what) {
  fprintf(stdout, "FAIL: %s\n", what);
  failures++;
}

/* Everything written to fd 2 since the last call, NUL-terminated. */
static char *capture_new(void) {
  fflush(stderr);
  off_t end = lseek(capture_fd, 0, SEEK_END);
  size_t n = (size_t)end - capture_read;
  char *text = malloc(n + 1);
  if (!text || pread(capture_fd, text, n, (off_t)capture_read) != (ssize_t)n) {
    perror("leak_plain: reading the capture");
    exit(2);
  }
  text[n] = 0;
  capture_read = (size_t)end;
  return text;
}

static size_t size_of(unsigned i) {
  static const size_t sizes[] = {8, 16, 24, 40, 64, 100, 200, 500, 1000, 2000, 3000, 9000};
  return sizes[i % (sizeof sizes / sizeof *sizes)];
}

static void churn(int slot) {
  void **keep = GC_MALLOC(PER_THREAD / KEEP_EVERY * sizeof *keep);
  kept[slot] = keep;
  for (unsigned i = 0; i < PER_THREAD; i++) {
    size_t n = size_of(i + (unsigned)slot);
    char *p = i % 3 ? GC_MALLOC(n) : GC_MALLOC_ATOMIC(n);
    if (!p) {
      fprintf(stdout, "FAIL: out of memory\n");
      exit(1);
    }
    memset(p, 1, n < 64 ? n : 64);
    if (i % KEEP_EVERY == 0) keep[i / KEEP_EVERY] = p;
    else GC_FREE(p);
  }
}

static void *worker(void *arg) {
  churn((int)(intptr_t)arg);
  return NULL;
}

static void free_kept(void) {
  for (int s = 0; s <= THREADS; s++) {
    for (unsigned i = 0; i < PER_THREAD / KEEP_EVERY; i++) GC_FREE(kept[s][i]);
    GC_FREE(kept[s]);
    kept[s] = NULL;
  }
}

enum { DROPPED = 8 };
static uintptr_t hidden[DROPPED]; /* ~address: the record keeps nothing */
static const size_t dropped_bytes[DROPPED] = {16, 24, 100, 1000, 3000, 48, 200000, 100000};

__attribute__((noinline)) static void drop_objects(void) {
  for (int i = 0; i < DROPPED; i++) {
    void *p = i == 5 || i == 7 ? GC_MALLOC_ATOMIC(dropped_bytes[i]) : GC_MALLOC(dropped_bytes[i]);
    hidden[i] = ~(uintptr_t)p;
  }
}

/* Overwrites the dead frames of the calls above. */
__attribute__((noinline)) static void clear_below(void) {
  volatile char pad[32768];
  for (size_t i = 0; i < sizeof pad; i++) pad[i] = 0;
}

static unsigned count_lines(const char *text, const char *needle) {
  unsigned n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

int main(void) {
  capture_fd = mkstemp(capture_path);
  if (capture_fd < 0 || dup2(capture_fd, 2) < 0) {
    perror("leak_plain: capture");
    return 2;
  }
  unlink(capture_path);
  setvbuf(stdout, NULL, _IONBF, 0);
  /* Under tests/preload/leak_plain_preload.sh only GC_FIND_LEAK says so. */
  if (!getenv("LEAK_PLAIN_ENV_ONLY")) GC_set_find_leak(1);
  GC_INIT();

  /* 1. No leaks. */
  pthread_t tid[THREADS];
  for (int s = 0; s < THREADS; s++)
    if (pthread_create(&tid[s], NULL, worker, (void *)(intptr_t)s) != 0) {
      fprintf(stdout, "FAIL: cannot start a thread\n");
      return 1;
    }
  churn(THREADS);
  for (int s = 0; s < THREADS; s++) pthread_join(tid[s], NULL);
  GC_gcollect();
  GC_gcollect();
  char *text = capture_new();
  unsigned reported = count_lines(text, "leaked objects");
  if (reported) {
    fprintf(stdout, "%s", text);
    fail("objects freed or kept were reported as leaks");
  }
  free(text);
  free_kept();
  GC_gcollect();
  GC_gcollect();
  text = capture_new();
  if (count_lines(text, "leaked objects")) {
    fprintf(stdout, "%s", text);
    fail("freeing the kept objects made leak reports");
  }
  free(text);

  /* 2. Leaks.  No collection while they are made (torture mode would
   * report one and reuse its memory for the next, reported again). */
  GC_disable();
  drop_objects();
  GC_enable();
  clear_below();
  GC_gcollect();
  text = capture_new();
  unsigned found = 0;
  for (int i = 0; i < DROPPED; i++) {
    char line[64];
    snprintf(line, sizeof line, "object at %p of appr. ", (void *)~hidden[i]);
    unsigned n = count_lines(text, line);
    if (n != 1) fprintf(stdout, "object %d (%zu bytes) at %p reported %u times\n", i,
                        dropped_bytes[i], (void *)~hidden[i], n);
    found += n == 1;
  }
  unsigned listed = count_lines(text, "object at ");
  if (found != DROPPED) fail("a dropped object was not reported exactly once");
  if (listed != found) {
    fprintf(stdout, "%s", text);
    fail("objects other than the dropped ones were reported");
  }
  free(text);
  GC_gcollect();
  text = capture_new();
  if (count_lines(text, "object at ")) {
    fprintf(stdout, "%s", text);
    fail("a leak was reported twice");
  }
  free(text);
  printf("leak_plain: %u of %d dropped objects reported once; %s\n", found, DROPPED,
         failures ? "FAIL" : "PASS");
  return failures != 0;
}
