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
#include "signal_thread.h"

static const char *mode = "pthread_sigmask";

static void *worker(void *arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  if (!strcmp(mode, "pthread_sigmask")) CHECK(pthread_sigmask(SIG_BLOCK, &all, NULL) == 0);
  else CHECK(sigprocmask(SIG_BLOCK, &all, NULL) == 0);
  long *mine = signal_thread_object(); /* registers the thread */
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
    if (signal_thread_got(sig)) break;
  }
  signal_thread_check(mine);
  return NULL;
}

int main(int argc, char **argv) {
  t_test_name = "sigwait_thread";
  if (argc > 1) mode = argv[1];
  GC_INIT();
  signal_thread_run(worker, mode);
  return 0;
}
