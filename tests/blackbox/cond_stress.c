/*
 * cond_stress.c: 64 threads wake on a condition variable thousands of
 * times a second while the main thread collects in a loop.  Each wake
 * leaves a blocking section (threads/cond_waits.c) without a lock, often
 * while a collection has the world stopped and counts the waker as
 * stopped (threads/stop_world.c, stop_world_leave_blocking): the waker
 * must stay out of the program until the collection ends, or the list
 * only its stack holds loses nodes.
 *
 * Every thread checks its list every few wakes and builds a new one;
 * half wait with pthread_cond_wait, half with pthread_cond_timedwait's
 * short timeouts.  Collections must stop well under the waiters' count
 * on average (before the calls were sections: about 60 of the 64).
 * COND_STRESS_SECONDS (default 2) sets the length.
 */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "common.h"
#include "seeded_list.h"

enum { WAITERS = 64, NODES = 100, CHECK_EVERY = 8 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long generation; /* under lock */
static atomic_int stop;
static atomic_long wakes, checks;

static struct node *build(long seed) { return seeded_list(seed, NODES); }
static long check(const struct node *head, long seed) {
  return seeded_list_damage(head, seed, NODES);
}

static void *waiter(void *arg) {
  long id = (long)arg, round = 0;
  long seed = id;
  struct node *volatile list = build(seed);
  while (!atomic_load(&stop)) {
    pthread_mutex_lock(&lock);
    long g = generation;
    while (generation == g && !atomic_load(&stop)) {
      int r;
      if (id & 1) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 2000000;
        if (t.tv_nsec >= 1000000000) t.tv_sec++, t.tv_nsec -= 1000000000;
        r = pthread_cond_timedwait(&cond, &lock, &t);
      } else {
        r = pthread_cond_wait(&cond, &lock);
      }
      CHECK(r == 0 || r == ETIMEDOUT, "waiter %ld: condition wait returned %d", id, r);
    }
    pthread_mutex_unlock(&lock);
    atomic_fetch_add_explicit(&wakes, 1, memory_order_relaxed);
    if (++round % CHECK_EVERY == 0) {
      long bad = check(list, seed);
      CHECK(bad == 0, "waiter %ld: %ld nodes of its list overwritten (round %ld)", id, bad,
            round);
      seed += WAITERS;
      list = build(seed);
      atomic_fetch_add_explicit(&checks, 1, memory_order_relaxed);
    }
  }
  long bad = check(list, seed);
  CHECK(bad == 0, "waiter %ld: %ld nodes of its list overwritten at the end", id, bad);
  return NULL;
}

/* Wakes every waiter about every 100 us. */
static void *ticker(void *arg) {
  (void)arg;
  struct timespec tick = {0, 100000};
  while (!atomic_load(&stop)) {
    nanosleep(&tick, NULL);
    pthread_mutex_lock(&lock);
    generation++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(void) {
  GC_INIT();
  const char *s = getenv("COND_STRESS_SECONDS");
  double seconds = s ? atof(s) : 2.0;
  pthread_t t[WAITERS], tick;
  for (long i = 0; i < WAITERS; i++)
    CHECK(GC_pthread_create(&t[i], NULL, waiter, (void *)i) == 0, "create");
  CHECK(GC_pthread_create(&tick, NULL, ticker, NULL) == 0, "create ticker");

  uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
  long collections = 0;
  long stopped = 0;
  while (now_ns() < end) {
    GC_gcollect();
    collections++;
    SGC_gc_record_t rec;
    CHECK(SGC_get_gc_records(&rec, 1) == 1, "no collection record");
    stopped += rec.threads;
    (void)build(-1); /* garbage for the next collection to sweep */
  }
  pthread_mutex_lock(&lock);
  atomic_store(&stop, 1);
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < WAITERS; i++) CHECK(pthread_join(t[i], NULL) == 0, "join");
  CHECK(pthread_join(tick, NULL) == 0, "join ticker");

  long w = atomic_load(&wakes), c = atomic_load(&checks);
  CHECK(collections >= 5, "only %ld collections in %.1f s", collections, seconds);
  CHECK(w >= 10 * WAITERS, "only %ld wakes in %.1f s", w, seconds);
  double mean = (double)stopped / (double)collections;
  CHECK(mean <= WAITERS / 2,
        "collections stopped %.1f threads on average while %d mostly waited on a condition "
        "variable (a wait should be a blocking section)",
        mean, WAITERS);
  printf("cond_stress: ok (%ld collections, %ld wakes, %ld list checks, %.1f threads stopped "
         "on average)\n",
         collections, w, c, mean);
  return 0;
}
