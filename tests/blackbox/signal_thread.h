/* The driver sigwait_thread and signalfd_thread share: the main thread
 * collects beside a worker that waits for signals, then ends it with
 * SIGUSR1.  The worker sets signal_thread_ready once it is registered,
 * and counts in signal_thread_stolen each suspend signal it took. */
#ifndef SGC_TEST_SIGNAL_THREAD_H
#define SGC_TEST_SIGNAL_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "common.h"
#include "spawn_case.h"

static atomic_int signal_thread_ready, signal_thread_stolen;

/* bdwgc's gc.h declares it only under GC_THREADS, not defined here. */
int GC_get_suspend_signal(void);

/* The worker's object, registering it: checked when it ends. */
static T_UNUSED long *signal_thread_object(void) {
  long *mine = GC_MALLOC(64 * sizeof(long));
  CHECK(mine != NULL);
  for (int i = 0; i < 64; i++) mine[i] = i * 7;
  atomic_store(&signal_thread_ready, 1);
  return mine;
}

/* The worker got SIG: whether it is the one that ends it. */
static T_UNUSED bool signal_thread_got(int sig) {
  if (sig == SIGALRM) spawn_case_on_alarm(sig);
  if (sig == GC_get_suspend_signal()) atomic_fetch_add(&signal_thread_stolen, 1);
  return sig == SIGUSR1;
}

static T_UNUSED void signal_thread_check(const long *mine) {
  for (int i = 0; i < 64; i++) CHECK(mine[i] == i * 7, "the worker's object was overwritten");
}

/* Runs WORKER, collects 8 times beside it with a 30 s alarm, ends it and
 * checks it took no suspend signal and the collections took under 10 s;
 * WHAT names the worker's wait in the messages. */
static T_UNUSED void signal_thread_run(void *(*worker)(void *), const char *what) {
  spawn_case_alarm(30);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
  while (!atomic_load(&signal_thread_ready)) usleep(1000);
  double start = t_now();
  for (int round = 0; round < 8; round++) {
    GC_gcollect();
    for (int i = 0; i < 20000; i++) CHECK(GC_MALLOC(48) != NULL);
  }
  double took = t_now() - start;
  CHECK(pthread_kill(t, SIGUSR1) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  alarm(0);
  CHECK(atomic_load(&signal_thread_stolen) == 0, "the worker (%s) took the suspend signal %d times",
        what, atomic_load(&signal_thread_stolen));
  CHECK(took < 10, "8 collections beside a thread waiting for signals (%s) took %.1f s", what, took);
  t_note("%s: 8 collections beside a thread waiting for every signal took %.3f s", what, took);
}

#endif
