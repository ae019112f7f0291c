/* The mark loop: conservative scanning, mark bits, the prefetch window and
 * large-object splitting (thesis §3.4.3, SLO). */
#include "mark/mark.h"

#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "os/os.h"

enum {
  /* Ranges are prefetched when popped and scanned this many pops later,
   * so the cache miss on an object's first line overlaps other work. */
  PREFETCH_DEPTH = 8,
  DEFAULT_SPLIT_BYTES = 256, /* thesis §3.4.3 */
};

struct mark_config mark_config;
static struct marker collector_marker;
struct marker *mark_collector = &collector_marker;

static void configure(void) {
  const char *v = getenv("SGC_MARK_VARIANT");
  enum mark_variant variant = MARK_OPT;
  if (v && *v) {
    if (!strcmp(v, "opt")) variant = MARK_OPT;
    else if (!strcmp(v, "simple")) variant = MARK_SIMPLE;
    else if (!strcmp(v, "noopt") || !strcmp(v, "no-opt")) variant = MARK_NOOPT;
    else if (!strcmp(v, "no-slo")) variant = MARK_NO_SLO;
    else if (!strcmp(v, "no-nsb")) variant = MARK_NO_NSB;
    else sgc_warn("SGC_MARK_VARIANT=%s unknown; using opt", v);
  }
  size_t split = DEFAULT_SPLIT_BYTES;
  const char *s = getenv("SGC_SPLIT_BYTES");
  if (s && *s) split = strtoul(s, NULL, 10);
  if (split && split < 64) split = 64;
  mark_config.variant = variant;
  mark_config.split_bytes = split;
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
  case MARK_OPT: break;
  }
}

void mark_init(void) {
  configure();
  marker_init(&collector_marker, 0);
  parallel_mark_init();
}

void mark_clear_all(void) {
  FOR_EACH_CHUNK(c) {
    for (size_t i = 0; i < c->page_count; i++) {
      struct page_header *p = &c->pages[i];
      uint8_t state = atomic_load_explicit(&p->state, memory_order_relaxed);
      if ((state == PAGE_SMALL || state == PAGE_LARGE_HEAD) && p->kind >= KIND_THREAD_LOCAL_COUNT)
        continue; /* uncollectable: the bit means "allocated" */
      for (unsigned w = 0; w < MARK_WORDS_PER_PAGE; w++)
        atomic_store_explicit(&p->mark_bits[w], 0, memory_order_relaxed);
    }
  }
  for (unsigned i = 0; i < parallel_markers_created(); i++) {
    struct marker *m = parallel_marker(i);
    m->marked_bytes = m->marked_objects = 0;
    m->steal_attempts = m->steal_successes = 0;
    m->busy_ns = m->idle_ns = 0;
  }
}

static inline bool kind_is_scanned(unsigned kind) {
  return kind == KIND_NORMAL || kind == KIND_UNCOLLECTABLE;
}

/* The No-Opt variant always does the atomic OR (thesis: no optimistic
 * read); the others read first. */
static inline bool set_mark(const struct page_header *p, uintptr_t base) {
  if (mark_config.optimistic_bits) return mark_bit_set(p, base);
  unsigned i = mark_bit_index(p, base);
  uint64_t bit = (uint64_t)1 << (i & 63);
  return !(atomic_fetch_or_explicit(&p->mark_bits[i >> 6], bit, memory_order_relaxed) & bit);
}

static inline void mark_candidate(struct marker *m, uintptr_t w, uintptr_t lowest,
                                  uintptr_t highest) {
  if (w - lowest >= highest - lowest) return;
  struct page_header *page;
  uintptr_t base = object_start(w, &page);
  if (!base || !set_mark(page, base)) return;
  size_t size = object_size(page);
  m->marked_bytes += size;
  m->marked_objects++;
  if (kind_is_scanned(page->kind)) marker_push(m, base, base + size);
}

void mark_scan_range(struct marker *m, struct mark_range r) {
  uintptr_t lowest = atomic_load_explicit(&heap_lowest, memory_order_relaxed);
  uintptr_t highest = atomic_load_explicit(&heap_highest, memory_order_relaxed);
  for (const uintptr_t *p = (const uintptr_t *)r.lo; (uintptr_t)(p + 1) <= r.hi; p++)
    mark_candidate(m, *p, lowest, highest);
}

void mark_drain_own(struct marker *m) {
  struct mark_range window[PREFETCH_DEPTH];
  unsigned first = 0, count = 0;
  size_t split = mark_config.split_bytes;
  bool share = mark_config.balance;
  for (;;) {
    struct mark_range r;
    while (count < PREFETCH_DEPTH && marker_pop(m, &r)) {
      /* SLO: halve a long range until the piece to scan is short; the
       * halves wait on the stack where thieves can take them. */
      while (split && r.hi - r.lo > split) {
        uintptr_t mid = (r.lo + (r.hi - r.lo) / 2) & ~(uintptr_t)7;
        marker_push(m, mid, r.hi);
        r.hi = mid;
      }
      __builtin_prefetch((const void *)r.lo);
      window[(first + count++) % PREFETCH_DEPTH] = r;
    }
    if (!count) return;
    r = window[first];
    first = (first + 1) % PREFETCH_DEPTH;
    count--;
    mark_scan_range(m, r);
    if (share) marker_share(m);
  }
}

/* ---- the collector thread's helpers (marker 0) ---- */

void mark_push_range(uintptr_t lo, uintptr_t hi) {
  lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
  if (hi > lo) marker_push(mark_collector, lo, hi);
}

void mark_push_contents(struct page_header *page, uintptr_t base) {
  if (kind_is_scanned(page->kind)) mark_push_range(base, base + object_size(page));
}

void mark_word(uintptr_t w) {
  mark_candidate(mark_collector, w, atomic_load_explicit(&heap_lowest, memory_order_relaxed),
                 atomic_load_explicit(&heap_highest, memory_order_relaxed));
}

void mark_without_scan(struct page_header *page, uintptr_t base) { mark_bit_set(page, base); }

void mark_scan_contents_excluding_self(struct page_header *page, uintptr_t base) {
  uintptr_t end = base + object_size(page);
  if (!kind_is_scanned(page->kind)) return;
  for (uintptr_t *p = (uintptr_t *)base; (uintptr_t)p < end; p++) {
    uintptr_t w = *p;
    if (w >= base && w < end) continue;
    mark_word(w);
  }
}

void mark_drain(void) { mark_drain_own(mark_collector); }

struct mark_totals mark_collect_totals(void) {
  struct mark_totals t = {0};
  t.min_busy_ns = UINT64_MAX;
  unsigned n = parallel_markers_ready();
  for (unsigned i = 0; i < n; i++) {
    struct marker *m = parallel_marker(i);
    t.bytes += m->marked_bytes;
    t.objects += m->marked_objects;
    t.steal_attempts += m->steal_attempts;
    t.steal_successes += m->steal_successes;
    t.idle_ns += m->idle_ns;
    if (m->busy_ns > t.max_busy_ns) t.max_busy_ns = m->busy_ns;
    if (m->busy_ns < t.min_busy_ns) t.min_busy_ns = m->busy_ns;
  }
  if (t.min_busy_ns == UINT64_MAX) t.min_busy_ns = 0;
  t.markers = n;
  return t;
}
