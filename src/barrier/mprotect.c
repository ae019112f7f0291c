/* BARRIER_MPROTECT: page protection and a SIGSEGV handler (thesis
 * §5.2).  At arm (world stopped) the pages holding pointers are made
 * read-only; a write faults, and the handler (mprotect_signals.c) makes
 * the page writable and records it (MP_DIRTY).  A collect reports the
 * dirty pages and protects them again before the report, so a write
 * after it faults anew and shows in the next collect.
 *
 * Pages left writable all cycle (MP_OPEN): free pages and those of
 * pointer-free objects (GC_malloc_atomic).  A pointer-free object's
 * writes need no record, and a system call writing into it never meets
 * a protected page, whatever the call (fread's internal read too); a
 * free page will be used soon (the thesis unprotects empty pages with
 * the page it unprotects, §5.2.1, for that reason).  Pages that start
 * holding new objects during the cycle (barrier_pages_formatted) become
 * MP_OPEN as well: the thesis unprotects a page the allocator hands out.  An open page is reported
 * by every collect for which it holds pointer-holding objects: the
 * barrier cannot know whether it was written.
 *
 * A fault opens the page's aligned group of MPROTECT_GROUP_PAGES (4
 * pages, 16 KiB) at once, with one mprotect: a program writing a run of
 * pages takes a quarter of the faults, for at most 3 pages reported
 * unwritten per fault (the documented false positives).
 *
 * Order of the state and the protection: the handler marks the pages
 * dirty, unprotects them, and marks them dirty again (a collect may have
 * taken one back in between); a collect marks a dirty page protected,
 * protects it, then reads the state again and unprotects any page
 * another thread changed meanwhile.  So a writable page is MP_DIRTY or
 * MP_OPEN whenever neither is between its steps, and a fault handler
 * runs with every signal blocked, so a stopped world never finds one
 * there.  The converse does not hold: a dirty page may still be
 * protected for a moment, which a system call's wrapper must not trust
 * (mprotect_open_range).
 *
 * Calls in flight (mprotect_syscalls.c) pin their buffers; neither an
 * arm nor a collect protects a pinned page. */
#include "barrier/mprotect.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "barrier/backend.h"
#include "common.h"
#include "heap/heap.h"
#include "os/os.h"

enum { MPROTECT_GROUP_PAGES = 4 };

_Atomic bool mprotect_armed;

static bool pointer_free_kind(unsigned kind) {
  return kind == KIND_ATOMIC || kind == KIND_ATOMIC_UNCOLLECTABLE;
}

/* Read without a lock while the world runs: where the headers are
 * changing it answers PAGE_CONTENT_POINTERS, the safe answer for a page
 * the barrier does not watch. */
enum page_content barrier_page_content(uintptr_t a) {
  struct chunk *c = chunk_of_address(a);
  if (!c) return PAGE_CONTENT_FREE;
  size_t index = (a - c->base) >> PAGE_SHIFT;
  if (index >= c->page_count) return PAGE_CONTENT_FREE;
  struct page_header *p = &c->pages[index];
  uint8_t state = atomic_load_explicit(&p->state, memory_order_acquire);
  if (state == PAGE_LARGE_TAIL) {
    uint32_t back = p->head_offset;
    if (back > index) return PAGE_CONTENT_POINTERS;
    p -= back;
    state = atomic_load_explicit(&p->state, memory_order_acquire);
    if (state != PAGE_LARGE_HEAD) return PAGE_CONTENT_POINTERS;
  } else if (state == PAGE_FREE && page_header_untouched(p)) {
    struct page_header *head;
    if (!large_lazy_object_start(a, &head)) return PAGE_CONTENT_FREE;
    p = head;
    state = PAGE_LARGE_HEAD;
  }
  if (state == PAGE_SMALL || state == PAGE_LARGE_HEAD)
    return pointer_free_kind(p->kind) ? PAGE_CONTENT_POINTER_FREE : PAGE_CONTENT_POINTERS;
  return PAGE_CONTENT_FREE; /* PAGE_FREE, PAGE_RESERVED */
}

static bool page_protect(uintptr_t lo, uintptr_t hi, bool writable) {
  return mprotect((void *)lo, hi - lo, writable ? PROT_READ | PROT_WRITE : PROT_READ) == 0;
}

/* Sets the bytes of [LO, HI) to STATE (world stopped or heap_lock held). */
static void set_states(uintptr_t lo, uintptr_t hi, uint8_t state) {
  for (uintptr_t a = lo; a < hi; a += PAGE_BYTES)
    atomic_store_explicit(page_table_byte(a), state, memory_order_relaxed);
}

/* What an arm or a collect may protect: nothing, or all but the pages
 * of calls in flight (mprotect_syscalls.c). */
struct protectable {
  bool any;
  size_t pin_count;
  struct barrier_range pins[256];
};
static struct protectable protectable; /* one arm or collect at a time */

/* Seq_cst, paired with the wrappers' enter (mprotect_syscalls.c): either
 * this sees a call's pinned buffer and leaves its pages open, or the call
 * waits for protect_end before it opens them. */
static const struct protectable *protect_begin(void) {
  atomic_store_explicit(&mprotect_reprotecting, true, memory_order_seq_cst);
  protectable.pin_count = mprotect_pins(protectable.pins);
  protectable.any = protectable.pin_count != SIZE_MAX;
  return &protectable;
}

/* Release: a call that sees it sees the protections, and the armed flag. */
static void protect_end(void) {
  atomic_store_explicit(&mprotect_reprotecting, false, memory_order_release);
}

static bool may_protect(const struct protectable *p, uintptr_t page) {
  if (!p->any) return false;
  for (size_t i = 0; i < p->pin_count; i++)
    if (page + PAGE_BYTES > p->pins[i].lo && page < p->pins[i].hi) return false;
  return true;
}

/* Pages an arm protects, as one run: protected when the next page does
 * not extend it.  One the kernel refuses is left open and writable (a
 * call trusts an open page's byte). */
struct arm_run {
  uintptr_t lo, hi;
};
static void arm_run_flush(struct arm_run *r) {
  if (r->hi > r->lo && !page_protect(r->lo, r->hi, false)) {
    page_protect(r->lo, r->hi, true); /* any part it did protect */
    set_states(r->lo, r->hi, MP_OPEN);
  }
  r->lo = r->hi = 0;
}
static void arm_run_add(struct arm_run *r, uintptr_t lo, uintptr_t hi) {
  if (lo != r->hi) {
    arm_run_flush(r);
    r->lo = lo;
  }
  r->hi = hi;
}

/* The pointer-holding pages [LO, HI): protected, but those of calls in
 * flight dirty and writable (reported by the next collect, protected by
 * one after the call). */
static void arm_pointer_pages(uintptr_t lo, uintptr_t hi, const struct protectable *p, struct arm_run *run) {
  if (p->any && p->pin_count == 0) {
    set_states(lo, hi, MP_PROTECTED);
    arm_run_add(run, lo, hi);
    return;
  }
  for (uintptr_t a = lo; a < hi; a += PAGE_BYTES) {
    if (may_protect(p, a)) {
      set_states(a, a + PAGE_BYTES, MP_PROTECTED);
      arm_run_add(run, a, a + PAGE_BYTES);
    } else {
      set_states(a, a + PAGE_BYTES, MP_DIRTY);
    }
  }
}

static void arm_chunk(struct chunk *c, const struct protectable *p) {
  struct arm_run run = {0, 0};
  for (size_t i = 0; i < c->page_count;) {
    struct page_header *h = &c->pages[i];
    uint8_t state = atomic_load_explicit(&h->state, memory_order_relaxed);
    size_t step = page_walk_step(h, state);
    if (step > c->page_count - i) step = c->page_count - i;
    uintptr_t lo = c->base + (i << PAGE_SHIFT), hi = lo + (step << PAGE_SHIFT);
    bool pointers = (state == PAGE_SMALL || state == PAGE_LARGE_HEAD || state == PAGE_LARGE_TAIL) &&
                    barrier_page_content(lo) == PAGE_CONTENT_POINTERS;
    if (pointers) arm_pointer_pages(lo, hi, p, &run);
    else set_states(lo, hi, MP_OPEN);
    i += step;
  }
  arm_run_flush(&run);
}

/* Zeroes the bytes of a range's slots (world stopped). */
static void clear_states(uintptr_t lo, uintptr_t hi) {
  for (uintptr_t a = lo; a < hi; a += CHUNK_BYTES) {
    _Atomic uint8_t *bytes = page_table_byte(a);
    if (bytes) memset((void *)bytes, 0, PAGES_PER_CHUNK);
  }
}

static bool mprotect_probe(void) {
  char *scratch = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bool ok = scratch != MAP_FAILED && mprotect(scratch, PAGE_BYTES, PROT_READ) == 0 &&
            mprotect(scratch, PAGE_BYTES, PROT_READ | PROT_WRITE) == 0;
  if (scratch != MAP_FAILED) munmap(scratch, PAGE_BYTES);
  if (!ok) barrier_probe_refused(BARRIER_MPROTECT, "mprotect refused");
  return ok;
}

static bool mprotect_start(void) {
  pthread_atfork(NULL, NULL, mprotect_pins_forget);
  return mprotect_install_handler();
}

/* Armed before any page is protected: a GC thread's write that faults
 * meanwhile is recorded.  The world is stopped, but a call may be in
 * flight all the same (blocked in the kernel, to be restarted, or in
 * GC_do_blocking, running): its pinned pages stay writable. */
static bool mprotect_arm(void) {
  size_t n = barrier_range_count();
  for (size_t i = 0; i < n; i++) {
    struct barrier_range r = barrier_range_at(i);
    if (!page_table_cover(r.lo, r.hi)) return false;
    clear_states(r.lo, r.hi);
  }
  const struct protectable *p = protect_begin();
  atomic_store_explicit(&mprotect_armed, true, memory_order_release);
  for (size_t i = 0; i < n; i++) {
    struct chunk *c = chunk_of_address(barrier_range_at(i).lo);
    if (c) arm_chunk(c, p);
  }
  protect_end();
  return true;
}

/* New pages (heap_lock held): free, so open. */
static void mprotect_cover(uintptr_t lo, uintptr_t hi) {
  const struct barrier_range *r = barrier_range_of(lo);
  if (page_table_cover(r ? r->lo : lo, r ? r->hi : hi)) set_states(lo, hi, MP_OPEN);
}

/* Pages that begin holding new objects: open, as the thesis unprotects a
 * page the allocator hands out.  One emptied during the cycle may still
 * be protected, and its next objects may be pointer-free ones that a
 * system call writes. */
static void mprotect_formatted(uintptr_t lo, uintptr_t hi) {
  bool protect_lifted = false;
  for (uintptr_t a = lo; a < hi; a += PAGE_BYTES) {
    _Atomic uint8_t *b = page_table_byte(a);
    if (b && atomic_exchange_explicit(b, MP_OPEN, memory_order_acq_rel) == MP_PROTECTED)
      protect_lifted = true;
  }
  if (protect_lifted) page_protect(lo, hi, true);
}

/* The tracked pages of A's aligned group, around A, as [*LO, *HI). */
static bool group_of(uintptr_t a, uintptr_t *lo, uintptr_t *hi) {
  const uintptr_t group = (uintptr_t)MPROTECT_GROUP_PAGES * PAGE_BYTES;
  uintptr_t page = a & ~(uintptr_t)(PAGE_BYTES - 1);
  _Atomic uint8_t *b = page_table_byte(page);
  if (!b || atomic_load_explicit(b, memory_order_acquire) == MP_UNTRACKED) return false;
  uintptr_t first = page & ~(group - 1), end = first + group;
  *lo = *hi = page;
  while (*lo > first && atomic_load_explicit(page_table_byte(*lo - PAGE_BYTES), memory_order_acquire))
    *lo -= PAGE_BYTES;
  while (*hi < end && atomic_load_explicit(page_table_byte(*hi), memory_order_acquire)) *hi += PAGE_BYTES;
  return true;
}

static void open_pages(uintptr_t lo, uintptr_t hi) {
  for (uintptr_t a = lo; a < hi; a += PAGE_BYTES) {
    uint8_t expected = MP_PROTECTED;
    atomic_compare_exchange_strong_explicit(page_table_byte(a), &expected, MP_DIRTY,
                                            memory_order_acq_rel, memory_order_acquire);
  }
}

/* A page this barrier tracks is writable afterwards whatever its state:
 * a thread whose fault is handled after another's opened the page, or
 * after a collect protected a page another thread changed, finds it so. */
bool mprotect_open_for_fault(uintptr_t a) {
  struct chunk *c = chunk_of_address(a);
  if (!c || a - c->base >= c->page_count * PAGE_BYTES) return false; /* not a heap page */
  uintptr_t lo, hi;
  if (!atomic_load_explicit(&mprotect_armed, memory_order_acquire) || !group_of(a, &lo, &hi)) {
    /* A page disarm let go after the write faulted (a GC thread's, the
     * world stopped): only this barrier protects heap pages. */
    lo = a & ~(uintptr_t)(PAGE_BYTES - 1);
    return page_protect(lo, lo + PAGE_BYTES, true);
  }
  open_pages(lo, hi);
  if (!page_protect(lo, hi, true)) {
    /* Out of mappings (vm.max_map_count: each protected run splits one):
     * the whole chunk opened in one call, which merges its mappings. */
    lo = c->base;
    hi = c->base + c->page_count * PAGE_BYTES;
    open_pages(lo, hi);
    if (!page_protect(lo, hi, true)) return false;
  }
  /* Again: a collect may have taken a page back (dirty to protected) and
   * protected it between the two steps above, and the protection was
   * just lifted from under it. */
  open_pages(lo, hi);
  atomic_fetch_add_explicit(&barrier_fault_count, 1, memory_order_relaxed);
  return true;
}

/* A dirty page's byte does not say it is writable yet: a fault handler,
 * or another call here, marks the pages dirty before it lifts their
 * protection, and a thread preempted between the two steps leaves them
 * protected for as long (a call into one then failed with EFAULT, again
 * and again).  So every page the barrier protects or took back is made
 * writable here; the pin keeps any collect from protecting it again
 * until the call returns.  Open pages are never protected. */
void mprotect_open_range(uintptr_t lo, uintptr_t hi) {
  lo &= ~(uintptr_t)(PAGE_BYTES - 1);
  uintptr_t run_lo = 0, run_hi = 0;
  for (uintptr_t a = lo; a < hi; a += PAGE_BYTES) {
    _Atomic uint8_t *b = page_table_byte(a);
    uint8_t state = b ? atomic_load_explicit(b, memory_order_acquire) : MP_UNTRACKED;
    if (state != MP_PROTECTED && state != MP_DIRTY) continue;
    open_pages(a, a + PAGE_BYTES);
    if (a != run_hi) {
      if (run_hi > run_lo) page_protect(run_lo, run_hi, true);
      run_lo = a;
    }
    run_hi = a + PAGE_BYTES;
  }
  if (run_hi > run_lo) page_protect(run_lo, run_hi, true);
}

/* Protects the dirty pages [LO, HI) again, then reports them. */
static void reprotect_and_report(uintptr_t lo, uintptr_t hi, struct barrier_runs *runs) {
  if (!page_protect(lo, hi, false)) {
    /* Out of mappings (vm.max_map_count): they stay dirty, reported
     * again next time. */
    for (uintptr_t a = lo; a < hi; a += PAGE_BYTES)
      atomic_store_explicit(page_table_byte(a), MP_DIRTY, memory_order_release);
  } else {
    for (uintptr_t a = lo; a < hi; a += PAGE_BYTES)
      if (atomic_load_explicit(page_table_byte(a), memory_order_acquire) != MP_PROTECTED)
        page_protect(a, a + PAGE_BYTES, true); /* changed meanwhile: see the top */
  }
  barrier_runs_add(runs, lo, hi);
}

static void collect_range(struct barrier_range r, const struct protectable *protect,
                          struct barrier_runs *runs) {
  uintptr_t run_lo = 0, run_hi = 0; /* dirty pages taken, to protect */
  for (uintptr_t slot = r.lo; slot < r.hi; slot += CHUNK_BYTES) {
    _Atomic uint8_t *bytes = page_table_byte(slot);
    if (!bytes) continue;
    for (unsigned i = 0; i < PAGES_PER_CHUNK; i++) {
      uint8_t state = atomic_load_explicit(&bytes[i], memory_order_acquire);
      if (state == MP_UNTRACKED || state == MP_PROTECTED) continue;
      uintptr_t at = slot + ((uintptr_t)i << PAGE_SHIFT);
      if (state == MP_OPEN) {
        if (barrier_page_content(at) == PAGE_CONTENT_POINTERS) barrier_runs_add(runs, at, at + PAGE_BYTES);
        continue;
      }
      uint8_t expected = MP_DIRTY;
      if (!may_protect(protect, at) ||
          !atomic_compare_exchange_strong_explicit(&bytes[i], &expected, MP_PROTECTED,
                                                   memory_order_acq_rel, memory_order_acquire)) {
        barrier_runs_add(runs, at, at + PAGE_BYTES); /* stays dirty, or just became open */
        continue;
      }
      if (at != run_hi) {
        if (run_hi > run_lo) reprotect_and_report(run_lo, run_hi, runs);
        run_lo = at;
      }
      run_hi = at + PAGE_BYTES;
    }
  }
  if (run_hi > run_lo) reprotect_and_report(run_lo, run_hi, runs);
}

static size_t mprotect_collect(barrier_visit_fn *visit, void *arg) {
  struct barrier_runs runs = {visit, arg, 0, 0, 0, false};
  const struct protectable *protect = protect_begin();
  uint64_t start = os_now_ns();
  size_t n = barrier_range_count();
  for (size_t i = 0; i < n; i++) collect_range(barrier_range_at(i), protect, &runs);
  atomic_fetch_add_explicit(&barrier_arm_ns, os_now_ns() - start, memory_order_relaxed);
  protect_end();
  barrier_runs_flush(&runs);
  return runs.pages;
}

/* World stopped: every chunk's pages writable again in one call each
 * (which also lets the kernel merge the mappings the cycle split). */
static void mprotect_disarm(void) {
  size_t n = barrier_range_count();
  for (size_t i = 0; i < n; i++) {
    struct chunk *c = chunk_of_address(barrier_range_at(i).lo);
    if (c) page_protect(c->base, c->base + c->page_count * PAGE_BYTES, true);
  }
  atomic_store_explicit(&mprotect_armed, false, memory_order_release);
  for (size_t i = 0; i < n; i++) clear_states(barrier_range_at(i).lo, barrier_range_at(i).hi);
}

const struct barrier_ops barrier_mprotect_ops = {
    .probe = mprotect_probe, .start = mprotect_start, .arm = mprotect_arm, .cover = mprotect_cover, .formatted = mprotect_formatted,
    .collect = mprotect_collect, .disarm = mprotect_disarm};
