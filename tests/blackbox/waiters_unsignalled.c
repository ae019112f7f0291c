/* waiters_unsignalled: threads waiting in sgc are not signalled to stop.
 *
 * Stopping the world signals every registered thread, and a thread asleep
 * in the kernel must be woken to take the signal.  Threads waiting in
 * GC_pthread_join, or for a lock a collection holds from start to end
 * (heap_lock, registry_lock, meta_lock), touch no heap until sgc lets them
 * go on, so sgc counts them as stopped without a signal (a blocking
 * section, as GC_do_blocking).  Their stacks must still be scanned.
 *
 *  A. The main thread makes a list reachable only from its own frame and
 *     joins a worker, which waits until the main thread sleeps and then
 *     collects 20 times: each collection stopped no thread but the
 *     collector (SGC_gc_record_t.threads == 1), and the list is intact
 *     after the join.
 *  B. A worker allocates without pause (a ring of lists it checks), while
 *     the main thread collects 300 times (and on, up to 3,000, until one
 *     has: a loaded machine may hold the worker off its CPU at each stop):
 *     with 2 or more CPUs, some of those collections found the worker
 *     waiting for heap_lock, stopping no thread but the collector; the
 *     worker's data stays intact.
 *  D. The same for meta_lock, which a collection also holds throughout:
 *     a worker registers and drops a finalizer without pause while the
 *     main thread collects 300 times; some collections found it waiting
 *     for meta_lock and stopped no thread but the collector, and a list
 *     only its frame holds stays intact.
 *  E. The same for registry_lock, which a collection also holds
 *     throughout: a worker reads GC_get_expl_freed_bytes_since_gc (other
 *     threads' counts, under registry_lock alone) without pause while the
 *     main thread collects 300 times; some collections found it waiting
 *     for registry_lock, and a list only its frame holds stays intact.
 *  C. The other side: a thread cancelled while blocked in read() inside
 *     GC_do_blocking has left the blocking section by the time its
 *     cleanup handler runs, so a collection then signals it
 *     (threads == 2); the handler then allocates and checks a list.
 *
 * sgc-only: the collection records are sgc's.
 */
#define _GNU_SOURCE
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"
#include "sgc.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "common.h"

enum { LIST = 2000, JOIN_COLLECTIONS = 20, RING = 64, RING_LIST = 50, HEAP_COLLECTIONS = 300,
       HEAP_COLLECTIONS_MOST = 3000 };

struct node {
  struct node *next;
  uint64_t value;
};

static struct node *make_list(uint64_t seed, int n) {
  struct node *head = NULL;
  for (int i = 0; i < n; i++) {
    struct node *x = GC_MALLOC(sizeof *x);
    CHECK(x != NULL);
    x->value = seed * 1000003u + (uint64_t)i;
    x->next = head;
    head = x;
  }
  return head;
}

static void check_list(const struct node *head, uint64_t seed, int n) {
  for (int i = n - 1; i >= 0; i--, head = head->next) {
    CHECK(head != NULL, "list %llu ends early", (unsigned long long)seed);
    CHECK(head->value == seed * 1000003u + (uint64_t)i, "list %llu corrupt at %d",
          (unsigned long long)seed, i);
  }
  CHECK(head == NULL);
}

/* The last collection's record. */
static SGC_gc_record_t last_record(void) {
  static SGC_gc_record_t records[1024];
  size_t n = SGC_get_gc_records(records, 1024);
  CHECK(n > 0);
  return records[n - 1];
}

/* Whether thread TID sleeps (state S in /proc). */
static int thread_sleeps(pid_t tid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *state = strrchr(buf, ')');
  return state && state[1] == ' ' && state[2] == 'S';
}

static void *join_worker(void *arg) {
  (void)arg;
  /* The main thread is in GC_pthread_join once it sleeps (it does nothing
   * else after creating this thread). */
  for (int i = 0; i < 5000 && !thread_sleeps(getpid()); i++) usleep(1000);
  for (int i = 0; i < JOIN_COLLECTIONS; i++) {
    (void)make_list(100 + (uint64_t)i, LIST); /* garbage */
    GC_gcollect();
    SGC_gc_record_t r = last_record();
    CHECK(r.threads == 1, "collection %d stopped %d threads while main was joining", i,
          r.threads);
  }
  return NULL;
}

T_NOINLINE static void part_a(void) {
  struct node *volatile kept = make_list(7, LIST);
  pthread_t worker;
  CHECK(GC_pthread_create(&worker, NULL, join_worker, NULL) == 0);
  CHECK(GC_pthread_join(worker, NULL) == 0);
  check_list(kept, 7, LIST);
  printf("[waiters_unsignalled] A: %d collections during a join stopped only the collector\n",
         JOIN_COLLECTIONS);
}

static atomic_int allocating_stop;

static void *allocating_worker(void *arg) {
  (void)arg;
  struct node **ring = GC_MALLOC(RING * sizeof *ring);
  CHECK(ring != NULL);
  uint64_t round = 0;
  for (; !atomic_load(&allocating_stop); round++) {
    int slot = (int)(round % RING);
    if (ring[slot]) check_list(ring[slot], round - RING, RING_LIST);
    ring[slot] = make_list(round, RING_LIST);
  }
  /* Every slot a round filled still holds its list.  A slow VM can stop
   * the worker before it has gone round the ring once (the suite under
   * -j2 with the hypervisor taking a CPU once did), so only those. */
  for (uint64_t slot = 0; slot < RING && slot < round; slot++)
    CHECK(ring[slot] != NULL, "ring slot %d lost its list after %llu rounds", (int)slot,
          (unsigned long long)round);
  return NULL;
}

/* Starts WORKER, collects HEAP_COLLECTIONS times beside it (and on, up
 * to HEAP_COLLECTIONS_MOST, while none has found it waiting: on a loaded
 * machine the worker may be off its CPU, not in the wait, at each stop),
 * stops it by STOP and joins it.  How many collections stopped no thread
 * but the collector, the worker being in a blocking section; *DONE: how
 * many ran. */
/* Two CPUs this process may use, or false.  The worker and the collector
 * are kept on different ones: the worker can only be found waiting if it
 * runs while a collection holds the lock, and on a 2-CPU machine whose
 * other CPU another test keeps busy, the scheduler left both threads on
 * one CPU for 3,000 collections in a row, none of which found it waiting. */
static bool two_cpus(int *first, int *second) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
    if (CPU_ISSET(c, &set)) *(found++ ? second : first) = c;
  return found == 2;
}

static int collections_alone(void *(*worker_main)(void *), atomic_int *stop, int *done) {
  pthread_t worker;
  pthread_attr_t attr;
  CHECK(pthread_attr_init(&attr) == 0);
  cpu_set_t collector_cpus, worker_cpu, old_cpus;
  int first, second;
  bool apart = two_cpus(&first, &second) &&
               pthread_getaffinity_np(pthread_self(), sizeof old_cpus, &old_cpus) == 0;
  if (apart) {
    CPU_ZERO(&collector_cpus);
    CPU_SET(first, &collector_cpus);
    CPU_ZERO(&worker_cpu);
    CPU_SET(second, &worker_cpu);
    CHECK(pthread_attr_setaffinity_np(&attr, sizeof worker_cpu, &worker_cpu) == 0);
    CHECK(pthread_setaffinity_np(pthread_self(), sizeof collector_cpus, &collector_cpus) == 0);
  }
  CHECK(GC_pthread_create(&worker, &attr, worker_main, NULL) == 0);
  pthread_attr_destroy(&attr);
  usleep(20000);
  int alone = 0, i = 0;
  for (; i < HEAP_COLLECTIONS || (alone == 0 && i < HEAP_COLLECTIONS_MOST); i++) {
    GC_gcollect();
    SGC_gc_record_t r = last_record();
    CHECK(r.threads <= 2, "collection %d stopped %d threads", i, r.threads);
    alone += r.threads == 1;
  }
  atomic_store(stop, 1);
  CHECK(GC_pthread_join(worker, NULL) == 0);
  if (apart) CHECK(pthread_setaffinity_np(pthread_self(), sizeof old_cpus, &old_cpus) == 0);
  *done = i;
  return alone;
}

/* Parts B, D and E: the worker, waiting for LOCK, was found so by some
 * collection (on one CPU it may never wait while the collector runs). */
static void expect_found_waiting(const char *part, const char *worker, const char *lock,
                                 void *(*worker_main)(void *), atomic_int *stop) {
  int done;
  int alone = collections_alone(worker_main, stop, &done);
  printf("[waiters_unsignalled] %s: %d of %d collections found the %s thread waiting for %s\n",
         part, alone, done, worker, lock);
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
    CHECK(alone > 0, "no collection of %d found the %s thread waiting for %s", done, worker, lock);
}

static void part_b(void) {
  expect_found_waiting("B", "allocating", "heap_lock", allocating_worker, &allocating_stop);
}

static atomic_int finalizing_stop;

static void never_run(void *obj, void *cd) {
  (void)obj;
  (void)cd;
}

static void *finalizing_worker(void *arg) {
  (void)arg;
  struct node *volatile kept = make_list(11, LIST);
  void *obj = GC_MALLOC(16);
  CHECK(obj != NULL);
  while (!atomic_load(&finalizing_stop)) {
    GC_REGISTER_FINALIZER(obj, never_run, NULL, NULL, NULL); /* meta_lock */
    GC_REGISTER_FINALIZER(obj, NULL, NULL, NULL, NULL);
  }
  check_list(kept, 11, LIST);
  GC_reachable_here(obj);
  return NULL;
}

static void part_d(void) {
  expect_found_waiting("D", "finalizing", "meta_lock", finalizing_worker, &finalizing_stop);
}

static atomic_int registry_stop;

static void *registry_worker(void *arg) {
  (void)arg;
  struct node *volatile kept = make_list(13, LIST);
  size_t sum = 0;
  while (!atomic_load(&registry_stop)) sum += GC_get_expl_freed_bytes_since_gc();
  check_list(kept, 13, LIST);
  return (void *)sum;
}

static void part_e(void) {
  expect_found_waiting("E", "reading", "registry_lock", registry_worker, &registry_stop);
}

static int cancel_pipe[2];
static atomic_int reader_ready, in_cleanup, cleanup_may_go;

static void *blocking_read(void *arg) {
  (void)arg;
  atomic_store(&reader_ready, 1);
  char c;
  (void)!read(cancel_pipe[0], &c, 1); /* a cancellation point */
  return NULL;
}

static void cleanup_allocates(void *arg) {
  (void)arg;
  atomic_store(&in_cleanup, 1);
  while (!atomic_load(&cleanup_may_go)) {
  } /* running, not waiting in sgc: a collection must signal this thread */
  check_list(make_list(9, LIST), 9, LIST);
}

static void *cancelled_thread(void *arg) {
  pthread_cleanup_push(cleanup_allocates, arg);
  GC_do_blocking(blocking_read, NULL);
  pthread_cleanup_pop(0);
  return NULL;
}

static void part_c(void) {
  CHECK(pipe(cancel_pipe) == 0);
  pthread_t t;
  CHECK(GC_pthread_create(&t, NULL, cancelled_thread, NULL) == 0);
  while (!atomic_load(&reader_ready)) usleep(1000);
  usleep(20000); /* into read() (a cancel before it acts at its start) */
  CHECK(pthread_cancel(t) == 0);
  while (!atomic_load(&in_cleanup)) usleep(1000);
  GC_gcollect();
  SGC_gc_record_t r = last_record();
  atomic_store(&cleanup_may_go, 1);
  void *result = NULL;
  CHECK(GC_pthread_join(t, &result) == 0);
  CHECK(result == PTHREAD_CANCELED);
  CHECK(r.threads == 2, "a thread cancelled inside GC_do_blocking was not stopped while its "
                        "cleanup handler ran (%d threads stopped)", r.threads);
  close(cancel_pipe[0]);
  close(cancel_pipe[1]);
  printf("[waiters_unsignalled] C: a thread cancelled in a blocking section was stopped in its "
         "cleanup handler\n");
}

int main(void) {
  t_test_name = "waiters_unsignalled";
  GC_INIT();
  part_a();
  part_b();
  part_d();
  part_e();
  part_c();
  printf("[waiters_unsignalled] PASS\n");
  return 0;
}
