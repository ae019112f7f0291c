/*
 * sleeping_threads.c: threads asleep in nanosleep, clock_nanosleep,
 * usleep, sleep or pthread_barrier_wait are not stopped by a collection
 * (threads/sleep_calls.c runs those calls as blocking sections), and
 * what their stacks hold still survives it.
 *
 * Six threads each build a list only their own stack holds and go to
 * sleep in one of the calls; the main thread collects while they sleep.
 * Each collection's record must count one stopped thread, the collector
 * (before: seven); each list must be intact when its thread wakes.  The
 * calls' results and errno are glibc's (an invalid time, sleep(0), the
 * barrier's one serial thread).
 */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "seeded_list.h"

enum { SLEEPERS = 6, NODES = 2000, COLLECTIONS = 4 };

static atomic_int asleep, wake, serial_threads;
static pthread_barrier_t barrier; /* 2 sleepers and the main thread */

static struct node *build(long seed) { return seeded_list(seed, NODES); }
static long check(const struct node *head, long seed) {
  return seeded_list_damage(head, seed, NODES);
}

/* Sleeps in call KIND until the main thread says wake. */
static void sleep_in(long kind) {
  struct timespec ms = {0, 1000000};
  while (!atomic_load(&wake)) {
    switch (kind) {
    case 0: nanosleep(&ms, NULL); break;
    case 1: clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL); break;
    case 2: usleep(1000); break;
    case 3: sleep(1); break;
    default: {
      int r = pthread_barrier_wait(&barrier);
      if (r == PTHREAD_BARRIER_SERIAL_THREAD) atomic_fetch_add(&serial_threads, 1);
      else CHECK(r == 0, "pthread_barrier_wait returned %d", r);
      return;
    }
    }
  }
}

static void *sleeper(void *arg) {
  long kind = (long)arg;
  struct node *volatile list = build(kind);
  atomic_fetch_add(&asleep, 1);
  sleep_in(kind);
  long bad = check(list, kind);
  CHECK(bad == 0, "sleeper %ld: %ld nodes of its list overwritten", kind, bad);
  return NULL;
}

int main(void) {
  GC_INIT();
  CHECK(pthread_barrier_init(&barrier, NULL, 3) == 0);
  pthread_t t[SLEEPERS];
  for (long i = 0; i < SLEEPERS; i++)
    CHECK(GC_pthread_create(&t[i], NULL, sleeper, (void *)i) == 0, "create");
  while (atomic_load(&asleep) < SLEEPERS) sched_yield();
  struct timespec settle = {0, 50000000};
  nanosleep(&settle, NULL); /* every sleeper inside its call */

  int stopped_most = most_threads_stopped(COLLECTIONS, NODES);
  CHECK(stopped_most == 1,
        "a collection stopped %d threads while %d slept in the calls sgc runs as blocking "
        "sections (only the collector should stop)",
        stopped_most, SLEEPERS);

  atomic_store(&wake, 1);
  int r = pthread_barrier_wait(&barrier);
  if (r == PTHREAD_BARRIER_SERIAL_THREAD) atomic_fetch_add(&serial_threads, 1);
  for (int i = 0; i < SLEEPERS; i++) CHECK(pthread_join(t[i], NULL) == 0, "join");
  CHECK(atomic_load(&serial_threads) == 1, "%d barrier serial threads",
        atomic_load(&serial_threads));

  /* glibc's results and errno come back through sgc's definitions. */
  struct timespec invalid = {0, 2000000000L};
  errno = 0;
  CHECK(nanosleep(&invalid, NULL) == -1 && errno == EINVAL, "nanosleep(invalid)");
  CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &invalid, NULL) == EINVAL,
        "clock_nanosleep(invalid)");
  CHECK(sleep(0) == 0, "sleep(0)");
  CHECK(usleep(0) == 0, "usleep(0)");
  printf("sleeping_threads: ok (%d sleepers, %d collections, at most %d thread stopped)\n",
         SLEEPERS, COLLECTIONS, stopped_most);
  return 0;
}
