/* sgc.h's statistics structs grow at their end; a program built against
 * an older header passes smaller ones.  The plain calls (as such a
 * program links them) and the _sized calls with a smaller size must write
 * no byte past the caller's struct, and what they write must match the
 * full read's leading fields. */
#include <stddef.h>
#include <string.h>

#include "gc.h"
#include "sgc.h"
#include "unit.h"

enum { CANARY = 0xa5, SLACK = 256 };

static int canary_intact(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != CANARY) return 0;
  return 1;
}

int main(void) {
  GC_INIT();
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 1000; j++) GC_malloc(64);
    GC_gcollect();
  }
  /* Records: two of the old size, then the canary. */
  size_t old_record = offsetof(SGC_gc_record_t, predicted_mark_ns);
  unsigned char *buf = malloc(sizeof(SGC_stats_t) + 2 * sizeof(SGC_gc_record_t) + SLACK);
  memset(buf, CANARY, 2 * old_record + SLACK);
  size_t n = (SGC_get_gc_records)((SGC_gc_record_t *)buf, 2);
  CHECK(n == 2, "plain SGC_get_gc_records copied %zu records of 2", n);
  CHECK(canary_intact(buf + 2 * old_record, SLACK), "plain call wrote past two old-size records");
  SGC_gc_record_t full[2];
  CHECK(SGC_get_gc_records(full, 2) == 2, "sized call");
  CHECK(memcmp(buf + old_record, &full[1], old_record) == 0,
        "the second old-size record is not the newest record's leading part");
  CHECK(full[1].gc_no > full[0].gc_no, "records oldest first");

  /* Totals: an old-size struct and a made-up smaller one. */
  size_t old_stats = offsetof(SGC_stats_t, numa_nodes);
  memset(buf, CANARY, old_stats + SLACK);
  (SGC_get_stats)((SGC_stats_t *)buf);
  CHECK(canary_intact(buf + old_stats, SLACK), "plain SGC_get_stats wrote past the old size");
  SGC_stats_t all;
  SGC_get_stats(&all);
  uint64_t old_collections;
  memcpy(&old_collections, buf + offsetof(SGC_stats_t, collections), sizeof old_collections);
  CHECK(old_collections == all.collections && all.collections >= 3, "collections %llu / %llu",
        (unsigned long long)old_collections, (unsigned long long)all.collections);
  memset(buf, CANARY, 64 + SLACK);
  SGC_get_stats_sized((SGC_stats_t *)buf, 64);
  CHECK(canary_intact(buf + 64, SLACK), "SGC_get_stats_sized wrote past 64 bytes");

  /* Page stores. */
  size_t old_store = offsetof(SGC_page_store_stats_t, node);
  memset(buf, CANARY, old_store + SLACK);
  size_t stores = (SGC_get_page_store_stats)((SGC_page_store_stats_t *)buf, 1);
  CHECK(stores >= 1, "no page store reported");
  CHECK(canary_intact(buf + old_store, SLACK), "plain SGC_get_page_store_stats wrote past one old-size entry");
  free(buf);
  return unit_finish();
}
