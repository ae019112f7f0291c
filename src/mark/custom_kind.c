/* Custom kinds and mark procedures (bdwgc's GC_new_kind, GC_new_proc,
 * GC_mark_and_push): the registry and the descriptor interpreter the
 * marker calls for objects of such kinds (mark/custom_kind.h). */
#include "mark/custom_kind.h"

#include <string.h>

#include "collect/collect.h"
#include "common.h"
#include "gc/gc_mark.h"
#include "heap/heap.h"
#include "mark/mark.h"
#include "os/os.h"

struct custom_kind custom_kinds[CUSTOM_KIND_MAX];
_Atomic unsigned custom_kind_count;
static GC_mark_proc mark_procs[MARK_PROC_MAX];
static _Atomic unsigned mark_proc_count;
static pthread_mutex_t registry_lock_kinds = PTHREAD_MUTEX_INITIALIZER;

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
  pthread_mutex_lock(&registry_lock_kinds);
  unsigned index = atomic_load_explicit(&mark_proc_count, memory_order_relaxed);
  if (index == MARK_PROC_MAX) {
    pthread_mutex_unlock(&registry_lock_kinds);
    sgc_fatal("GC_new_proc: more than %d mark procedures", MARK_PROC_MAX);
  }
  mark_procs[index] = proc;
  /* Release: a marker that reads the count sees the procedure. */
  atomic_store_explicit(&mark_proc_count, index + 1, memory_order_release);
  pthread_mutex_unlock(&registry_lock_kinds);
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

GC_API unsigned GC_new_kind(void **free_list, GC_word descriptor, int adjust, int clear) {
  (void)free_list;
  if ((descriptor & ((1u << DESCRIPTOR_TAG_BITS) - 1)) == DESCRIPTOR_PROC) {
    unsigned proc = (unsigned)(descriptor >> DESCRIPTOR_TAG_BITS) & (MARK_PROC_MAX - 1);
    if (proc >= atomic_load_explicit(&mark_proc_count, memory_order_acquire))
      sgc_fatal("GC_new_kind: descriptor %#lx names mark procedure %u, which GC_new_proc did "
                "not return", (unsigned long)descriptor, proc);
  }
  pthread_mutex_lock(&registry_lock_kinds);
  unsigned index = atomic_load_explicit(&custom_kind_count, memory_order_relaxed);
  if (index == CUSTOM_KIND_MAX) {
    pthread_mutex_unlock(&registry_lock_kinds);
    sgc_fatal("GC_new_kind: more than %d object kinds", CUSTOM_KIND_MAX);
  }
  custom_kinds[index] = (struct custom_kind){descriptor, adjust != 0, clear != 0};
  atomic_store_explicit(&custom_kind_count, index + 1, memory_order_release);
  pthread_mutex_unlock(&registry_lock_kinds);
  return KIND_COUNT + index;
}
GC_API unsigned GC_new_kind_inner(void **free_list, GC_word descriptor, int adjust, int clear) {
  return GC_new_kind(free_list, descriptor, adjust, clear);
}

/* ---- marking ---- */

/* Per marking thread: the marker its mark procedure pushes to, how deep
 * in procedures it is, and the objects waiting for theirs. */
struct pending_object {
  uintptr_t base;
  uintptr_t descriptor;
};
static _Thread_local struct marker *proc_marker;
static _Thread_local unsigned proc_depth;
static _Thread_local struct pending_object *pending;
static _Thread_local size_t pending_count, pending_capacity;

struct marker *custom_kind_current_marker(void) { return proc_marker; }

/* mmap rather than malloc: the world is stopped, and a stopped thread
 * may hold malloc's lock. */
static void pending_add(uintptr_t base, uintptr_t descriptor) {
  if (pending_count == pending_capacity) {
    size_t grown = pending_capacity ? 2 * pending_capacity : 256;
    struct pending_object *list = os_alloc(grown * sizeof *list);
    if (!list) sgc_fatal("out of memory for objects waiting for their mark procedure");
    if (pending) {
      memcpy(list, pending, pending_count * sizeof *list);
      os_free(pending, pending_capacity * sizeof *pending);
    }
    pending = list;
    pending_capacity = grown;
  }
  pending[pending_count++] = (struct pending_object){base, descriptor};
}

/* What a procedure receives as its mark stack.  sgc's GC_mark_and_push
 * pushes onto the marker's own stack and returns the pointer unchanged,
 * so nothing is ever written here; a procedure that writes entries itself
 * (outside bdwgc's public API) is caught when it returns. */
enum { PROC_STACK_ENTRIES = 64 };
static struct GC_ms_entry proc_stack[PROC_STACK_ENTRIES];

static void run_proc(struct marker *m, uintptr_t base, uintptr_t descriptor) {
  unsigned index = (unsigned)(descriptor >> DESCRIPTOR_TAG_BITS) & (MARK_PROC_MAX - 1);
  GC_word env = descriptor >> (DESCRIPTOR_TAG_BITS + DESCRIPTOR_PROC_INDEX_BITS);
  GC_mark_proc proc = mark_procs[index];
  struct marker *outer = proc_marker;
  proc_marker = m;
  proc_depth++;
  struct GC_ms_entry *top = proc(( GC_word *)base, proc_stack, proc_stack + PROC_STACK_ENTRIES, env);
  proc_depth--;
  proc_marker = outer;
  if (top != proc_stack)
    sgc_fatal("mark procedure %u pushed mark-stack entries itself; sgc takes them only "
              "through GC_mark_and_push / GC_MARK_AND_PUSH", index);
}

/* The ranges a non-procedure descriptor names for the object at BASE. */
static void push_by_descriptor(struct marker *m, uintptr_t base, size_t size, uintptr_t descriptor,
                               bool adjust) {
  for (int hops = 0; hops < 2; hops++) {
    switch (descriptor & ((1u << DESCRIPTOR_TAG_BITS) - 1)) {
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
    case DESCRIPTOR_PROC: pending_add(base, descriptor); return;
    case DESCRIPTOR_PER_OBJECT: {
      /* bdwgc's rule: a non-negative descriptor (after ADJUST adds the
       * size: typed objects keep theirs in their last word) is the real
       * one's offset in the object; a negative one finds it below the
       * address in the object's first word (a type record), biased by 16. */
      intptr_t offset = (intptr_t)(descriptor & ~(uintptr_t)3) + (adjust ? (intptr_t)size : 0);
      const uintptr_t *where;
      if (offset >= 0) {
        if ((size_t)offset + sizeof(uintptr_t) > size) return;
        where = (const uintptr_t *)(base + (size_t)offset);
      } else {
        uintptr_t type_record = *(const uintptr_t *)base;
        if (!type_record) return; /* a cleared (free) object */
        where = (const uintptr_t *)(type_record + (uintptr_t)(-offset) - 16);
      }
      descriptor = *where;
      adjust = false;
      if ((descriptor & 3) == DESCRIPTOR_PER_OBJECT) break; /* no second indirection */
      continue;
    }
    }
    break;
  }
  /* An indirection that led to another one: scan the object whole,
   * which keeps at least what the descriptor would. */
  marker_push(m, base, base + size);
}

void custom_kind_scan(struct marker *m, unsigned kind, uintptr_t base, size_t size) {
  const struct custom_kind *k = &custom_kinds[kind - KIND_COUNT];
  size_t before = pending_count;
  push_by_descriptor(m, base, size, k->descriptor, k->adjust);
  if (pending_count == before || proc_depth > 0) return; /* the outermost call runs them */
  while (pending_count) {
    struct pending_object o = pending[--pending_count];
    run_proc(m, o.base, o.descriptor);
  }
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
