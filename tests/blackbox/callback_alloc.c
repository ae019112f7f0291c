/* callback_alloc: (sgc only) allocating in a callback never deadlocks
 * silently: where sgc holds its allocation lock it stops with a message
 * naming the call, and where it runs the callback without the lock the
 * allocation simply works.
 *
 * bdwgc runs these with its allocation lock held and documents that they
 * must not allocate; at 75e6b38 each of them deadlocked without a word:
 *  - alloc_lock: the function given to GC_call_with_alloc_lock (lock
 *    held: fatal message);
 *  - resize: the GC_set_on_heap_resize callback (lock held: message);
 *  - start: the GC_set_start_callback callback, and
 *  - event: the GC_set_on_collection_event callback at GC_EVENT_START:
 *    both run with the lock released (collect/collect.c), so their
 *    allocations succeed, the collection not yet begun.
 * Each case runs as a child (spawn_case.h) with an alarm after 20 s, and
 * allocates large objects there (a large object always takes the lock).
 * What could fail: a hang (the alarm), no message or one not naming the
 * call, or an allowed case that does not return. */
#define _GNU_SOURCE
#include "gc.h"
#include "gc/gc_mark.h"

#include <signal.h>
#include <unistd.h>

#include "common.h"
#include "spawn_case.h"

static void *volatile sink;
void *kept[64]; /* roots: the heap must grow */

static void allocate_inside(void) {
  for (int i = 0; i < 64; i++) sink = GC_MALLOC(1 << 20);
}

static void *alloc_lock_fn(void *cd) {
  (void)cd;
  allocate_inside();
  return NULL;
}
static void on_start(void) { allocate_inside(); }
static void on_event(GC_EventType e) {
  if (e == GC_EVENT_START) allocate_inside();
}
static void on_resize(GC_word size) {
  (void)size;
  allocate_inside();
}

static int run_case(const char *mode) {
  spawn_case_alarm(20);
  GC_INIT();
  if (!strcmp(mode, "alloc_lock")) {
    GC_call_with_alloc_lock(alloc_lock_fn, NULL);
  } else {
    if (!strcmp(mode, "start")) GC_set_start_callback(on_start);
    else if (!strcmp(mode, "event")) GC_set_on_collection_event(on_event);
    else GC_set_on_heap_resize(on_resize);
    GC_gcollect();
    for (int i = 0; i < 64; i++) kept[i] = GC_MALLOC(1 << 20); /* the heap grows */
  }
  fprintf(stderr, "returned\n");
  return 0;
}

static void expect_fatal(const char *mode, const char *call) {
  char out[8192];
  int st = spawn_case(mode, out, sizeof out);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "%s: wanted an abort, got status %#x: %s",
        mode, st, out);
  CHECK(strstr(out, "sgc: fatal: ") && strstr(out, call) && strstr(out, "allocation lock"),
        "%s: the message does not name %s: %s", mode, call, out);
  t_note("%s: %s", mode, strstr(out, "sgc: fatal: "));
}

static void expect_return(const char *mode) {
  char out[8192];
  spawn_case_expect_exit0(mode, "returned", out, sizeof out);
}

int main(int argc, char **argv) {
  t_test_name = "callback_alloc";
  if (argc > 1) return run_case(argv[1]);
  expect_fatal("alloc_lock", "GC_call_with_alloc_lock");
  expect_return("start");
  expect_return("event");
  expect_fatal("resize", "GC_set_on_heap_resize");
  return 0;
}
