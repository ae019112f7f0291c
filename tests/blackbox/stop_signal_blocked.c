/* stop_signal_blocked: (sgc only) a collection that waits for a thread
 * blocking the stop signal says so, and goes on once the thread lets the
 * signal in.
 *
 * A worker blocks every signal with the rt_sigprocmask system call
 * itself (sgc keeps its signal out of what pthread_sigmask and
 * sigprocmask block, bb_signalfd_thread; a program's own system call, or
 * a library's, is beyond it) and then spins in its own code, never
 * allocating.  The main thread collects: the stop cannot reach the worker.
 * bdwgc waits without a word for ever; sgc names the thread and the
 * signal after 2 s.  The test's warn procedure, on that warning, lets
 * the worker unblock the signal; the collection must then finish, and a
 * list only the worker's stack holds must be intact.  What could fail:
 * no warning (the run times out), a warning that names another thread
 * or not the signal, or the collection not finishing.  sgc only. */
#define _GNU_SOURCE
#define GC_THREADS
#include "gc.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

struct node {
  struct node *next;
  long value;
};

/* The kernel's call, under glibc's and sgc's: its mask is 8 bytes. */
static int raw_sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  return (int)syscall(SYS_rt_sigprocmask, how, set, old, 8);
}

static atomic_int worker_tid, blocked, warned, collected, warnings_other;

static void on_warning(char *msg, GC_word arg) {
  (void)arg;
  char tid[32];
  snprintf(tid, sizeof tid, "thread %d,", atomic_load(&worker_tid));
  if (strstr(msg, "blocks SIGPWR") && strstr(msg, tid)) atomic_store(&warned, 1);
  else atomic_fetch_add(&warnings_other, 1);
}

static void *worker(void *arg) {
  (void)arg;
  struct node *volatile list[1] = {NULL};
  for (long i = 0; i < 1000; i++) {
    struct node *n = GC_malloc(sizeof *n);
    CHECK(n != NULL);
    n->next = list[0];
    n->value = i;
    list[0] = n;
  }
  atomic_store(&worker_tid, (int)syscall(SYS_gettid));
  sigset_t all, old;
  sigfillset(&all);
  CHECK(raw_sigprocmask(SIG_BLOCK, &all, &old) == 0);
  atomic_store(&blocked, 1);
  /* Spins in its own code, no allocation, until the warning. */
  for (long i = 0; !atomic_load(&warned); i++) {
    CHECK(i < 40000000000L, "no warning came");
    __asm__ volatile("pause");
  }
  CHECK(raw_sigprocmask(SIG_SETMASK, &old, NULL) == 0); /* the stop comes in now */
  while (!atomic_load(&collected)) usleep(1000);
  long i = 999;
  for (struct node *n = list[0]; n; n = n->next, i--)
    CHECK(n->value == i, "the worker's list lost node %ld", i);
  CHECK(i == -1);
  return NULL;
}

int main(void) {
  t_test_name = "stop_signal_blocked";
  GC_INIT();
  GC_set_warn_proc(on_warning);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
  while (!atomic_load(&blocked)) usleep(1000);
  double start = t_now();
  for (int i = 0; i < 100000; i++) CHECK(GC_malloc(16) != NULL); /* garbage */
  GC_gcollect();
  double waited = t_now() - start;
  atomic_store(&collected, 1);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(atomic_load(&warned), "the collection finished without the warning");
  CHECK(atomic_load(&warnings_other) == 0, "%d other warnings", atomic_load(&warnings_other));
  t_note("the collection named the thread blocking SIGPWR and finished after %.1f s", waited);
  return 0;
}
