/* Calls that put a thread to sleep, run as blocking sections
 * (GC_do_blocking) for registered threads: nanosleep, clock_nanosleep,
 * usleep, sleep, pause and pthread_barrier_wait, defined in front of
 * glibc's as threads/interpose.c's are (glibc's own calls to them go to
 * its internal names, never here).
 *
 * A thread asleep in one of them is then neither signalled nor woken by
 * a collection: its stack is scanned from the call, as on entry (the
 * arguments sit in the call's record in this frame, above the section),
 * so a collection costs nothing for each sleeping thread beyond its
 * stack (issue 53: hundreds of threads, most asleep), and the dead
 * stack below the call (the red zone of the code the signal would have
 * interrupted) no longer keeps what the thread dropped before sleeping
 * (issue 58, bench/retention.c's workers wait at a barrier).  Waking
 * during a collection, the thread waits for its end, as a stopped one
 * would.
 *
 * sgc's own code never calls these (it would hold its locks into the
 * section's exit): a sleep of its own goes through thread_nap. */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "base/next_definition.h"
#include "common.h"
#include "threads/thread.h"

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*usleep_fn)(useconds_t);
typedef unsigned (*sleep_fn)(unsigned);
typedef int (*pause_fn)(void);
typedef int (*barrier_wait_fn)(pthread_barrier_t *);
NEXT(nanosleep_fn, nanosleep)
NEXT(clock_nanosleep_fn, clock_nanosleep)
NEXT(usleep_fn, usleep)
NEXT(sleep_fn, sleep)
NEXT(pause_fn, pause)
NEXT(barrier_wait_fn, pthread_barrier_wait)

/* One call: its arguments, result and errno. */
struct sleep_call {
  enum { NANOSLEEP, CLOCK_NANOSLEEP, USLEEP, SLEEP, PAUSE, BARRIER_WAIT } kind;
  const struct timespec *request;
  struct timespec *remaining;
  clockid_t clock;
  int flags;
  unsigned seconds;
  useconds_t useconds;
  pthread_barrier_t *barrier;
  long result;
  int error;
};

static void *sleep_run(void *arg) {
  struct sleep_call *c = arg;
  switch (c->kind) {
  case NANOSLEEP: c->result = next_nanosleep()(c->request, c->remaining); break;
  case CLOCK_NANOSLEEP:
    c->result = next_clock_nanosleep()(c->clock, c->flags, c->request, c->remaining);
    break;
  case USLEEP: c->result = next_usleep()(c->useconds); break;
  case SLEEP: c->result = next_sleep()(c->seconds); break;
  case PAUSE: c->result = next_pause()(); break;
  case BARRIER_WAIT: c->result = next_pthread_barrier_wait()(c->barrier); break;
  }
  c->error = errno;
  return NULL;
}

/* Outside a registered thread, inside a section already, or where a
 * section could not be left (GC_do_blocking's may_block), the call runs
 * as it is. */
static long sleep_call(struct sleep_call *c) {
  GC_do_blocking(sleep_run, c);
  errno = c->error;
  return c->result;
}

SGC_EXPORT int nanosleep(const struct timespec *request, struct timespec *remaining) {
  struct sleep_call c = {.kind = NANOSLEEP, .request = request, .remaining = remaining};
  return (int)sleep_call(&c);
}
SGC_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request,
                               struct timespec *remaining) {
  struct sleep_call c = {.kind = CLOCK_NANOSLEEP, .clock = clock, .flags = flags,
                         .request = request, .remaining = remaining};
  return (int)sleep_call(&c);
}
SGC_EXPORT int usleep(useconds_t useconds) {
  struct sleep_call c = {.kind = USLEEP, .useconds = useconds};
  return (int)sleep_call(&c);
}
SGC_EXPORT unsigned sleep(unsigned seconds) {
  struct sleep_call c = {.kind = SLEEP, .seconds = seconds};
  return (unsigned)sleep_call(&c);
}
SGC_EXPORT int pause(void) {
  struct sleep_call c = {.kind = PAUSE};
  return (int)sleep_call(&c);
}
SGC_EXPORT int pthread_barrier_wait(pthread_barrier_t *barrier) {
  struct sleep_call c = {.kind = BARRIER_WAIT, .barrier = barrier};
  return (int)sleep_call(&c);
}

/* nanosleep, sleep and pause may be called from a signal handler, where
 * dlsym may not run: their next definitions are found at start-up. */
void sleep_calls_init(void) {
  next_definition_prime(&next_cache_nanosleep, "nanosleep");
  next_definition_prime(&next_cache_clock_nanosleep, "clock_nanosleep");
  next_definition_prime(&next_cache_usleep, "usleep");
  next_definition_prime(&next_cache_sleep, "sleep");
  next_definition_prime(&next_cache_pause, "pause");
  next_definition_prime(&next_cache_pthread_barrier_wait, "pthread_barrier_wait");
}

void thread_nap(long nanoseconds) {
  struct timespec span = {nanoseconds / 1000000000L, nanoseconds % 1000000000L};
  next_nanosleep()(&span, NULL);
}
