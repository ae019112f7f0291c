/* coroutines: a program that runs code on stacks of its own (coroutines,
 * fibers: Crystal's runtime works this way) and tells the collector where
 * the running stack ends.  Runs against bdwgc too.
 *
 * The main thread switches between COROUTINES stacks of its own
 * (swapcontext) and its original stack.  Before each switch it sets the
 * stack end the collector scans (GC_set_stackbottom with the handle
 * GC_get_my_stackbottom returned, or, switching to two of the
 * coroutines, GC_stackbottom written directly as Crystal's runtime does);
 * the stacks not running are pushed from
 * GC_set_push_other_roots, from the stack pointer each saved when it left.
 * Every stack holds a linked list that nothing else references, while
 * each coroutine allocates garbage that forces collections.
 *
 * What could fail: the collector scans from the coroutine's stack pointer
 * to the original stack's end (a range through unmapped memory: a crash),
 * or nothing, so a list only a stack holds is reclaimed and reused (its
 * check fails); or GC_get_my_stackbottom does not report the end the
 * program set.
 *
 * COROUTINE_ROUNDS scales the run (default 40). */
#define GC_THREADS
#include <gc.h>
#include <gc/gc_mark.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "common.h"

enum { COROUTINES = 4, STACK_BYTES = 256 << 10, LIST = 2000 };

struct cell {
  struct cell *next;
  long value;
};

struct stack {
  ucontext_t context;
  char *base, *end;          /* memory; end is the stack's end (the cold end) */
  void *volatile saved_sp;   /* where it stopped, when not running */
};

static struct stack main_stack, coroutines[COROUTINES];
static struct stack *running = &main_stack;
static void *thread_handle;
static int rounds = 40;

static struct cell *make_list(long seed) {
  struct cell *head = NULL;
  for (int i = 0; i < LIST; i++) {
    struct cell *c = GC_malloc(sizeof *c);
    CHECK(c != NULL);
    c->next = head;
    c->value = seed * 100000 + i;
    head = c;
  }
  return head;
}

static void check_list(const struct cell *head, long seed, const char *who) {
  int i = LIST - 1;
  for (const struct cell *c = head; c; c = c->next, i--)
    CHECK(c->value == seed * 100000 + i, "%s: a list only its stack held was reclaimed (cell %d)",
          who, i);
  CHECK(i == -1, "%s: the list lost cells", who);
}

/* The stacks not running, each from where it stopped to its end, after
 * what the collector pushes there itself (in bdwgc, the threads' stacks:
 * a program that did not chain would leave them out). */
static GC_push_other_roots_proc collector_push;
static void push_other_stacks(void) {
  if (collector_push) collector_push();
  for (int i = 0; i < COROUTINES; i++)
    if (&coroutines[i] != running && coroutines[i].saved_sp)
      GC_push_all_eager(coroutines[i].saved_sp, coroutines[i].end);
  if (running != &main_stack && main_stack.saved_sp)
    GC_push_all_eager(main_stack.saved_sp, main_stack.end);
}

/* Switches from the running stack to TO, telling the collector first.
 * Not inlined: its frame lies below every frame of its caller, so the
 * saved stack pointer covers the caller's locals (the registers go to
 * the ucontext, in static data). */
static T_NOINLINE void switch_to(struct stack *to) {
  struct stack *from = running;
  from->saved_sp = __builtin_frame_address(0);
  struct GC_stack_base sb = {to->end};
  running = to;
  if (to == &coroutines[1] || to == &coroutines[3]) {
    /* As Crystal does: the variable bdwgc reads, written directly. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    GC_stackbottom = to->end;
#pragma GCC diagnostic pop
  } else {
    GC_set_stackbottom(thread_handle, &sb);
  }
  CHECK(swapcontext(&from->context, &to->context) == 0);
}

static void coroutine_main(int index) {
  struct cell *mine = make_list(index + 1);
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < 20000; i++) CHECK(GC_malloc(48) != NULL); /* garbage */
    if (r % 8 == 0) GC_gcollect();
    check_list(mine, index + 1, "a coroutine's list");
    switch_to(&main_stack);
  }
  check_list(mine, index + 1, "a coroutine's list");
  switch_to(&main_stack);
  CHECK(false, "a finished coroutine was resumed");
}

int main(void) {
  t_test_name = "coroutines";
  if (getenv("COROUTINE_ROUNDS")) rounds = atoi(getenv("COROUTINE_ROUNDS"));
  GC_INIT();
  struct GC_stack_base own;
  thread_handle = GC_get_my_stackbottom(&own);
  CHECK(thread_handle != NULL && own.mem_base != NULL);
  main_stack.end = own.mem_base;
  collector_push = GC_get_push_other_roots();
  GC_set_push_other_roots(push_other_stacks);
  for (int i = 0; i < COROUTINES; i++) {
    struct stack *s = &coroutines[i];
    s->base = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(s->base != MAP_FAILED);
    s->end = s->base + STACK_BYTES;
    CHECK(getcontext(&s->context) == 0);
    s->context.uc_stack.ss_sp = s->base;
    s->context.uc_stack.ss_size = STACK_BYTES;
    s->context.uc_link = NULL;
    makecontext(&s->context, (void (*)(void))coroutine_main, 1, i);
  }
  struct cell *kept = make_list(0);
  for (int r = 0; r <= rounds; r++)
    for (int i = 0; i < COROUTINES; i++) {
      switch_to(&coroutines[i]);
      /* Back on the original stack: its end is the one the program set. */
      struct GC_stack_base now;
      CHECK(GC_get_my_stackbottom(&now) == thread_handle);
      CHECK(now.mem_base == main_stack.end, "GC_get_my_stackbottom: %p, set %p", now.mem_base,
            (void *)main_stack.end);
      check_list(kept, 0, "the main stack's list");
    }
  GC_gcollect();
  check_list(kept, 0, "the main stack's list");
  t_note("%d coroutines, %d rounds, %lu collections\n", COROUTINES, rounds,
         (unsigned long)GC_get_gc_no());
  return 0;
}
