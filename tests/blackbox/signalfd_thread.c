/* signalfd_thread: (sgc only) a thread that blocks every signal and reads
 * them all from a signalfd does not hold collections up.
 *
 * The other daemon pattern (sigwait_thread's waits in sigwait): a thread
 * blocks every signal (pthread_sigmask, or sigprocmask: gc.h's
 * GC_THREADS redirection is not used here), makes a signalfd for the full
 * set, allocates once, so it is registered, then reads the signalfd in a
 * loop, with read() or after poll().  The main thread collects several
 * times while allocating.  Before sgc kept its suspend signal out of
 * masks and signalfd sets, the read took it as the program's and the
 * first collection waited for ever (the alarm here).  Argument:
 * "pthread_sigmask" (read), "sigprocmask" (read) or "poll" (sigprocmask,
 * poll then read).  What could fail: the collections taking over 10 s,
 * or still running after 30 s; the worker reading the suspend signal;
 * the worker's object freed. */
#define _GNU_SOURCE
#include "gc.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common.h"
#include "signal_thread.h"

static const char *mode = "pthread_sigmask";

/* The next signal the signalfd FD gives. */
static int next_signal(int fd) {
  if (!strcmp(mode, "poll")) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, -1);
    CHECK(n == 1 || (n < 0 && errno == EINTR), "poll: %s", strerror(errno));
    if (n < 0) return 0;
  }
  struct signalfd_siginfo info;
  ssize_t got = read(fd, &info, sizeof info);
  CHECK(got == sizeof info || (got < 0 && errno == EINTR), "read: %s", strerror(errno));
  return got == sizeof info ? (int)info.ssi_signo : 0;
}

static void *worker(void *arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  if (!strcmp(mode, "pthread_sigmask")) CHECK(pthread_sigmask(SIG_BLOCK, &all, NULL) == 0);
  else CHECK(sigprocmask(SIG_BLOCK, &all, NULL) == 0);
  int fd = signalfd(-1, &all, SFD_CLOEXEC);
  CHECK(fd >= 0, "signalfd: %s", strerror(errno));
  long *mine = signal_thread_object(); /* registers the thread */
  for (;;) {
    int sig = next_signal(fd);
    if (signal_thread_got(sig)) break;
  }
  close(fd);
  signal_thread_check(mine);
  return NULL;
}

int main(int argc, char **argv) {
  t_test_name = "signalfd_thread";
  if (argc > 1) mode = argv[1];
  GC_INIT();
  signal_thread_run(worker, mode);
  return 0;
}
