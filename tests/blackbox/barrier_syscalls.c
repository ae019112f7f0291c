/* barrier_syscalls: system calls writing into GC_malloc buffers across
 * the start of a concurrent cycle (issue 54: read(2) into the heap must
 * not fail with EFAULT in any mode; the mprotect barrier write-protects
 * pointer-holding pages at the cycle's start, and the kernel fails a
 * call writing into one rather than faulting).  Threads block in read,
 * readv, recv, recvfrom and recvmsg (one in read inside GC_do_blocking,
 * which the start's stop does not stop) with GC_malloc buffers before
 * the cycle starts; their data comes while it runs.  Each call must get
 * all of it.  (The same calls beside the barrier's faults and collects:
 * tests/unit/test_barrier_syscalls.c.)  Skips (77) where no cycle is
 * concurrent. */
#define _GNU_SOURCE
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"

enum { PAGE = 4096 };

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

enum { BLOCKED_KINDS = 6, BLOCKED_ROUNDS = 4, BLOCKED_BYTES = 3 * PAGE + 100 };
static const char *const blocked_names[BLOCKED_KINDS] = {"read", "readv", "recv",
                                                         "recvfrom", "recvmsg", "read (blocking)"};
struct blocked {
  int kind, fds[2];
  char *buffer;           /* GC_malloc: holds pointers, so protected when armed */
  struct msghdr *msg;     /* GC_malloc as well: the kernel writes its lengths */
  struct sockaddr *from;  /* recvfrom's address and its length, in the heap */
  socklen_t *from_len;
  ssize_t got;
  int error;
};
static struct blocked *blocked[BLOCKED_KINDS];

static void *blocked_call(void *arg) {
  struct blocked *b = arg;
  struct iovec iov = {b->buffer, BLOCKED_BYTES};
  switch (b->kind) {
  case 0: case 5: b->got = read(b->fds[0], b->buffer, BLOCKED_BYTES); break;
  case 1: b->got = readv(b->fds[0], &iov, 1); break;
  case 2: b->got = recv(b->fds[0], b->buffer, BLOCKED_BYTES, MSG_WAITALL); break;
  case 3:
    *b->from_len = sizeof(struct sockaddr);
    b->got = recvfrom(b->fds[0], b->buffer, BLOCKED_BYTES, MSG_WAITALL, b->from, b->from_len);
    break;
  default:
    memset(b->msg, 0, sizeof *b->msg);
    b->msg->msg_iov = &iov;
    b->msg->msg_iovlen = 1;
    b->got = recvmsg(b->fds[0], b->msg, MSG_WAITALL);
  }
  b->error = errno;
  return NULL;
}

static void *blocked_reader(void *arg) {
  struct blocked *b = arg;
  if (b->kind == 5) GC_do_blocking(blocked_call, b); /* not stopped: runs beside the arm */
  else blocked_call(b);
  return NULL;
}

static int case_blocked(void) {
  int failures = 0, rounds_open = 0;
  static char data[BLOCKED_BYTES];
  for (int round = 0; round < BLOCKED_ROUNDS; round++) {
    pthread_t threads[BLOCKED_KINDS];
    for (int k = 0; k < BLOCKED_KINDS; k++) {
      struct blocked *b = blocked[k] = GC_malloc(sizeof *b);
      CHECK(b != NULL);
      b->kind = k;
      b->buffer = GC_malloc(BLOCKED_BYTES);
      b->msg = GC_malloc(sizeof *b->msg);
      b->from = GC_malloc(sizeof(struct sockaddr));
      b->from_len = GC_malloc(sizeof(socklen_t));
      CHECK(b->buffer && b->msg && b->from && b->from_len);
      if (k == 1 || k == 0 || k == 5) CHECK(pipe(b->fds) == 0);
      else CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, b->fds) == 0);
      CHECK(pthread_create(&threads[k], NULL, blocked_reader, b) == 0);
    }
    sleep_ms(100); /* all blocked in their calls, the barrier not armed */
    GC_word before = GC_get_gc_no();
    GC_start_incremental_collection(); /* arms the barrier, world stopped */
    sleep_ms(20);
    memset(data, 'a' + round, sizeof data);
    for (int k = 0; k < BLOCKED_KINDS; k++)
      CHECK(write(blocked[k]->fds[1], data, sizeof data) == (ssize_t)sizeof data);
    for (int k = 0; k < BLOCKED_KINDS; k++) {
      pthread_join(threads[k], NULL);
      struct blocked *b = blocked[k];
      bool ok = b->got == (ssize_t)BLOCKED_BYTES && b->buffer[0] == 'a' + round &&
                b->buffer[BLOCKED_BYTES - 1] == 'a' + round;
      if (!ok) {
        failures++;
        fprintf(stderr, "round %d: %s into a GC_malloc buffer during a cycle: %zd (%s)\n", round,
                blocked_names[k], b->got, b->got < 0 ? strerror(b->error) : "short or wrong data");
      }
      close(b->fds[0]);
      close(b->fds[1]);
    }
    /* The cycle may have finished before the data came on a slow
     * machine (its finish then made the buffers writable): counted, not
     * failed, and the run must have had such a round at least once. */
    if (GC_get_gc_no() == before) rounds_open++;
    GC_gcollect(); /* finishes the cycle */
  }
  printf("blocked: %d rounds of %d calls (%d with the cycle still open), %d failed\n",
         BLOCKED_ROUNDS, BLOCKED_KINDS, rounds_open, failures);
  CHECK(rounds_open > 0, "every cycle finished before its calls' data came");
  return failures;
}

int main(void) {
  GC_INIT();
  GC_enable_incremental();
  if (!GC_is_incremental_mode()) {
    printf("skipped: no incremental mode\n");
    return 77;
  }
  GC_allow_register_threads();
  return case_blocked() ? 1 : 0;
}
