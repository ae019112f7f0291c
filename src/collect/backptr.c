/* bdwgc's back pointers (gc_backptr.h): who holds a debugging object.
 *
 * bdwgc's back-pointer builds record, in each debugging object's header,
 * the word its last marking reached it from.  sgc records nothing while
 * marking (the mark loop stays as it is); it answers at query time: with
 * the world stopped, it looks for a word that points into the object, in
 * the order a user can follow (docs/behaviour.md, "Back pointers"):
 *   1. the finalization queue (the object waits for its finalizer),
 *   2. static data and GC_add_roots ranges,
 *   3. heap objects the last collection marked (GC_REFD_FROM_HEAP),
 *   4. every root the collection reads from threads (collect/thread_roots.c):
 *      stacks, thread-local storage (dlopen()ed libraries' too),
 *      pthread_setspecific values, stopped threads' registers, unjoined
 *      threads' results,
 *   5. finalizers' client data.
 * The answer is one current referrer, as bdwgc's is one of the referrers
 * its marking saw.  A debugging object allocated after the last
 * collection, or found unreachable by it, is GC_UNREFERENCED (bdwgc:
 * never marked); objects without a debugging header are GC_NO_SPACE. */
#include "collect/backptr.h"

#include <string.h>

#include "collect/debug_alloc.h"
#include "collect/finalize.h"
#include "collect/thread_roots.h"
#include "common.h"
#include "gc/gc_backptr.h"
#include "heap/heap.h"
#include "heap/heap_lock.h"
#include "os/scan_read.h"
#include "roots/roots.h"
#include "threads/thread.h"

struct search {
  uintptr_t dest, dest_end;   /* the object looked for: [dest, dest_end) */
  const uintptr_t *avoid;     /* object starts not to answer (a chain so far) */
  unsigned avoid_count;
  uintptr_t self_from;        /* the calling thread's stack is read from here up */
  /* The answer. */
  GC_ref_kind kind;
  uintptr_t where;            /* the word that points (roots, heap) */
};

/* Whether word W counts as a pointer to the object, by the marker's rule
 * (interior pointers, displacements). */
static bool points_to_dest(const struct search *s, uintptr_t w) {
  if (w < s->dest || w >= s->dest_end) return false;
  struct page_header *page;
  return object_start(w, &page) == s->dest;
}

/* The first word of [LO, HI) pointing to the object, or 0. */
static uintptr_t scan_range(const struct search *s, uintptr_t lo, uintptr_t hi) {
  for (uintptr_t a = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
       a + sizeof(uintptr_t) <= hi; a += sizeof(uintptr_t)) {
    /* Reads of memory other threads own, as the marker's (they are
     * stopped), redzones included. */
    if (points_to_dest(s, scanned_word((const uintptr_t *)a))) return a;
  }
  return 0;
}

static void found(struct search *s, GC_ref_kind kind, uintptr_t where) {
  s->kind = kind;
  s->where = where;
}

static void visit_root_range(uintptr_t lo, uintptr_t hi, void *arg) {
  struct search *s = arg;
  if (s->kind != GC_UNREFERENCED) return;
  uintptr_t w = scan_range(s, lo, hi);
  if (w) found(s, GC_REFD_FROM_ROOT, w);
}

static bool avoided(const struct search *s, uintptr_t base) {
  if (base == s->dest) return true; /* a pointer to itself holds nothing */
  for (unsigned i = 0; i < s->avoid_count; i++)
    if (s->avoid[i] == base) return true;
  return false;
}

/* A marked object holding a pointer to the object looked for.  Atomic
 * kinds are never scanned by the marker, so skipped. */
static bool scan_object(struct page_header *p, uintptr_t base, size_t bytes, void *arg) {
  struct search *s = arg;
  if (p->kind == KIND_ATOMIC || p->kind == KIND_ATOMIC_UNCOLLECTABLE || avoided(s, base))
    return false;
  uintptr_t w = scan_range(s, base, base + bytes);
  if (w) found(s, GC_REFD_FROM_HEAP, w);
  return w != 0;
}

static void visit_thread_range(uintptr_t lo, uintptr_t hi, enum thread_root_place place,
                               void *arg) {
  struct search *s = arg;
  if (s->kind != GC_UNREFERENCED) return;
  uintptr_t w = scan_range(s, lo, hi);
  if (w) found(s, place == THREAD_ROOT_REGISTERS ? GC_REFD_FROM_REG : GC_REFD_FROM_ROOT,
               place == THREAD_ROOT_REGISTERS ? 0 : w);
}

static void visit_thread_word(uintptr_t word, enum thread_root_place place, void *arg) {
  struct search *s = arg;
  if (s->kind == GC_UNREFERENCED && points_to_dest(s, word))
    found(s, place == THREAD_ROOT_REGISTERS ? GC_REFD_FROM_REG : GC_REFD_FROM_ROOT, 0);
}

/* Every root the collection reads from threads (collect/thread_roots.c),
 * then the caller's own stack from where it asked: last, as the asking
 * frames may hold a copy of the pointer asked about. */
static void scan_threads(struct search *s, struct sgc_thread *self) {
  const struct thread_root_visitor scan = {visit_thread_range, visit_thread_word, s};
  thread_roots_for_each(self, &scan);
  struct stack_ranges ranges = {0};
  thread_stack_ranges(self, s->self_from, s->self_from, &ranges);
  for (unsigned i = 0; i < ranges.count; i++)
    visit_thread_range(ranges.range[i].lo, ranges.range[i].hi, THREAD_ROOT_MEMORY, s);
}

/* With the collector's locks held, the loaded objects' list held still
 * (roots/roots.h): stops the world, searches, restarts it. */
static void search_stopped(void *arg) {
  struct search *s = arg;
  struct sgc_thread *self = sgc_self;
  stop_world();
  if (finalize_queue_holds(s->dest, s->dest_end)) found(s, GC_FINALIZER_REFD, 0);
  if (s->kind == GC_UNREFERENCED) roots_for_each_range(visit_root_range, s);
  if (s->kind == GC_UNREFERENCED) heap_for_each_marked_object(scan_object, s);
  if (s->kind == GC_UNREFERENCED) scan_threads(s, self);
  if (s->kind == GC_UNREFERENCED && finalize_client_data_holds(s->dest, s->dest_end))
    found(s, GC_FINALIZER_REFD, 0);
  start_world();
}

/* The heap object starting at or holding A, with its size, or 0. */
static uintptr_t object_holding(uintptr_t a, struct page_header **page, size_t *bytes) {
  uintptr_t base = object_start_rule(a, page, true);
  if (base) *bytes = object_size(*page);
  return base;
}

GC_ref_kind backptr_find(void *dest, const uintptr_t *avoid, unsigned avoid_count,
                         uintptr_t self_from, void **base_p, size_t *offset_p) {
  sgc_ensure_init();
  thread_self_or_register();
  struct search s = {.avoid = avoid, .avoid_count = avoid_count, .self_from = self_from,
                     .kind = GC_UNREFERENCED};
  GC_ref_kind answer = GC_NO_SPACE;
  collector_locks_take();
  struct page_header *page;
  size_t bytes = 0;
  struct debug_object d;
  uintptr_t base = object_holding((uintptr_t)dest, &page, &bytes);
  if (!base || !mark_bit_test_held(page, base) || !debug_object_view(base, bytes, &d)) {
    /* Not a live debugging object: bdwgc's GC_NO_SPACE, or (a debugging
     * object found unreachable and not yet reused) never marked. */
    answer = base && debug_object_view(base, bytes, &d) ? GC_UNREFERENCED : GC_NO_SPACE;
  } else if (!d.survived) {
    answer = GC_UNREFERENCED; /* allocated since the last collection */
  } else {
    s.dest = base;
    s.dest_end = base + bytes;
    roots_snapshot_static_then(search_stopped, &s);
    answer = s.kind;
  }
  uintptr_t ref_base = 0;
  size_t ref_bytes = 0;
  struct debug_object ref;
  if (answer == GC_REFD_FROM_HEAP) {
    ref_base = object_holding(s.where, &page, &ref_bytes);
    /* A debugging referrer is named by the program's pointer, as bdwgc does. */
    if (debug_object_view(ref_base, ref_bytes, &ref) && s.where >= (uintptr_t)ref.user)
      ref_base = (uintptr_t)ref.user;
  }
  collector_locks_release();
  thread_stacks_warn();
  if (answer == GC_REFD_FROM_HEAP) {
    *base_p = (void *)ref_base;
    *offset_p = s.where - ref_base;
  } else if (answer == GC_REFD_FROM_ROOT) {
    *base_p = (void *)s.where;
    *offset_p = 0;
  }
  return answer;
}

/* The frame above this one is the caller's: the calling thread's stack is
 * read from there, so this call's own copies of DEST do not count. */
GC_API SGC_NOINLINE GC_ref_kind GC_get_back_ptr_info(void *dest, void **base_p, size_t *offset_p) {
  void *base = NULL;
  size_t offset = 0;
  GC_ref_kind kind =
      backptr_find(dest, NULL, 0, (uintptr_t)__builtin_frame_address(0), &base, &offset);
  if (kind == GC_REFD_FROM_HEAP || kind == GC_REFD_FROM_ROOT) {
    if (base_p) *base_p = base;
    if (offset_p) *offset_p = offset;
  }
  return kind;
}

/* ---- GC_print_backtrace ---- */

/* The object holding P in bdwgc's words: a debugging object as its
 * header says, any other by address and size (GC_print_heap_obj). */
static void print_object(void *p) {
  void *base = GC_base(p);
  if (!base) {
    GC_err_printf("%p is not a heap object\n", p);
    return;
  }
  struct debug_object d;
  collector_locks_take();
  struct page_header *page;
  size_t bytes = 0;
  uintptr_t start = object_holding((uintptr_t)base, &page, &bytes);
  bool debug = start && debug_object_view(start, bytes, &d);
  bool atomic = start && (page->kind == KIND_ATOMIC || page->kind == KIND_ATOMIC_UNCOLLECTABLE);
  collector_locks_release();
  if (debug) debug_print_object(&d);
  else
    GC_err_printf("object at %p of appr. %lu bytes (%s)\n", base, (unsigned long)bytes,
                  atomic ? "atomic" : "composite");
}

/* A chain longer than this is cut (bdwgc's chains end at a root; a query
 * at a time can only avoid the objects already in it). */
enum { CHAIN_MAX = 256 };

GC_API SGC_NOINLINE void GC_print_backtrace(void *p) {
  uintptr_t from = (uintptr_t)__builtin_frame_address(0);
  uintptr_t chain[CHAIN_MAX];
  void *current = p;
  print_object(p);
  for (unsigned level = 0;; level++) {
    void *base = NULL;
    size_t offset = 0;
    chain[level] = (uintptr_t)GC_base(current);
    GC_ref_kind kind = backptr_find(current, chain, level + 1, from, &base, &offset);
    switch (kind) {
    case GC_UNREFERENCED: GC_err_printf("Reference could not be found\n"); return;
    case GC_NO_SPACE: GC_err_printf("No debug info in object: Can't find reference\n"); return;
    case GC_REFD_FROM_ROOT:
      GC_err_printf("Reachable via %u levels of pointers from root at %p\n\n", level, base);
      return;
    case GC_REFD_FROM_REG:
      GC_err_printf("Reachable via %u levels of pointers from root in register\n\n", level);
      return;
    case GC_FINALIZER_REFD:
      GC_err_printf("Reachable via %u levels of pointers from list of finalizable objects\n\n",
                    level);
      return;
    case GC_REFD_FROM_HEAP:
      GC_err_printf("Reachable via %u levels of pointers from offset %ld in object:\n", level,
                    (long)offset);
      print_object(base);
      break;
    }
    if (level + 1 == CHAIN_MAX) {
      GC_err_printf("(chain longer than %d objects: not followed further)\n", CHAIN_MAX);
      return;
    }
    current = base;
  }
}

void backptr_after_collection(void) {
  unsigned n = sgc_settings.backtraces;
  if (!n) return;
  /* Relaxed: a counter that only says whether this collection's turn was
   * taken. */
  static _Atomic GC_word printed_for;
  GC_word gc_no = GC_get_gc_no(), last = atomic_load_explicit(&printed_for, memory_order_relaxed);
  if (gc_no == last ||
      !atomic_compare_exchange_strong_explicit(&printed_for, &last, gc_no, memory_order_relaxed,
                                               memory_order_relaxed))
    return;
  for (unsigned i = 0; i < n; i++) {
    void *p = GC_generate_random_valid_address();
    if (!p) return;
    GC_printf("\n****Chosen address %p in object\n", p);
    GC_print_backtrace(p);
  }
}
