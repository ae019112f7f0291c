/* thread_results: (sgc only) the result of a thread made with plain
 * pthread_create, not GC_pthread_create, survives collections between its
 * exit and its join.
 *
 * Such a thread registers at its first allocation.  Each worker here
 * allocates a fresh object, fills it with a pattern of its own, and hands
 * it out as its result only: half by returning it, half through
 * pthread_exit; a few are detached instead, and their results must not
 * be kept.  The main thread waits until every worker has ended (its
 * kernel thread is gone), then collects several times while allocating
 * objects of the same size filled with another pattern, and only then
 * joins the workers, each through one of pthread_join,
 * pthread_tryjoin_np, pthread_timedjoin_np and pthread_clockjoin_np,
 * and checks every result's pattern.  At 75e6b38 sgc kept no such
 * result: 64 of 64 were overwritten.  What could fail: a pattern
 * overwritten (the result was freed and reused), or a join failing.
 *
 * With argument "preloaded" the program makes its threads the same way;
 * tests/preload/thread_results_preload.sh runs it built against bdwgc's libgc
 * with libsgc.so preloaded.  THREAD_RESULTS_ROUNDS scales the run. */
#define _GNU_SOURCE
#include "gc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

enum { WORKERS = 48, WORDS = 8, CHURN_OBJECTS = 200000 };

struct worker {
  pthread_t id;
  long index;
  _Atomic int tid; /* its kernel thread, once it runs */
  int detach;      /* detaches itself: its result is nobody's */
};

static long pattern(long index, int word) {
  return (index * 0x9E3779B1L) ^ (word * 0x1000193L) ^ 0x5A5A;
}

static T_NOINLINE void *make_result(long index) {
  long *obj = GC_MALLOC(WORDS * sizeof(long));
  CHECK(obj != NULL);
  for (int w = 0; w < WORDS; w++) obj[w] = pattern(index, w);
  return obj;
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  atomic_store(&w->tid, (int)syscall(SYS_gettid));
  if (w->detach) CHECK(pthread_detach(pthread_self()) == 0);
  void *result = make_result(w->index);
  if (w->index % 2) pthread_exit(result);
  return result;
}

/* Until every worker's kernel thread is gone: past its key destructors. */
static void wait_for_exits(struct worker *w, int n) {
  double deadline = t_now() + 30;
  for (int i = 0; i < n; i++) {
    while (atomic_load(&w[i].tid) == 0 ||
           syscall(SYS_tgkill, getpid(), atomic_load(&w[i].tid), 0) == 0) {
      CHECK(t_now() < deadline, "worker %d has not exited after 30 s", i);
      usleep(1000);
    }
  }
}

/* Collections, and objects of the results' size with another pattern,
 * which would take the place of a freed result. */
static T_NOINLINE void churn(void) {
  for (int round = 0; round < 4; round++) {
    GC_gcollect();
    for (int i = 0; i < CHURN_OBJECTS / 4; i++) {
      long *junk = GC_MALLOC(WORDS * sizeof(long));
      CHECK(junk != NULL);
      for (int w = 0; w < WORDS; w++) junk[w] = -1;
    }
  }
  GC_gcollect();
}

static int join_one(struct worker *w, int how, void **result) {
  struct timespec deadline;
  switch (how) {
  case 0: return pthread_join(w->id, result);
  case 1: return pthread_tryjoin_np(w->id, result);
  case 2:
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    return pthread_timedjoin_np(w->id, result, &deadline);
  default:
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += 30;
    return pthread_clockjoin_np(w->id, result, CLOCK_MONOTONIC, &deadline);
  }
}

static int round_of_workers(int round) {
  static struct worker w[WORKERS];
  for (int i = 0; i < WORKERS; i++) {
    w[i].index = round * WORKERS + i;
    atomic_store(&w[i].tid, 0);
    w[i].detach = i % 16 == 5;
    CHECK(pthread_create(&w[i].id, NULL, worker_main, &w[i]) == 0);
  }
  wait_for_exits(w, WORKERS);
  churn();
  int broken = 0;
  for (int i = 0; i < WORKERS; i++) {
    if (w[i].detach) continue;
    void *result = NULL;
    int r = join_one(&w[i], i % 4, &result);
    CHECK(r == 0, "joining worker %d: %s", i, strerror(r));
    long *obj = result;
    CHECK(obj != NULL);
    for (int k = 0; k < WORDS; k++)
      if (obj[k] != pattern(w[i].index, k)) {
        broken++;
        break;
      }
  }
  return broken;
}

int main(int argc, char **argv) {
  t_test_name = "thread_results";
  GC_INIT();
  (void)argc;
  (void)argv;
  int rounds = (int)t_env_long("THREAD_RESULTS_ROUNDS", 3);
  int broken = 0, joined = 0;
  for (int round = 0; round < rounds; round++) {
    broken += round_of_workers(round);
    joined += WORKERS - WORKERS / 16;
  }
  CHECK(broken == 0, "%d of %d thread results were overwritten before their join", broken,
        joined);
  t_note("%d results of plain pthread_create threads intact after collections", joined);
  return 0;
}
