/* Heap snapshots (snapshot.h): a walk of its own from the roots on the
 * collector's stack, with a hash table for "seen", so the collection's
 * marks, stacks and counters are untouched and its marking runs as it
 * would have; only the dump's time is added to its mark_ns (and told in
 * the trace as snapshot_ns). */
#include "mark/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "common.h"
#include "heap/accounting.h"
#include "mark/mark.h"
#include "mark/snapshot_format.h"
#include "os/os.h"

enum { SNAPSHOT_DEFAULT_LIMIT = 16 };

static char env_dir[PATH_MAX], requested_dir[PATH_MAX];
static bool env_read;
static long env_left; /* snapshots SGC_SNAPSHOT may still write */
static uint64_t last_ns;
/* snapshot_before_prewake's notes for this collection's snapshot_wake
 * (0: not noted, as in a concurrent cycle's start, which wakes none). */
static uint64_t prewake_at_ns;
static unsigned prewake_runnable;

bool snapshot_request(const char *dir) {
  if (!dir || strlen(dir) >= sizeof requested_dir - 40) return false;
  strcpy(requested_dir, dir);
  return true;
}

uint64_t snapshot_last_ns(void) { return last_ns; }

/* Arrays grown by mapping anew: the walk runs with the world stopped,
 * where malloc (perhaps sgc's own) is not to be called. */
struct walk {
  struct snapshot_object *objects;
  size_t count, objects_cap;
  struct snapshot_edge *edges;
  size_t edge_count, edges_cap;
  uint64_t *keys; /* object base addresses, 0: empty slot */
  uint32_t *values;
  size_t table_cap, table_used;
  uint32_t *stack;
  size_t top, stack_cap;
  bool failed;
};

static bool grow(void **array, size_t *cap, size_t elem) {
  size_t n = *cap ? *cap * 2 : 4096;
  void *fresh = os_alloc(n * elem);
  if (!fresh) return false;
  if (*array) {
    memcpy(fresh, *array, *cap * elem);
    os_free(*array, *cap * elem);
  }
  *array = fresh;
  *cap = n;
  return true;
}

/* Fibonacci hashing: the product's high bits (its low ones repeat the
 * key's, and object addresses share their low bits). */
static size_t slot_of(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(cap)));
}

static bool table_grow(struct walk *w) {
  size_t old_cap = w->table_cap, cap = old_cap ? old_cap * 2 : 1 << 16;
  uint64_t *keys = os_alloc(cap * sizeof *keys); /* zeroed by the OS */
  uint32_t *values = os_alloc(cap * sizeof *values);
  if (!keys || !values) {
    if (keys) os_free(keys, cap * sizeof *keys);
    if (values) os_free(values, cap * sizeof *values);
    return false;
  }
  for (size_t i = 0; i < old_cap; i++) {
    if (!w->keys[i]) continue;
    size_t s = slot_of(w->keys[i], cap);
    while (keys[s]) s = (s + 1) & (cap - 1);
    keys[s] = w->keys[i];
    values[s] = w->values[i];
  }
  if (old_cap) {
    os_free(w->keys, old_cap * sizeof *w->keys);
    os_free(w->values, old_cap * sizeof *w->values);
  }
  w->keys = keys;
  w->values = values;
  w->table_cap = cap;
  return true;
}

static bool add_object(struct walk *w, uint64_t address, uint64_t bytes, uint8_t kind) {
  if (w->count == w->objects_cap && !grow((void **)&w->objects, &w->objects_cap, sizeof *w->objects))
    return false;
  if (w->top == w->stack_cap && !grow((void **)&w->stack, &w->stack_cap, sizeof *w->stack))
    return false;
  w->objects[w->count] = (struct snapshot_object){.address = address, .bytes = bytes, .kind = kind};
  w->stack[w->top++] = (uint32_t)w->count;
  w->count++;
  return true;
}

/* The index of the object at BASE, recorded and queued when new. */
static bool find_or_add(struct walk *w, uintptr_t base, struct page_header *page, uint32_t *index) {
  if (2 * (w->table_used + 1) > w->table_cap && !table_grow(w)) return false;
  size_t s = slot_of(base, w->table_cap);
  while (w->keys[s]) {
    if (w->keys[s] == base) {
      *index = w->values[s];
      return true;
    }
    s = (s + 1) & (w->table_cap - 1);
  }
  unsigned k = page->kind;
  uint8_t kind = kind_is_custom(k)                                     ? SNAP_CUSTOM
                 : k == KIND_NORMAL || k == KIND_UNCOLLECTABLE ? SNAP_SCANNED
                                                                       : SNAP_ATOMIC;
  *index = (uint32_t)w->count;
  if (!add_object(w, base, object_size(page), kind)) return false;
  w->keys[s] = base;
  w->values[s] = *index;
  w->table_used++;
  return true;
}

/* Reads what the marker reads: words poisoned for AddressSanitizer or
 * written by other threads meanwhile (mark.c's scanned_word). */
#if defined(__SANITIZE_ADDRESS__)
static __attribute__((no_sanitize_address, noipa)) uintptr_t read_word(const uintptr_t *p) { return *p; }
#elif defined(__SANITIZE_THREAD__)
static __attribute__((no_sanitize_thread, noipa)) uintptr_t read_word(const uintptr_t *p) { return *p; }
#else
static inline uintptr_t read_word(const uintptr_t *p) { return *p; }
#endif

/* Scans object I as the marker would, recording an edge per word that
 * finds an object the mark is still to reach. */
static bool scan(struct walk *w, uint32_t i, uintptr_t lowest, uintptr_t span) {
  uintptr_t lo = w->objects[i].address, hi = lo + w->objects[i].bytes;
  w->objects[i].first_edge = w->edge_count;
  uint32_t edges = 0;
  for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++) {
    uintptr_t a = read_word(p);
    if (a - lowest >= span) continue;
    struct page_header *p0 = page_of_low_address(a), *page;
    if (!p0) continue;
    uintptr_t base = object_start_in_page(p0, a, &page, heap_interior_pointers);
    /* Marked before the drain: free-list objects, roots marked by
     * mark_word (they are on the stack as ranges), uncollectable ones. */
    if (!base || mark_bit_test(page, base)) continue;
    uint32_t target;
    if (!find_or_add(w, base, page, &target)) return false;
    if (w->edge_count == w->edges_cap && !grow((void **)&w->edges, &w->edges_cap, sizeof *w->edges))
      return false;
    w->edges[w->edge_count++] =
        (struct snapshot_edge){(uint32_t)(p - (const uintptr_t *)lo), target};
    edges++;
  }
  w->objects[i].edge_count = edges;
  return true;
}

static bool write_all(int fd, const void *data, size_t bytes) {
  const char *p = data;
  while (bytes) {
    ssize_t n = write(fd, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= (size_t)n;
  }
  return true;
}

static void release(struct walk *w) {
  if (w->objects) os_free(w->objects, w->objects_cap * sizeof *w->objects);
  if (w->edges) os_free(w->edges, w->edges_cap * sizeof *w->edges);
  if (w->stack) os_free(w->stack, w->stack_cap * sizeof *w->stack);
  if (w->keys) os_free(w->keys, w->table_cap * sizeof *w->keys);
  if (w->values) os_free(w->values, w->table_cap * sizeof *w->values);
}

/* One root entry: a range (a procedure entry, MARK_ENTRY_PROC, is an
 * object the walk reaches as such, not a root range). */
static bool add_root(struct walk *w, uintptr_t lo, uintptr_t hi) {
  return (lo & MARK_ENTRY_PROC) || add_object(w, lo, hi - lo, SNAP_ROOT);
}

/* The collector's root entries, whichever deque holds them. */
static bool add_roots(struct walk *w) {
  struct marker *m = mark_collector;
  if (mark_config.deque == DEQUE_CHASE_LEV) {
    struct cl_buffer *b = atomic_load_explicit(&m->cl_buffer, memory_order_relaxed);
    int64_t top = atomic_load_explicit(&m->cl_top, memory_order_relaxed);
    int64_t bottom = atomic_load_explicit(&m->cl_bottom, memory_order_relaxed);
    for (int64_t i = top; i < bottom; i++) {
      struct cl_slot *s = &b->slots[i & b->mask];
      uintptr_t lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
      uintptr_t hi = atomic_load_explicit(&s->hi, memory_order_relaxed);
      if (!add_root(w, lo, hi)) return false;
    }
    return true;
  }
  for (size_t i = atomic_load_explicit(&m->bottom, memory_order_relaxed); i < m->top; i++)
    if (!add_root(w, m->entries[i].lo, m->entries[i].hi)) return false;
  return true;
}

/* Each object's memory node, from its first page: the kernel is asked
 * once per page, in batches, through the walk's hash table, free again
 * (its capacity is over twice the objects, so over twice the pages).
 * Objects it says nothing of stay on node 0.  Returns the nodes named. */
enum { NODE_BATCH = 512 };
struct node_batch {
  void *pages[NODE_BATCH];
  size_t slots[NODE_BATCH];
  int nodes[NODE_BATCH];
  unsigned count;
};

static bool ask_nodes(struct walk *w, struct node_batch *b, int *most) {
  bool ok = b->count == 0 || os_page_nodes(b->pages, b->nodes, b->count);
  for (unsigned i = 0; ok && i < b->count; i++) {
    int node = b->nodes[i] >= 0 && b->nodes[i] <= UINT8_MAX ? b->nodes[i] : 0;
    w->values[b->slots[i]] = (uint32_t)node;
    if (node > *most) *most = node;
  }
  b->count = 0;
  return ok;
}

static size_t page_slot(struct walk *w, uintptr_t page) {
  size_t s = slot_of(page, w->table_cap);
  while (w->keys[s] && w->keys[s] != page) s = (s + 1) & (w->table_cap - 1);
  return s;
}

static uint32_t find_nodes(struct walk *w) {
  if (!w->table_cap) return 1;
  memset(w->keys, 0, w->table_cap * sizeof *w->keys);
  static struct node_batch batch; /* a collection at a time, under heap_lock */
  batch.count = 0;
  int most = 0;
  bool ok = true;
  for (size_t i = 0; ok && i < w->count; i++) {
    uintptr_t page = w->objects[i].address & ~(uintptr_t)(PAGE_BYTES - 1);
    size_t s = page_slot(w, page);
    if (w->keys[s]) continue;
    w->keys[s] = page;
    w->values[s] = 0;
    batch.pages[batch.count] = (void *)page;
    batch.slots[batch.count++] = s;
    if (batch.count == NODE_BATCH) ok = ask_nodes(w, &batch, &most);
  }
  if (!ok || !ask_nodes(w, &batch, &most)) return 1; /* no NUMA answers: all on node 0 */
  for (size_t i = 0; i < w->count; i++)
    w->objects[i].node =
        (uint8_t)w->values[page_slot(w, w->objects[i].address & ~(uintptr_t)(PAGE_BYTES - 1))];
  return (uint32_t)most + 1;
}

static void dump(const char *dir, uint64_t start_ns) {
  struct walk w;
  memset(&w, 0, sizeof w);
  bool ok = add_roots(&w);
  size_t roots = w.count;
  uintptr_t lowest = atomic_load_explicit(&heap_lowest, memory_order_relaxed);
  uintptr_t span = atomic_load_explicit(&heap_highest, memory_order_relaxed) - lowest;
  /* Depth first, last found first, as the marker goes. */
  while (ok && w.top) {
    uint32_t i = w.stack[--w.top];
    if (w.objects[i].kind != SNAP_ATOMIC) ok = scan(&w, i, lowest, span);
  }
  uint32_t gc_no =
      (uint32_t)atomic_load_explicit(&heap_accounting.gc_count, memory_order_relaxed) + 1;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/sgc-%d-%u.snap", dir, (int)getpid(), gc_no);
  if (!ok) {
    sgc_warn("snapshot %s: out of memory for the walk; none written", path);
    release(&w);
    return;
  }
  struct snapshot_header h = {
      .version = SNAPSHOT_VERSION,
      .word_bytes = sizeof(uintptr_t),
      .page_bytes = PAGE_BYTES,
      .split_bytes = mark_config.split_bytes,
      .objects = w.count,
      .roots = roots,
      .edges = w.edge_count,
      .nodes = find_nodes(&w),
      .gc_no = gc_no,
  };
  memcpy(h.magic, SNAPSHOT_MAGIC, sizeof h.magic);
  struct snapshot_wake wake = {
      .lead_ns = prewake_at_ns ? start_ns - prewake_at_ns : 0,
      .runnable = prewake_at_ns ? prewake_runnable : 0,
      .cpus = prewake_at_ns && prewake_runnable ? sgc_settings.usable_cpus : 0,
  };
  prewake_at_ns = 0;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || !write_all(fd, &h, sizeof h) || !write_all(fd, &wake, sizeof wake) ||
      !write_all(fd, w.objects, w.count * sizeof *w.objects) ||
      !write_all(fd, w.edges, w.edge_count * sizeof *w.edges))
    sgc_warn("snapshot %s: cannot write it (%s)", path, strerror(errno));
  if (fd >= 0) close(fd);
  release(&w);
}

/* The directory this collection's snapshot goes to, or NULL: none. */
static const char *snapshot_dir(void) {
  if (!env_read) {
    env_read = true;
    const char *dir = env_value("SGC_SNAPSHOT");
    if (dir && strlen(dir) < sizeof env_dir - 40) strcpy(env_dir, dir);
    else if (dir) sgc_warn("ignoring SGC_SNAPSHOT: the directory's name is too long");
    env_left = env_long_in("SGC_SNAPSHOT_LIMIT", SNAPSHOT_DEFAULT_LIMIT, 0, INT32_MAX);
  }
  return requested_dir[0] ? requested_dir : env_dir[0] && env_left > 0 ? env_dir : NULL;
}

void snapshot_before_prewake(void) {
  prewake_at_ns = 0;
  if (!snapshot_dir()) return;
  /* Read before the pre-wake, so the GC threads it wakes are not
   * counted; the read delays the stop, not the lead nor the mark. */
  prewake_runnable = os_runnable_threads();
  prewake_at_ns = os_now_ns();
}

void snapshot_before_drain(void) {
  last_ns = 0;
  const char *dir = snapshot_dir();
  if (!dir) return;
  uint64_t start = os_now_ns();
  dump(dir, start);
  if (dir == requested_dir) requested_dir[0] = 0;
  else env_left--;
  last_ns = os_now_ns() - start;
}
