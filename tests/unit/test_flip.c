/* Flip mode's rule (papers/001 §5.2) on the decision function the
 * collector calls: per-thread caches leaving more than 64 KiB x CPUs
 * unused switch to per-CPU, per-CPU caches leaving more than 64 KiB x
 * threads switch back, and nothing flips in between. */
#include <stdlib.h>

#include "alloc/percpu.h"
#include "common.h"
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
