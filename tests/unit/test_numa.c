/* NUMA awareness (issue 57, docs/numa.md) under SGC_NUMA_FAKE=N, checked
 * against the policy whatever SGC_NUMA_PLACEMENT, SGC_BMB and
 * SGC_NUMA_PIN the registration sets (tests/unit/CMakeLists.txt):
 *   - topology: the fake split of the allowed CPUs, and a real one read
 *     from a made-up /sys tree (CPU-only nodes left out, a narrower
 *     affinity seen as bound);
 *   - placement: what each chunk was bound to (interleave, local), the
 *     node each page a thread takes lies on (local: its own node's
 *     stripes; first touch: the thread's node recorded);
 *   - local pools and resizing: a thread whose node has no free page
 *     left takes another node's, and the heap does not grow (papers/002
 *     §3.3's pitfall);
 *   - BMB: descriptor bytes spread over every node by heap address, also
 *     where all objects live on one node; none under SGC_MARK_VARIANT=no-bmb;
 *   - GC threads: pinned round-robin over the nodes with CPUs; a thief
 *     takes from a victim on its own node before any other; so does an
 *     LPS page steal;
 *   - statistics: pages per node in SGC_get_stats add up to the heap's.
 * Where the kernel has several nodes (not fake), move_pages confirms where
 * a stripe's page lies; here that part is skipped. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/page_store.h"
#include "threads/thread.h"
#include "common.h"
#include "heap/heap_lock.h"
#include "heap/placement.h"
#include "mark/mark.h"
#include "mark/marker.h"
#include "os/numa.h"
#include "unit.h"

enum { OBJECT_BYTES = 32, PER_PAGE = PAGE_BYTES / OBJECT_BYTES };

static size_t total_descriptor_bytes(void) {
  size_t n = 0;
  FOR_EACH_CHUNK(c) n += c->descriptor_bytes;
  return n;
}

/* ---- topology ---- */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static void check_fake_split(unsigned fake) {
  cpu_set_t allowed;
  CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0, "sched_getaffinity");
  CHECK(numa.nodes == fake && numa.fake, "%u nodes, fake %d (want %u)", numa.nodes, numa.fake, fake);
  unsigned total = 0, last_node = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &allowed)) {
      CHECK(numa.node_of_cpu[c] == -1, "CPU %d not allowed has node %d", c, numa.node_of_cpu[c]);
      continue;
    }
    int node = numa.node_of_cpu[c];
    CHECK(node >= 0 && (unsigned)node < fake && CPU_ISSET(c, &numa.cpus[node]),
          "allowed CPU %d on node %d", c, node);
    CHECK((unsigned)node >= last_node, "fake nodes are blocks of CPUs in order");
    last_node = (unsigned)node;
    total++;
  }
  unsigned sum = 0;
  for (unsigned n = 0; n < fake; n++) sum += numa.cpu_count[n];
  CHECK(sum == total, "CPUs per node add up to %u, allowed %u", sum, total);
  CHECK(!numa.bound, "a fake topology is never bound");
}

static void check_sys_tree(void) {
  char root[] = "/tmp/sgc_numa_XXXXXX";
  if (!mkdtemp(root)) {
    CHECK(0, "mkdtemp");
    return;
  }
  char path[256];
  for (int n = 0; n < 3; n++) {
    snprintf(path, sizeof path, "%s/node%d", root, n);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/node%d/cpulist", root, n);
    write_file(path, n == 0 ? "0-1\n" : n == 1 ? "2-3\n" : "4-5\n");
  }
  snprintf(path, sizeof path, "%s/has_memory", root);
  write_file(path, "0-1\n"); /* node 2: CPUs, no memory */
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < 6; c++) CPU_SET(c, &all);
  numa_read_topology(root, &all, 0);
  CHECK(numa.nodes == 2 && !numa.fake && !numa.bound, "sys tree: %u nodes, bound %d", numa.nodes,
        numa.bound);
  CHECK(numa.kernel_node[0] == 0 && numa.kernel_node[1] == 1, "kernel ids");
  CHECK(numa.node_of_cpu[2] == 1 && numa.node_of_cpu[4] == -1, "CPU 2 on node 1, 4 on none");
  cpu_set_t narrow = all;
  CPU_CLR(3, &narrow);
  numa_read_topology(root, &narrow, 0);
  CHECK(numa.bound && numa.cpu_count[1] == 1, "taskset without CPU 3: bound (%d), node 1 has %u",
        numa.bound, numa.cpu_count[1]);
  for (int n = 0; n < 3; n++) {
    snprintf(path, sizeof path, "%s/node%d/cpulist", root, n);
    unlink(path);
    snprintf(path, sizeof path, "%s/node%d", root, n);
    rmdir(path);
  }
  snprintf(path, sizeof path, "%s/has_memory", root);
  unlink(path);
  rmdir(root);
}

/* ---- a thread on a given node fills pages ---- */

struct filler {
  unsigned node;
  size_t pages;
  void **keep;
  size_t on_node, off_node, failed;
};

static void *fill(void *arg) {
  struct filler *f = arg;
  numa_set_thread_node((int)f->node);
  for (size_t i = 0; i < f->pages * PER_PAGE; i++) {
    void *p = GC_malloc(OBJECT_BYTES);
    f->keep[i] = p;
    if (!p) {
      f->failed++;
      continue;
    }
    if (i % PER_PAGE) continue;
    struct page_header *h = page_of_address((uintptr_t)p);
    if (heap_node_of(h, (uintptr_t)p) == f->node) f->on_node++;
    else f->off_node++;
  }
  return NULL;
}

static void run_filler(struct filler *f) {
  f->keep = GC_malloc_uncollectable(f->pages * PER_PAGE * sizeof(void *));
  pthread_t t;
  pthread_create(&t, NULL, fill, f);
  pthread_join(t, NULL);
}

static void free_pages_per_node(uint64_t *free_pages) {
  uint64_t used[NUMA_MAX_NODES];
  heap_lock_acquire();
  heap_pages_per_node(used, free_pages);
  pthread_mutex_unlock(&heap_lock);
}

/* ---- placement ---- */

static void check_placement(void) {
  size_t heap = heap_size_bytes();
  if (numa_placement == NUMA_INTERLEAVE) {
    CHECK(atomic_load(&numa_decisions.interleaved_bytes) == heap,
          "interleaved %llu bytes, heap %zu",
          (unsigned long long)atomic_load(&numa_decisions.interleaved_bytes), heap);
  }
  if (numa_placement == NUMA_LOCAL) {
    uint64_t want[NUMA_MAX_NODES] = {0};
    FOR_EACH_CHUNK(c)
      for (size_t i = 0; i < c->page_count; i += PAGES_PER_CHUNK)
        want[heap_stripe_node(c->base + (i << PAGE_SHIFT))] += CHUNK_BYTES;
    for (unsigned n = 0; n < numa.nodes; n++)
      CHECK(atomic_load(&numa_decisions.bound_bytes[n]) == want[n],
            "node %u: stripes bound %llu bytes, want %llu", n,
            (unsigned long long)atomic_load(&numa_decisions.bound_bytes[n]),
            (unsigned long long)want[n]);
  }
  CHECK(atomic_load(&numa_decisions.bind_failures) == 0, "a memory-policy call failed under fake");
  /* Each node's thread takes its pages on its node (local) or records its
   * node on them (first touch); interleave puts them by page number. */
  for (unsigned n = 0; n < numa.nodes; n++) {
    struct filler f = {.node = n, .pages = 40};
    run_filler(&f);
    CHECK(!f.failed, "allocation failed");
    if (numa_placement == NUMA_INTERLEAVE)
      CHECK(f.off_node > 0 && f.on_node > 0, "interleave: pages on every node (%zu on, %zu off)",
            f.on_node, f.off_node);
    else
      CHECK(f.off_node == 0, "node %u's thread got %zu of %zu pages elsewhere", n, f.off_node,
            f.on_node + f.off_node);
  }
  CHECK(heap_size_bytes() == heap, "the heap grew with plenty of free pages");
  CHECK(atomic_load(&heap_foreign_takes) == 0, "foreign takes while every node had free pages");
}

/* Local: node DRY's free pages run out; its thread goes on, on other
 * nodes' pages, and the heap keeps its size. */
static void check_dry_node(void) {
  uint64_t free_before[NUMA_MAX_NODES];
  free_pages_per_node(free_before);
  unsigned dry = numa.nodes - 1;
  uint64_t total = 0;
  for (unsigned n = 0; n < numa.nodes; n++) total += free_before[n];
  size_t pages = (size_t)free_before[dry] + 64;
  CHECK(total > pages + 256, "test setup: %llu free pages in all, %zu wanted",
        (unsigned long long)total, pages);
  size_t heap = heap_size_bytes();
  struct filler f = {.node = dry, .pages = pages};
  run_filler(&f);
  struct filler g = {.node = dry, .pages = 64};
  run_filler(&g);
  CHECK(!f.failed && !g.failed, "an allocation failed with free pages on other nodes");
  CHECK(f.off_node + g.off_node > 0, "no page off the dry node (%zu on)", f.on_node);
  CHECK(heap_size_bytes() == heap, "the heap grew from %zu to %zu while other nodes had room",
        heap, heap_size_bytes());
  CHECK(atomic_load(&heap_foreign_takes) > 0, "foreign takes not counted");
  uint64_t free_after[NUMA_MAX_NODES];
  free_pages_per_node(free_after);
  CHECK(free_after[dry] == 0, "node %u still has %llu free pages", dry,
        (unsigned long long)free_after[dry]);
}

/* LPS steals (before any collection max l is 0, so growth is not
 * allowed and a thread with no free page steals): a store on the thief's
 * node gives its pages before a fuller one elsewhere.  The stores belong
 * to made-up threads; their free pages come straight from the pool. */
static struct sgc_thread near_owner = {.tid = 900001}, far_owner = {.tid = 900002},
                         thief = {.tid = 900003};

static struct page_store *store_on(struct sgc_thread *t, int node) {
  struct thread_alloc *a = &t->alloc;
  numa_set_thread_node(node);
  heap_lock_acquire();
  struct page_store *s = page_store_of(a);
  pthread_mutex_unlock(&heap_lock);
  numa_set_thread_node(-1);
  return s;
}

static void give_free_pages(struct page_store *s, unsigned pages, struct page_header **out) {
  heap_lock_acquire();
  for (unsigned i = 0; i < pages; i++) {
    struct page_header *p = page_pool_take(1);
    p->owner_store = s;
    atomic_fetch_add(&s->used, 1);
    small_page_release(p); /* back to its owner's store: a free page there */
    out[i] = p;
  }
  pthread_mutex_unlock(&heap_lock);
}

static bool one_of(struct page_header *p, struct page_header **set, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (set[i] == p) return true;
  return false;
}

static void check_store_steals(void) {
  if (page_policy != PAGE_POLICY_LPS) return;
  struct page_store *near = store_on(&near_owner, 0), *far = store_on(&far_owner, 1);
  store_on(&thief, 0);
  enum { NEAR = 2, FAR = 10 };
  struct page_header *near_pages[NEAR], *far_pages[FAR], *stolen[NEAR + 1];
  give_free_pages(near, NEAR, near_pages);
  give_free_pages(far, FAR, far_pages);
  numa_set_thread_node(0); /* the thief's node: a refill notes where its thread runs */
  for (unsigned i = 0; i < NEAR + 1; i++) stolen[i] = small_page_take_own(&thief.alloc);
  numa_set_thread_node(-1);
  for (unsigned i = 0; i < NEAR; i++)
    CHECK(stolen[i] && one_of(stolen[i], near_pages, NEAR),
          "steal %u: not from the store on the thief's node (the fuller one is remote)", i);
  CHECK(stolen[NEAR] && one_of(stolen[NEAR], far_pages, FAR),
        "with the node's stores empty, a remote store's page");
  heap_lock_acquire();
  for (unsigned i = 0; i < NEAR + 1; i++)
    if (stolen[i]) small_page_release(stolen[i]);
  pthread_mutex_unlock(&heap_lock);
  page_store_retire(&near_owner.alloc);
  page_store_retire(&far_owner.alloc);
  page_store_retire(&thief.alloc);
}

/* ---- BMB ---- */

static void check_bmb(void) {
  uint64_t sum = 0, low = UINT64_MAX, high = 0;
  for (unsigned n = 0; n < numa.nodes; n++) {
    uint64_t b = atomic_load(&heap_bmb_bytes[n]);
    sum += b;
    if (b < low) low = b;
    if (b > high) high = b;
  }
  if (!numa_bmb) {
    CHECK(sum == 0, "BMB off, yet %llu descriptor bytes placed", (unsigned long long)sum);
    return;
  }
  CHECK(sum == total_descriptor_bytes(), "BMB placed %llu bytes of %zu", (unsigned long long)sum,
        total_descriptor_bytes());
  /* Round-robin by 1 MiB of heap (23 descriptor pages): nodes differ by
   * at most a stripe's headers, the heap's last. */
  size_t stripe = ((size_t)1 << (BMB_STRIPE_SHIFT - PAGE_SHIFT)) * sizeof(struct page_header);
  CHECK(low > 0 && high - low <= stripe + 2 * PAGE_BYTES, "BMB unbalanced: %llu to %llu bytes",
        (unsigned long long)low, (unsigned long long)high);
  /* The rule itself: neighbouring 256 KiB of heap on consecutive nodes. */
  uintptr_t a = heap_first_chunk()->base;
  CHECK(heap_bmb_node(a + (1u << BMB_STRIPE_SHIFT)) == (heap_bmb_node(a) + 1) % numa.nodes,
        "BMB is round-robin by heap address");
}

/* ---- GC threads ---- */

static void check_pinning(void) {
  unsigned created = parallel_markers_created();
  CHECK(created >= 2, "GC threads: %u", created);
  for (unsigned k = 1; k < created; k++) {
    struct marker *m = parallel_marker(k);
    unsigned want = numa_pin_node(k);
    CHECK(numa.cpu_count[want] > 0, "pinned to a node without CPUs");
    if (!numa_pin) continue; /* unpinned: the node it last ran on */
    CHECK(m->node == want, "GC thread %u on node %u, want %u", k, m->node, want);
    /* It pins itself as it starts, which may be after the collection. */
    for (int wait = 0; wait < 5000 && !atomic_load(&m->pinned); wait++) usleep(1000);
    CHECK(atomic_load(&m->pinned), "GC thread %u not pinned", k);
  }
  /* Round-robin over the nodes with CPUs. */
  unsigned with_cpus[NUMA_MAX_NODES], count = 0;
  for (unsigned n = 0; n < numa.nodes; n++)
    if (numa.cpu_count[n]) with_cpus[count++] = n;
  for (unsigned k = 0; k < 2 * count; k++)
    CHECK(numa_pin_node(k) == with_cpus[k % count], "numa_pin_node(%u)", k);
}

static struct mark_range dummy[8];

static void give_public_work(struct marker *m, unsigned entries) {
  for (unsigned i = 0; i < entries; i++)
    marker_push(m, (uintptr_t)&dummy[i], (uintptr_t)&dummy[i] + 8);
  atomic_store(&m->watermark, m->top); /* all public: thieves may take them */
}

static void clear_stack(struct marker *m) {
  m->top = 0;
  atomic_store(&m->bottom, 0);
  atomic_store(&m->watermark, 0);
}

static void check_steal_order(void) {
  if (parallel_markers_created() < 4 || mark_config.deque != DEQUE_WATERMARK) {
    CHECK(0, "steal order needs 4 markers and watermark stacks");
    return;
  }
  heap_lock_acquire(); /* no collection uses the stacks meanwhile */
  unsigned saved[4];
  for (unsigned k = 0; k < 4; k++) saved[k] = parallel_marker(k)->node;
  parallel_set_active(4);
  struct marker *thief = parallel_marker(0), *near = parallel_marker(2);
  struct marker *far1 = parallel_marker(1), *far3 = parallel_marker(3);
  thief->node = near->node = 0;
  far1->node = far3->node = 1;
  for (unsigned k = 0; k < 4; k++) clear_stack(parallel_marker(k)); /* the last drain's ends */
  for (int round = 0; round < 20; round++) {
    give_public_work(far1, 4);
    give_public_work(near, 4);
    give_public_work(far3, 4);
    CHECK(parallel_steal_from_someone(thief), "no steal");
    CHECK(atomic_load(&near->bottom) > 0, "round %d: the same-node victim was skipped", round);
    CHECK(atomic_load(&far1->bottom) == 0 && atomic_load(&far3->bottom) == 0,
          "round %d: a remote victim robbed first", round);
    for (unsigned k = 0; k < 4; k++) clear_stack(parallel_marker(k));
  }
  /* Nothing on the thief's node: a remote victim. */
  give_public_work(far3, 4);
  CHECK(parallel_steal_from_someone(thief) && atomic_load(&far3->bottom) > 0,
        "no remote steal when the node has no work");
  for (unsigned k = 0; k < 4; k++) {
    clear_stack(parallel_marker(k));
    parallel_marker(k)->node = saved[k];
  }
  pthread_mutex_unlock(&heap_lock);
}

/* ---- statistics ---- */

static void check_stats(void) {
  SGC_stats_t s;
  SGC_get_stats(&s);
  CHECK(s.numa_nodes == (int)numa.nodes && s.numa_fake == 1, "stats: %d nodes", s.numa_nodes);
  CHECK(s.numa_placement == (int)numa_placement, "stats: placement");
  uint64_t pages = 0;
  for (unsigned n = 0; n < SGC_NUMA_NODES; n++) pages += s.numa_pages_used[n] + s.numa_pages_free[n];
  if (numa_placement != NUMA_FIRSTTOUCH)
    CHECK(pages <= heap_size_bytes() / PAGE_BYTES && pages > 0, "pages per node %llu, heap %zu",
          (unsigned long long)pages, heap_size_bytes() / PAGE_BYTES);
  uint64_t scanned = 0;
  for (unsigned n = 0; n < SGC_NUMA_NODES; n++) scanned += s.numa_scanned_bytes[n];
  CHECK(scanned > 0 && s.numa_local_scanned_bytes <= scanned, "scanned %llu, local %llu",
        (unsigned long long)scanned, (unsigned long long)s.numa_local_scanned_bytes);
  SGC_gc_record_t r;
  CHECK(SGC_get_gc_records(&r, 1) == 1 && r.numa_nodes == (int)numa.nodes, "record's nodes");
}

/* ---- a real kernel with several nodes ---- */

static void check_kernel_placement(void) {
  if (numa.fake || numa.nodes < 2 || numa_placement != NUMA_LOCAL) {
    printf("move_pages check skipped (fake or one node)\n");
    return;
  }
  void *pages[1] = {GC_malloc(OBJECT_BYTES)};
  int node = -1;
  if (numa_query_pages(pages, 1, &node))
    CHECK(node == (int)heap_stripe_node((uintptr_t)pages[0]), "page on kernel node %d", node);
}

int main(void) {
  GC_init();
  if (!numa.fake) {
    printf("SGC_NUMA_FAKE is not set: nothing to check\n");
    return unit_finish();
  }
  unsigned fake = numa.nodes;
  check_fake_split(fake);
  GC_disable();
  GC_expand_hp(28u << 20); /* 32 MiB: eight local stripes */
  check_placement();
  check_bmb();
  if (numa_placement == NUMA_LOCAL) check_dry_node();
  check_store_steals();
  check_kernel_placement();
  GC_enable();
  settings_set_markers(4);
  GC_gcollect();
  check_pinning();
  check_steal_order();
  GC_gcollect();
  check_stats();
  /* The made-up sys tree last: it replaces the fake topology. */
  check_sys_tree();
  cpu_set_t allowed;
  sched_getaffinity(0, sizeof allowed, &allowed);
  numa_read_topology("/sys/devices/system/node", &allowed, fake);
  return unit_finish();
}
