/* suspend_signal_owned: (sgc only) a program that owns SIGPWR, sgc's
 * default suspend signal, gets a clear fatal error, not a hang, and can
 * move sgc to another signal.
 *
 * Each case runs as a child (spawn_case.h) with an alarm after 20 s.  A
 * worker made with plain pthread_create allocates (so it is registered),
 * then blocks in read() on a pipe; the main thread allocates and collects.
 *  - own, ignore: the program installs its own SIGPWR handler, or
 *    ignores SIGPWR, after start-up: the collection must stop with a
 *    message naming the thread, SIGPWR and SGC_SUSPEND_SIGNAL.  At
 *    75e6b38 it waited for ever ("waited 10 s for thread N").
 *  - moved: GC_set_suspend_signal(SIGUSR2) before GC_INIT, then the
 *    program's own SIGPWR handler: collections work, and the program's
 *    handler gets the SIGPWR it raises.  At 75e6b38 the call only warned.
 *  - env: the same with SGC_SUSPEND_SIGNAL=SIGRTMIN+3 instead.
 * What could fail: a hang (the alarm), no message or another message, a
 * collection failing with the signal moved, GC_get_suspend_signal not
 * reporting the signal set. */
#define _GNU_SOURCE
#include "gc.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "spawn_case.h"

static int pipe_fds[2];
static atomic_int worker_tid, program_handler_calls;

static void program_handler(int sig) {
  (void)sig;
  atomic_fetch_add(&program_handler_calls, 1);
}

static void *reader(void *arg) {
  (void)arg;
  long *mine = GC_MALLOC(16 * sizeof(long)); /* registers the thread */
  CHECK(mine != NULL);
  mine[3] = 42;
  atomic_store(&worker_tid, (int)syscall(SYS_gettid));
  char c;
  while (read(pipe_fds[0], &c, 1) < 0) {
  }
  CHECK(mine[3] == 42);
  return NULL;
}

static int run_case(const char *mode) {
  spawn_case_alarm(20);
  if (!strcmp(mode, "moved")) GC_set_suspend_signal(SIGUSR2);
  GC_INIT();
  int expected = !strcmp(mode, "moved") ? SIGUSR2 : !strcmp(mode, "env") ? SIGRTMIN + 3 : SIGPWR;
  CHECK(GC_get_suspend_signal() == expected, "suspend signal %d, expected %d",
        GC_get_suspend_signal(), expected);
  if (!strcmp(mode, "ignore")) signal(SIGPWR, SIG_IGN);
  else signal(SIGPWR, program_handler);
  CHECK(pipe(pipe_fds) == 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
  while (!atomic_load(&worker_tid)) usleep(1000);
  usleep(20000); /* into read() */
  fprintf(stderr, "worker %d\n", atomic_load(&worker_tid));
  for (int round = 0; round < 4; round++) {
    GC_gcollect();
    for (int i = 0; i < 10000; i++) CHECK(GC_MALLOC(32) != NULL);
  }
  raise(SIGPWR);
  CHECK(atomic_load(&program_handler_calls) == 1, "the program's SIGPWR handler ran %d times",
        atomic_load(&program_handler_calls));
  CHECK(write(pipe_fds[1], "x", 1) == 1);
  CHECK(pthread_join(t, NULL) == 0);
  fprintf(stderr, "collections done\n");
  return 0;
}

static void expect_fatal(const char *mode) {
  char out[8192];
  int st = spawn_case(mode, out, sizeof out);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "%s: wanted an abort, got status %#x: %s",
        mode, st, out);
  int tid = 0;
  const char *w = strstr(out, "worker ");
  CHECK(w && sscanf(w, "worker %d", &tid) == 1, "%s: %s", mode, out);
  char thread[48];
  snprintf(thread, sizeof thread, "thread %d ", tid);
  CHECK(strstr(out, "sgc: fatal: ") && strstr(out, thread) && strstr(out, "SIGPWR") &&
            strstr(out, "SGC_SUSPEND_SIGNAL") && strstr(out, "GC_set_suspend_signal"),
        "%s: the message does not name the thread, the signal and the settings: %s", mode, out);
  t_note("%s: %s", mode, strstr(out, "sgc: fatal: "));
}

static void expect_success(const char *mode) {
  char out[8192];
  spawn_case_expect_exit0(mode, "collections done", out, sizeof out);
  CHECK(!strstr(out, "sgc: "), "%s: sgc said something: %s", mode, out);
}

int main(int argc, char **argv) {
  t_test_name = "suspend_signal_owned";
  if (argc > 1) return run_case(argv[1]);
  unsetenv("SGC_SUSPEND_SIGNAL");
  expect_fatal("own");
  expect_fatal("ignore");
  expect_success("moved");
  setenv("SGC_SUSPEND_SIGNAL", "SIGRTMIN+3", 1);
  expect_success("env");
  unsetenv("SGC_SUSPEND_SIGNAL");
  t_note("a program owning SIGPWR: a clear fatal error, or sgc moved to another signal");
  return 0;
}
