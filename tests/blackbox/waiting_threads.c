/*
 * waiting_threads.c: threads waiting in pthread_cond_wait,
 * pthread_cond_timedwait, pthread_cond_clockwait, poll, ppoll, select,
 * pselect, epoll_wait, epoll_pwait or epoll_pwait2 are not stopped by a collection
 * (threads/cond_waits.c and fd_waits.c run those calls as blocking
 * sections), and what their stacks hold still survives it.
 *
 * Ten threads each build a list only their own stack holds and wait in
 * one of the calls, for a condition variable or for a pipe to become
 * readable; the main thread collects while they wait.  Each collection's
 * record must count one stopped thread, the collector (before: eleven);
 * each list must be intact when its thread wakes.  The calls' results
 * and errno are glibc's: timeouts, invalid arguments, and EINTR when a
 * program's signal (no SA_RESTART) interrupts a poll or an epoll_wait;
 * a thread cancelled in pthread_cond_wait cleans up with the mutex held.
 * Waiters woken while GC_stop_world_external holds the world stopped
 * run on only once it restarts.
 */
#define _GNU_SOURCE
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "seeded_list.h"

enum { COND_WAIT, COND_TIMEDWAIT, COND_CLOCKWAIT, POLL, PPOLL, SELECT, PSELECT, EPOLL_WAIT,
       EPOLL_PWAIT, EPOLL_PWAIT2, WAITERS };
enum { NODES = 2000, COLLECTIONS = 4 };

static atomic_int waiting, wake;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t mono_cond; /* CLOCK_MONOTONIC, for pthread_cond_timedwait */
static int pipe_fds[2], epoll_fd;

static struct node *build(long seed) { return seeded_list(seed, NODES); }
static long check(const struct node *head, long seed) {
  return seeded_list_damage(head, seed, NODES);
}

static struct timespec after_ms(clockid_t clock, long ms) {
  struct timespec t;
  clock_gettime(clock, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += ms % 1000 * 1000000;
  if (t.tv_nsec >= 1000000000) t.tv_sec++, t.tv_nsec -= 1000000000;
  return t;
}

static void cond_wait_in(long kind) {
  pthread_mutex_lock(&lock);
  while (!atomic_load(&wake)) {
    struct timespec mono = after_ms(CLOCK_MONOTONIC, 20000);
    int r = 0;
    switch (kind) {
    case COND_WAIT: r = pthread_cond_wait(&cond, &lock); break;
    case COND_TIMEDWAIT: r = pthread_cond_timedwait(&mono_cond, &lock, &mono); break;
    default: r = pthread_cond_clockwait(&cond, &lock, CLOCK_MONOTONIC, &mono); break;
    }
    CHECK(r == 0 || r == ETIMEDOUT, "waiter %ld: condition wait returned %d", kind, r);
  }
  pthread_mutex_unlock(&lock);
}

/* Waits until the pipe is readable (the main thread writes a byte that
 * no one reads). */
static void fd_wait_in(long kind) {
  struct pollfd p = {pipe_fds[0], POLLIN, 0};
  struct epoll_event ev;
  fd_set read;
  int r;
  do {
    FD_ZERO(&read);
    FD_SET(pipe_fds[0], &read);
    switch (kind) {
    case POLL: r = poll(&p, 1, -1); break;
    case PPOLL: r = ppoll(&p, 1, NULL, NULL); break;
    case SELECT: r = select(pipe_fds[0] + 1, &read, NULL, NULL, NULL); break;
    case PSELECT: r = pselect(pipe_fds[0] + 1, &read, NULL, NULL, NULL, NULL); break;
    case EPOLL_WAIT: r = epoll_wait(epoll_fd, &ev, 1, -1); break;
    case EPOLL_PWAIT: r = epoll_pwait(epoll_fd, &ev, 1, -1, NULL); break;
    default: r = epoll_pwait2(epoll_fd, &ev, 1, NULL, NULL); break;
    }
  } while (r < 0 && errno == EINTR);
  CHECK(r == 1, "waiter %ld: wait returned %d (errno %d)", kind, r, errno);
}

static void *waiter(void *arg) {
  long kind = (long)arg;
  struct node *volatile list = build(kind);
  atomic_fetch_add(&waiting, 1);
  if (kind <= COND_CLOCKWAIT) cond_wait_in(kind);
  else fd_wait_in(kind);
  long bad = check(list, kind);
  CHECK(bad == 0, "waiter %ld: %ld nodes of its list overwritten", kind, bad);
  return NULL;
}

static void on_usr1(int sig) { (void)sig; }

static atomic_int interrupt_kind;
/* Waits forever in poll or epoll_wait on the empty pipe until SIGUSR1. */
static void *interrupted(void *arg) {
  (void)arg;
  int empty[2];
  CHECK(pipe(empty) == 0);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, empty[0], &ev) == 0);
  struct pollfd p = {empty[0], POLLIN, 0};
  int kind = atomic_load(&interrupt_kind);
  errno = 0;
  int r = kind == 0 ? poll(&p, 1, -1) : epoll_wait(ep, &ev, 1, -1);
  CHECK(r == -1 && errno == EINTR, "%s interrupted by a signal: %d (errno %d), want EINTR",
        kind == 0 ? "poll" : "epoll_wait", r, errno);
  close(ep), close(empty[0]), close(empty[1]);
  return NULL;
}

static void check_eintr(int kind) {
  atomic_store(&interrupt_kind, kind);
  pthread_t t;
  CHECK(GC_pthread_create(&t, NULL, interrupted, NULL) == 0);
  struct timespec settle = {0, 50000000};
  nanosleep(&settle, NULL);
  GC_gcollect(); /* the waiter sleeps on through a collection */
  nanosleep(&settle, NULL);
  CHECK(pthread_kill(t, SIGUSR1) == 0);
  CHECK(pthread_join(t, NULL) == 0);
}

/* A thread cancelled in pthread_cond_wait runs its cleanup handler with
 * the mutex held, as glibc's wait reacquires it, and leaves its section
 * on the way: a collection after the join must not wait for it. */
static atomic_int cleanup_held_mutex;
static void unlock_on_cancel(void *arg) {
  atomic_store(&cleanup_held_mutex, pthread_mutex_trylock(arg) == EBUSY);
  pthread_mutex_unlock(arg);
}
static void *cancelled(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  atomic_store(&waiting, 1);
  pthread_cleanup_push(unlock_on_cancel, &lock);
  for (;;) pthread_cond_wait(&cond, &lock);
  pthread_cleanup_pop(1);
  return NULL;
}
static void check_cancel(void) {
  atomic_store(&waiting, 0);
  pthread_t t;
  CHECK(GC_pthread_create(&t, NULL, cancelled, NULL) == 0);
  while (!atomic_load(&waiting)) sched_yield();
  struct timespec settle = {0, 20000000};
  nanosleep(&settle, NULL);
  CHECK(pthread_cancel(t) == 0);
  void *result;
  CHECK(pthread_join(t, &result) == 0 && result == PTHREAD_CANCELED, "cancelled wait");
  CHECK(atomic_load(&cleanup_held_mutex), "the cleanup handler ran without the mutex");
  CHECK(pthread_mutex_trylock(&lock) == 0, "the mutex stayed locked after the cancel");
  pthread_mutex_unlock(&lock);
  GC_gcollect();
}

/* A waiter woken while the world is stopped (GC_stop_world_external)
 * leaves its section only once the world restarts: the collector counted
 * it as stopped and may be scanning its stack.  One waits on the
 * condition variable, one in poll. */
static atomic_int ran_on;
static void *woken_in_stop(void *arg) {
  long kind = (long)arg;
  if (kind == COND_WAIT) {
    pthread_mutex_lock(&lock);
    atomic_fetch_add(&waiting, 1);
    while (!atomic_load(&wake)) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
  } else {
    atomic_fetch_add(&waiting, 1);
    fd_wait_in(POLL);
  }
  atomic_fetch_add(&ran_on, 1);
  return NULL;
}
static void check_stopped_world_holds(void) {
  char byte;
  CHECK(read(pipe_fds[0], &byte, 1) == 1); /* the pipe empty again */
  atomic_store(&wake, 0);
  atomic_store(&waiting, 0);
  pthread_t t[2];
  CHECK(GC_pthread_create(&t[0], NULL, woken_in_stop, (void *)(long)COND_WAIT) == 0);
  CHECK(GC_pthread_create(&t[1], NULL, woken_in_stop, (void *)(long)POLL) == 0);
  while (atomic_load(&waiting) < 2) sched_yield();
  struct timespec settle = {0, 50000000};
  nanosleep(&settle, NULL);
  GC_stop_world_external();
  pthread_mutex_lock(&lock);
  atomic_store(&wake, 1);
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
  CHECK(write(pipe_fds[1], "x", 1) == 1);
  nanosleep(&settle, NULL); /* sgc's locks held: a plain sleep */
  int early = atomic_load(&ran_on);
  GC_start_world_external();
  CHECK(early == 0, "%d waiters ran on while the world was stopped", early);
  for (int i = 0; i < 2; i++) CHECK(pthread_join(t[i], NULL) == 0);
  CHECK(atomic_load(&ran_on) == 2);
}

static void check_results(void) {
  /* Condition waits: timeouts and invalid arguments. */
  pthread_mutex_lock(&lock);
  struct timespec past = {1, 0}, bad = {0, 2000000000L};
  CHECK(pthread_cond_timedwait(&cond, &lock, &past) == ETIMEDOUT, "timedwait(past)");
  CHECK(pthread_cond_clockwait(&cond, &lock, CLOCK_MONOTONIC, &past) == ETIMEDOUT,
        "clockwait(past)");
  CHECK(pthread_cond_timedwait(&cond, &lock, &bad) == EINVAL, "timedwait(invalid)");
  CHECK(pthread_cond_clockwait(&cond, &lock, CLOCK_PROCESS_CPUTIME_ID, &past) == EINVAL,
        "clockwait(bad clock)");
  struct timespec soon = after_ms(CLOCK_REALTIME, 10);
  CHECK(pthread_cond_timedwait(&cond, &lock, &soon) == ETIMEDOUT, "timedwait(10 ms)");
  pthread_mutex_unlock(&lock);
  CHECK(pthread_mutex_trylock(&lock) == 0, "the mutex came back unlocked");
  pthread_mutex_unlock(&lock);

  /* Descriptor waits on an empty pipe: timeouts, errors. */
  int empty[2];
  CHECK(pipe(empty) == 0);
  struct pollfd p = {empty[0], POLLIN, 0};
  CHECK(poll(&p, 1, 0) == 0 && p.revents == 0, "poll(0 ms)");
  CHECK(poll(&p, 1, 10) == 0, "poll(10 ms)");
  struct timespec ten_ms = {0, 10000000};
  CHECK(ppoll(&p, 1, &ten_ms, NULL) == 0, "ppoll(10 ms)");
  errno = 0;
  CHECK(ppoll(&p, 1, &bad, NULL) == -1 && errno == EINVAL, "ppoll(invalid)");
  fd_set read;
  FD_ZERO(&read);
  FD_SET(empty[0], &read);
  struct timeval tv = {0, 10000};
  CHECK(select(empty[0] + 1, &read, NULL, NULL, &tv) == 0, "select(10 ms)");
  CHECK(tv.tv_sec == 0 && tv.tv_usec == 0, "select's timeout left as Linux leaves it");
  errno = 0;
  CHECK(select(-1, NULL, NULL, NULL, &tv) == -1 && errno == EINVAL, "select(-1)");
  FD_ZERO(&read);
  FD_SET(empty[0], &read);
  CHECK(pselect(empty[0] + 1, &read, NULL, NULL, &ten_ms, NULL) == 0, "pselect(10 ms)");
  struct epoll_event ev;
  int ep = epoll_create1(0);
  CHECK(epoll_wait(ep, &ev, 1, 10) == 0, "epoll_wait(10 ms)");
  CHECK(epoll_pwait(ep, &ev, 1, 0, NULL) == 0, "epoll_pwait(0 ms)");
  CHECK(epoll_pwait2(ep, &ev, 1, &ten_ms, NULL) == 0, "epoll_pwait2(10 ms)");
  errno = 0;
  CHECK(epoll_pwait2(ep, &ev, 0, &ten_ms, NULL) == -1 && errno == EINVAL, "epoll_pwait2(0 events)");
  errno = 0;
  CHECK(epoll_wait(-1, &ev, 1, 0) == -1 && errno == EBADF, "epoll_wait(-1)");
  errno = 0;
  CHECK(epoll_pwait(ep, &ev, 0, 0, NULL) == -1 && errno == EINVAL, "epoll_pwait(0 events)");
  close(ep), close(empty[0]), close(empty[1]);

  struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART */
  sigemptyset(&sa.sa_mask);
  CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
  check_eintr(0);
  check_eintr(1);
  check_cancel();
}

int main(void) {
  GC_INIT();
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  CHECK(pthread_cond_init(&mono_cond, &attr) == 0);
  CHECK(pipe(pipe_fds) == 0);
  epoll_fd = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  CHECK(epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pipe_fds[0], &ev) == 0);

  pthread_t t[WAITERS];
  for (long i = 0; i < WAITERS; i++)
    CHECK(GC_pthread_create(&t[i], NULL, waiter, (void *)i) == 0, "create");
  while (atomic_load(&waiting) < WAITERS) sched_yield();
  struct timespec settle = {0, 50000000};
  nanosleep(&settle, NULL); /* every waiter inside its call */

  int stopped_most = most_threads_stopped(COLLECTIONS, NODES);
  CHECK(stopped_most == 1,
        "a collection stopped %d threads while %d waited in the calls sgc runs as blocking "
        "sections (only the collector should stop)",
        stopped_most, WAITERS);

  pthread_mutex_lock(&lock);
  atomic_store(&wake, 1);
  pthread_cond_broadcast(&cond);
  pthread_cond_broadcast(&mono_cond);
  pthread_mutex_unlock(&lock);
  CHECK(write(pipe_fds[1], "x", 1) == 1);
  for (int i = 0; i < WAITERS; i++) CHECK(pthread_join(t[i], NULL) == 0, "join");

  check_stopped_world_holds();
  check_results();
  printf("waiting_threads: ok (%d waiters, %d collections, at most %d thread stopped)\n",
         WAITERS, COLLECTIONS, stopped_most);
  return 0;
}
