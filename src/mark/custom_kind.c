/* Custom kinds and mark procedures (bdwgc's GC_new_kind, GC_new_proc,
 * GC_mark_and_push): the registry and the descriptor interpreter the
 * marker calls for objects of such kinds (mark/custom_kind.h). */
#include "mark/custom_kind.h"

#include <string.h>

#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "gc/gc_mark.h"
#include "heap/heap.h"
#include "mark/mark.h"
#include "os/os.h"

struct custom_kind custom_kinds[CUSTOM_KIND_MAX];
_Atomic unsigned custom_kind_count;
static GC_mark_proc mark_procs[MARK_PROC_MAX];
static _Atomic unsigned mark_proc_count;
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;

SGC_EXPORT void *GC_least_plausible_heap_addr = (void *)UINTPTR_MAX;
SGC_EXPORT void *GC_greatest_plausible_heap_addr = NULL;

void custom_kind_publish_heap_bounds(uintptr_t lowest, uintptr_t highest) {
  GC_least_plausible_heap_addr = (void *)lowest;
  GC_greatest_plausible_heap_addr = (void *)highest;
}

bool custom_kind_valid(int kind) {
  return kind >= KIND_COUNT &&
         (unsigned)kind < KIND_COUNT + atomic_load_explicit(&custom_kind_count, memory_order_acquire);
}

/* ---- registration (any time; programs do it at start-up) ---- */

GC_API unsigned GC_new_proc(GC_mark_proc proc) {
  if (!proc) sgc_fatal("GC_new_proc(NULL): a mark procedure is needed");
  pthread_mutex_lock(&kinds_lock);
  unsigned index = atomic_load_explicit(&mark_proc_count, memory_order_relaxed);
  if (index == MARK_PROC_MAX) {
    pthread_mutex_unlock(&kinds_lock);
    sgc_fatal("GC_new_proc: more than %d mark procedures", MARK_PROC_MAX);
  }
  mark_procs[index] = proc;
  /* Release: a marker that reads the count sees the procedure. */
  atomic_store_explicit(&mark_proc_count, index + 1, memory_order_release);
  pthread_mutex_unlock(&kinds_lock);
  return index;
}
GC_API unsigned GC_new_proc_inner(GC_mark_proc proc) { return GC_new_proc(proc); }

/* bdwgc's kinds come with a free-list array the client may pass to its
 * own inline allocator; sgc allocates through GC_generic_malloc and never
 * reads it, so it is only zeroed memory of bdwgc's size (one entry per
 * granule count up to half a 4 KiB block, and one more). */
GC_API void **GC_new_free_list(void) {
  enum { BDWGC_FREE_LIST_ENTRIES = 4096 / 2 / 16 + 1 };
  void **list = os_alloc(BDWGC_FREE_LIST_ENTRIES * sizeof *list);
  if (!list) sgc_fatal("GC_new_free_list: out of memory");
  return list;
}
GC_API void **GC_new_free_list_inner(void) { return GC_new_free_list(); }

static unsigned tag_of(uintptr_t descriptor) {
  return (unsigned)(descriptor & ((1u << DESCRIPTOR_TAG_BITS) - 1));
}

GC_API unsigned GC_new_kind(void **free_list, GC_word descriptor, int adjust, int clear) {
  (void)free_list;
  bool proc = tag_of(descriptor) == DESCRIPTOR_PROC;
  if (proc) {
    unsigned proc = (unsigned)(descriptor >> DESCRIPTOR_TAG_BITS) & (MARK_PROC_MAX - 1);
    if (proc >= atomic_load_explicit(&mark_proc_count, memory_order_acquire))
      sgc_fatal("GC_new_kind: descriptor %#lx names mark procedure %u, which GC_new_proc did "
                "not return", (unsigned long)descriptor, proc);
  }
  pthread_mutex_lock(&kinds_lock);
  unsigned index = atomic_load_explicit(&custom_kind_count, memory_order_relaxed);
  if (index == CUSTOM_KIND_MAX) {
    pthread_mutex_unlock(&kinds_lock);
    sgc_fatal("GC_new_kind: more than %d object kinds", CUSTOM_KIND_MAX);
  }
  custom_kinds[index] = (struct custom_kind){descriptor, adjust != 0, proc, clear != 0,
                                             proc || tag_of(descriptor) == DESCRIPTOR_PER_OBJECT};
  atomic_store_explicit(&custom_kind_count, index + 1, memory_order_release);
  pthread_mutex_unlock(&kinds_lock);
  return KIND_COUNT + index;
}
void custom_kind_without_procs(unsigned kind) {
  if (kind >= KIND_COUNT && kind - KIND_COUNT < CUSTOM_KIND_MAX)
    custom_kinds[kind - KIND_COUNT].once = custom_kinds[kind - KIND_COUNT].proc;
}
GC_API unsigned GC_new_kind_inner(void **free_list, GC_word descriptor, int adjust, int clear) {
  return GC_new_kind(free_list, descriptor, adjust, clear);
}

/* ---- marking ---- */

/* Per marking thread: the marker its mark procedure pushes to, while
 * one runs. */
static _Thread_local struct marker *proc_marker;

struct marker *custom_kind_current_marker(void) { return proc_marker; }

/* What a procedure receives as its mark stack.  sgc's GC_mark_and_push
 * pushes onto the marker's own stack and returns the pointer unchanged,
 * so nothing is ever written here; a procedure that writes entries itself
 * (outside bdwgc's public API) is caught when it returns. */
enum { PROC_STACK_ENTRIES = 64 };
static struct GC_ms_entry proc_stack[PROC_STACK_ENTRIES];

static void run_proc(struct marker *m, uintptr_t base, uintptr_t descriptor) {
  unsigned index = (unsigned)(descriptor >> DESCRIPTOR_TAG_BITS) & (MARK_PROC_MAX - 1);
  GC_word env = descriptor >> (DESCRIPTOR_TAG_BITS + DESCRIPTOR_PROC_INDEX_BITS);
  struct marker *outer = proc_marker;
  proc_marker = m;
  struct GC_ms_entry *top =
      mark_procs[index]((GC_word *)base, proc_stack, proc_stack + PROC_STACK_ENTRIES, env);
  proc_marker = outer;
  if (top != proc_stack)
    sgc_fatal("mark procedure %u pushed mark-stack entries itself; sgc takes them only "
              "through GC_mark_and_push / GC_MARK_AND_PUSH", index);
}

/* The descriptor a per-object one leads to (bdwgc's rule): a non-negative
 * offset (after ADJUST adds the size: typed objects keep theirs in their
 * last word) is its place in the object; a negative one finds it below
 * the address in the object's first word (a type record), biased by 16.
 * 0, which marks nothing, for a cleared (free) object or an offset past
 * its end. */
static uintptr_t per_object_descriptor(uintptr_t base, size_t size, uintptr_t descriptor,
                                       bool adjust) {
  intptr_t offset = (intptr_t)(descriptor & ~(uintptr_t)3) + (adjust ? (intptr_t)size : 0);
  if (offset >= 0)
    return (size_t)offset + sizeof(uintptr_t) <= size ? *(const uintptr_t *)(base + (size_t)offset)
                                                      : 0;
  uintptr_t type_record = *(const uintptr_t *)base;
  return type_record ? *(const uintptr_t *)(type_record + (uintptr_t)(-offset) - 16) : 0;
}

/* ---- procedures kept for a cycle's finish ---- */

/* During a concurrent cycle a mark procedure never runs beside the
 * program: procedures read what the program may be changing, often
 * outside the heap where no barrier sees the writes (Guile's thread
 * objects walk their VM stacks, mmap'd and no root: run beside the
 * program the walk followed half-written frames round forever, and
 * pointers stored there after it ran were lost).  The object waits here,
 * marked, and its procedure runs at the finish with the world stopped,
 * as every procedure does in stop mode (docs/concurrent.md). */
_Atomic bool custom_procs_wait_for_finish;
static struct mark_range *deferred; /* lo: the object, hi: its kind */
static size_t deferred_count, deferred_capacity;
static pthread_mutex_t deferred_lock = PTHREAD_MUTEX_INITIALIZER;

static void defer_to_finish(uintptr_t base, unsigned kind) {
  pthread_mutex_lock(&deferred_lock);
  if (deferred_count == deferred_capacity) {
    deferred = os_grow_array(deferred, deferred_count, &deferred_capacity, sizeof *deferred, 256);
    if (!deferred) sgc_fatal("out of memory for objects waiting for a cycle's finish");
  }
  deferred[deferred_count++] = (struct mark_range){base, kind};
  pthread_mutex_unlock(&deferred_lock);
}

/* A heapsort by object, in place: the finish has the world stopped, and
 * qsort may take malloc's lock, which a stopped thread may hold. */
static void sift_down(struct mark_range *a, size_t root, size_t n) {
  for (size_t child; (child = 2 * root + 1) < n; root = child) {
    if (child + 1 < n && a[child + 1].lo > a[child].lo) child++;
    if (a[root].lo >= a[child].lo) return;
    struct mark_range t = a[root];
    a[root] = a[child];
    a[child] = t;
  }
}

static void sort_by_object(struct mark_range *a, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift_down(a, i, n);
  for (size_t end = n; end > 1; end--) {
    struct mark_range t = a[0];
    a[0] = a[end - 1];
    a[end - 1] = t;
    sift_down(a, 0, end - 1);
  }
}

void custom_kind_defer_procs(void) {
  /* Relaxed: set before the start's stop, which orders it for every
   * marker (the stop and the phases' epochs are release/acquire). */
  atomic_store_explicit(&custom_procs_wait_for_finish, true, memory_order_relaxed);
}

void custom_kind_run_deferred(struct marker *m) {
  atomic_store_explicit(&custom_procs_wait_for_finish, false, memory_order_relaxed);
  /* Rescans of written pages meet an object again: each runs once. */
  sort_by_object(deferred, deferred_count);
  for (size_t i = 0; i < deferred_count; i++) {
    uintptr_t base = deferred[i].lo;
    unsigned kind = (unsigned)deferred[i].hi;
    if (i > 0 && base == deferred[i - 1].lo) continue;
    /* Still that kind's marked object: a large one freed meanwhile may
     * have left its pages to others (a freshly formatted page has its
     * marks clear). */
    struct page_header *head = NULL;
    if (object_start_rule(base, &head, false) != base || head->kind != kind ||
        !mark_bit_test(head, base))
      continue;
    custom_kind_scan(m, kind, base, object_size(head));
  }
  deferred_count = 0;
}

void custom_kind_forget_deferred(void) {
  atomic_store_explicit(&custom_procs_wait_for_finish, false, memory_order_relaxed);
  pthread_mutex_init(&deferred_lock, NULL);
  deferred_count = 0;
}

/* Queues what DESCRIPTOR names in the object at BASE on M's stack:
 * ranges, or the object as an entry for its procedure (MARK_ENTRY_PROC). */
static void push_by_descriptor(struct marker *m, unsigned kind, uintptr_t base, size_t size,
                               uintptr_t descriptor, bool adjust) {
  if (tag_of(descriptor) == DESCRIPTOR_PER_OBJECT) {
    descriptor = per_object_descriptor(base, size, descriptor, adjust);
    adjust = false;
  }
  switch (tag_of(descriptor)) {
  case DESCRIPTOR_LENGTH: {
    size_t length = descriptor + (adjust ? size : 0);
    if (length > size) length = size;
    if (length >= sizeof(uintptr_t)) marker_push(m, base, base + length);
    return;
  }
  case DESCRIPTOR_BITMAP: {
    /* One single-word range a pointer field: nothing here recurses. */
    uintptr_t bits = descriptor & ~(uintptr_t)((1u << DESCRIPTOR_TAG_BITS) - 1);
    for (size_t word = 0; bits && (word + 1) * sizeof(uintptr_t) <= size; word++, bits <<= 1)
      if (bits >> 63) marker_push(m, base + word * 8, base + word * 8 + 8);
    return;
  }
  case DESCRIPTOR_PROC:
    if (atomic_load_explicit(&custom_procs_wait_for_finish, memory_order_relaxed))
      defer_to_finish(base, kind);
    else
      marker_push(m, base | MARK_ENTRY_PROC, descriptor);
    return;
  default:
    /* A per-object descriptor that leads to another: the object whole,
     * which keeps at least what it would. */
    marker_push(m, base, base + size);
  }
}

void custom_kind_scan(struct marker *m, unsigned kind, uintptr_t base, size_t size) {
  /* A large object its thread is still clearing (alloc/large.c) holds
   * the pages' previous contents, which no descriptor or procedure of
   * this kind may read: marked, nothing to scan yet.  Acquire: pairs with
   * the release after the memset. */
  if (size > MAX_SMALL_BYTES &&
      atomic_load_explicit(&page_of_address(base)->clearing, memory_order_acquire))
    return;
  const struct custom_kind *k = &custom_kinds[kind - KIND_COUNT];
  push_by_descriptor(m, kind, base, size, k->descriptor, k->adjust);
}

/* A popped procedure entry: the object at BASE, its procedure's
 * DESCRIPTOR.  Entries are pushed only while procedures may run, and a
 * large object still being cleared is never pushed (custom_kind_scan):
 * the world is stopped until the entry is popped. */
void custom_kind_run_entry(struct marker *m, uintptr_t base, uintptr_t descriptor) {
  if (unlikely(atomic_load_explicit(&custom_procs_wait_for_finish, memory_order_relaxed))) {
    struct page_header *head = page_of_address(base);
    if (head && kind_is_custom(head->kind)) defer_to_finish(base, head->kind);
    return;
  }
  run_proc(m, base, descriptor);
}

/* Called by mark procedures for every pointer they find (usually through
 * the GC_MARK_AND_PUSH macro, which filters by the plausible bounds).
 * OBJ is treated as a conservative pointer: marked if it points to an
 * object by the marking rule, and queued for scanning by its kind. */
GC_API struct GC_ms_entry *GC_mark_and_push(void *obj, struct GC_ms_entry *mark_stack_ptr,
                                            struct GC_ms_entry *mark_stack_limit, void **src) {
  (void)mark_stack_limit;
  (void)src;
  struct marker *m = proc_marker;
  if (!m) sgc_fatal("GC_mark_and_push(%p) outside a mark procedure", obj);
  mark_word_with(m, (uintptr_t)obj);
  return mark_stack_ptr;
}
