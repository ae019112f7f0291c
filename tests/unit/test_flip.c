/* Flip mode's rule (papers/001 §5.2) on the decision function the
 * collector calls: per-thread caches leaving more than 64 KiB x CPUs
 * unused switch to per-CPU, per-CPU caches leaving more than 64 KiB x
 * threads switch back, and nothing flips in between. */
#include <stdlib.h>

#include "alloc/percpu.h"
#include "common.h"
#include "alloc/thread_alloc.h"
#include "unit.h"

int main(void) {
  GC_init(); /* SGC_LAB=flip comes from the environment (tests/unit/CMakeLists.txt) */
  if (!cpu_cache_count) {
    printf("rseq unavailable: flip mode stays per-thread\n");
    CHECK(!percpu_enabled, "per-CPU caches on without rseq");
    return unit_finish();
  }
  uint64_t cpus = cpu_cache_count, limit_cpu = (uint64_t)FLIP_BUFFER_BYTES * cpus;
  CHECK(percpu_flip && !percpu_enabled, "flip starts per-thread");
  percpu_flip_decide(limit_cpu, 0, 100);
  CHECK(!percpu_enabled, "at the limit: stays per-thread");
  percpu_flip_decide(limit_cpu + 1, 0, 100);
  CHECK(percpu_enabled, "over 64 KiB x CPUs unused in thread caches: per-CPU");
  percpu_flip_decide(0, (uint64_t)FLIP_BUFFER_BYTES * 100, 100);
  CHECK(percpu_enabled, "per-CPU waste at 64 KiB x threads: stays");
  percpu_flip_decide(0, (uint64_t)FLIP_BUFFER_BYTES * 3 + 1, 3);
  CHECK(!percpu_enabled, "fewer threads than the waste allows: back to per-thread");
  CHECK(percpu_stats.flips_to_cpu == 1 && percpu_stats.flips_to_thread == 1, "flip counts");
  /* GC_free's page cache routes frees to the thread's own list without
   * testing the mode, so a switch to per-CPU caches must mark it so it
   * never matches: frees then reach the CPU's list. */
  percpu_flip_decide(0, (uint64_t)FLIP_BUFFER_BYTES * 3 + 1, 3);
  CHECK(!percpu_enabled, "back to per-thread for the cache check");
  void *objs[4];
  for (int i = 0; i < 4; i++) objs[i] = GC_malloc(32);
  GC_free(objs[0]);
  GC_free(objs[1]);
  CHECK(alloc_self()->free_cache_page != 0, "per-thread frees cache their page");
  percpu_flip_decide(limit_cpu + 1, 0, 100);
  CHECK(percpu_enabled && (alloc_self()->free_cache_page & FREE_CACHE_BYPASS),
        "the switch to per-CPU marks the cache");
  GC_free(objs[2]);
  CHECK(alloc_self()->free_cache_page & FREE_CACHE_BYPASS, "per-CPU frees keep the cache marked");
  unsigned cls = size_class_for_bytes(32);
  bool on_thread_list = false;
  for (void *q = alloc_self()->free_lists[KIND_NORMAL][cls]; q; q = *(void **)q)
    on_thread_list |= q == objs[2];
  CHECK(!on_thread_list, "a per-CPU free went to the thread's own list");
  /* The thread's own list is drained first, then the CPU's. */
  size_t drained = 0;
  while (alloc_self()->free_lists[KIND_NORMAL][cls] && drained < 100000) {
    void *q = GC_malloc(32);
    CHECK(q && ((long *)q)[0] == 0, "drain allocation");
    drained++;
  }
  CHECK(alloc_self()->free_lists[KIND_NORMAL][cls] == NULL, "the thread's own list drains");
  void *from_cpu = GC_malloc(32);
  CHECK(from_cpu != NULL, "per-CPU allocation after the drain");
  /* Back on per-thread caches, the cached page still carries the mark:
   * a free on that page goes to the thread's own list, not the CPU's. */
  percpu_flip_decide(0, (uint64_t)FLIP_BUFFER_BYTES * 3 + 1, 3);
  CHECK(!percpu_enabled, "back to per-thread");
  if (((uintptr_t)objs[3] ^ (uintptr_t)objs[2]) < 4096) {
    GC_free(objs[3]);
    bool on_own = false;
    for (void *q = alloc_self()->free_lists[KIND_NORMAL][cls]; q; q = *(void **)q)
      on_own |= q == objs[3];
    CHECK(on_own, "a per-thread free on the marked page missed the thread's own list");
  } else {
    printf("objects 2 and 3 on different pages: the marked-page free not checked\n");
  }
  /* Allocation keeps working in both modes across the switches. */
  for (int round = 0; round < 4; round++) {
    percpu_flip_decide(round & 1 ? 0 : limit_cpu + 1, round & 1 ? FLIP_BUFFER_BYTES * 9 : 0, 2);
    for (int i = 0; i < 10000; i++) {
      long *p = GC_malloc(32);
      CHECK(p && p[0] == 0 && p[3] == 0, "allocation in mode %d", percpu_enabled);
      p[0] = i;
    }
    GC_gcollect();
  }
  return unit_finish();
}
