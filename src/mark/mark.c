/* The mark loop: conservative scanning, mark bits, the prefetch window and
 * large-object splitting (thesis §3.4.3, SLO). */
#include "mark/mark.h"

#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "heap/blacklist.h"
#include "mark/disclaim.h"
#include "mark/predict_model.h"
#include "common.h"
#include "mark/custom_kind.h"
#include "heap/placement.h"
#include "os/os.h"
#include "os/scan_read.h"

enum {
  /* Ranges are prefetched when popped and scanned this many pops later,
   * so the cache miss on an object's first line overlaps other work.
   * 16 rather than 8 since neighbours in one line share a prefetch:
   * gcbench with one GC thread marks 11% faster (SGC_MARKERS=1 tools/dev/ab.sh
   * -t -f mark_ns ... bench-gcbench-sgc -t 1: 61.4 -> 54.4 ms), a wide
   * heap 2%; 32 made cky mark slower. */
  PREFETCH_DEPTH = 16,
  /* SLO's pieces where several GC threads mark.  The thesis splits at
   * 256 bytes (§3.4.3); here, with the watermark deque, two GC threads
   * kept 0.81-0.84 of what two processes mark at 256 and 0.91-0.95 at
   * 1 KiB on a wide heap, and their in-run speed-up over one rose 0.2-25%
   * on every program (history.md, "SLO's pieces at 1 KiB"). */
  DEFAULT_SPLIT_BYTES = 1024,
  /* A marker alone halves a long range only down to this: SLO's pieces
   * are there to be stolen, and each costs a push, a pop and a pass
   * through the prefetch window.  A tiny heap's collection marks ~75 KB
   * of root segments (libc's data among them) and a few KB of objects;
   * its pauses were 0.87-0.89 of 256-byte pieces' with 4 KiB pieces or
   * none (SGC_MARKERS=1 tools/analysis/trace_medians.py -n 21 -b SGC_SPLIT_BYTES=...
   * bench-markshape-sgc -s tiny -c 200), and gcbench's and bh-pt's mark
   * rates 1.021 and 0.992 (history.md, "Lone markers split at 4 KiB").
   * Not unbounded: a 4 KiB piece pushes at most 512 referents, so a
   * huge array never needs a stack of all its referents at once
   * (unit_lone_split). */
  LONE_SPLIT_BYTES = 4096,
};

/* The slow predictor models these (tools/predict/graph.c). */
_Static_assert((int)PREFETCH_DEPTH == (int)PREDICT_PREFETCH_DEPTH, "predict_model.h's prefetch depth");
_Static_assert((int)LONE_SPLIT_BYTES == (int)PREDICT_LONE_SPLIT_BYTES, "predict_model.h's lone split");

struct mark_config mark_config;
_Atomic bool mark_concurrently;
_Atomic int mark_yield_request;
static struct marker collector_marker;
struct marker *mark_collector = &collector_marker;

static const struct env_word variant_words[] = {
    {"opt", MARK_OPT},       {"simple", MARK_SIMPLE}, {"noopt", MARK_NOOPT},
    {"no-opt", MARK_NOOPT},  {"no-slo", MARK_NO_SLO}, {"no-nsb", MARK_NO_NSB},
    {"no-bmb", MARK_NO_BMB},
};
static const struct env_word deque_words[] = {
    {"watermark", DEQUE_WATERMARK}, {"chase-lev", DEQUE_CHASE_LEV}};
static const struct env_word set_words[] = {{"store", 1}, {"exchange", 0}};

static void configure(void) {
  enum mark_variant variant = (enum mark_variant)env_choice(
      "SGC_MARK_VARIANT", variant_words, ENV_WORDS_COUNT(variant_words), MARK_OPT);
  /* 0 turns splitting off (the No-SLO variant's rule for every range);
   * pieces shorter than a line would only add stack traffic. */
  size_t split = (size_t)env_long_in("SGC_SPLIT_BYTES", DEFAULT_SPLIT_BYTES, 0, 1L << 30);
  if (split && split < 64) {
    sgc_warn("SGC_SPLIT_BYTES=%zu is below 64; using 64", split);
    split = 64;
  }
  mark_config.deque = (enum mark_deque)env_choice("SGC_MARK_DEQUE", deque_words,
                                                  ENV_WORDS_COUNT(deque_words), DEQUE_WATERMARK);
  mark_config.plain_mark_store =
      env_choice("SGC_MARK_SET", set_words, ENV_WORDS_COUNT(set_words), 1) != 0;
  /* Simple deals roots out of the stack array and never steals. */
  if (variant == MARK_SIMPLE) mark_config.deque = DEQUE_WATERMARK;
  mark_config.variant = variant;
  mark_config.split_bytes = split;
  /* At least a page of entries: the stack is a mapping of its own. */
  mark_config.stack_limit = (size_t)env_long_in("SGC_MARK_STACK_LIMIT", 0, 0, 1L << 40);
  if (mark_config.stack_limit && mark_config.stack_limit < 256) {
    sgc_warn("SGC_MARK_STACK_LIMIT=%zu is below 256; using 256", mark_config.stack_limit);
    mark_config.stack_limit = 256;
  }
  blacklist_enabled = env_long_in("SGC_BLACKLIST", 1, 0, 1) != 0;
  mark_config.optimistic_bits = true;
  mark_config.balance = true;
  mark_config.nsb = true;
  switch (variant) {
  case MARK_SIMPLE: mark_config.balance = false; break;
  case MARK_NOOPT:
    mark_config.split_bytes = 0;
    mark_config.optimistic_bits = false;
    mark_config.nsb = false;
    break;
  case MARK_NO_SLO: mark_config.split_bytes = 0; break;
  case MARK_NO_NSB: mark_config.nsb = false; break;
  case MARK_NO_BMB: numa_bmb = false; break; /* read by the heap's placement (heap/placement.c) */
  case MARK_OPT: break;
  }
}

void mark_init(void) {
  configure();
  if (!marker_init(&collector_marker, 0)) sgc_fatal("cannot allocate a mark stack");
  parallel_mark_init();
}

/* The page walk of mark_begin: queues the uncollectable objects and
 * clears collectable pages' marks. */
static void walk_pages(void) {
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0, step; i < c->page_count; i += step) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      step = page_walk_step(p, state);
      if (state == PAGE_FREE) continue;
      bool in_use = state == PAGE_SMALL || state == PAGE_LARGE_HEAD;
      if (!in_use || kind_is_collectable(p->kind)) {
        page_clear_marks(p);
        continue;
      }
      if (p->kind != KIND_UNCOLLECTABLE) continue; /* atomic: nothing to scan */
      if (state == PAGE_LARGE_HEAD) {
        if (mark_bit_test(p, p->start)) mark_push_range(p->start, p->start + p->object_bytes);
        continue;
      }
      size_t size = (size_t)p->object_granules << GRANULE_SHIFT;
      for (unsigned j = 0; j < p->capacity; j++) {
        uintptr_t obj = p->start + j * size;
        if (mark_bit_test(p, obj)) mark_push_range(obj, obj + size);
      }
    }
  }
}

void mark_begin(void) {
  /* Roots are marked by the collector alone, under the rule a drain by
   * several GC threads uses (the variant's and SGC_MARK_SET's), chosen
   * at every collection because tests change those in between. */
  mark_configure_drain(false);
  blacklist_collection_start();
  for (unsigned i = 0; i < parallel_markers_created(); i++) {
    struct marker *m = parallel_marker(i);
    /* Every stack is empty between collections: restart at the bottom. */
    cl_reset(m);
    SGC_ASSERT(marker_empty(m));
    m->top = 0;
    marker_trim(m);
    atomic_store_explicit(&m->bottom, 0, memory_order_relaxed);
    atomic_store_explicit(&m->watermark, 0, memory_order_relaxed);
    m->marked_bytes = m->marked_objects = m->marked_atomic_bytes = 0;
    atomic_store_explicit(&m->progress, 0, memory_order_relaxed);
    m->steal_attempts = m->steal_successes = 0;
    m->busy_ns = m->idle_ns = m->cpu_ns = m->join_ns = 0;
    m->prewoken = false;
    if (numa_counting) memset(m->node_scanned_bytes, 0, sizeof m->node_scanned_bytes);
  }
  /* One walk over the page headers: collectable pages lose their marks;
   * uncollectable objects keep theirs (the bit means "allocated") and are
   * roots, queued here.  Free spans and large objects' tail pages are
   * stepped over whole (page_walk_step), as the sweeps do: pages in the
   * pool carry no marks (page_pool_put clears them) and a tail's are never
   * set, so the walk costs the pages in use rather than the heap (a 1 GiB
   * heap holding a few hundred KB: 1.15 ms a collection before). */
  walk_pages();
  /* Kinds marked from all (gc_disclaim.h): their pages, whose unreached
   * objects are scanned after the drain, found by a walk of their own,
   * so the one above costs nothing more when no program made one. */
  disclaim_note_pages();
  custom_kind_publish_heap_bounds(atomic_load_explicit(&heap_lowest, memory_order_relaxed),
                                  atomic_load_explicit(&heap_highest, memory_order_relaxed));
}

static inline bool kind_is_scanned(unsigned kind) {
  return kind == KIND_NORMAL || kind == KIND_UNCOLLECTABLE;
}

void mark_configure_drain(bool single_marker) {
  if (!mark_config.optimistic_bits) mark_config.set_rule = MARK_SET_EXCHANGE;
  else if (single_marker || mark_config.plain_mark_store) mark_config.set_rule = MARK_SET_READ_STORE;
  else mark_config.set_rule = MARK_SET_READ_EXCHANGE;
  mark_config.custom_set_rule = mark_config.set_rule == MARK_SET_READ_STORE && !single_marker
                                    ? MARK_SET_READ_EXCHANGE
                                    : mark_config.set_rule;
  mark_config.share = mark_config.balance && !single_marker;
  size_t split = mark_config.split_bytes, lone = LONE_SPLIT_BYTES;
  /* Under SGC_MARK_STACK_LIMIT a lone piece's referents fill at most half
   * the stack, so the larger pieces alone never make it overflow (and
   * rescan the heap) where the shared pieces would not. */
  size_t limit = mark_config.stack_limit;
  if (limit && limit * sizeof(uintptr_t) / 2 < lone) lone = limit * sizeof(uintptr_t) / 2;
  /* No-SLO and No-Opt (0) never split, alone or not. */
  mark_config.drain_split_bytes = single_marker && split && split < lone ? lone : split;
}

/* Sets mark byte M (an object's); true when the caller is to scan
 * the object.  The No-Opt variant always does the atomic exchange (thesis: no
 * optimistic read); the others read first (thesis §3.4.3) and, when the
 * mark is clear, set it with a plain store (SGC_MARK_SET=store, the
 * default, and always with one marker) or the exchange (=exchange).  A
 * plain store takes no lock, so the loads after it (the next candidates'
 * headers, a list's next node) are not held back until it completes: a
 * locked operation forced on one GC thread cost it 13% of its gcbench
 * mark rate (history.md, "Mark bytes set by a plain store").  Two GC
 * threads may then both find a mark clear and both scan the object; that
 * scan finds its referents marked, so it only repeats work, and the
 * object's bytes count twice in the marked totals.  RULE is
 * mark_config.set_rule, which the drain loop reads once: a global read per
 * candidate would be reloaded after every store. */
__attribute__((always_inline)) static inline bool set_mark(_Atomic uint8_t *m,
                                                           enum mark_set_rule rule) {
  if (likely(rule == MARK_SET_READ_STORE)) {
    if (atomic_load_explicit(m, memory_order_relaxed)) return false;
    atomic_store_explicit(m, 1, memory_order_relaxed);
    return true;
  }
  if (rule == MARK_SET_EXCHANGE) return atomic_exchange_explicit(m, 1, memory_order_relaxed) == 0;
  return mark_byte_set(m); /* MARK_SET_READ_EXCHANGE */
}

/* A one-entry cache of the last page looked up: the page-map walk is a
 * chain of dependent loads, and consecutive pointers often land in the
 * same page (84% of cube's candidates, 58% of gcbench's, 2% of cky's).
 * A cache of the last 4 MiB map slot hits more but unpredictably, and its
 * mispredicted branches made marking 14% slower (history.md). */
struct page_cache {
  uintptr_t address; /* page address, or 1 for none */
  struct page_header *page;
};

/* The owner's view of its stack, kept in locals by the drain loop so that
 * pushes and pops do not go through memory (with -fno-strict-aliasing any
 * store could alias the struct).  Only the owner writes top, entries,
 * capacity and the watermark, so the view is exact; it is written back
 * before every call that looks at the marker. */
struct owner_view {
  struct mark_range *entries;
  size_t top, capacity, watermark;
  bool chase_lev; /* SGC_MARK_DEQUE=chase-lev: no view, the deque's calls */
};

static inline void view_load(struct owner_view *v, struct marker *m) {
  v->chase_lev = mark_config.deque == DEQUE_CHASE_LEV;
  v->entries = m->entries;
  v->top = m->top;
  v->capacity = m->capacity;
  v->watermark = atomic_load_explicit(&m->watermark, memory_order_relaxed);
}

__attribute__((always_inline)) static inline void view_push(struct owner_view *v, struct marker *m,
                                                            uintptr_t lo, uintptr_t hi) {
  if (v->chase_lev) {
    cl_push(m, lo, hi);
    return;
  }
  if (unlikely(v->top == v->capacity)) {
    m->top = v->top;
    bool grown = marker_grow(m, false);
    if (!grown) mark_overflow_push(m, lo, hi);
    view_load(v, m);
    if (!grown) return;
  }
  v->entries[v->top++] = (struct mark_range){lo, hi};
}

/* Pops into two scalars, never a 16-byte struct copy: an entry is
 * usually read a moment after view_push wrote it with two 8-byte stores
 * (a list: push one node, pop it at once), and a 16-byte load cannot be
 * forwarded from two stores.  That stall cost half the mark time on a
 * list-shaped heap; the empty asm keeps the compiler from merging the two
 * loads into one. */
__attribute__((always_inline)) static inline bool view_pop(struct owner_view *v, struct marker *m,
                                                           uintptr_t *lo, uintptr_t *hi,
                                                           bool private_only) {
  struct mark_range r;
  bool ok;
  if (v->chase_lev) {
    ok = cl_take(m, &r);
  } else if (likely(v->top > v->watermark)) {
    const struct mark_range *e = &v->entries[--v->top];
    uintptr_t l = e->lo, h = e->hi;
    __asm__("" : "+r"(l), "+r"(h));
    *lo = l;
    *hi = h;
    return true;
  } else if (private_only) {
    return false;
  } else {
    m->top = v->top;
    ok = marker_pop_slow(m, &r);
    view_load(v, m);
  }
  *lo = r.lo;
  *hi = r.hi;
  return ok;
}

/* An object of a kind the program made: its descriptor decides what is
 * pushed, and a mark procedure may push onto M's stack, so the drain
 * loop's view is written back first and reloaded after. */
SGC_NOINLINE static void scan_custom_object(struct owner_view *v, struct marker *m, unsigned kind,
                                            uintptr_t base, size_t size) {
  if (!v->chase_lev) m->top = v->top;
  custom_kind_scan(m, kind, base, size);
  view_load(v, m);
}

/* What a procedure entry's GC_mark_and_push calls mark with: the
 * drain's view of its stack (they push onto it directly: the drain
 * leaves it alone meanwhile), its page cache and its bounds. */
struct proc_context {
  struct owner_view *v;
  struct page_cache *cache;
  uintptr_t lowest, span;
  bool interior;
  enum mark_set_rule rule;
};

/* A popped procedure entry (MARK_ENTRY_PROC): lo the object, hi the
 * descriptor. */
SGC_NOINLINE static void run_proc_entry(struct marker *m, uintptr_t lo, uintptr_t hi,
                                        struct proc_context *c) {
  m->proc_context = c;
  custom_kind_run_entry(m, lo & ~(uintptr_t)MARK_ENTRY_PROC, hi);
  m->proc_context = NULL;
}

/* A candidate that hit P but no object: a free page is black-listed
 * (heap/blacklist.h).  Off the fast path: small pages never come here. */
SGC_NOINLINE static void note_false_pointer(struct page_header *p) {
  uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
  if ((state == PAGE_FREE || state == PAGE_RESERVED) && blacklist_enabled) blacklist_note(p);
}

/* Marks the object W points into, if any, and queues it for scanning.
 * Returns the bytes newly marked (0 when nothing was).  The candidate's
 * page is small in most heaps: it takes small_object_start and the size
 * from the same header line, where object_start_in_page and object_size
 * would read the state twice more; a large object takes the general function.
 * Candidates are inside [lowest, lowest + span), below 2^ADDRESS_BITS, so
 * the page-map walk skips that test. */
__attribute__((always_inline)) static inline size_t mark_candidate_cached(
    struct owner_view *v, struct marker *m, uintptr_t w, uintptr_t lowest, uintptr_t span,
    bool interior, enum mark_set_rule rule, struct page_cache *cache, uint64_t *atomic_bytes,
    bool careful) {
  if (w - lowest >= span) return 0;
  uintptr_t page_address = w & ~(uintptr_t)(PAGE_BYTES - 1);
  struct page_header *p;
  if (page_address == cache->address) {
    p = cache->page;
  } else {
    p = page_of_low_address(w);
    if (!p) return 0;
    cache->address = page_address;
    cache->page = p;
  }
  struct page_header *page = p;
  uintptr_t base;
  size_t size;
  _Atomic uint8_t *mark;
  if (likely(atomic_load_explicit(&p->state, memory_order_relaxed) == PAGE_SMALL)) {
    if (!small_object_start(p, w, interior, &base)) return 0;
    size = (size_t)p->object_granules << GRANULE_SHIFT;
    /* The mark byte by BASE's offset from p->start, which the compiler
     * folds into small_object_start's index times granules; mark_bit_of's
     * mask of BASE costs instructions of its own on every candidate
     * (cky: mark_drain_own 5% more instructions with it, 8cec65b). */
    /* Marking beside the program (mark_concurrently): a page being
     * formatted afresh may show one size class's capacity and another's
     * size; only a false pointer meets it (a real one was written after
     * the format), and it must not lead past the page. */
    if (careful && base - p->start + size > PAGE_BYTES) return 0;
    mark = (_Atomic uint8_t *)&p->marks.byte[(base - p->start) >> GRANULE_SHIFT];
  } else {
    base = object_start_in_page(p, w, &page, interior);
    if (!base) {
      note_false_pointer(p);
      return 0;
    }
    size = page->object_bytes;
    mark = mark_bit_of(page, base);
  }
  /* A kind the program made is marked exactly once: two GC threads that
   * both found its mark clear would both run its procedure, and a
   * procedure may count or record what it sees (bb_custom_procs_fan_*
   * saw 2-8 extra calls a collection).  Normal objects, and kinds that
   * run no procedure (typed objects), keep RULE. */
  unsigned kind = page->kind;
  if (unlikely(kind_is_custom(kind)) && custom_kinds[kind - KIND_COUNT].once)
    rule = mark_config.custom_set_rule;
  if (!set_mark(mark, rule)) return 0;
  if (likely(kind == KIND_NORMAL)) view_push(v, m, base, base + size);
  else if (kind == KIND_ATOMIC) *atomic_bytes += size;
  else if (unlikely(kind_is_custom(kind))) {
    /* A small object of a procedure's kind: its entry, pushed here (a
     * large one may still be being cleared: custom_kind_scan sees). */
    if (custom_kinds[kind - KIND_COUNT].proc && size <= MAX_SMALL_BYTES &&
        !atomic_load_explicit(&custom_procs_wait_for_finish, memory_order_relaxed))
      view_push(v, m, base | MARK_ENTRY_PROC, custom_kinds[kind - KIND_COUNT].descriptor);
    else
      scan_custom_object(v, m, kind, base, size);
  }
  /* An uncollectable object whose mark was clear is free, on a shared
   * list (alloc/uncollectable.c): the mark makes it a root until a refill
   * hands it out, which costs nothing, but it is not live, and scanned it
   * leads along its free list's links: a stale vector over freed `new`
   * objects had a concurrent cycle count 46 MB live of 8 (bb_cpp_new's
   * part F; bb_free_uncollectable_live). */
  else return 0;
  return size;
}

/* NUMA statistics (docs/numa.md): the node of the heap object a range
 * scans, by the placement's rule; ranges outside the heap (roots) count
 * nowhere.  Called once a scanned range, only while numa_counting. */
SGC_NOINLINE static void count_node_scan(struct marker *m, uintptr_t lo, uintptr_t hi) {
  struct page_header *p = page_of_address(lo);
  if (p) m->node_scanned_bytes[heap_node_of(p, lo)] += hi - lo;
}

/* The hot loop: everything inlined, counters in locals (with
 * -fno-strict-aliasing every push could otherwise reload them).  CAREFUL
 * (marking beside the program) is a constant in each instantiation
 * below, so a stopped drain tests nothing of a concurrent one's per
 * candidate or per range (a test per candidate cost ~3% of the serial
 * mark rate in stop mode). */
__attribute__((always_inline)) static inline void drain(struct marker *m, bool careful) {
  /* The prefetch window, as two arrays of scalars for the same reason as
   * view_pop's. */
  uintptr_t window_lo[PREFETCH_DEPTH], window_hi[PREFETCH_DEPTH];
  unsigned first = 0, count = 0;
  uintptr_t prefetched_line = 0;
  size_t split = mark_config.drain_split_bytes;
  bool share = mark_config.share;
  bool interior = heap_interior_pointers;
  enum mark_set_rule rule = mark_config.set_rule;
  uintptr_t lowest = atomic_load_explicit(&heap_lowest, memory_order_relaxed);
  uintptr_t span = atomic_load_explicit(&heap_highest, memory_order_relaxed) - lowest;
  unsigned until_yield_check = 64;
  uint64_t bytes = 0, objects = 0, atomic_bytes = 0;
  bool count_nodes = numa_counting; /* the loop's one NUMA test, per scanned range */
  /* Valid for this drain only: pages do not change while marking. */
  struct page_cache cache = {1, NULL};
  struct owner_view v;
  view_load(&v, m);
  for (;;) {
    uintptr_t lo, hi;
    /* Only an empty window takes back shared entries: filling it from
     * the public part would undo every share of a narrow stack at once
     * (marker_pop_slow reclaims half the public part), and the thief
     * would find nothing -- gcbench had collections where the helper
     * marked nothing while the owner shared 19 times. */
    while (count < PREFETCH_DEPTH && view_pop(&v, m, &lo, &hi, count > 0)) {
      /* SLO: halve a long range until the piece to scan is short; the
       * halves wait on the stack where thieves can take them. */
      while (split && hi - lo > split && !(lo & MARK_ENTRY_PROC)) {
        uintptr_t mid = (lo + (hi - lo) / 2) & ~(uintptr_t)7;
        view_push(&v, m, mid, hi);
        hi = mid;
      }
      /* Alone (a list-shaped heap): nothing to overlap the miss with, so
       * scan it now rather than through the window's memory round trip. */
      if (count == 0 && (v.chase_lev ? !cl_has_work(m) : v.top == v.watermark)) goto scan;
      /* Small neighbours (an array of cells allocated in a row) share a
       * line: one prefetch for it, not one per object, or the prefetches
       * fill the miss buffers and the loop stalls on them. */
      if ((lo ^ prefetched_line) >= 64) {
        __builtin_prefetch((const void *)lo);
        prefetched_line = lo;
      }
      unsigned slot = (first + count++) % PREFETCH_DEPTH;
      window_lo[slot] = lo;
      window_hi[slot] = hi;
    }
    if (!count) break;
    /* A concurrent cycle's finish asks the markers to stop: what the
     * window holds goes back on the stack, for the finish's drain. */
    if (careful && --until_yield_check == 0) {
      until_yield_check = 64;
      atomic_store_explicit(&m->progress, m->marked_bytes + bytes, memory_order_relaxed);
      if (atomic_load_explicit(&mark_yield_request, memory_order_relaxed) ||
          (m->drain_budget && bytes >= m->drain_budget)) {
        for (; count; count--, first = (first + 1) % PREFETCH_DEPTH)
          view_push(&v, m, window_lo[first], window_hi[first]);
        break;
      }
    }
    lo = window_lo[first];
    hi = window_hi[first];
    first = (first + 1) % PREFETCH_DEPTH;
    count--;
  scan:
    /* Beside the program the heap may grow during this drain: the
     * bounds are read again for every range.  A word pointing into a
     * chunk added after that read was stored after the cycle's start,
     * so its page is reported by a later collect, and the rescan reads
     * the bounds after it (docs/concurrent.md, invariant 4).  Taking
     * every address the page map covers as a candidate instead cost a
     * page-map lookup for each word that is not a pointer: 15% more
     * instructions in the drain (callgrind, gcbench -t 1). */
    if (careful) {
      lowest = atomic_load_explicit(&heap_lowest, memory_order_relaxed);
      span = atomic_load_explicit(&heap_highest, memory_order_relaxed) - lowest;
    }
    /* A procedure entry scans no word, but may be shared after. */
    if (unlikely(lo & MARK_ENTRY_PROC)) {
      struct proc_context c = {&v, &cache, lowest, span, interior, rule};
      run_proc_entry(m, lo, hi, &c);
    } else {
      if (unlikely(count_nodes)) count_node_scan(m, lo, hi);
      for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++) {
        size_t size =
            mark_candidate_cached(&v, m, scanned_word(p), lowest, span, interior, rule, &cache,
                                  &atomic_bytes, careful);
        if (size) {
          bytes += size;
          objects++;
        }
      }
    }
    /* Share only when thieves would find nothing and there is something
     * to give (marker_share repeats the test under the lock). */
    if (share && !v.chase_lev && v.top - v.watermark >= 2 &&
        atomic_load_explicit(&m->bottom, memory_order_relaxed) == v.watermark) {
      m->top = v.top;
      marker_share(m);
      view_load(&v, m);
    }
  }
  m->top = v.top;
  m->marked_bytes += bytes;
  m->marked_objects += objects;
  m->marked_atomic_bytes += atomic_bytes;
  if (careful) atomic_store_explicit(&m->progress, m->marked_bytes, memory_order_relaxed);
}

SGC_NOINLINE static void drain_stopped(struct marker *m) { drain(m, false); }
SGC_NOINLINE static void drain_beside_program(struct marker *m) { drain(m, true); }

void mark_drain_own(struct marker *m) {
  if (atomic_load_explicit(&mark_concurrently, memory_order_relaxed)) drain_beside_program(m);
  else drain_stopped(m);
}

/* ---- the collector thread's helpers (marker 0) ---- */

void mark_push_range(uintptr_t lo, uintptr_t hi) { mark_push_range_on(mark_collector, lo, hi); }

void mark_push_range_on(struct marker *m, uintptr_t lo, uintptr_t hi) {
  lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
  if (hi <= lo) return;
  /* From a procedure entry's GC_push_all: the drain's view holds the
   * stack's top while the procedure runs, so the push goes through it
   * (onto the marker's own top it overwrote the drain's entries). */
  if (m->proc_context) view_push(m->proc_context->v, m, lo, hi);
  else marker_push(m, lo, hi);
}

void mark_push_contents(struct page_header *page, uintptr_t base) {
  mark_push_contents_on(mark_collector, page, base);
}

void mark_push_contents_on(struct marker *m, struct page_header *page, uintptr_t base) {
  if (kind_is_scanned(page->kind)) mark_push_range_on(m, base, base + object_size(page));
  else if (kind_is_custom(page->kind)) custom_kind_scan(m, page->kind, base, object_size(page));
}

void mark_word(uintptr_t w) { mark_word_with(mark_collector, w); }

void mark_word_with(struct marker *m, uintptr_t w) {
  struct proc_context *c = m->proc_context;
  size_t size;
  if (c) {
    /* A procedure entry's call, within the drain: its view and cache (an
     * object's children often share its page). */
    size = mark_candidate_cached(c->v, m, w, c->lowest, c->span, c->interior, c->rule, c->cache,
                                 &m->marked_atomic_bytes, false);
  } else {
    struct owner_view v;
    struct page_cache cache = {1, NULL};
    view_load(&v, m);
    uintptr_t lowest = atomic_load_explicit(&heap_lowest, memory_order_relaxed);
    size = mark_candidate_cached(&v, m, w, lowest,
                                 atomic_load_explicit(&heap_highest, memory_order_relaxed) - lowest,
                                 heap_interior_pointers, mark_config.set_rule, &cache,
                                 &m->marked_atomic_bytes, false);
    m->top = v.top;
  }
  if (size) {
    m->marked_bytes += size;
    m->marked_objects++;
  }
}

void mark_without_scan(struct page_header *page, uintptr_t base) { mark_bit_set(page, base); }

void mark_scan_contents_excluding_self(struct page_header *page, uintptr_t base) {
  uintptr_t end = base + object_size(page);
  /* A custom kind's descriptor cannot leave one pointer out: it marks
   * what it says, self-references included. */
  if (kind_is_custom(page->kind)) {
    mark_push_contents(page, base);
    return;
  }
  if (!kind_is_scanned(page->kind)) return;
  for (uintptr_t *p = (uintptr_t *)base; (uintptr_t)p < end; p++) {
    uintptr_t w = *p;
    if (w >= base && w < end) continue;
    mark_word(w);
  }
}

void mark_reserve(size_t entries) {
  struct marker *m = mark_collector;
  while (m->capacity - m->top < entries && marker_grow(m, true)) {
  }
}

void mark_scan_roots_now(size_t from) {
  struct marker *m = mark_collector;
  size_t end = m->top;
  /* One view and one page cache for all the words, as the drain keeps
   * them: a call per word that reloaded both made the start pause's root
   * scan 18 times as long (history.md, "The start pause's root scan"). */
  struct owner_view v;
  view_load(&v, m);
  struct page_cache cache = {1, NULL};
  uintptr_t lowest = atomic_load_explicit(&heap_lowest, memory_order_relaxed);
  uintptr_t span = atomic_load_explicit(&heap_highest, memory_order_relaxed) - lowest;
  bool interior = heap_interior_pointers;
  enum mark_set_rule rule = mark_config.set_rule;
  uint64_t bytes = 0, objects = 0, atomic_bytes = 0;
  for (size_t i = from; i < end; i++) {
    /* Reread: a push below may grow (move) the stack. */
    uintptr_t lo = v.entries[i].lo, hi = v.entries[i].hi;
    /* No procedure entry among them: a cycle's start defers procedures
     * before it pushes a root (custom_kind_defer_procs). */
    SGC_ASSERT(!(lo & MARK_ENTRY_PROC));
    for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++) {
      size_t size = mark_candidate_cached(&v, m, scanned_word(p), lowest, span, interior, rule,
                                          &cache, &atomic_bytes, false);
      if (size) {
        bytes += size;
        objects++;
      }
    }
  }
  m->top = v.top;
  m->marked_bytes += bytes;
  m->marked_objects += objects;
  m->marked_atomic_bytes += atomic_bytes;
  size_t found = m->top - end;
  memmove(&m->entries[from], &m->entries[end], found * sizeof m->entries[0]);
  m->top = from + found;
}

void mark_drain(void) {
  mark_drain_own(mark_collector);
  mark_overflow_recover();
}

struct mark_totals mark_collect_totals(void) {
  struct mark_totals t = {0};
  t.min_busy_ns = UINT64_MAX;
  unsigned n = parallel_markers_ready();
  for (unsigned i = 0; i < n; i++) {
    struct marker *m = parallel_marker(i);
    t.bytes += m->marked_bytes;
    t.atomic_bytes += m->marked_atomic_bytes;
    t.objects += m->marked_objects;
    t.steal_attempts += m->steal_attempts;
    t.steal_successes += m->steal_successes;
    t.idle_ns += m->idle_ns;
    t.sum_busy_ns += m->busy_ns;
    if (m->busy_ns > t.max_busy_ns) t.max_busy_ns = m->busy_ns;
    if (m->busy_ns < t.min_busy_ns) t.min_busy_ns = m->busy_ns;
  }
  if (t.min_busy_ns == UINT64_MAX) t.min_busy_ns = 0;
  t.markers = n;
  return t;
}
