/* The mprotect barrier and a program's own SIGSEGV handlers
 * (barrier/mprotect_signals.c): with the barrier armed, a fault on the
 * program's own memory reaches the handler it installed before sgc's,
 * then one installed after (sigaction and signal are interposed: sgc's
 * stays in, and the heap's faults still go to the barrier), a handler
 * that leaves with siglongjmp leaves the barrier working, and with the
 * default action a fault still ends the process by SIGSEGV.  Runs with
 * SGC_BARRIER=mprotect; skips (77) where that is not available. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier/barrier.h"
#include "common.h"
#include "heap/heap.h"
#include "unit.h"

static volatile sig_atomic_t first_calls, second_calls, plain_calls;
static void *volatile fault_at;
static sigjmp_buf escape;

/* Each handler makes the page it faulted on writable, so the write runs
 * again and succeeds. */
static void open_page(void *addr) {
  mprotect((void *)((uintptr_t)addr & ~(uintptr_t)(PAGE_BYTES - 1)), PAGE_BYTES, PROT_READ | PROT_WRITE);
}
static void first_handler(int sig, siginfo_t *info, void *ctx) {
  first_calls++;
  fault_at = info->si_addr;
  open_page(info->si_addr);
}
static void second_handler(int sig, siginfo_t *info, void *ctx) {
  second_calls++;
  fault_at = info->si_addr;
  open_page(info->si_addr);
}
static void plain_handler(int sig) {
  plain_calls++;
  open_page(fault_at);
}
static void escaping_handler(int sig) { siglongjmp(escape, 1); }

static void *blocking_writer(void *arg) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  *(volatile char *)arg = 6;
  return NULL;
}
static char *volatile handler_target;
static void heap_writing_handler(int sig) { *(volatile char *)handler_target = 7; }

static char *own_page(void) {
  char *p = mmap(NULL, PAGE_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static bool seen_page;
static uintptr_t watched;
static void visit(uintptr_t lo, uintptr_t hi, void *arg) {
  if (watched >= lo && watched < hi) seen_page = true;
}
/* Whether a write to the heap page at P is still the barrier's. */
static bool barrier_records(char *p) {
  seen_page = false;
  watched = (uintptr_t)p;
  barrier_collect_dirty(visit, NULL);
  seen_page = false;
  *(volatile char *)p = 1;
  barrier_collect_dirty(visit, NULL);
  return seen_page;
}

int main(void) {
  GC_init();
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_sigaction = first_handler;
  act.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &act, NULL); /* before sgc's */
  enum barrier_kind kind = barrier_init();
  if (kind != BARRIER_MPROTECT) {
    printf("skipped: the barrier is %s, not mprotect\n", barrier_name(kind));
    return 77;
  }
  char *heap_page = GC_malloc(4 * PAGE_BYTES);
  barrier_arm();

  char *own = own_page();
  *(volatile char *)&own[5] = 1;
  CHECK(first_calls == 1 && fault_at == own + 5, "the handler from before sgc: %d calls",
        (int)first_calls);
  CHECK(barrier_records(heap_page), "the heap's fault went to the program's handler");
  CHECK(first_calls == 1, "the heap's fault reached the program: %d calls", (int)first_calls);

  /* After sgc: interposed, kept for chaining; reads back as set. */
  struct sigaction old;
  act.sa_sigaction = second_handler;
  CHECK(sigaction(SIGSEGV, &act, &old) == 0, "sigaction");
  CHECK((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == first_handler, "old action not the program's");
  struct sigaction now;
  sigaction(SIGSEGV, NULL, &now);
  CHECK(now.sa_sigaction == second_handler, "the action reads back as another");
  own = own_page();
  *(volatile char *)&own[7] = 1;
  CHECK(second_calls == 1 && first_calls == 1, "after sgc: %d and %d calls", (int)second_calls,
        (int)first_calls);
  CHECK(barrier_records(heap_page + PAGE_BYTES), "a handler installed after sgc's took the barrier's fault");

  own = own_page();
  fault_at = own;
  CHECK(signal(SIGSEGV, plain_handler) == (sighandler_t)(void *)second_handler, "signal's old handler");
  *(volatile char *)own = 1;
  CHECK(plain_calls == 1, "signal(): %d calls", (int)plain_calls);

  /* Leaving a handler with siglongjmp restores the mask; sgc's handler,
   * which it left too, must still take the next fault. */
  signal(SIGSEGV, escaping_handler);
  own = own_page();
  if (sigsetjmp(escape, 1) == 0) {
    *(volatile char *)own = 1;
    CHECK(false, "no fault");
  }
  CHECK(barrier_records(heap_page + 2 * PAGE_BYTES), "after a siglongjmp");

  /* A thread that blocks every signal, and a handler whose mask is full,
   * still write the heap (a fault while SIGSEGV is blocked would end the
   * process): the masks the program asks for keep the fault signals out. */
  pid_t child = fork();
  if (child == 0) {
    pthread_t t;
    pthread_create(&t, NULL, blocking_writer, heap_page + 3 * PAGE_BYTES);
    pthread_join(t, NULL);
    struct sigaction usr;
    memset(&usr, 0, sizeof usr);
    usr.sa_handler = heap_writing_handler;
    sigfillset(&usr.sa_mask);
    sigaction(SIGUSR1, &usr, NULL);
    handler_target = heap_page + 2 * PAGE_BYTES + 8;
    raise(SIGUSR1);
    _exit(handler_target[0] == 7 ? 0 : 4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writes with signals blocked: status %#x", status);

  /* The default action: the process ends by SIGSEGV. */
  child = fork();
  if (child == 0) {
    signal(SIGSEGV, SIG_DFL);
    *(volatile char *)heap_page = 2; /* the barrier's: survives */
    *(volatile char *)own_page() = 1;
    _exit(0);
  }
  waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "default action: status %#x", status);
  /* A jump into a heap page is the program's fault, not a write to
   * open (it looped for ever); alarm ends a child that hangs. */
  child = fork();
  if (child == 0) {
    signal(SIGSEGV, SIG_DFL);
    alarm(10);
    ((void (*)(void))(void *)(heap_page + 3 * PAGE_BYTES))();
    _exit(0);
  }
  waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "a jump into the heap: status %#x", status);
  barrier_disarm();
  return unit_finish();
}
