/* sigwait_thread: (sgc only) a thread that blocks every signal and waits
 * for all of them in sigwait() does not hold collections up.
 *
 * The daemon pattern: a thread blocks every signal (pthread_sigmask, or
 * sigprocmask: gc.h's GC_THREADS redirection is not used here), allocates
 * once, so it is registered, then waits in a loop for any signal.  The
 * main thread collects several times while allocating.  At 75e6b38 the
 * wait took the suspend signal for the program's, and the first
 * collection waited 20-40 s (for ever here, as the worker waits again).
 * Argument: "pthread_sigmask" (sigwait), "sigprocmask" (sigwaitinfo) or
 * "sigtimedwait" (sigprocmask, a 1 s timeout).  What could fail: the
 * collections taking over 10 s, or still running after 30 s; the worker
 * receiving the suspend signal; the worker's object freed. */
#define _GNU_SOURCE
#include "gc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"
#include "spawn_case.h"

/* bdwgc's gc.h declares it only under GC_THREADS, not defined here. */
int GC_get_suspend_signal(void);

static const char *mode = "pthread_sigmask";
static atomic_int ready, stolen_signal;

static void *worker(void *arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  if (!strcmp(mode, "pthread_sigmask")) CHECK(pthread_sigmask(SIG_BLOCK, &all, NULL) == 0);
  else CHECK(sigprocmask(SIG_BLOCK, &all, NULL) == 0);
  long *mine = GC_MALLOC(64 * sizeof(long)); /* registers the thread */
  CHECK(mine != NULL);
  for (int i = 0; i < 64; i++) mine[i] = i * 7;
  atomic_store(&ready, 1);
  for (;;) {
    int sig = 0;
    if (!strcmp(mode, "pthread_sigmask")) {
      CHECK(sigwait(&all, &sig) == 0);
    } else if (!strcmp(mode, "sigprocmask")) {
      sig = sigwaitinfo(&all, NULL);
      CHECK(sig > 0 || errno == EINTR, "sigwaitinfo: %s", strerror(errno));
    } else {
      struct timespec second = {1, 0};
      sig = sigtimedwait(&all, NULL, &second);
      CHECK(sig > 0 || errno == EAGAIN || errno == EINTR, "sigtimedwait: %s", strerror(errno));
    }
    if (sig == SIGUSR1) break;
    if (sig == SIGALRM) spawn_case_on_alarm(sig);
    if (sig == GC_get_suspend_signal()) atomic_fetch_add(&stolen_signal, 1);
  }
  for (int i = 0; i < 64; i++) CHECK(mine[i] == i * 7, "the worker's object was overwritten");
  return NULL;
}

int main(int argc, char **argv) {
  t_test_name = "sigwait_thread";
  if (argc > 1) mode = argv[1];
  GC_INIT();
  spawn_case_alarm(30);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
  while (!atomic_load(&ready)) usleep(1000);
  double start = t_now();
  for (int round = 0; round < 8; round++) {
    GC_gcollect();
    for (int i = 0; i < 20000; i++) CHECK(GC_MALLOC(48) != NULL);
  }
  double took = t_now() - start;
  CHECK(pthread_kill(t, SIGUSR1) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  alarm(0);
  CHECK(atomic_load(&stolen_signal) == 0, "the worker's %s received the suspend signal %d times",
        mode, atomic_load(&stolen_signal));
  CHECK(took < 10, "8 collections beside a thread waiting for signals took %.1f s", took);
  t_note("%s: 8 collections beside a thread waiting for every signal took %.3f s", mode, took);
  return 0;
}
