/* The write barrier seen from a program (issue 54): while concurrent
 * cycles run, read(2) into GC_malloc_atomic and GC_malloc buffers
 * succeeds, and a program's own SIGSEGV handlers, installed before and
 * after the collector starts, still get the faults on their memory.
 *   barrier_cycles read|sigsegv
 * Skips (77) where GC_enable_incremental() leaves the collector
 * stop-the-world (SGC_MODE=stop in the environment, leak mode): the
 * barrier is armed only in concurrent cycles. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gc.h"

enum { LIVE_NODES = 200000, ROUNDS = 400, BUFFER_BYTES = 3 * 4096 + 100 };

struct node {
  struct node *next;
  long value;
};
static struct node *live;
static volatile sig_atomic_t before_faults, after_faults;
static char *volatile own;

static void reopen(void) { mprotect(own, 4096, PROT_READ | PROT_WRITE); }
static void before_handler(int sig, siginfo_t *info, void *ctx) {
  before_faults++;
  reopen();
}
static void after_handler(int sig, siginfo_t *info, void *ctx) {
  after_faults++;
  reopen();
}

static int failures;
#define EXPECT(cond, ...)                       \
  do {                                          \
    if (!(cond)) {                              \
      if (failures++ < 10) {                    \
        fprintf(stderr, "FAIL: " __VA_ARGS__); \
        fputc('\n', stderr);                    \
      }                                         \
    }                                           \
  } while (0)

static void churn(unsigned round) {
  for (int i = 0; i < 20000; i++) {
    struct node *n = GC_MALLOC(sizeof *n);
    n->value = i;
  }
  /* Mutate the live list: new nodes spliced in where old ones were. */
  struct node *p = live;
  for (unsigned i = 0; p && p->next && i < 2000; i++, p = p->next)
    if ((i + round) % 7 == 0) {
      struct node *n = GC_MALLOC(sizeof *n);
      n->value = p->next->value;
      n->next = p->next->next;
      GC_END_STUBBORN_CHANGE(n); /* for the manual barrier */
      GC_PTR_STORE_AND_DIRTY(&p->next, n);
    }
}

static void read_into(char *buffer, const char *what) {
  int fds[2];
  if (pipe(fds) != 0) return;
  static char data[BUFFER_BYTES];
  memset(data, 'q', sizeof data);
  ssize_t wrote = write(fds[1], data, sizeof data);
  ssize_t got = read(fds[0], buffer, sizeof data);
  EXPECT(wrote == got && got == (ssize_t)sizeof data, "read(2) into %s: %zd (%s)", what, got,
         got < 0 ? strerror(errno) : "short");
  EXPECT(buffer[0] == 'q' && buffer[sizeof data - 1] == 'q', "read(2) into %s: data", what);
  close(fds[0]);
  close(fds[1]);
}

int main(int argc, char **argv) {
  int sigsegv = argc > 1 && !strcmp(argv[1], "sigsegv");
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_flags = SA_SIGINFO;
  if (sigsegv) {
    act.sa_sigaction = before_handler;
    sigaction(SIGSEGV, &act, NULL);
  }
  GC_INIT();
  GC_enable_incremental();
  if (!GC_is_incremental_mode()) {
    printf("skipped: no incremental mode\n");
    return 77;
  }
  long sum = 0;
  for (long i = 0; i < LIVE_NODES; i++) {
    struct node *n = GC_MALLOC(sizeof *n);
    n->value = i;
    n->next = live;
    GC_END_STUBBORN_CHANGE(n);
    live = n;
    sum += i;
  }
  own = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (unsigned round = 0; round < ROUNDS; round++) {
    churn(round);
    if (sigsegv) {
      if (round == ROUNDS / 2) {
        act.sa_sigaction = after_handler; /* installed after the collector's */
        sigaction(SIGSEGV, &act, NULL);
      }
      mprotect(own, 4096, PROT_NONE);
      int seen = before_faults + after_faults;
      *(volatile char *)own = 1;
      EXPECT(before_faults + after_faults == seen + 1, "round %u: the program's handler missed a fault",
             round);
    } else {
      read_into(GC_MALLOC_ATOMIC(BUFFER_BYTES), "a GC_malloc_atomic buffer");
      read_into(GC_MALLOC(BUFFER_BYTES), "a GC_malloc buffer");
    }
  }
  if (sigsegv) EXPECT(before_faults == ROUNDS / 2 && after_faults == ROUNDS / 2,
                      "faults %d before, %d after", (int)before_faults, (int)after_faults);
  long check = 0, count = 0;
  for (struct node *p = live; p; p = p->next, count++) check += p->value;
  EXPECT(count == LIVE_NODES && check == sum, "the live list: %ld nodes, sum %ld", count, check);
  printf("%s: %d failures\n", sigsegv ? "sigsegv" : "read", failures);
  return failures != 0;
}
