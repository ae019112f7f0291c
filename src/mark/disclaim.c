/* bdwgc's disclaim API (gc/gc_disclaim.h): per-kind procedures called on
 * objects a collection is about to reclaim, the "mark from all" marking
 * that keeps their referents until then, and GC_finalized_malloc, a
 * finalization built on them.  The collector's side of the hooks is
 * described in mark/disclaim.h; the semantics follow bdwgc 8.2's
 * header (/usr/include/gc/gc_disclaim.h) and, for what counts as an
 * object in use when marking from all, the rule bdwgc's marker states
 * (a first word with one of its two low bits set). */
#include "mark/disclaim.h"

#include <string.h>

#include "alloc/alloc.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "gc/gc_disclaim.h"
#include "gc/gc_mark.h"
#include "mark/custom_kind.h"
#include "mark/mark.h"
#include "os/os.h"

enum { KIND_LIMIT = KIND_COUNT + CUSTOM_KIND_MAX };
_Static_assert(KIND_LIMIT <= 32, "a kind's bit must fit the 32-bit masks");

_Atomic uint32_t disclaim_kinds, disclaim_from_all_kinds;
/* Each kind's procedure, set and read as the masks are (collect/
 * disclaim.h): written under heap_lock, read by collections, whose GC
 * threads do not take the lock themselves, so it is an atomic to keep
 * every access race-free; relaxed, the lock and the GC threads' start
 * order them. */
static _Atomic(GC_disclaim_proc) procs[KIND_LIMIT];
/* Serialises the procedures' calls: the parallel sweep would otherwise
 * run them on several GC threads at once, where bdwgc runs them one at a
 * time under its allocation lock, and programs count on that.  Taken
 * once a page; innermost of sgc's locks (procedures take none of them). */
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;

/* bdwgc numbers its predefined kinds PTRFREE 0, NORMAL 1, UNCOLLECTABLE 2
 * and AUNCOLLECTABLE 3 (gc_mark.h), sgc NORMAL 0 and ATOMIC 1 (heap/
 * layout.h); the program's own kinds have the same numbers in both. */
static unsigned sgc_kind_of(int kind) {
  static const unsigned predefined[KIND_COUNT] = {KIND_ATOMIC, KIND_NORMAL, KIND_UNCOLLECTABLE,
                                                  KIND_ATOMIC_UNCOLLECTABLE};
  if (kind >= 0 && kind < KIND_COUNT) return predefined[kind];
  if (custom_kind_valid(kind)) return (unsigned)kind;
  sgc_fatal("GC_register_disclaim_proc: no object kind %d (GC_new_kind did not return it)", kind);
}

GC_API void GC_register_disclaim_proc(int kind, GC_disclaim_proc proc, int mark_from_all) {
  unsigned k = sgc_kind_of(kind);
  uint32_t bit = (uint32_t)1 << k;
  sgc_ensure_init();
  heap_lock_acquire();
  atomic_store_explicit(&procs[k], proc, memory_order_relaxed);
  atomic_fetch_or_explicit(&disclaim_kinds, bit, memory_order_relaxed);
  if (mark_from_all) atomic_fetch_or_explicit(&disclaim_from_all_kinds, bit, memory_order_relaxed);
  else atomic_fetch_and_explicit(&disclaim_from_all_kinds, ~bit, memory_order_relaxed);
  pthread_mutex_unlock(&heap_lock);
}

/* ---- sweeping ---- */

static void disclaim_page(struct page_header *page) {
  GC_disclaim_proc proc = atomic_load_explicit(&procs[page->kind], memory_order_relaxed);
  if (atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_LARGE_HEAD) {
    if (mark_bit_test(page, page->start)) return;
    pthread_mutex_lock(&call_lock);
    bool keep = proc((void *)page->start) != 0;
    pthread_mutex_unlock(&call_lock);
    /* Kept: marked, the sweep leaves it; else the caller frees it whole. */
    if (keep) mark_bit_set(page, page->start);
    return;
  }
  if (page_marked_count(page) == page->capacity) return; /* all live: no call */
  size_t size = (size_t)page->object_granules << GRANULE_SHIFT;
  pthread_mutex_lock(&call_lock);
  for (unsigned i = 0; i < page->capacity; i++) {
    uintptr_t obj = page->start + i * size;
    if (mark_bit_test(page, obj)) continue;
    if (proc((void *)obj)) mark_bit_set(page, obj);
    else memset((void *)obj, 0, size);
  }
  pthread_mutex_unlock(&call_lock);
}

/* A page worth handing to disclaim_page: in use, of a collectable kind
 * with a procedure. */
static bool disclaims(const struct page_header *p, uint8_t state, uint32_t kinds) {
  return (state == PAGE_SMALL || state == PAGE_LARGE_HEAD) && disclaim_kind_in(kinds, p->kind) &&
         kind_is_collectable(p->kind);
}

void disclaim_pages(struct chunk *c, size_t first, size_t count) {
  uint32_t kinds = disclaim_kinds_now();
  for (size_t i = first, step; i < first + count; i += step) {
    struct page_header *p = &c->pages[i];
    uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
    step = page_walk_step(p, state); /* free spans and large objects whole */
    if (disclaims(p, state, kinds)) disclaim_page(p);
  }
}

/* ---- marking from all ---- */

/* Pages noted by this collection's mark_begin: a table of sgc's own
 * (os_alloc: the world may be about to stop, and malloc's lock could be
 * held by a thread it stops), kept from one collection to the next. */
static struct page_header **noted;
static size_t noted_count, noted_capacity;

static void note_page(struct page_header *page) {
  if (noted_count == noted_capacity) {
    noted = os_grow_array(noted, noted_count, &noted_capacity, sizeof *noted, 512);
    if (!noted) sgc_fatal("out of memory for the pages of kinds marked from all (gc_disclaim.h)");
  }
  noted[noted_count++] = page;
}

void disclaim_note_pages(void) {
  noted_count = 0;
  uint32_t kinds = disclaim_from_all_kinds_now();
  if (likely(kinds == 0)) return;
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0, step; i < c->page_count; i += step) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      step = page_walk_step(p, state);
      if (disclaims(p, state, kinds)) note_page(p);
    }
  }
}

/* OBJ of PAGE: unreached by the drain, yet in use by bdwgc's rule. */
static bool pushes(struct page_header *page, uintptr_t obj) {
  return !mark_bit_test(page, obj) && (*(const uintptr_t *)obj & 3) != 0;
}

/* After the drain rather than before it: objects reached by then are
 * marked and scanned already, so only the unreachable ones are scanned
 * here, and each once (pushing all of them first would scan every
 * reachable one twice). */
bool disclaim_push_unreached(void) {
  bool pushed = false;
  for (size_t n = 0; n < noted_count; n++) {
    struct page_header *page = noted[n];
    if (atomic_load_explicit(&page->state, memory_order_relaxed) == PAGE_LARGE_HEAD) {
      if (pushes(page, page->start)) {
        mark_push_contents(page, page->start);
        pushed = true;
      }
      continue;
    }
    size_t size = (size_t)page->object_granules << GRANULE_SHIFT;
    for (unsigned i = 0; i < page->capacity; i++) {
      uintptr_t obj = page->start + i * size;
      if (!pushes(page, obj)) continue;
      mark_push_contents(page, obj);
      pushed = true;
    }
  }
  noted_count = 0; /* once a collection */
  return pushed;
}

/* ---- GC_finalized_malloc ---- */

/* The object's hidden first word holds its closure's address with this
 * bit set: an object in use to disclaim_push_unreached (bdwgc's rule), and
 * to finalized_disclaim, where a free object has zero or a link there. */
enum { CLOSURE_TAG = 1 };

/* 0 until made (no custom kind is 0): read before pthread_once, which
 * would cost a call on every allocation.  acquire pairs with the release
 * that publishes it after its procedure is registered. */
static _Atomic unsigned finalized_kind;
static pthread_once_t finalized_once = PTHREAD_ONCE_INIT;

/* Runs the closure of a finalized object found unreachable, once: the
 * tag is cleared first, and disclaim_page clears the whole object after
 * this returns 0, so the same memory never names the closure again. */
static int finalized_disclaim(void *obj) {
  GC_word *word = obj;
  GC_word tagged = word[0];
  if (!(tagged & CLOSURE_TAG)) return 0; /* a free object */
  word[0] = 0;
  const struct GC_finalizer_closure *fc = (const void *)(tagged & ~(GC_word)CLOSURE_TAG);
  fc->proc(word + 1, fc->cd);
  return 0;
}

static void make_finalized_kind(void) {
  /* Without interior pointers the program holds the object one word in,
   * and the object holds its closure one byte in: both offsets must keep
   * their targets alive (bdwgc registers the same two). */
  GC_register_displacement(sizeof(GC_word));
  GC_register_displacement(CLOSURE_TAG);
  /* Scanned whole (a length of 0 plus the object's size), cleared. */
  unsigned kind = GC_new_kind(GC_new_free_list(), 0 | GC_DS_LENGTH, 1, 1);
  GC_register_disclaim_proc((int)kind, finalized_disclaim, 1);
  atomic_store_explicit(&finalized_kind, kind, memory_order_release);
}

GC_API void GC_init_finalized_malloc(void) { pthread_once(&finalized_once, make_finalized_kind); }

GC_API void *GC_finalized_malloc(size_t bytes, const struct GC_finalizer_closure *fc) {
  unsigned kind = atomic_load_explicit(&finalized_kind, memory_order_acquire);
  if (unlikely(kind == 0)) {
    GC_init_finalized_malloc();
    kind = atomic_load_explicit(&finalized_kind, memory_order_acquire);
  }
  if (bytes > SIZE_MAX - sizeof(GC_word)) return sgc_out_of_memory(SIZE_MAX);
  GC_word *obj = custom_allocate(request_bytes(bytes + sizeof(GC_word)), kind);
  if (!obj) return NULL;
  /* A plain store: the object is this thread's until it drops it, and a
   * collection that could find it unreachable first stops this thread
   * (a full barrier) before its sweep reads the word. */
  obj[0] = (GC_word)fc | CLOSURE_TAG;
  return obj + 1;
}
