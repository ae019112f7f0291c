/* Stopping threads for the program (bdwgc's javaxfc.h and gc.h):
 *
 *  A. GC_suspend_thread stops a running thread (its progress counter stands
 *     still), GC_is_thread_suspended says so, collections run meanwhile and
 *     keep what only the stopped thread's stack holds, and GC_resume_thread
 *     lets it go on; a second suspend needs no second resume.
 *  B. A thread suspends itself until another resumes it.
 *  C. GC_stop_world_external stops every registered thread until
 *     GC_start_world_external.
 *  D. GC_set_on_thread_event hears of the running threads a collection
 *     stops, each as often let go as suspended.
 *  E. GC_register_altstack: a thread stopped by collections while it runs a
 *     signal handler on its alternate stack keeps the objects only that
 *     handler's frame holds (without it sgc scanned from the alternate
 *     stack up to the normal stack's end).
 *  F. Suspends and resumes as fast as they go, beside a thread collecting
 *     back to back (SUSPEND_ROUNDS, default 2000).
 *  G. 40 threads suspended at once, a collection, all resumed.
 *  H. A thread suspended right after pthread_create returns, started or
 *     not (bdwgc's gctest does this), runs none of its routine until
 *     resumed; one that ended and is not joined yet is suspended and
 *     resumed as far as GC_is_thread_suspended tells, and forgotten when
 *     joined.
 *  I. The same for threads that have not run yet: each is created on the
 *     creating thread's only CPU, where the kernel lets the creator run on
 *     (a new thread does not preempt its creator), so it is still pending
 *     when GC_suspend_thread finds it; part H meets that case only when
 *     the kernel happens to keep the child waiting.
 *
 * The same source builds against bdwgc (tests/run-against-bdwgc.sh). */
#define _GNU_SOURCE /* pthread_getattr_np */
#define GC_THREADS 1
#include <gc.h>
#include <gc/javaxfc.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"

enum { WORKERS = 3, LIST_NODES = 2000 };

struct node {
  struct node *next;
  uintptr_t value;
};

static _Atomic unsigned long progress[WORKERS + 1];
static _Atomic int stop_workers;

static T_NOINLINE struct node *make_list(int n, uintptr_t salt) {
  struct node *head = NULL;
  for (int i = 0; i < n; i++) {
    struct node *x = GC_MALLOC(sizeof *x);
    CHECK(x != NULL);
    x->next = head;
    x->value = (uintptr_t)i * 2654435761u ^ salt;
    head = x;
  }
  return head;
}

static T_NOINLINE void check_list(struct node *head, int n, uintptr_t salt) {
  for (int i = n - 1; i >= 0; i--) {
    CHECK(head != NULL, "list ends %d nodes early", i + 1);
    CHECK(head->value == ((uintptr_t)i * 2654435761u ^ salt), "node %d corrupted", i);
    head = head->next;
  }
  CHECK(head == NULL);
}

/* Keeps a list that only its own stack holds, and counts its rounds. */
static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  uintptr_t salt = (uintptr_t)id * 77777u;
  struct node *mine = make_list(LIST_NODES, salt);
  while (!atomic_load(&stop_workers)) {
    check_list(mine, LIST_NODES, salt);
    for (int i = 0; i < 50; i++) (void)GC_MALLOC(64); /* garbage */
    atomic_fetch_add(&progress[id], 1);
  }
  check_list(mine, LIST_NODES, salt);
  return NULL;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* Waits (up to 10 s) for worker ID's counter to move past FROM. */
static void wait_progress(int id, unsigned long from) {
  for (int i = 0; i < 10000 && atomic_load(&progress[id]) <= from; i++) sleep_ms(1);
  CHECK(atomic_load(&progress[id]) > from, "worker %d made no progress", id);
}

static T_NOINLINE void collect_with_garbage(void) {
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 20000; i++) (void)GC_MALLOC(48);
    GC_gcollect();
  }
}

static void part_a(pthread_t *workers) {
  for (int round = 0; round < 5; round++) {
    int id = round % WORKERS;
    wait_progress(id, atomic_load(&progress[id]));
    GC_suspend_thread((GC_SUSPEND_THREAD_ID)workers[id]);
    CHECK(GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)workers[id]));
    GC_suspend_thread((GC_SUSPEND_THREAD_ID)workers[id]); /* no count */
    unsigned long at = atomic_load(&progress[id]);
    collect_with_garbage();
    sleep_ms(20);
    CHECK(atomic_load(&progress[id]) == at, "suspended worker %d went on", id);
    for (int other = 0; other < WORKERS; other++)
      if (other != id) wait_progress(other, atomic_load(&progress[other]));
    GC_resume_thread((GC_SUSPEND_THREAD_ID)workers[id]);
    CHECK(!GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)workers[id]));
    wait_progress(id, at);
  }
  t_note("A: suspended and resumed workers 5 times, collecting meanwhile");
}

static void *self_suspender(void *arg) {
  (void)arg;
  atomic_fetch_add(&progress[WORKERS], 1);
  GC_suspend_thread((GC_SUSPEND_THREAD_ID)pthread_self());
  atomic_fetch_add(&progress[WORKERS], 1);
  return NULL;
}

static void part_b(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, self_suspender, NULL) == 0);
  wait_progress(WORKERS, 0);
  for (int i = 0; i < 10000 && !GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t); i++) sleep_ms(1);
  CHECK(GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t));
  collect_with_garbage();
  sleep_ms(20);
  CHECK(atomic_load(&progress[WORKERS]) == 1, "a thread that suspended itself went on");
  GC_resume_thread((GC_SUSPEND_THREAD_ID)t);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(atomic_load(&progress[WORKERS]) == 2);
  t_note("B: a thread suspended itself until resumed");
}

static void part_c(void) {
  unsigned long at[WORKERS];
  for (int round = 0; round < 3; round++) {
    for (int id = 0; id < WORKERS; id++) wait_progress(id, atomic_load(&progress[id]));
    GC_stop_world_external();
    for (int id = 0; id < WORKERS; id++) at[id] = atomic_load(&progress[id]);
    usleep(20000); /* no sgc call in between: the caller holds its locks */
    int moved = 0;
    for (int id = 0; id < WORKERS; id++) moved += atomic_load(&progress[id]) != at[id];
    GC_start_world_external();
    CHECK(moved == 0, "%d workers ran while the world was stopped", moved);
    for (int id = 0; id < WORKERS; id++) wait_progress(id, at[id]);
  }
  t_note("C: GC_stop_world_external stopped every worker 3 times");
}

enum { MAX_SEEN = 64 };
static struct {
  void *id;
  _Atomic int suspended, resumed;
} seen[MAX_SEEN];
static _Atomic int seen_count;

/* No allocation here: the collector's lock is held. */
static void on_thread_event(GC_EventType event, void *thread_id) {
  int n = atomic_load(&seen_count), i;
  for (i = 0; i < n && seen[i].id != thread_id; i++) {}
  if (i == n) {
    if (n == MAX_SEEN) return;
    seen[n].id = thread_id;
    atomic_store(&seen_count, n + 1);
  }
  if (event == GC_EVENT_THREAD_SUSPENDED) atomic_fetch_add(&seen[i].suspended, 1);
  if (event == GC_EVENT_THREAD_UNSUSPENDED) atomic_fetch_add(&seen[i].resumed, 1);
}

static void part_d(pthread_t *workers) {
  GC_set_on_thread_event(on_thread_event);
  CHECK(GC_get_on_thread_event() == on_thread_event);
  for (int id = 0; id < WORKERS; id++) wait_progress(id, atomic_load(&progress[id]));
  /* Until each worker has been reported once: one waiting for the
   * collector's lock is not signalled (sgc holds it as blocked; bdwgc may
   * find it in its own blocking state), so not every time. */
  int collections = 0;
  for (; collections < 1000; collections++) {
    GC_gcollect();
    int reported = 0;
    for (int id = 0; id < WORKERS; id++)
      for (int i = 0; i < atomic_load(&seen_count); i++)
        if (pthread_equal((pthread_t)seen[i].id, workers[id])) reported++;
    if (reported == WORKERS) break;
  }
  GC_set_on_thread_event(0);
  for (int id = 0; id < WORKERS; id++) {
    int i;
    for (i = 0; i < atomic_load(&seen_count); i++)
      if (pthread_equal((pthread_t)seen[i].id, workers[id])) break;
    CHECK(i < atomic_load(&seen_count), "no event for worker %d", id);
    CHECK(seen[i].suspended >= 1, "worker %d never reported suspended", id);
    CHECK(seen[i].suspended == seen[i].resumed, "worker %d: %d suspended, %d resumed", id,
          atomic_load(&seen[i].suspended), atomic_load(&seen[i].resumed));
  }
  t_note("D: every worker reported suspended, and as often resumed, within %d collections",
         collections + 1);
}

/* E: the handler runs on the alternate stack, allocates a list only its
 * frame holds, and waits there while the main thread collects. */
static _Atomic int handler_state; /* 1: list built, 2: collections done, 3: checked */

static void altstack_handler(int sig) {
  (void)sig;
  /* In memory on the alternate stack, not in a register the stop saves. */
  struct node *volatile list[1];
  list[0] = make_list(LIST_NODES, 4242);
  atomic_store(&handler_state, 1);
  while (atomic_load(&handler_state) != 2) usleep(1000);
  check_list(list[0], LIST_NODES, 4242);
  atomic_store(&handler_state, 3);
}

static void *altstack_thread(void *arg) {
  (void)arg;
  pthread_attr_t attr;
  void *stack_lo;
  size_t stack_size;
  CHECK(pthread_getattr_np(pthread_self(), &attr) == 0);
  CHECK(pthread_attr_getstack(&attr, &stack_lo, &stack_size) == 0);
  pthread_attr_destroy(&attr);
  size_t alt_size = 256 * 1024;
  void *alt = malloc(alt_size); /* not scanned by the collector but through the registration */
  CHECK(alt != NULL);
  stack_t ss = {.ss_sp = alt, .ss_size = alt_size, .ss_flags = 0};
  CHECK(sigaltstack(&ss, NULL) == 0);
  GC_register_altstack(stack_lo, stack_size, alt, alt_size);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = altstack_handler;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
  /* Raised at a point of its own choosing, so the handler may allocate. */
  CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);
  CHECK(atomic_load(&handler_state) == 3);
  ss.ss_flags = SS_DISABLE;
  CHECK(sigaltstack(&ss, NULL) == 0);
  free(alt);
  return NULL;
}

static void part_e(void) {
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer defers signals that arrive inside a handler until it
   * returns, so this handler would never see the collector's stop. */
  t_note("E: skipped under ThreadSanitizer");
  return;
#endif
  pthread_t t;
  CHECK(pthread_create(&t, NULL, altstack_thread, NULL) == 0);
  for (int i = 0; i < 10000 && atomic_load(&handler_state) != 1; i++) sleep_ms(1);
  CHECK(atomic_load(&handler_state) == 1, "the signal handler did not run");
  collect_with_garbage();
  atomic_store(&handler_state, 2);
  CHECK(pthread_join(t, NULL) == 0);
  t_note("E: a handler's list on the alternate stack survived 3 collections");
}

/* F: suspends and resumes the workers as fast as it can while another
 * thread collects back to back, so parks and unparks land before, during
 * and after stops; the workers check their stack-held lists all along. */
static _Atomic int collector_stop;
static void *collector(void *arg) {
  (void)arg;
  while (!atomic_load(&collector_stop)) GC_gcollect();
  return NULL;
}

static void part_f(pthread_t *workers) {
  long rounds = t_env_long("SUSPEND_ROUNDS", 2000);
  pthread_t c;
  CHECK(pthread_create(&c, NULL, collector, NULL) == 0);
  for (long r = 0; r < rounds; r++) {
    int id = (int)(r % WORKERS);
    GC_suspend_thread((GC_SUSPEND_THREAD_ID)workers[id]);
    if (r % 7 == 0) sched_yield();
    GC_resume_thread((GC_SUSPEND_THREAD_ID)workers[id]);
  }
  atomic_store(&collector_stop, 1);
  CHECK(pthread_join(c, NULL) == 0);
  for (int id = 0; id < WORKERS; id++) {
    CHECK(!GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)workers[id]));
    wait_progress(id, atomic_load(&progress[id]));
  }
  t_note("F: %ld suspends and resumes beside back-to-back collections", rounds);
}

/* G: every one of many threads suspended at once (past any small table
 * of suspended threads), a collection meanwhile, then all resumed. */
enum { MANY = 40 };
static _Atomic unsigned long many_progress[MANY];
static _Atomic int many_stop;

static void *spinner(void *arg) {
  int id = (int)(intptr_t)arg;
  struct node *mine = make_list(50, (uintptr_t)id);
  while (!atomic_load(&many_stop)) {
    check_list(mine, 50, (uintptr_t)id);
    atomic_fetch_add(&many_progress[id], 1);
    usleep(100);
  }
  return NULL;
}

static void part_g(void) {
  pthread_t t[MANY];
  for (int i = 0; i < MANY; i++)
    CHECK(pthread_create(&t[i], NULL, spinner, (void *)(intptr_t)i) == 0);
  for (int i = 0; i < MANY; i++)
    for (int w = 0; w < 10000 && !atomic_load(&many_progress[i]); w++) sleep_ms(1);
  for (int i = 0; i < MANY; i++) GC_suspend_thread((GC_SUSPEND_THREAD_ID)t[i]);
  unsigned long at[MANY];
  for (int i = 0; i < MANY; i++) {
    CHECK(GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t[i]));
    at[i] = atomic_load(&many_progress[i]);
  }
  collect_with_garbage();
  sleep_ms(20);
  for (int i = 0; i < MANY; i++)
    CHECK(atomic_load(&many_progress[i]) == at[i], "suspended thread %d went on", i);
  for (int i = 0; i < MANY; i++) GC_resume_thread((GC_SUSPEND_THREAD_ID)t[i]);
  for (int i = 0; i < MANY; i++)
    for (int w = 0; w < 10000 && atomic_load(&many_progress[i]) == at[i]; w++) sleep_ms(1);
  for (int i = 0; i < MANY; i++)
    CHECK(atomic_load(&many_progress[i]) > at[i], "resumed thread %d made no progress", i);
  atomic_store(&many_stop, 1);
  for (int i = 0; i < MANY; i++) CHECK(pthread_join(t[i], NULL) == 0);
  t_note("G: %d threads suspended at once, collected beside, resumed", MANY);
}

enum { FRESH_ROUNDS = 100 };
static _Atomic unsigned long fresh_progress;
static _Atomic int fresh_stop;

static void *fresh_thread(void *arg) {
  (void)arg;
  while (!atomic_load(&fresh_stop)) {
    atomic_fetch_add(&fresh_progress, 1);
    /* A collection may be waiting to stop this thread: let it run. */
    if ((atomic_load(&fresh_progress) & 1023) == 0) sched_yield();
  }
  return NULL;
}

static _Atomic int ended_tid;
static void *ending_thread(void *arg) {
  (void)arg;
  atomic_store(&ended_tid, (int)gettid());
  return NULL;
}

static void part_h(void) {
  for (int round = 0; round < FRESH_ROUNDS; round++) {
    atomic_store(&fresh_stop, 0);
    atomic_store(&fresh_progress, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fresh_thread, NULL) == 0);
    GC_suspend_thread((GC_SUSPEND_THREAD_ID)t);
    CHECK(GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t),
          "round %d: a thread suspended right after its creation is not", round);
    unsigned long at = atomic_load(&fresh_progress);
    if (round % 10 == 0) collect_with_garbage();
    sleep_ms(3);
    CHECK(atomic_load(&fresh_progress) == at,
          "round %d: a thread suspended right after its creation ran", round);
    GC_resume_thread((GC_SUSPEND_THREAD_ID)t);
    CHECK(!GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t));
    for (int w = 0; w < 10000 && atomic_load(&fresh_progress) == at; w++) sleep_ms(1);
    CHECK(atomic_load(&fresh_progress) > at, "round %d: resumed thread made no progress", round);
    atomic_store(&fresh_stop, 1);
    CHECK(pthread_join(t, NULL) == 0);
  }
  pthread_t t;
  CHECK(pthread_create(&t, NULL, ending_thread, NULL) == 0);
  /* Ended for the kernel: its thread-exit destructors, which may wait
   * for collections (under torture, back to back), are done. */
  for (int w = 0; w < 10000 && !atomic_load(&ended_tid); w++) sleep_ms(1);
  char task[64];
  snprintf(task, sizeof task, "/proc/self/task/%d", atomic_load(&ended_tid));
  for (int w = 0; w < 10000 && access(task, F_OK) == 0; w++) sleep_ms(1);
  CHECK(access(task, F_OK) != 0, "thread %d has not ended in 10 s", atomic_load(&ended_tid));
  GC_suspend_thread((GC_SUSPEND_THREAD_ID)t);
  CHECK(GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t), "an ended thread was not suspended");
  collect_with_garbage();
  GC_resume_thread((GC_SUSPEND_THREAD_ID)t);
  CHECK(!GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t));
  GC_suspend_thread((GC_SUSPEND_THREAD_ID)t);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(!GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t), "a joined thread is still suspended");
  t_note("H: %d threads suspended as created; an ended one suspended, resumed, joined",
         FRESH_ROUNDS);
}

enum { PINNED_ROUNDS = 40 };
static _Atomic int pinned_started;

static void *pinned_thread(void *arg) {
  (void)arg;
  atomic_store(&pinned_started, 1);
  return NULL;
}

static void part_i(void) {
  cpu_set_t old, one;
  CHECK(sched_getaffinity(0, sizeof old, &old) == 0);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
  int unstarted = 0, round;
  for (round = 0; round < PINNED_ROUNDS; round++) {
    atomic_store(&pinned_started, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, pinned_thread, NULL) == 0); /* inherits the one CPU */
    GC_suspend_thread((GC_SUSPEND_THREAD_ID)t);
    bool was_unstarted = !atomic_load(&pinned_started);
    unstarted += was_unstarted;
    CHECK(GC_is_thread_suspended((GC_SUSPEND_THREAD_ID)t));
    sleep_ms(3); /* the CPU is the new thread's now */
    CHECK(!was_unstarted || !atomic_load(&pinned_started),
          "round %d: a thread suspended before it ran, ran", round);
    GC_resume_thread((GC_SUSPEND_THREAD_ID)t);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(atomic_load(&pinned_started), "round %d: a resumed thread never ran", round);
  }
  CHECK(sched_setaffinity(0, sizeof old, &old) == 0);
  /* Without one, this part tested nothing part H does not.  Under
   * torture the workers' collections stop the creator between its
   * pthread_create and its suspend so often that the CPU is the new
   * thread's first; the part's other checks still hold there. */
  if (!getenv("SGC_TORTURE"))
    CHECK(unstarted > 0, "no thread was still unstarted when suspended (of %d)", round);
  t_note("I: %d of %d threads created on their creator's CPU unstarted when suspended; none "
         "ran until resumed",
         unstarted, round);
}

int main(void) {
  t_test_name = "thread_suspend";
  GC_INIT();
  pthread_t workers[WORKERS];
  for (int id = 0; id < WORKERS; id++)
    CHECK(pthread_create(&workers[id], NULL, worker, (void *)(intptr_t)id) == 0);
  part_a(workers);
  part_b();
  part_c();
  part_d(workers);
  part_e();
  part_f(workers);
  part_g();
  part_h();
  part_i();
  atomic_store(&stop_workers, 1);
  for (int id = 0; id < WORKERS; id++) CHECK(pthread_join(workers[id], NULL) == 0);
  t_note("passed");
  return 0;
}
