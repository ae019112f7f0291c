/* The barrier's dispatch, the ranges the backends cover, and the
 * kernel-free fallback BARRIER_FULL (barrier.h).  The backends live in
 * their own files (uffd.c, softdirty.c, mprotect.c, manual.c) behind
 * struct barrier_ops (backend.h). */
#include "barrier/barrier.h"

#include <stdatomic.h>
#include <string.h>

#include "barrier/backend.h"
#include "barrier/mprotect.h"
#include "base/env.h"
#include "common.h"
#include "heap/heap.h"
#include "os/os.h"

static const struct barrier_ops *const ops_of[BARRIER_KIND_COUNT] = {
    [BARRIER_UFFD] = &barrier_uffd_ops,
    [BARRIER_SOFTDIRTY] = &barrier_softdirty_ops,
    [BARRIER_MPROTECT] = &barrier_mprotect_ops,
    [BARRIER_MANUAL] = &barrier_manual_ops,
};

static enum barrier_kind barrier_kind_used = BARRIER_FULL;
static bool initialised;
static _Atomic bool armed;
/* The backend's arm failed this cycle (the kernel said no): the cycle
 * reports every page in use, as BARRIER_FULL does. */
static bool armed_full;
static struct barrier_counts counts; /* the collecting thread's */
_Atomic uint64_t barrier_fault_count, barrier_arm_ns;

static const char *const names[BARRIER_KIND_COUNT] = {
    [BARRIER_UFFD] = "uffd", [BARRIER_SOFTDIRTY] = "softdirty",
    [BARRIER_MPROTECT] = "mprotect", [BARRIER_MANUAL] = "manual",
    [BARRIER_FULL] = "full"};

const char *barrier_name(enum barrier_kind kind) {
  return kind < BARRIER_KIND_COUNT ? names[kind] : "?";
}

/* ---- probes ---- */
enum { PROBE_UNKNOWN, PROBE_YES, PROBE_NO };
static uint8_t probed[BARRIER_KIND_COUNT];
static const char *refusals[BARRIER_KIND_COUNT];
static bool manual_allowed;

void barrier_probe_refused(enum barrier_kind kind, const char *why) { refusals[kind] = why; }

bool barrier_available(enum barrier_kind kind) {
  if (kind >= BARRIER_KIND_COUNT) return false;
  if (kind == BARRIER_FULL) return true;
  if (probed[kind] == PROBE_UNKNOWN)
    probed[kind] = ops_of[kind]->probe() ? PROBE_YES : PROBE_NO;
  return probed[kind] == PROBE_YES;
}

void barrier_set_manual_allowed(bool on) { manual_allowed = on; }
bool barrier_manual_allowed(void) { return manual_allowed; }

/* The best kernel-backed barrier available: uffd needs no signal and
 * reads and re-arms in one call, softdirty needs no signal either but
 * cannot re-arm a page alone, mprotect costs a fault per page group
 * (docs/barriers.md says more).  manual only on the program's word. */
static enum barrier_kind best_available(enum barrier_kind except) {
  static const enum barrier_kind order[] = {BARRIER_UFFD, BARRIER_SOFTDIRTY, BARRIER_MPROTECT};
  for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++)
    if (order[i] != except && barrier_available(order[i])) return order[i];
  return BARRIER_FULL;
}

static void commit_hook(uintptr_t lo, uintptr_t hi);

enum barrier_kind barrier_init(void) {
  if (initialised) return barrier_kind_used;
  static const struct env_word words[] = {
      {"uffd", BARRIER_UFFD}, {"softdirty", BARRIER_SOFTDIRTY}, {"mprotect", BARRIER_MPROTECT},
      {"manual", BARRIER_MANUAL}, {"full", BARRIER_FULL}};
  int asked = env_choice("SGC_BARRIER", words, ENV_WORDS_COUNT(words), -1);
  if (asked < 0 && manual_allowed) asked = BARRIER_MANUAL; /* GC_set_manual_vdb_allowed(1) */
  enum barrier_kind kind;
  if (asked < 0) {
    kind = best_available(BARRIER_KIND_COUNT);
    if (kind != BARRIER_UFFD) /* the default's first choice, refused here */
      sgc_warn("the uffd write barrier is not available here (%s); using the %s barrier",
               refusals[BARRIER_UFFD] ? refusals[BARRIER_UFFD] : "refused", names[kind]);
  } else if (barrier_available((enum barrier_kind)asked)) {
    kind = (enum barrier_kind)asked;
  } else {
    kind = best_available((enum barrier_kind)asked);
    sgc_warn("SGC_BARRIER=%s is not available here (%s); using the %s barrier",
             names[asked], refusals[asked] ? refusals[asked] : "refused", names[kind]);
  }
  /* Starting may still fail (mprotect's handler refused): the next. */
  while (kind != BARRIER_FULL && ops_of[kind]->start && !ops_of[kind]->start()) {
    enum barrier_kind next = best_available(kind);
    sgc_warn("the %s barrier cannot start; using the %s barrier", names[kind], names[next]);
    kind = next;
  }
  barrier_kind_used = kind;
  /* Release: before the first arm, which the world's stop orders after
   * this for every thread anyway. */
  atomic_store_explicit(&mprotect_pinning, kind == BARRIER_MPROTECT ? MPROTECT_PINS_ON : MPROTECT_PINS_OFF,
                        memory_order_release);
  atomic_store_explicit(&heap_commit_hook, commit_hook, memory_order_relaxed);
  initialised = true;
  return kind;
}
enum barrier_kind barrier_in_use(void) { return barrier_kind_used; }

static const struct barrier_ops *ops(void) {
  return armed_full ? NULL : ops_of[barrier_kind_used];
}

/* ---- ranges ---- */
static _Atomic(struct barrier_range *) ranges;
static _Atomic size_t range_count;
static size_t range_capacity;

size_t barrier_range_count(void) { return atomic_load_explicit(&range_count, memory_order_acquire); }
struct barrier_range barrier_range_at(size_t i) {
  return atomic_load_explicit(&ranges, memory_order_acquire)[i];
}
const struct barrier_range *barrier_range_of(uintptr_t a) {
  struct barrier_range *r = atomic_load_explicit(&ranges, memory_order_acquire);
  size_t n = barrier_range_count();
  for (size_t i = 0; i < n; i++)
    if (a - r[i].lo < r[i].hi - r[i].lo) return &r[i];
  return NULL;
}

/* Writers are serialised: arm runs with the world stopped, the hook under
 * heap_lock.  A bigger array is copied and published (release) before the
 * count grows; the old one stays, for a reader still in it. */
bool barrier_range_add(uintptr_t lo, uintptr_t hi) {
  if (barrier_range_of(lo)) return false;
  size_t n = barrier_range_count();
  struct barrier_range *r = atomic_load_explicit(&ranges, memory_order_relaxed);
  if (n == range_capacity) {
    size_t capacity = range_capacity ? 2 * range_capacity : 256;
    struct barrier_range *bigger = os_alloc(capacity * sizeof *bigger);
    if (!bigger) sgc_fatal("the write barrier cannot record a heap range (out of memory)");
    if (n) memcpy(bigger, r, n * sizeof *r);
    atomic_store_explicit(&ranges, bigger, memory_order_release);
    range_capacity = capacity;
    r = bigger;
  }
  r[n] = (struct barrier_range){lo, hi};
  atomic_store_explicit(&range_count, n + 1, memory_order_release);
  return true;
}

static void add_chunk_reservation(struct chunk *c) {
  barrier_range_add(c->base, c->base + c->reserved_pages * PAGE_BYTES);
}

/* heap_grow committed [LO, HI) (heap_lock held): a new chunk's
 * reservation joins the ranges, and the backend covers the pages. */
static void commit_hook(uintptr_t lo, uintptr_t hi) {
  struct chunk *c = chunk_of_address(lo);
  if (c) add_chunk_reservation(c);
  if (barrier_armed()) barrier_cover(lo, hi);
}

void barrier_pages_formatted(uintptr_t lo, uintptr_t hi) {
  if (!atomic_load_explicit(&armed, memory_order_relaxed)) return;
  const struct barrier_ops *o = ops();
  if (o && o->formatted) o->formatted(lo, hi);
}

/* ---- runs ---- */
void barrier_runs_flush(struct barrier_runs *r) {
  if (r->hi > r->lo) {
    r->visit(r->lo, r->hi, r->arg);
    r->pages += (r->hi - r->lo) / PAGE_BYTES;
  }
  r->lo = r->hi = 0;
}

void barrier_runs_add(struct barrier_runs *r, uintptr_t lo, uintptr_t hi) {
  if (lo == r->hi && r->hi > r->lo) {
    r->hi = hi;
    return;
  }
  barrier_runs_flush(r);
  r->lo = lo;
  r->hi = hi;
}

/* ---- the interface ---- */
void barrier_arm(void) {
  counts = (struct barrier_counts){0};
  atomic_store_explicit(&barrier_fault_count, 0, memory_order_relaxed);
  atomic_store_explicit(&barrier_arm_ns, 0, memory_order_relaxed);
  FOR_EACH_CHUNK(c) add_chunk_reservation(c);
  armed_full = false;
  const struct barrier_ops *o = ops();
  if (o) {
    uint64_t start = os_now_ns();
    armed_full = !o->arm();
    atomic_fetch_add_explicit(&barrier_arm_ns, os_now_ns() - start, memory_order_relaxed);
    /* Once: a sandbox installed after start-up refuses every arm after. */
    static bool arm_refusal_said;
    if (armed_full && !arm_refusal_said) {
      arm_refusal_said = true;
      sgc_warn("the %s barrier could not be armed (the kernel refused); cycles report every page "
               "in use while it refuses", names[barrier_kind_used]);
    }
  }
  /* Release: a thread that sees the flag set sees the counts reset and
   * the backend's tables made. */
  atomic_store_explicit(&armed, true, memory_order_release);
}

bool barrier_arm_beside_program(void) {
  const struct barrier_ops *o = ops_of[barrier_kind_used];
  return barrier_kind_used != BARRIER_FULL && o->arm_beside_program;
}

void barrier_cover(uintptr_t lo, uintptr_t hi) {
  struct chunk *c = chunk_of_address(lo);
  if (c) add_chunk_reservation(c);
  const struct barrier_ops *o = ops();
  if (o && o->cover) o->cover(lo, hi);
}

void barrier_disarm(void) {
  const struct barrier_ops *o = ops();
  if (o && barrier_armed()) o->disarm();
  atomic_store_explicit(&armed, false, memory_order_release);
}

void barrier_stop_recording(void) {
  const struct barrier_ops *o = ops();
  if (!o || !o->keeps_protections || !barrier_armed()) {
    barrier_disarm();
    return;
  }
  /* Release: as barrier_disarm's.  A write from now on may still fault
   * (the kernel resolves it); nothing reads the record until the next
   * arm, which forgets it. */
  atomic_store_explicit(&armed, false, memory_order_release);
}

bool barrier_armed(void) { return atomic_load_explicit(&armed, memory_order_acquire); }

struct barrier_counts barrier_counts(void) {
  struct barrier_counts c = counts;
  c.faults = atomic_load_explicit(&barrier_fault_count, memory_order_relaxed);
  c.arm_ns = atomic_load_explicit(&barrier_arm_ns, memory_order_relaxed);
  return c;
}

/* ---- the pages a scan covers ---- */

/* Whether the page at P (state STATE, a small page or a large object's
 * head) is one WHICH selects; barrier_pages in backend.h. */
static bool page_selected(const struct page_header *p, uint8_t state, enum barrier_pages which) {
  if (!kind_may_hold_pointers(p->kind)) return false;
  if (state == PAGE_LARGE_HEAD) return which != BARRIER_PAGES_MARKED || mark_bit_test(p, p->start);
  switch (which) {
  case BARRIER_PAGES_SURVIVORS: return p->kind >= KIND_THREAD_LOCAL_COUNT || p->live_objects != 0;
  case BARRIER_PAGES_MARKED: return page_any_marked(p);
  case BARRIER_PAGES_POINTERS: return true;
  }
  return true;
}

/* Adds the pages of C's [FIRST, END) that WHICH selects to RUNS. */
static void add_selected(struct chunk *c, size_t first, size_t end, enum barrier_pages which,
                         struct barrier_runs *runs) {
  if (end > c->page_count) end = c->page_count;
  for (size_t i = first; i < end && !runs->stop;) {
    struct page_header *p = &c->pages[i];
    uint8_t state = atomic_load_explicit(&p->state, memory_order_acquire);
    /* A large object whole: a huge one's pages past its first slot
     * keep untouched headers that read as free (heap.h). */
    size_t step = page_walk_step(p, state);
    if (step > c->page_count - i) step = c->page_count - i;
    /* A tail met alone (a range starting inside a large object, or a
     * huge one's head out of step) counts, whatever its object. */
    bool selected = state == PAGE_LARGE_TAIL ||
                    ((state == PAGE_SMALL || state == PAGE_LARGE_HEAD) && page_selected(p, state, which));
    /* So does a huge object's page whose header was never written: it
     * reads as free (heap.h), and a write there went unreported, its
     * object never rescanned (an 8 MiB object lost every pointer stored
     * past its first slot during a cycle under uffd). */
    struct page_header *huge;
    if (state == PAGE_FREE && page_header_untouched(p) &&
        large_lazy_object_start(c->base + i * PAGE_BYTES, &huge)) {
      selected = true;
      uintptr_t end = huge->start + huge->object_bytes;
      step = (end - (c->base + i * PAGE_BYTES) + PAGE_BYTES - 1) / PAGE_BYTES;
      if (step > c->page_count - i) step = c->page_count - i;
    }
    if (selected) {
      /* Not past END: a large object's pages beyond were not asked
       * about (not written, for barrier_select_runs' callers). */
      uintptr_t at = c->base + i * PAGE_BYTES;
      barrier_runs_add(runs, at, c->base + (i + step < end ? i + step : end) * PAGE_BYTES);
    }
    i += step;
  }
}

void barrier_for_each_run(enum barrier_pages which, barrier_visit_fn *visit, void *arg) {
  struct barrier_runs runs = {visit, arg, 0, 0, 0, false};
  FOR_EACH_CHUNK(c) add_selected(c, 0, c->page_count, which, &runs);
  barrier_runs_flush(&runs);
}

void barrier_select_runs(enum barrier_pages which, uintptr_t lo, uintptr_t hi, struct barrier_runs *runs) {
  struct chunk *c = chunk_of_address(lo);
  if (!c || lo < c->base) return;
  size_t first = (lo - c->base) / PAGE_BYTES;
  size_t end = (hi - c->base + PAGE_BYTES - 1) / PAGE_BYTES;
  add_selected(c, first, end, which, runs);
}

static void add_to_runs(uintptr_t lo, uintptr_t hi, void *runs) { barrier_runs_add(runs, lo, hi); }

/* BARRIER_FULL: every page holding a marked object that may hold
 * pointers (the only pages a report makes the marker rescan). */
static size_t collect_full(barrier_visit_fn *visit, void *arg) {
  struct barrier_runs runs = {visit, arg, 0, 0, 0, false};
  barrier_for_each_run(BARRIER_PAGES_MARKED, add_to_runs, &runs);
  barrier_runs_flush(&runs);
  return runs.pages;
}

/* A backend's report of REPORTED pages counted; when the kernel refused
 * (BARRIER_COLLECT_FAILED), every page in use is reported instead, for
 * the rest of the cycle.  True when it did so. */
static bool count_report(size_t *reported, barrier_visit_fn *visit, void *arg) {
  bool failed = *reported == (size_t)BARRIER_COLLECT_FAILED;
  if (failed) {
    sgc_warn("the %s barrier failed in a cycle; it reports every page in use until the cycle ends",
             names[barrier_kind_used]);
    armed_full = true;
    *reported = collect_full(visit, arg);
  }
  counts.dirty_pages += *reported;
  return failed;
}

static size_t collect_dirty(barrier_visit_fn *visit, void *arg, bool last) {
  counts.collect_calls++;
  const struct barrier_ops *o = ops();
  size_t reported = !o                        ? collect_full(visit, arg)
                    : last && o->collect_last ? o->collect_last(visit, arg)
                                              : o->collect(visit, arg);
  count_report(&reported, visit, arg);
  return reported;
}

size_t barrier_collect_dirty(barrier_visit_fn *visit, void *arg) { return collect_dirty(visit, arg, false); }

bool barrier_collect_begin(void) {
  const struct barrier_ops *o = ops();
  /* Refused: the caller does a whole collect, which reports every page
   * in use if the kernel refuses again. */
  if (!o || !o->collect_begin || !o->collect_begin()) return false;
  counts.collect_calls++;
  return true;
}

size_t barrier_collect_step(barrier_visit_fn *visit, void *arg, size_t max_pages, bool *done) {
  const struct barrier_ops *o = ops();
  size_t reported = o && o->collect_step ? o->collect_step(visit, arg, max_pages, done)
                                         : (size_t)BARRIER_COLLECT_FAILED;
  if (count_report(&reported, visit, arg)) *done = true;
  return reported;
}

size_t barrier_collect_last(barrier_visit_fn *visit, void *arg) { return collect_dirty(visit, arg, true); }

size_t barrier_collect_last_parts(void) {
  const struct barrier_ops *o = ops();
  return o && o->last_parts ? o->last_parts() : 0;
}

bool barrier_collect_last_part(size_t k, barrier_visit_fn *visit, void *arg, size_t *pages) {
  *pages = ops()->last_part(k, visit, arg);
  bool ok = *pages != (size_t)BARRIER_COLLECT_FAILED;
  if (!ok) *pages = 0;
  return ok;
}

size_t barrier_collect_last_end(size_t pages, bool refused, barrier_visit_fn *visit, void *arg) {
  counts.collect_calls++;
  /* Refused: every page in use is reported now (what the parts reported
   * is among them, queued twice: only work). */
  size_t reported = refused ? (size_t)BARRIER_COLLECT_FAILED : pages;
  count_report(&reported, visit, arg);
  return reported;
}
