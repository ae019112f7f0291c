/* Waits on file descriptors, run as blocking sections (GC_do_blocking)
 * for registered threads: poll, ppoll, select, pselect, epoll_wait,
 * epoll_pwait and epoll_pwait2 (and __poll_chk, __ppoll_chk, which
 * _FORTIFY_SOURCE calls in poll's and ppoll's place), defined in front of
 * glibc's as threads/sleep_calls.c's sleeping calls are.
 *
 * A server's idle threads wait here, and a collection then neither
 * signals nor wakes them (issue 53): woken by the suspend signal, such a
 * wait returns EINTR (epoll_wait and select whatever SA_RESTART says),
 * which a program may not expect.  The section's exit takes no lock
 * (stop_world_leave_blocking), so threads waking often do not queue.
 * The descriptor sets and event buffers are the program's, named from
 * the call's record in this frame, above the section; the kernel writes
 * into them during the wait as the program would after it. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "base/next_definition.h"
#include "common.h"
#include "threads/thread.h"

typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*poll_chk_fn)(struct pollfd *, nfds_t, int, size_t);
typedef int (*ppoll_chk_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *,
                            size_t);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
                          const sigset_t *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int, const struct timespec *,
                               const sigset_t *);
NEXT(poll_fn, poll)
NEXT(ppoll_fn, ppoll)
NEXT(poll_chk_fn, __poll_chk)
NEXT(ppoll_chk_fn, __ppoll_chk)
NEXT(select_fn, select)
NEXT(pselect_fn, pselect)
NEXT(epoll_wait_fn, epoll_wait)
NEXT(epoll_pwait_fn, epoll_pwait)
NEXT(epoll_pwait2_fn, epoll_pwait2)

/* One wait: its arguments, result and errno. */
struct fd_call {
  enum { POLL, PPOLL, SELECT, PSELECT, EPOLL_WAIT, EPOLL_PWAIT, EPOLL_PWAIT2 } kind;
  struct pollfd *fds;
  nfds_t nfds;
  int fd; /* select's nfds, epoll's descriptor */
  fd_set *read, *write, *except;
  struct timeval *timeval;
  const struct timespec *timespec;
  int milliseconds;
  const sigset_t *mask;
  struct epoll_event *events;
  int max_events;
  int result;
  int error;
};

static void *fd_run(void *arg) {
  struct fd_call *c = arg;
  switch (c->kind) {
  case POLL: c->result = next_poll()(c->fds, c->nfds, c->milliseconds); break;
  case PPOLL: c->result = next_ppoll()(c->fds, c->nfds, c->timespec, c->mask); break;
  case SELECT:
    c->result = next_select()(c->fd, c->read, c->write, c->except, c->timeval);
    break;
  case PSELECT:
    c->result = next_pselect()(c->fd, c->read, c->write, c->except, c->timespec, c->mask);
    break;
  case EPOLL_WAIT:
    c->result = next_epoll_wait()(c->fd, c->events, c->max_events, c->milliseconds);
    break;
  case EPOLL_PWAIT:
    c->result = next_epoll_pwait()(c->fd, c->events, c->max_events, c->milliseconds, c->mask);
    break;
  case EPOLL_PWAIT2:
    c->result = next_epoll_pwait2()(c->fd, c->events, c->max_events, c->timespec, c->mask);
    break;
  }
  c->error = errno;
  return NULL;
}

/* Outside a registered thread, inside a section already, or where a
 * section may not start (GC_do_blocking's may_block), the call runs as
 * it is. */
static int fd_call(struct fd_call *c) {
  GC_do_blocking(fd_run, c);
  errno = c->error;
  return c->result;
}

SGC_EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
  struct fd_call c = {.kind = POLL, .fds = fds, .nfds = nfds, .milliseconds = timeout};
  return fd_call(&c);
}
SGC_EXPORT int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
                     const sigset_t *mask) {
  struct fd_call c = {.kind = PPOLL, .fds = fds, .nfds = nfds, .timespec = timeout,
                      .mask = mask};
  return fd_call(&c);
}
/* An overflow of FDS is glibc's to report (it aborts). */
SGC_EXPORT int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fds_bytes) {
  if (fds_bytes / sizeof *fds < nfds) return next___poll_chk()(fds, nfds, timeout, fds_bytes);
  return poll(fds, nfds, timeout);
}
SGC_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
                           const sigset_t *mask, size_t fds_bytes) {
  if (fds_bytes / sizeof *fds < nfds)
    return next___ppoll_chk()(fds, nfds, timeout, mask, fds_bytes);
  return ppoll(fds, nfds, timeout, mask);
}
SGC_EXPORT int select(int nfds, fd_set *read, fd_set *write, fd_set *except,
                      struct timeval *timeout) {
  struct fd_call c = {.kind = SELECT, .fd = nfds, .read = read, .write = write,
                      .except = except, .timeval = timeout};
  return fd_call(&c);
}
SGC_EXPORT int pselect(int nfds, fd_set *read, fd_set *write, fd_set *except,
                       const struct timespec *timeout, const sigset_t *mask) {
  struct fd_call c = {.kind = PSELECT, .fd = nfds, .read = read, .write = write,
                      .except = except, .timespec = timeout, .mask = mask};
  return fd_call(&c);
}
SGC_EXPORT int epoll_wait(int epfd, struct epoll_event *events, int max_events, int timeout) {
  struct fd_call c = {.kind = EPOLL_WAIT, .fd = epfd, .events = events,
                      .max_events = max_events, .milliseconds = timeout};
  return fd_call(&c);
}
SGC_EXPORT int epoll_pwait(int epfd, struct epoll_event *events, int max_events, int timeout,
                           const sigset_t *mask) {
  struct fd_call c = {.kind = EPOLL_PWAIT, .fd = epfd, .events = events,
                      .max_events = max_events, .milliseconds = timeout, .mask = mask};
  return fd_call(&c);
}

/* glibc 2.35 on; a program that calls it runs on a glibc that has it. */
SGC_EXPORT int epoll_pwait2(int epfd, struct epoll_event *events, int max_events,
                            const struct timespec *timeout, const sigset_t *mask) {
  struct fd_call c = {.kind = EPOLL_PWAIT2, .fd = epfd, .events = events,
                      .max_events = max_events, .timespec = timeout, .mask = mask};
  return fd_call(&c);
}

/* poll, ppoll, select and pselect may be called from a signal handler,
 * where dlsym may not run: their next definitions are found at start-up
 * (the rest too, as cheap). */
void fd_waits_init(void) {
  next_definition_prime(&next_cache_poll, "poll");
  next_definition_prime(&next_cache_ppoll, "ppoll");
  next_definition_prime(&next_cache___poll_chk, "__poll_chk");
  next_definition_prime(&next_cache___ppoll_chk, "__ppoll_chk");
  next_definition_prime(&next_cache_select, "select");
  next_definition_prime(&next_cache_pselect, "pselect");
  next_definition_prime(&next_cache_epoll_wait, "epoll_wait");
  next_definition_prime(&next_cache_epoll_pwait, "epoll_pwait");
  next_definition_prime(&next_cache_epoll_pwait2, "epoll_pwait2");
}
