/* A heap snapshot (docs/prediction.md) of a known graph, written by a
 * collection on request (SGC_snapshot_next) and read back with the
 * predictor's reader: the objects' sizes and kinds, every edge's word and
 * target, a root range that finds the graph; the request served once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc.h"
#include "sgc.h"
#include "snapshot_read.h"
#include "unit.h"

struct node {
  struct node *next;
  uintptr_t value; /* not a pointer */
};

static struct node *head;  /* the root: node 0 -> 1 -> 2 -> leaf (atomic) */
static void **big;         /* the root of a large object with three referents */
static void *leaf;

static int64_t index_of(const struct snapshot *s, const void *p) {
  for (uint64_t i = s->header.roots; i < s->header.objects; i++)
    if (s->objects[i].address == (uintptr_t)p) return (int64_t)i;
  return -1;
}

int main(void) {
  GC_INIT();
  struct node *n[3];
  for (int k = 0; k < 3; k++) {
    n[k] = GC_MALLOC(sizeof(struct node));
    n[k]->value = 12345;
  }
  n[0]->next = n[1];
  n[1]->next = n[2];
  leaf = GC_MALLOC_ATOMIC(32);
  memset(leaf, 0, 32);
  n[2]->next = (struct node *)leaf;
  head = n[0];
  big = GC_MALLOC(10000);
  void *referents[3];
  static const unsigned words[3] = {5, 100, 1000};
  for (int k = 0; k < 3; k++) {
    referents[k] = GC_MALLOC(48);
    big[words[k]] = referents[k];
  }

  char dir[] = "/tmp/sgc-snapshot-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "directory");
  CHECK(SGC_snapshot_next(dir) == 0, "request");
  CHECK(SGC_snapshot_next(NULL) == -1, "no directory");
  GC_gcollect();
  unsigned gc_no = (unsigned)GC_get_gc_no();
  char path[512];
  snprintf(path, sizeof path, "%s/sgc-%d-%u.snap", dir, (int)getpid(), gc_no);
  struct snapshot s;
  char error[600];
  CHECK(snapshot_read(path, &s, error, sizeof error), "read: %s", error);
  if (unit_failed) return unit_finish();
  /* 512: CMake sets it, not the default, so the header must carry the
   * process's own setting. */
  CHECK(s.header.gc_no == gc_no && s.header.split_bytes == 512 && s.header.page_bytes >= 4096 &&
            s.header.nodes >= 1 && s.header.roots > 0,
        "header: gc %u split %llu", s.header.gc_no, (unsigned long long)s.header.split_bytes);
  /* The pre-wake came before the stop, the drain after it; the runnable
   * threads counted the collector (when /proc/loadavg reads at all). */
  bool loadavg = access("/proc/loadavg", R_OK) == 0;
  CHECK(s.header.version == SNAPSHOT_VERSION && s.wake.lead_ns > 0 &&
            s.wake.lead_ns < 10ull * 1000 * 1000 * 1000 &&
            (!loadavg || (s.wake.runnable >= 1 && s.wake.cpus >= 1)),
        "wake: lead %llu ns, %u runnable, %u CPUs", (unsigned long long)s.wake.lead_ns,
        s.wake.runnable, s.wake.cpus);

  int64_t at[3], l = index_of(&s, leaf), b = index_of(&s, big);
  for (int k = 0; k < 3; k++) at[k] = index_of(&s, n[k]);
  CHECK(at[0] >= 0 && at[1] >= 0 && at[2] >= 0 && l >= 0 && b >= 0, "all objects recorded");
  if (unit_failed) return unit_finish();
  for (int k = 0; k < 3; k++) {
    const struct snapshot_object *o = &s.objects[at[k]];
    CHECK(o->bytes == 16 && o->kind == SNAP_SCANNED && o->node < s.header.nodes, "node %d", k);
    /* Exactly one edge, from word 0 to the next node (the leaf last). */
    CHECK(o->edge_count == 1, "node %d edges %u", k, o->edge_count);
    const struct snapshot_edge *e = &s.edges[o->first_edge];
    CHECK(e->word == 0 && e->target == (uint32_t)(k < 2 ? at[k + 1] : l), "node %d edge", k);
  }
  CHECK(s.objects[l].bytes == 32 && s.objects[l].kind == SNAP_ATOMIC && s.objects[l].edge_count == 0,
        "leaf");
  const struct snapshot_object *o = &s.objects[b];
  CHECK(o->bytes >= 10000 && o->kind == SNAP_SCANNED && o->edge_count == 3, "big: %llu bytes, %u edges",
        (unsigned long long)o->bytes, o->edge_count);
  for (int k = 0; k < 3 && o->edge_count == 3; k++) {
    const struct snapshot_edge *e = &s.edges[o->first_edge + k];
    int64_t r = index_of(&s, referents[k]);
    CHECK(e->word == words[k] && r >= 0 && e->target == (uint32_t)r, "big's edge %d", k);
    CHECK(r >= 0 && s.objects[r].bytes == 48, "referent %d", k);
  }
  /* The static `head' is in a root range that points at node 0. */
  bool found = false;
  for (uint64_t i = 0; i < s.header.roots; i++) {
    const struct snapshot_object *r = &s.objects[i];
    CHECK(r->kind == SNAP_ROOT, "roots first");
    if (r->address <= (uintptr_t)&head && (uintptr_t)&head < r->address + r->bytes)
      for (uint32_t e = 0; e < r->edge_count; e++)
        if (s.edges[r->first_edge + e].target == (uint32_t)at[0] &&
            r->address + 8 * s.edges[r->first_edge + e].word == (uintptr_t)&head)
          found = true;
  }
  CHECK(found, "a root range's edge from &head to node 0");
  snapshot_free(&s);
  unlink(path);

  /* One request, one snapshot. */
  GC_gcollect();
  snprintf(path, sizeof path, "%s/sgc-%d-%u.snap", dir, (int)getpid(), (unsigned)GC_get_gc_no());
  CHECK(access(path, F_OK) != 0, "no second snapshot");
  /* The record says what the dump took, and none the next time. */
  SGC_gc_record_t r[2];
  CHECK(SGC_get_gc_records(r, 2) == 2 && r[0].snapshot_ns > 0 && r[1].snapshot_ns == 0,
        "snapshot_ns %llu %llu", (unsigned long long)r[0].snapshot_ns,
        (unsigned long long)r[1].snapshot_ns);
  rmdir(dir);
  return unit_finish();
}
