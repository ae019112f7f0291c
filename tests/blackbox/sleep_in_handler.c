/*
 * sleep_in_handler.c: a signal handler that sleeps (nanosleep, usleep:
 * sgc runs them as blocking sections, threads/sleep_calls.c) on a
 * thread interrupted in the middle of its work, on the thread's own
 * stack and on an alternate signal stack.
 *
 * Two workers each keep a list only their stack and registers hold and
 * churn garbage around it.  Round after round the main thread signals
 * one worker, waits until its handler sleeps, collects, and lets it go.
 * A collection must not stop the sleeping worker (its handler's call is
 * a blocking section), must keep its list (the interrupted frame and
 * the signal frame's saved registers are scanned, on whichever stack
 * they are), and must not warn that the worker runs on a stack sgc was
 * not told of: an alternate signal stack is the kernel's to name.
 */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "seeded_list.h"

enum { WORKERS = 2, NODES = 3000, ROUNDS = 24, ALT_STACK_BYTES = 256 * 1024 };

static atomic_int ready, stop_work, warnings;
static atomic_int handler_asleep[WORKERS], handler_entries[WORKERS], release[WORKERS];
static atomic_long checks[WORKERS];
static pthread_t workers[WORKERS];
static _Thread_local int my_index = -1;

static void count_warning(char *msg, GC_word arg) {
  (void)arg;
  atomic_fetch_add(&warnings, 1);
  fprintf(stderr, "sleep_in_handler: warning: ");
  fprintf(stderr, msg, (unsigned long)arg);
}

/* Only async-signal-safe calls: atomics on lock-free ints and the
 * sleeping calls themselves.  The sleep is bounded (about 0.2 s): a
 * worker interrupted while it holds one of sgc's locks, or while it marks
 * for a concurrent cycle, sleeps outside any section, and the collection
 * waits for the handler. */
static void on_signal(int sig) {
  (void)sig;
  int i = my_index;
  if (i < 0) return;
  atomic_store(&handler_asleep[i], 1);
  atomic_fetch_add(&handler_entries[i], 1);
  struct timespec tick = {0, 200000};
  for (int n = 0; n < 1000 && !atomic_load(&release[i]); n++) {
    nanosleep(&tick, NULL);
    usleep(100);
  }
  atomic_store(&handler_asleep[i], 0);
}

static void *worker(void *arg) {
  my_index = (int)(long)arg;
  void *alt = NULL;
  if (my_index == 1) { /* this one's handler runs on an alternate stack */
    alt = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
               0);
    CHECK(alt != MAP_FAILED, "mmap");
    stack_t ss = {.ss_sp = alt, .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0, "sigaltstack");
  }
  struct node *list = seeded_list(my_index, NODES);
  atomic_fetch_add(&ready, 1);
  while (!atomic_load(&stop_work)) {
    (void)seeded_list(1000 + my_index, 50); /* garbage beside the list */
    long bad = seeded_list_damage(list, my_index, NODES);
    CHECK(bad == 0, "worker %d: %ld nodes of its list overwritten", my_index, bad);
    atomic_fetch_add(&checks[my_index], 1);
  }
  if (alt) {
    stack_t off = {.ss_flags = SS_DISABLE};
    CHECK(sigaltstack(&off, NULL) == 0, "sigaltstack off");
    munmap(alt, ALT_STACK_BYTES);
  }
  return NULL;
}

int main(void) {
  GC_INIT();
  GC_set_warn_proc(count_warning);
  struct sigaction act = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK | SA_RESTART};
  sigemptyset(&act.sa_mask);
  CHECK(sigaction(SIGUSR1, &act, NULL) == 0, "sigaction");
  for (long i = 0; i < WORKERS; i++)
    CHECK(GC_pthread_create(&workers[i], NULL, worker, (void *)i) == 0, "create");
  while (atomic_load(&ready) < WORKERS) sched_yield();

  /* Rounds whose collection left the sleeping worker alone: it stops
   * the collector and the other worker only.  A worker caught holding
   * one of sgc's locks or marking for a cycle sleeps as it is and is
   * stopped (threads/pthread_api.c, may_block), so not every round. */
  int sleeper_left_alone = 0;
  for (int round = 0; round < ROUNDS; round++) {
    int w = round % WORKERS;
    long before = atomic_load(&checks[w]);
    while (atomic_load(&checks[w]) == before) sched_yield(); /* caught mid-work */
    int entries = atomic_load(&handler_entries[w]);
    CHECK(pthread_kill(workers[w], SIGUSR1) == 0, "pthread_kill");
    while (atomic_load(&handler_entries[w]) == entries) sched_yield();
    GC_gcollect();
    SGC_gc_record_t rec;
    CHECK(SGC_get_gc_records(&rec, 1) == 1, "no collection record");
    if (rec.threads <= WORKERS && atomic_load(&handler_asleep[w])) sleeper_left_alone++;
    atomic_store(&release[w], 1);
    while (atomic_load(&handler_asleep[w])) sched_yield();
    atomic_store(&release[w], 0);
  }
  atomic_store(&stop_work, 1);
  for (int i = 0; i < WORKERS; i++) CHECK(pthread_join(workers[i], NULL) == 0, "join");

  CHECK(sleeper_left_alone > 0,
        "every collection stopped the worker asleep in its signal handler (%d rounds)", ROUNDS);
  CHECK(atomic_load(&warnings) == 0, "%d warnings (above)", atomic_load(&warnings));
  printf("sleep_in_handler: ok (%d rounds, %ld + %ld checks, sleeper left alone in %d)\n",
         ROUNDS, atomic_load(&checks[0]), atomic_load(&checks[1]), sleeper_left_alone);
  return 0;
}
