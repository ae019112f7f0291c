/* thread_specific: objects referenced only by pthread_setspecific values
 * survive, on the main thread and on created threads, past the 32 keys
 * glibc keeps inline.
 *
 * glibc keeps a thread's first 32 key values in its thread descriptor
 * and the rest in blocks it mallocs.  A created thread's descriptor lies
 * at the top of its stack mapping, inside the stack scan; the main
 * thread's does not, and no malloc'd block is scanned: sgc pushes both
 * (roots/thread_specific.c).  bdwgc 8.2.2 loses every value here.
 *
 * KEYS (40) keys; the main thread and SPECIFIC_THREADS (2) threads each
 * store a patterned object under every key, in a frame that returns,
 * then make garbage and collect (the threads collect among themselves
 * while the main thread waits at a barrier, then it collects too) and
 * check every pattern.  What could fail: a value's object collected and
 * reused (a pattern check fails).  sgc only: bdwgc fails it. */
#define GC_THREADS 1
#include "gc.h"

#include <pthread.h>
#include <string.h>

#include "common.h"

enum { KEYS = 40, WORDS = 8 };

static pthread_key_t keys[KEYS];
static pthread_barrier_t together;

static long pattern(int who, int key, int w) { return ((long)who << 40) ^ ((long)key << 20) ^ w; }

T_NOINLINE static void fill(int who) {
  for (int k = 0; k < KEYS; k++) {
    long *o = GC_malloc(WORDS * sizeof *o);
    CHECK(o != NULL);
    for (int w = 0; w < WORDS; w++) o[w] = pattern(who, k, w);
    CHECK(pthread_setspecific(keys[k], o) == 0);
  }
}

T_NOINLINE static void garbage(int rounds) {
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < 100000; i++) {
      long *p = GC_malloc(WORDS * sizeof *p);
      CHECK(p != NULL);
      memset(p, 0xee, WORDS * sizeof *p);
    }
    GC_gcollect();
  }
}

T_NOINLINE static void check(int who) {
  for (int k = 0; k < KEYS; k++) {
    const long *o = pthread_getspecific(keys[k]);
    CHECK(o != NULL);
    for (int w = 0; w < WORDS; w++)
      CHECK(o[w] == pattern(who, k, w),
            "%s: the object under key %d lost word %d (0x%lx): collected while only a key "
            "value held it",
            who ? "a thread" : "the main thread", k, w, (unsigned long)o[w]);
  }
}

static void *thread_main(void *arg) {
  int who = (int)(intptr_t)arg;
  fill(who);
  pthread_barrier_wait(&together);
  garbage(3); /* the main thread waits at the barrier meanwhile */
  pthread_barrier_wait(&together);
  check(who);
  return NULL;
}

int main(void) {
  t_test_name = "thread_specific";
  GC_INIT();
  for (int k = 0; k < KEYS; k++) CHECK(pthread_key_create(&keys[k], NULL) == 0);
  int threads = (int)t_env_long("SPECIFIC_THREADS", 2);
  CHECK(pthread_barrier_init(&together, NULL, (unsigned)threads + 1) == 0);
  fill(0);
  pthread_t t[16];
  CHECK(threads >= 1 && threads <= 16);
  for (int i = 0; i < threads; i++)
    CHECK(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)(i + 1)) == 0);
  pthread_barrier_wait(&together);
  pthread_barrier_wait(&together);
  garbage(3);
  check(0);
  for (int i = 0; i < threads; i++) CHECK(pthread_join(t[i], NULL) == 0);
  check(0);
  t_note("%d keys: the main thread's and %d threads' values survived 6 collections", KEYS,
         threads);
  return 0;
}
