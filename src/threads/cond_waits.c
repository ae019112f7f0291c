/* Waits on a condition variable, run as blocking sections
 * (GC_do_blocking) for registered threads: pthread_cond_wait,
 * pthread_cond_timedwait and pthread_cond_clockwait, defined in front of
 * glibc's as threads/sleep_calls.c's sleeping calls are.
 *
 * A server's idle threads wait here, and a collection then neither
 * signals nor wakes them (issue 53).  The section's exit takes no lock
 * (stop_world_leave_blocking): threads woken thousands of times a second
 * do not queue behind one another or behind a collection's locks.  The
 * mutex is the program's, reacquired inside the section: a thread that
 * holds it there while a collection runs counts as stopped, which the
 * collection does not mind, since it never takes a program's lock.
 *
 * glibc has two ABIs of pthread_cond_wait and pthread_cond_timedwait on
 * x86-64: GLIBC_2.3.2, the default every program built since 2003 calls,
 * and GLIBC_2.2.5's old condition variable.  A program's versioned call
 * binds to sgc's unversioned definition, which calls glibc's GLIBC_2.3.2
 * symbol (dlvsym: a plain dlsym has not always given the default).  A
 * binary built against glibc before 2.3.2 would reach the new ABI with
 * an old condition variable: not supported. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "base/next_definition.h"
#include "common.h"
#include "threads/thread.h"

#define COND_ABI "GLIBC_2.3.2"

typedef int (*cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
NEXT_VERSION(cond_wait_fn, pthread_cond_wait, COND_ABI)
NEXT_VERSION(cond_timedwait_fn, pthread_cond_timedwait, COND_ABI)
#if __GLIBC_PREREQ(2, 30)
typedef int (*cond_clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
                                 const struct timespec *);
NEXT(cond_clockwait_fn, pthread_cond_clockwait)
#endif

int thread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex) {
  return next_pthread_cond_wait()(cond, mutex);
}

/* One wait: its arguments, result and errno. */
struct cond_call {
  enum { WAIT, TIMEDWAIT, CLOCKWAIT } kind;
  pthread_cond_t *cond;
  pthread_mutex_t *mutex;
  clockid_t clock;
  const struct timespec *deadline;
  int result;
  int error;
};

static void *cond_run(void *arg) {
  struct cond_call *c = arg;
  switch (c->kind) {
  case WAIT: c->result = next_pthread_cond_wait()(c->cond, c->mutex); break;
  case TIMEDWAIT:
    c->result = next_pthread_cond_timedwait()(c->cond, c->mutex, c->deadline);
    break;
  case CLOCKWAIT:
#if __GLIBC_PREREQ(2, 30)
    c->result = next_pthread_cond_clockwait()(c->cond, c->mutex, c->clock, c->deadline);
#endif
    break;
  }
  c->error = errno;
  return NULL;
}

/* Outside a registered thread, or where a section may not start
 * (GC_do_blocking's may_block: a callback under sgc's locks), the wait
 * runs as it is. */
static int cond_call(struct cond_call *c) {
  GC_do_blocking(cond_run, c);
  errno = c->error;
  return c->result;
}

SGC_EXPORT int pthread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex) {
  struct cond_call c = {.kind = WAIT, .cond = cond, .mutex = mutex};
  return cond_call(&c);
}
SGC_EXPORT int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
                                      const struct timespec *deadline) {
  struct cond_call c = {.kind = TIMEDWAIT, .cond = cond, .mutex = mutex, .deadline = deadline};
  return cond_call(&c);
}
#if __GLIBC_PREREQ(2, 30)
SGC_EXPORT int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
                                      clockid_t clock, const struct timespec *deadline) {
  struct cond_call c = {.kind = CLOCKWAIT, .cond = cond, .mutex = mutex, .clock = clock,
                        .deadline = deadline};
  return cond_call(&c);
}
#endif
