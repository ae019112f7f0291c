/* bdwgc's debugging calls: the pointer checks and their print procedures,
 * heap dumps and walks, and the calls of its incremental and timing
 * machinery that have a plain answer in sgc. */
#include <stdio.h>

#include "barrier/barrier.h"
#include "alloc/alloc.h"
#include "alloc/page_path.h"
#include "collect/collect.h"
#include "common.h"
#include "gc/gc_inline.h"
#include "gc/gc_mark.h"
#include "heap/heap.h"
#include "heap/layout.h"
#include "mark/custom_kind.h"
#include "roots/roots.h"
#include "threads/thread.h"


static volatile GC_word noop_sink;
GC_API void GC_noop1(GC_word x) { noop_sink = x; }
GC_API void *GC_clear_stack(void *p) { return p; }

/* ---- pointer checks ---- */

static void default_same_obj_print(void *p, void *q) {
  sgc_fatal("GC_same_obj(%p, %p): not in the same object", p, q);
}
static void default_displacement_print(void *p) {
  sgc_fatal("GC_is_valid_displacement(%p): points into the heap but not at an object or a "
            "registered displacement of one",
            p);
}
static void default_visible_print(void *p) {
  sgc_fatal("GC_is_visible(%p): not on this thread's stack, in a root or in a scanned object", p);
}

/* bdwgc's variables, which a program may point at its own reporters. */
SGC_EXPORT void (*GC_same_obj_print_proc)(void *, void *) = default_same_obj_print;
SGC_EXPORT void (*GC_is_valid_displacement_print_proc)(void *) = default_displacement_print;
SGC_EXPORT void (*GC_is_visible_print_proc)(void *) = default_visible_print;

GC_API void *GC_same_obj(void *p, void *q) {
  void *base = GC_base(p);
  if (base && GC_base(q) != base) GC_same_obj_print_proc(p, q);
  return p;
}
GC_API void *GC_pre_incr(void **p, ptrdiff_t by) { return *p = (char *)*p + by; }
GC_API void *GC_post_incr(void **p, ptrdiff_t by) {
  void *old = *p;
  *p = (char *)old + by;
  return old;
}

/* A pointer into the heap must keep its object alive by the marking
 * rule in force (interior pointers, or registered displacements). */
GC_API void *GC_is_valid_displacement(void *p) {
  struct page_header *page;
  if (heap_holds((uintptr_t)p) && !object_start((uintptr_t)p, &page))
    GC_is_valid_displacement_print_proc(p);
  return p;
}

/* Whether the collector would read a pointer stored at P: on the calling
 * thread's stack, inside a scanned object, or in a root range. */
GC_API void *GC_is_visible(void *p) {
  uintptr_t a = (uintptr_t)p;
  struct sgc_thread *self = sgc_self;
  if (self && a >= (uintptr_t)__builtin_frame_address(0) && a < thread_stack_end(self)) return p;
  struct page_header *page;
  if (heap_holds(a)) {
    uintptr_t base = object_start_rule(a, &page, true);
    if (base && page->kind != KIND_ATOMIC && page->kind != KIND_ATOMIC_UNCOLLECTABLE) return p;
  } else {
    sgc_ensure_init();
    heap_lock_acquire();
    bool root = roots_hold(a, false);
    pthread_mutex_unlock(&heap_lock);
    if (root) return p;
  }
  GC_is_visible_print_proc(p);
  return p;
}

/* ---- object descriptions for the dumps ---- */

enum { DESCRIBED_KINDS = 256 };
static _Atomic(GC_describe_type_fn) describe_fns[DESCRIBED_KINDS];

/* bdwgc numbers NORMAL 1 and PTRFREE 0, sgc the other way round; the
 * other kinds share their numbers. */
static int bdwgc_kind_number(unsigned sgc_kind) {
  if (sgc_kind == KIND_NORMAL) return GC_I_NORMAL;
  if (sgc_kind == KIND_ATOMIC) return GC_I_PTRFREE;
  return (int)sgc_kind;
}

GC_API void GC_register_describe_type_fn(int kind, GC_describe_type_fn fn) {
  if (kind < 0 || kind >= DESCRIBED_KINDS)
    sgc_fatal("GC_register_describe_type_fn: no such object kind %d", kind);
  atomic_store_explicit(&describe_fns[kind], fn, memory_order_relaxed);
}

void describe_object(void *obj, char out[GC_TYPE_DESCR_LEN + 1]) {
  struct page_header *page;
  uintptr_t base = object_start_rule((uintptr_t)obj, &page, true);
  out[0] = 0;
  if (!base) return;
  int kind = bdwgc_kind_number(page->kind);
  GC_describe_type_fn fn =
      kind < DESCRIBED_KINDS ? atomic_load_explicit(&describe_fns[kind], memory_order_relaxed) : NULL;
  if (fn) {
    fn((void *)base, out);
    out[GC_TYPE_DESCR_LEN] = 0;
  } else {
    snprintf(out, GC_TYPE_DESCR_LEN + 1, "kind %d, %zu bytes", kind, object_size(page));
  }
}

/* ---- heap walks and dumps ---- */

static const char *page_state_name(uint8_t state) {
  switch (state) {
  case PAGE_FREE: return "free";
  case PAGE_SMALL: return "small objects";
  case PAGE_LARGE_HEAD: return "large object";
  case PAGE_RESERVED: return "free, in a thread's page store";
  default: return "large object tail";
  }
}

GC_API void GC_dump_regions(void) {
  sgc_ensure_init();
  collector_locks_take();
  FOR_EACH_CHUNK(c) {
    fprintf(stderr, "sgc: chunk %#lx-%#lx, %zu pages\n", (unsigned long)c->base,
            (unsigned long)(c->base + (c->page_count << PAGE_SHIFT)), c->page_count);
    /* One line per run of pages alike (state, kind and object size). */
    size_t run_start = 0, run_pages = 0;
    uint8_t run_state = 0, run_kind = 0;
    size_t run_size = 0;
    for (size_t i = 0; i <= c->page_count;) {
      struct page_header *p = i < c->page_count ? &c->pages[i] : NULL;
      uint8_t state = p ? atomic_load_explicit(&p->state, memory_order_relaxed) : 0xff;
      size_t size = p && (state == PAGE_SMALL || state == PAGE_LARGE_HEAD) ? object_size(p) : 0;
      uint8_t kind = p && size ? p->kind : 0;
      bool same = run_pages && p && state == run_state && kind == run_kind && size == run_size &&
                  state != PAGE_LARGE_HEAD;
      if (!same && run_pages) {
        fprintf(stderr, "sgc:   %#lx %6zu pages %s", (unsigned long)(c->base + (run_start << PAGE_SHIFT)),
                run_pages, page_state_name(run_state));
        if (run_size) fprintf(stderr, " (kind %d, %zu bytes)", bdwgc_kind_number(run_kind), run_size);
        fputc('\n', stderr);
        run_pages = 0;
      }
      if (!p) break;
      size_t step = page_walk_step(p, state);
      if (!run_pages) {
        run_start = i;
        run_state = state;
        run_kind = kind;
        run_size = size;
      }
      run_pages += step;
      i += step;
    }
  }
  collector_locks_release();
}

struct reachable_call {
  GC_reachable_object_proc proc;
  void *client_data;
};

static bool report_reachable(struct page_header *page, uintptr_t base, size_t bytes, void *arg) {
  (void)page;
  struct reachable_call *call = arg;
  call->proc((void *)base, bytes, call->client_data);
  return false;
}

/* Heap lock held by the caller: the pages' states and marks are those of
 * the last collection (a page op or a refill on the page path may be
 * turning a free page into a small one meanwhile; they are waited for and
 * kept out while the walk runs). */
GC_API void GC_enumerate_reachable_objects_inner(GC_reachable_object_proc proc, void *client_data) {
  page_ops_wait();
  lock_counted(&registry_lock);
  page_path_close();
  struct reachable_call call = {proc, client_data};
  heap_for_each_marked_object(report_reachable, &call);
  page_path_open();
  pthread_mutex_unlock(&registry_lock);
}

GC_API void GC_print_free_list(int kind, size_t granules) {
  struct sgc_thread *t = sgc_self;
  unsigned sgc_kind = kind == GC_I_NORMAL ? KIND_NORMAL : KIND_ATOMIC;
  if (kind != GC_I_NORMAL && kind != GC_I_PTRFREE)
    sgc_fatal("GC_print_free_list(%d, %zu): sgc keeps thread free lists of GC_I_NORMAL and "
              "GC_I_PTRFREE only",
              kind, granules);
  if (granules == 0 || granules > MAX_SMALL_GRANULES) {
    fprintf(stderr, "sgc: no free list of %zu granules\n", granules);
    return;
  }
  unsigned cls = size_class_of_granules[granules];
  size_t count = 0;
  fprintf(stderr, "sgc: free list of kind %d, %u-byte objects:", kind, size_class_bytes[cls]);
  for (void *p = t ? t->alloc.free_lists[sgc_kind][cls] : NULL; p; p = *(void **)p, count++)
    if (count < 64) fprintf(stderr, " %p", p);
  fprintf(stderr, "%s (%zu objects)\n", count > 64 ? " ..." : "", count);
}

/* ---- incremental mode and timing ---- */

/* Only the mprotect barrier write-protects the heap (while a cycle is
 * armed); sgc's concurrent mode protects neither stacks nor static data. */
GC_API int GC_incremental_protection_needs(void) {
  return sgc_settings.concurrent && barrier_in_use() == BARRIER_MPROTECT ? GC_PROTECTS_POINTER_HEAP
                                                                        : GC_PROTECTS_NONE;
}
GC_API void GC_start_performance_measurement(void) {}
GC_API void GC_push_finalizer_structures(void) {}
