/* The default allocation caches (SGC_LAB unset) are flip's: per-thread
 * while as many threads as CPUs allocate and collect (no switch), per-CPU
 * once many threads each hold a cache at a collection (issue 53).  Where
 * glibc registered no rseq, per-thread caches without a warning. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <unistd.h>

#include "alloc/percpu.h"
#include "common.h"
#include "unit.h"

static bool rseq_registered(void) {
  const struct rseq *rs = (const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
  return __rseq_size >= 20 && (int32_t)rs->cpu_id >= 0;
}

/* A thread that allocates and drops lists of objects of several sizes,
 * as gcbench's and cky's threads do, through several collections. */
static void *churn(void *arg) {
  (void)arg;
  for (int round = 0; round < 200; round++) {
    void **list = NULL;
    for (int i = 0; i < 2000; i++) {
      void **obj = GC_malloc(16 + 16 * (size_t)(i % 8));
      CHECK(obj != NULL, "allocation");
      if (!obj) break;
      *obj = list;
      list = obj;
    }
  }
  return NULL;
}

enum { MANY = 64 };
static pthread_barrier_t held, released;
static void *volatile kept;

/* A thread that takes objects of many sizes, so its caches hold part of
 * a page of each, and waits there while the main thread collects. */
static void *hold_caches(void *arg) {
  (void)arg;
  for (size_t bytes = 16; bytes <= 1024; bytes += 48) kept = GC_malloc(bytes);
  pthread_barrier_wait(&held);
  pthread_barrier_wait(&released);
  return NULL;
}

int main(void) {
  if (getenv("SGC_LAB")) {
    printf("SGC_LAB is set: the default is not what runs; skipped\n");
    return 77;
  }
  GC_init();
  if (!rseq_registered()) {
    printf("rseq unavailable: the default is per-thread caches\n");
    CHECK(!percpu_enabled && !percpu_fell_back, "per-thread, and no fallback reported");
    return unit_finish();
  }
  CHECK(percpu_flip && !percpu_enabled && cpu_cache_count > 0, "the default is flip, per-thread");

  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  unsigned threads = cpus < 1 ? 1 : cpus < 4 ? (unsigned)cpus : 4;
  GC_word collections = GC_get_gc_no();
  pthread_t th[MANY];
  for (unsigned i = 0; i < threads; i++)
    CHECK(GC_pthread_create(&th[i], NULL, churn, NULL) == 0, "thread %u", i);
  for (unsigned i = 0; i < threads; i++) GC_pthread_join(th[i], NULL);
  GC_gcollect();
  CHECK(GC_get_gc_no() > collections + 2, "only %lu collections",
        (unsigned long)(GC_get_gc_no() - collections));
  CHECK(percpu_stats.flips_to_cpu == 0 && !percpu_enabled,
        "%u threads on %ld CPUs switched to per-CPU caches %lu times", threads, cpus,
        (unsigned long)percpu_stats.flips_to_cpu);

  /* 64 threads each holding part of a page of 21 size classes: more than
   * 64 KiB x CPUs unused in their caches while there are up to 80 CPUs. */
  if (cpus <= 80) {
    pthread_barrier_init(&held, NULL, MANY + 1);
    pthread_barrier_init(&released, NULL, MANY + 1);
    for (unsigned i = 0; i < MANY; i++)
      CHECK(GC_pthread_create(&th[i], NULL, hold_caches, NULL) == 0, "thread %u", i);
    pthread_barrier_wait(&held);
    GC_gcollect();
    CHECK(percpu_enabled && percpu_stats.flips_to_cpu == 1,
          "%d threads holding caches: per-CPU %d, switches %lu", MANY, percpu_enabled,
          (unsigned long)percpu_stats.flips_to_cpu);
    pthread_barrier_wait(&released);
    for (unsigned i = 0; i < MANY; i++) GC_pthread_join(th[i], NULL);
  }
  return unit_finish();
}
