/* foreign_stacks: threads stopped while they run on a stack nobody told
 * the collector of keep what that stack, and their own, hold.
 *
 *  A. A signal handler on an alternate stack (sigaltstack, SA_ONSTACK)
 *     that the program did not register (GC_register_altstack) builds
 *     lists only its frame holds, then waits while another thread
 *     collects; and it allocates enough to collect there itself.  The
 *     alternate stack is mmap'd (so it may lie above the thread's stack,
 *     where a scan from the stack pointer to the stack's end is empty)
 *     or malloc'd (below: that scan crosses unmapped memory).
 *  B. A coroutine (makecontext) on a stack of malloc'd memory (in the brk
 *     heap or an arena) or mmap'd memory, run by the main thread or
 *     another without GC_set_stackbottom, keeps lists in its frame while it
 *     allocates and collects, and while another thread collects with it
 *     stopped there; the thread's own stack holds a list too, below the
 *     switch.  sgc scans around the coroutine's stack pointer and warns
 *     once; the alternate stacks of A give no warning.
 *
 * What could fail: a list only one of these stacks holds is reclaimed
 * and reused (a check fails), or a scan reads unmapped memory (SIGSEGV);
 * or the warning is missing, repeated, or given for A.  sgc only: bdwgc
 * 8.2.2 crashes on A and B.  FOREIGN_ROUNDS scales the run (default 3). */
#define _GNU_SOURCE
#define GC_THREADS 1
#include "gc.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "common.h"

enum { LISTS = 16, LIST_NODES = 1000, ALT_BYTES = 256 << 10 };

struct node {
  struct node *next;
  long value;
};

T_NOINLINE static struct node *make_list(long seed) {
  struct node *head = NULL;
  for (long i = 0; i < LIST_NODES; i++) {
    struct node *n = GC_malloc(sizeof *n);
    CHECK(n != NULL);
    n->next = head;
    n->value = seed * 1000003 + i;
    head = n;
  }
  return head;
}

T_NOINLINE static void check_list(const struct node *head, long seed, const char *where) {
  long i = LIST_NODES - 1;
  for (const struct node *n = head; n; n = n->next, i--)
    CHECK(i >= 0 && n->value == seed * 1000003 + i,
          "%s: node %ld of list %ld reads %ld: reclaimed while only that stack held it", where,
          i, seed, n->value);
  CHECK(i == -1, "%s: list %ld lost nodes", where, seed);
}

/* Garbage of the lists' size, so a reclaimed node is soon reused. */
T_NOINLINE static void make_garbage(long count) {
  for (long i = 0; i < count; i++) {
    struct node *n = GC_malloc(sizeof *n);
    CHECK(n != NULL);
    n->value = -1;
  }
}

static atomic_int warnings_foreign, warnings_other;
static void count_warning(char *msg, GC_word arg) {
  (void)arg;
  if (strstr(msg, "not told of")) atomic_fetch_add(&warnings_foreign, 1);
  else atomic_fetch_add(&warnings_other, 1);
}

/* The waiting side: a thread reports it is ready (1), then waits until
 * the collecting thread is done (2) and reports it has checked (3). */
static atomic_int stage;

static void wait_for_stage(int s) {
  for (int i = 0; atomic_load(&stage) < s; i++) {
    CHECK(i < 60000, "stage %d never came", s);
    usleep(1000);
  }
}

/* The other thread's part: collections while the waiter stands still. */
static void collect_beside(void) {
  wait_for_stage(1);
  for (int i = 0; i < 3; i++) {
    make_garbage(50000);
    GC_gcollect();
  }
  atomic_store(&stage, 2);
  wait_for_stage(3);
}

/* ---- A: alternate signal stacks ---- */

T_NOINLINE static void hold_lists_and_wait(const char *where, bool collect_here) {
  /* volatile: in memory on this stack, not in registers a stop saves. */
  struct node *volatile lists[LISTS];
  for (int l = 0; l < LISTS; l++) lists[l] = make_list(l);
  if (collect_here) { /* this thread collects, on this stack */
    make_garbage(100000);
    GC_gcollect();
  }
  atomic_store(&stage, 1);
  wait_for_stage(2);
  for (int l = 0; l < LISTS; l++) check_list(lists[l], l, where);
  atomic_store(&stage, 3);
}

static void altstack_handler(int sig) {
  (void)sig;
  hold_lists_and_wait("a handler on an alternate stack", true);
}

static void *altstack_thread(void *arg) {
  bool from_malloc = arg != NULL;
  void *alt = from_malloc ? malloc(ALT_BYTES)
                          : mmap(NULL, ALT_BYTES, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(alt != NULL && alt != MAP_FAILED);
  stack_t ss = {.ss_sp = alt, .ss_size = ALT_BYTES, .ss_flags = 0};
  CHECK(sigaltstack(&ss, NULL) == 0);
  /* Raised at a point of its own choosing, so the handler may allocate. */
  CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);
  CHECK(atomic_load(&stage) == 3, "the handler did not run");
  ss.ss_flags = SS_DISABLE;
  CHECK(sigaltstack(&ss, NULL) == 0);
  if (from_malloc) free(alt);
  else munmap(alt, ALT_BYTES);
  return NULL;
}

static void part_a(bool from_malloc) {
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer defers signals that arrive inside a handler until it
   * returns, so the handler would never see the collector's stop. */
  t_note("A: skipped under ThreadSanitizer");
  return;
#endif
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = altstack_handler;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
  atomic_store(&stage, 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, altstack_thread, from_malloc ? (void *)1 : NULL) == 0);
  collect_beside();
  CHECK(pthread_join(t, NULL) == 0);
}

/* ---- B: coroutines ---- */

static ucontext_t thread_context, coroutine_context;

static void coroutine_body(void) { hold_lists_and_wait("a coroutine's stack", true); }

T_NOINLINE static void run_coroutine(bool from_malloc, size_t bytes) {
  /* The thread's own stack holds a list below the switch. */
  struct node *volatile own[1];
  own[0] = make_list(LISTS);
  void *stack = from_malloc ? malloc(bytes)
                            : mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(stack != NULL && stack != MAP_FAILED);
  CHECK(getcontext(&coroutine_context) == 0);
  coroutine_context.uc_stack.ss_sp = stack;
  coroutine_context.uc_stack.ss_size = bytes;
  coroutine_context.uc_link = &thread_context;
  makecontext(&coroutine_context, coroutine_body, 0);
  CHECK(swapcontext(&thread_context, &coroutine_context) == 0);
  check_list(own[0], LISTS, "the thread's own stack, below a coroutine");
  if (from_malloc) free(stack);
  else munmap(stack, bytes);
}

struct coroutine_case {
  bool from_malloc;
  size_t bytes;
};

static void *coroutine_thread(void *arg) {
  const struct coroutine_case *c = arg;
  run_coroutine(c->from_malloc, c->bytes);
  return NULL;
}

static void *collector_thread(void *arg) {
  (void)arg;
  collect_beside();
  return NULL;
}

/* ON_MAIN: the main thread runs the coroutine (its malloc'd stack then
 * lies in the brk heap), another thread collects. */
static void part_b(bool on_main, bool from_malloc, size_t bytes) {
  atomic_store(&stage, 0);
  struct coroutine_case c = {from_malloc, bytes};
  pthread_t t;
  if (on_main) {
    CHECK(pthread_create(&t, NULL, collector_thread, NULL) == 0);
    run_coroutine(from_malloc, bytes);
  } else {
    CHECK(pthread_create(&t, NULL, coroutine_thread, &c) == 0);
    collect_beside();
  }
  CHECK(pthread_join(t, NULL) == 0);
}

int main(void) {
  t_test_name = "foreign_stacks";
  GC_INIT();
  GC_set_warn_proc(count_warning);
  long rounds = t_env_long("FOREIGN_ROUNDS", 3);
  for (long r = 0; r < rounds; r++) {
    part_a(false);
    part_a(true);
  }
  CHECK(atomic_load(&warnings_foreign) == 0,
        "a warning for alternate signal stacks, which sgc finds itself");
  t_note("A: lists on unregistered alternate stacks (mmap'd, malloc'd) survived %ld rounds",
         rounds);
  for (long r = 0; r < rounds; r++) {
    part_b(false, true, 64 << 10);  /* in a malloc arena */
    part_b(false, false, 256 << 10); /* a mapping of its own */
    part_b(true, true, 64 << 10);   /* in the brk heap */
    part_b(true, false, 256 << 10);
  }
  CHECK(atomic_load(&warnings_foreign) == 1, "%d warnings of a stack not told of; 1 expected",
        atomic_load(&warnings_foreign));
  CHECK(atomic_load(&warnings_other) == 0, "%d other warnings", atomic_load(&warnings_other));
  t_note("B: lists on coroutine stacks and below them survived %ld rounds, one warning",
         rounds);
  return 0;
}
