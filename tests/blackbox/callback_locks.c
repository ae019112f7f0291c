/* callback_locks: the program's code sgc calls at a collection's start
 * runs with no lock of sgc's held.
 *
 * Guile's start callback (GC_set_start_callback) takes one of its own
 * mutexes, under which its other threads call GC_ functions; run under
 * heap_lock, a thread collecting waits in the callback for that mutex
 * while the thread holding it waits for heap_lock, and the program hangs
 * (issue 58: under SGC_TORTURE=50 Guile's fork hung so).
 *
 * The main thread allocates and collects, its start callback and its
 * collection-event function (GC_EVENT_START) each taking the program's
 * mutex M.  A worker holds M across GC_get_free_bytes, GC_get_heap_size
 * and GC_get_bytes_since_gc (as Guile holds its mutex across
 * GC_get_heap_size), over and over, and allocates between.  Every
 * collection must finish: an alarm ends the program with a message after
 * 30 s, where a run takes well under a second.
 *
 * bdwgc 8.2.2 passes too: it runs both functions under its allocation
 * lock, but these getters do not wait for it there. */
#define _GNU_SOURCE
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include <gc.h>
#include <gc/gc_mark.h> /* GC_set_start_callback */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t program_mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop_worker;
static atomic_long callbacks, events, worker_rounds;

static void on_start(void) {
  pthread_mutex_lock(&program_mutex);
  atomic_fetch_add(&callbacks, 1);
  pthread_mutex_unlock(&program_mutex);
}

static void on_event(GC_EventType e) {
  if (e != GC_EVENT_START) return;
  pthread_mutex_lock(&program_mutex);
  atomic_fetch_add(&events, 1);
  pthread_mutex_unlock(&program_mutex);
}

static void *worker(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_worker)) {
    /* Under M only calls that never collect (a collection of this
     * thread's would take M in the callback: the program's own hang). */
    pthread_mutex_lock(&program_mutex);
    size_t sum = GC_get_free_bytes() + GC_get_heap_size() + GC_get_bytes_since_gc();
    pthread_mutex_unlock(&program_mutex);
    char *small = GC_MALLOC(64);
    small[0] = (char)sum;
    atomic_fetch_add(&worker_rounds, 1);
  }
  return NULL;
}

static void hung(int sig) {
  (void)sig;
  static const char msg[] =
      "callback_locks: FAIL: no progress in 30 s: a collection waits in the program's "
      "start callback for a mutex whose holder waits for sgc's lock\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

struct node {
  struct node *next;
  long value;
};

int main(void) {
  GC_INIT();
  signal(SIGALRM, hung);
  alarm(30);
  GC_set_start_callback(on_start);
  GC_set_on_collection_event(on_event);
  pthread_t t;
  if (GC_pthread_create(&t, NULL, worker, NULL) != 0) {
    fprintf(stderr, "callback_locks: cannot start a thread\n");
    return 1;
  }
  /* Wait until the worker is going, so the collections meet it. */
  while (atomic_load(&worker_rounds) < 10) sched_yield();
  long checksum = 0;
  for (int round = 0; round < 200; round++) {
    struct node *list = NULL;
    for (long i = 0; i < 2000; i++) {
      struct node *n = GC_MALLOC(sizeof *n);
      n->next = list;
      n->value = i;
      list = n;
    }
    if (round % 4 == 0) GC_gcollect();
    for (struct node *n = list; n; n = n->next) checksum += n->value;
  }
  atomic_store(&stop_worker, 1);
  GC_pthread_join(t, NULL);
  long expect = 200L * (2000L * 1999L / 2);
  if (checksum != expect) {
    fprintf(stderr, "callback_locks: FAIL: list sums %ld, expected %ld\n", checksum, expect);
    return 1;
  }
  if (atomic_load(&callbacks) < 50 || atomic_load(&events) < 50) {
    fprintf(stderr, "callback_locks: FAIL: %ld start callbacks, %ld start events: "
                    "expected a call per collection\n",
            atomic_load(&callbacks), atomic_load(&events));
    return 1;
  }
  printf("callback_locks: %ld collections' start callbacks, worker %ld rounds under the "
         "program's mutex: no hang\n",
         atomic_load(&callbacks), atomic_load(&worker_rounds));
  return 0;
}
