/* SGC_init with an attribute structure: the thesis's entry point sets the
 * collector threads, the page policy and the allocation caches. */
#include "alloc/page_store.h"
#include "alloc/percpu.h"
#include "common.h"
#include "unit.h"

int main(void) {
  SGC_attr_t attr;
  SGC_attr_init(&attr);
  attr.page_policy = SGC_PAGE_POLICY_PS;
  attr.lps_k = 2.0;
  attr.lab = SGC_LAB_CPU;
  attr.max_heap_bytes = (size_t)1 << 30;
  CHECK(SGC_init(3, &attr) == 0, "SGC_init");
  CHECK(sgc_settings.markers == 3, "markers %u", sgc_settings.markers);
  CHECK(page_policy == PAGE_POLICY_PS, "page policy %d", (int)page_policy);
  CHECK(page_policy_k == 2.0, "k %.2f", page_policy_k);
  CHECK(sgc_settings.max_heap_bytes == (size_t)1 << 30, "heap limit");
  /* Per-CPU caches when glibc registered rseq, else per-thread. */
  CHECK(percpu_enabled == (cpu_cache_count != 0), "lab mode");
  for (int i = 0; i < 200000; i++) {
    long *p = GC_malloc(48);
    CHECK(p && p[5] == 0, "allocation %d", i);
    p[5] = i;
  }
  for (int i = 0; i < 3; i++) CHECK(GC_malloc(100000) != NULL, "large object");
  GC_gcollect();
  SGC_stats_t s;
  SGC_get_stats(&s);
  CHECK(s.page_policy == PAGE_POLICY_PS && s.collections >= 1, "stats reflect the settings");
  /* 200,000 objects of 48 bytes need at least 200000 / 85 refills, with
   * heap_lock or without it (per-CPU refills take the page path too). */
  CHECK(s.page_refills + s.unlocked_refills >= 200000 / 85, "page refills %lu + %lu",
        (unsigned long)s.page_refills, (unsigned long)s.unlocked_refills);
  CHECK(s.large_allocations >= 3, "large allocations %lu", (unsigned long)s.large_allocations);
  return unit_finish();
}
