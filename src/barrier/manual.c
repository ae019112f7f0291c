/* BARRIER_MANUAL: bdwgc's manual barrier.  The program tells of its
 * stores (GC_end_stubborn_change, GC_ptr_store_and_dirty, api/
 * manual_barrier.c), and each marks its page's byte in backend.h's page
 * table; a collect takes the marked pages and clears their bytes.  Needs
 * nothing from the kernel, so it is always available, but only a program
 * that reports every store of a pointer into the heap may use it: it is
 * chosen by SGC_BARRIER=manual or GC_set_manual_vdb_allowed(1), never by
 * default.  Stores the program does not report are missed. */
#include <stdatomic.h>
#include <string.h>

#include "barrier/backend.h"
#include "common.h"
#include "heap/heap.h"

/* Relaxed: a note that misses the flag as the world is stopped to arm
 * comes from a store made before arm, which the marking that follows
 * sees anyway (incremental update records stores after the start). */
static _Atomic bool recording;
/* A chunk's table could not be made this cycle (out of memory): collects
 * fail, and barrier.c reports every page in use until the next arm. */
static bool uncovered;

static bool manual_probe(void) { return true; }

/* Zeroes the bytes of [LO, HI) (world stopped), slot by slot. */
static void clear_range(uintptr_t lo, uintptr_t hi) {
  for (uintptr_t a = lo; a < hi; a += CHUNK_BYTES) {
    _Atomic uint8_t *bytes = page_table_byte(a);
    if (bytes) memset((void *)bytes, 0, PAGES_PER_CHUNK);
  }
}

static bool manual_arm(void) {
  uncovered = false;
  size_t n = barrier_range_count();
  for (size_t i = 0; i < n; i++) {
    struct barrier_range r = barrier_range_at(i);
    if (!page_table_cover(r.lo, r.hi)) return false;
    clear_range(r.lo, r.hi);
  }
  atomic_store_explicit(&recording, true, memory_order_relaxed);
  return true;
}

/* A new chunk's reservation gets its bytes (zero) before its pages are
 * handed out, heap_lock held. */
static void manual_cover(uintptr_t lo, uintptr_t hi) {
  const struct barrier_range *r = barrier_range_of(lo);
  if (!page_table_cover(r ? r->lo : lo, r ? r->hi : hi)) uncovered = true;
}

/* Takes every marked byte of [LO, HI): the exchange is acquire, pairing
 * with the note's release, so the rescan that follows sees the store
 * the note was made for. */
static void collect_range(uintptr_t lo, uintptr_t hi, struct barrier_runs *runs) {
  for (uintptr_t slot = lo; slot < hi; slot += CHUNK_BYTES) {
    _Atomic uint8_t *bytes = page_table_byte(slot);
    if (!bytes) continue;
    for (unsigned w = 0; w < PAGES_PER_CHUNK; w += 8) {
      /* Eight bytes at once to skip clean ones (the table is 8-aligned). */
      if (!__atomic_load_n((uint64_t *)(void *)&bytes[w], __ATOMIC_RELAXED)) continue;
      for (unsigned i = w; i < w + 8; i++)
        if (atomic_load_explicit(&bytes[i], memory_order_relaxed) &&
            atomic_exchange_explicit(&bytes[i], 0, memory_order_acquire)) {
          uintptr_t at = slot + (uintptr_t)i * PAGE_BYTES;
          barrier_runs_add(runs, at, at + PAGE_BYTES);
        }
    }
  }
}

static size_t manual_collect(barrier_visit_fn *visit, void *arg) {
  struct barrier_runs runs = {visit, arg, 0, 0, 0, false};
  size_t n = barrier_range_count();
  for (size_t i = 0; i < n; i++) {
    struct barrier_range r = barrier_range_at(i);
    collect_range(r.lo, r.hi, &runs);
  }
  barrier_runs_flush(&runs);
  return uncovered ? (size_t)BARRIER_COLLECT_FAILED : runs.pages;
}

static void manual_disarm(void) { atomic_store_explicit(&recording, false, memory_order_relaxed); }

const struct barrier_ops barrier_manual_ops = {
    .probe = manual_probe, .arm = manual_arm, .cover = manual_cover,
    .collect = manual_collect, .disarm = manual_disarm};

/* Release, not relaxed: the program's store into P comes before the
 * note, and a collect that takes the note (acquire) must see the store
 * when it rescans the page.  With a relaxed note a weakly ordered CPU
 * could let the collect take the note, rescan the old contents, and lose
 * the store for good (the note is gone).  On x86 both are a plain move.
 * Stored every time, not tested first: a note skipped because the byte
 * read as set could race with the collect that clears it. */
void barrier_note_store(const void *p) {
  if (!atomic_load_explicit(&recording, memory_order_relaxed)) return;
  _Atomic uint8_t *byte = page_table_byte((uintptr_t)p);
  if (byte) atomic_store_explicit(byte, 1, memory_order_release);
}

void barrier_note_object(const void *p) {
  if (!atomic_load_explicit(&recording, memory_order_relaxed)) return;
  struct page_header *page;
  uintptr_t start = object_start((uintptr_t)p, &page);
  if (!start) {
    barrier_note_store(p);
    return;
  }
  uintptr_t end = start + object_size(page);
  for (uintptr_t a = start & ~(uintptr_t)(PAGE_BYTES - 1); a < end; a += PAGE_BYTES)
    barrier_note_store((const void *)a);
}
