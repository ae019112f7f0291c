/* glibc calls sgc defines in front of glibc's own, for programs that use
 * plain pthreads (preloaded, or linked with -lsgc before libc, as the
 * linker puts it): each calls the next definition, found with
 * dlsym(RTLD_NEXT), so a sanitizer's interceptor in front of sgc's still
 * chains through.  glibc's own calls to these go to its internal names,
 * never here.
 *  - pthread_join, pthread_tryjoin_np, pthread_timedjoin_np,
 *    pthread_clockjoin_np and pthread_detach: the result of a joinable
 *    thread that exited stays a root until one of them succeeds
 *    (registry.c, keep_result); a wait for a thread is a blocking section,
 *    as GC_pthread_join's.
 *  - sigwait, sigwaitinfo and sigtimedwait: a registered thread waiting
 *    for signals waits in a blocking section, and never for the suspend
 *    signal.  Waiting with every signal blocked and the suspend signal in
 *    the set (a daemon's signal thread) took a collection's signal for
 *    the program's, and the collection waited 20-40 s for it
 *    (bb_sigwait_thread).
 *  - pthread_sigmask, sigprocmask and signalfd: no thread's mask, and no
 *    signalfd's set, holds the suspend signal, as GC_pthread_sigmask
 *    keeps it out for the calls gc.h redirects.  A thread that blocked
 *    it never stopped for a collection; one reading a signalfd on the
 *    full set took it as the program's, even unblocked (the kernel's
 *    signalfd read takes a pending signal before its handler runs), and
 *    the collection waited for ever (bb_signalfd_thread). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <time.h>

#include "barrier/barrier.h"
#include "base/next_definition.h"
#include "common.h"
#include "threads/thread.h"

typedef int (*join_fn)(pthread_t, void **);
typedef int (*timedjoin_fn)(pthread_t, void **, const struct timespec *);
typedef int (*clockjoin_fn)(pthread_t, void **, clockid_t, const struct timespec *);
typedef int (*detach_fn)(pthread_t);
typedef int (*sigwait_fn)(const sigset_t *, int *);
typedef int (*sigwaitinfo_fn)(const sigset_t *, siginfo_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);
NEXT(join_fn, pthread_join)
NEXT(join_fn, pthread_tryjoin_np)
NEXT(timedjoin_fn, pthread_timedjoin_np)
NEXT(clockjoin_fn, pthread_clockjoin_np)
NEXT(detach_fn, pthread_detach)
NEXT(sigwait_fn, sigwait)
NEXT(sigwaitinfo_fn, sigwaitinfo)
NEXT(sigtimedwait_fn, sigtimedwait)
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*signalfd_fn)(int, const sigset_t *, int);
NEXT(sigmask_fn, pthread_sigmask)
NEXT(sigmask_fn, sigprocmask)
NEXT(signalfd_fn, signalfd)

int thread_join_next(pthread_t thread, void **result) {
  return next_pthread_join()(thread, result);
}
int thread_detach_next(pthread_t thread) { return next_pthread_detach()(thread); }

/* One join call, run in a blocking section. */
struct join_call {
  enum { JOIN, JOIN_TIMED, JOIN_CLOCK } kind;
  pthread_t thread;
  void **result;
  clockid_t clock;
  const struct timespec *deadline;
  int status;
};

static void *join_run(void *arg) {
  struct join_call *c = arg;
  switch (c->kind) {
  case JOIN: c->status = next_pthread_join()(c->thread, c->result); break;
  case JOIN_TIMED:
    c->status = next_pthread_timedjoin_np()(c->thread, c->result, c->deadline);
    break;
  case JOIN_CLOCK:
    c->status = next_pthread_clockjoin_np()(c->thread, c->result, c->clock, c->deadline);
    break;
  }
  return NULL;
}

/* The thread's kernel id is read first: should a new thread take the
 * joined one's pthread id before this call returns, its zombie stays. */
static int join(struct join_call *c) {
  int tid = thread_tid_of(c->thread);
  GC_do_blocking(join_run, c);
  if (c->status == 0) thread_forget_zombie(c->thread, tid);
  return c->status;
}

SGC_EXPORT int pthread_join(pthread_t thread, void **result) {
  struct join_call c = {.kind = JOIN, .thread = thread, .result = result};
  return join(&c);
}
SGC_EXPORT int pthread_timedjoin_np(pthread_t thread, void **result,
                                    const struct timespec *deadline) {
  struct join_call c = {
      .kind = JOIN_TIMED, .thread = thread, .result = result, .deadline = deadline};
  return join(&c);
}
SGC_EXPORT int pthread_clockjoin_np(pthread_t thread, void **result, clockid_t clock,
                                    const struct timespec *deadline) {
  struct join_call c = {
      .kind = JOIN_CLOCK, .thread = thread, .result = result, .clock = clock, .deadline = deadline};
  return join(&c);
}
SGC_EXPORT int pthread_tryjoin_np(pthread_t thread, void **result) {
  int tid = thread_tid_of(thread);
  int r = next_pthread_tryjoin_np()(thread, result);
  if (r == 0) thread_forget_zombie(thread, tid);
  return r;
}
SGC_EXPORT int pthread_detach(pthread_t thread) {
  return thread_detach(thread, next_pthread_detach());
}

/* One signal wait, run in a blocking section; errno as the call left it. */
struct sigwait_call {
  enum { WAIT, WAIT_INFO, WAIT_TIMED } kind;
  const sigset_t *set;
  int *sig;
  siginfo_t *info;
  const struct timespec *timeout;
  int status, error;
};

static void *sigwait_run(void *arg) {
  struct sigwait_call *c = arg;
  switch (c->kind) {
  case WAIT: c->status = next_sigwait()(c->set, c->sig); break;
  case WAIT_INFO: c->status = next_sigwaitinfo()(c->set, c->info); break;
  case WAIT_TIMED: c->status = next_sigtimedwait()(c->set, c->info, c->timeout); break;
  }
  c->error = errno;
  return NULL;
}

static int signal_wait(struct sigwait_call *c) {
  sigset_t set;
  if (sgc_self && c->set) {
    /* Never taken from the set for the program: a collection's signal,
     * still pending, is delivered once the thread unblocks it (and then
     * does nothing). */
    set = *c->set;
    sigdelset(&set, GC_get_suspend_signal());
    c->set = &set;
    GC_do_blocking(sigwait_run, c);
  } else {
    sigwait_run(c);
  }
  errno = c->error;
  return c->status;
}

SGC_EXPORT int sigwait(const sigset_t *set, int *sig) {
  struct sigwait_call c = {.kind = WAIT, .set = set, .sig = sig};
  return signal_wait(&c);
}
SGC_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info) {
  struct sigwait_call c = {.kind = WAIT_INFO, .set = set, .info = info};
  return signal_wait(&c);
}
SGC_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
  struct sigwait_call c = {.kind = WAIT_TIMED, .set = set, .info = info, .timeout = timeout};
  return signal_wait(&c);
}

/* SET without the suspend signal, in *COPY, where it holds it; else SET. */
static const sigset_t *without_suspend_signal(const sigset_t *set, sigset_t *copy) {
  int sig = GC_get_suspend_signal();
  if (!set || sigismember(set, sig) != 1) return set;
  *copy = *set;
  sigdelset(copy, sig);
  return copy;
}

/* Unblocking, or reading the mask, passes as it is; a mask to block
 * leaves out the suspend signal and, while the mprotect barrier's handler
 * is in, the fault signals (barrier.h). */
static const sigset_t *mask_for(int how, const sigset_t *set, sigset_t *copy) {
  if (how != SIG_BLOCK && how != SIG_SETMASK) return set;
  return barrier_mask_keeping_faults(without_suspend_signal(set, copy), copy);
}

SGC_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  sigset_t copy;
  return next_pthread_sigmask()(how, mask_for(how, set, &copy), old);
}
SGC_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  sigset_t copy;
  return next_sigprocmask()(how, mask_for(how, set, &copy), old);
}
SGC_EXPORT int signalfd(int fd, const sigset_t *mask, int flags) {
  sigset_t copy;
  return next_signalfd()(fd, without_suspend_signal(mask, &copy), flags);
}


void interpose_init(void) {
  /* Found now, on the starting thread: dlsym may take malloc memory,
   * which on a GC thread (its first pthread_sigmask) would give it an
   * arena of its own. */
  next_definition_prime(&next_cache_pthread_sigmask, "pthread_sigmask");
  next_definition_prime(&next_cache_sigprocmask, "sigprocmask");
  next_definition_prime(&next_cache_signalfd, "signalfd");
  sleep_calls_init();
  fd_waits_init();
}
