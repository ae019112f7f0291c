/* tls_roots: objects referenced only from __thread variables survive.
 *
 * bdwgc scans no thread-local storage (bdwgc issue #191, Nim #14364): on
 * it the main thread's objects below are collected and come back zeroed.
 * A thread glibc creates keeps its static TLS at the top of its stack
 * mapping, which a stack scan covers; the main thread's is elsewhere, and
 * sgc records every registered thread's static TLS blocks (roots/roots.c).
 *
 * The main thread and TLS_THREADS (3) threads each store fresh patterned
 * objects in a __thread pointer and a __thread array only, in frames that
 * return before the collections, then make garbage and collect
 * TLS_ROUNDS (5) times, and check every pattern: a collected object would
 * be reused, zeroed or overwritten.  sgc only: bdwgc fails it.
 */
#define GC_THREADS 1
#include "gc.h"

#include <pthread.h>
#include <stdbool.h>

#include "common.h"

enum { OBJECT_WORDS = 8, TLS_SLOTS = 16 };

static __thread uintptr_t *tls_single;
static __thread uintptr_t *tls_slots[TLS_SLOTS];
static pthread_barrier_t together;

static uintptr_t pattern(int who, int slot, int w) {
  return ((uintptr_t)who << 32) ^ ((uintptr_t)slot << 16) ^ (uintptr_t)(w * 2654435761u);
}

T_NOINLINE static uintptr_t *patterned(int who, int slot) {
  uintptr_t *o = GC_malloc(OBJECT_WORDS * sizeof *o);
  CHECK(o != NULL);
  for (int w = 0; w < OBJECT_WORDS; w++) o[w] = pattern(who, slot, w);
  return o;
}

T_NOINLINE static void fill_tls(int who) {
  tls_single = patterned(who, TLS_SLOTS);
  for (int s = 0; s < TLS_SLOTS; s++) tls_slots[s] = patterned(who, s);
}

T_NOINLINE static void make_garbage(void) {
  for (int i = 0; i < 100000; i++) {
    uintptr_t *p = GC_malloc(OBJECT_WORDS * sizeof *p);
    CHECK(p != NULL);
    p[0] = ~(uintptr_t)0; /* a reused object shows this */
  }
}

T_NOINLINE static void check_object(const uintptr_t *o, int who, int slot) {
  for (int w = 0; w < OBJECT_WORDS; w++)
    CHECK(o[w] == pattern(who, slot, w),
          "%s: the object in thread-local slot %d lost word %d (0x%lx): collected while a "
          "__thread variable held it",
          who ? "a thread" : "the main thread", slot, w, (unsigned long)o[w]);
}

static void run(int who, int rounds, bool collect) {
  fill_tls(who);
  for (int r = 0; r < rounds; r++) {
    make_garbage();
    if (collect) GC_gcollect();
    check_object(tls_single, who, TLS_SLOTS);
    for (int s = 0; s < TLS_SLOTS; s++) check_object(tls_slots[s], who, s);
  }
}

static int rounds;

static void *thread_main(void *arg) {
  int who = (int)(intptr_t)arg;
  pthread_barrier_wait(&together);
  run(who, rounds, false); /* the main thread collects meanwhile */
  pthread_barrier_wait(&together);
  return NULL;
}

int main(void) {
  t_test_name = "tls_roots";
  GC_INIT();
  rounds = (int)t_env_long("TLS_ROUNDS", 5);
  int threads = (int)t_env_long("TLS_THREADS", 3);
  run(0, rounds, true);
  t_note("main thread: %d thread-local objects intact through %d collections", TLS_SLOTS + 1,
         rounds);

  t_collect_beside_threads(threads, thread_main, &together, rounds * 4, make_garbage);
  t_note("%d threads: thread-local objects intact beside %d collections", threads, rounds * 4);
  printf("tls_roots: ok\n");
  return 0;
}
