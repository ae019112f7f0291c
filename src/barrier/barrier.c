/* The barrier's dispatch and its kernel-free fallback, BARRIER_FULL
 * (barrier.h).  The kernel-backed backends live in their own files. */
#include "barrier/barrier.h"

#include <stdatomic.h>

#include "heap/heap.h"

static enum barrier_kind barrier_kind_used = BARRIER_FULL;
static _Atomic bool armed;
static struct barrier_counts counts;

static const char *const names[BARRIER_KIND_COUNT] = {
    [BARRIER_UFFD] = "uffd", [BARRIER_SOFTDIRTY] = "softdirty",
    [BARRIER_MPROTECT] = "mprotect", [BARRIER_MANUAL] = "manual",
    [BARRIER_FULL] = "full"};

const char *barrier_name(enum barrier_kind kind) {
  return kind < BARRIER_KIND_COUNT ? names[kind] : "?";
}

bool barrier_available(enum barrier_kind kind) { return kind == BARRIER_FULL; }

enum barrier_kind barrier_init(void) { return barrier_kind_used = BARRIER_FULL; }
enum barrier_kind barrier_in_use(void) { return barrier_kind_used; }

void barrier_arm(void) {
  counts = (struct barrier_counts){0};
  /* Release: a thread that sees the flag set sees the counts reset. */
  atomic_store_explicit(&armed, true, memory_order_release);
}
void barrier_cover(uintptr_t lo, uintptr_t hi) {}
void barrier_disarm(void) { atomic_store_explicit(&armed, false, memory_order_release); }
bool barrier_armed(void) { return atomic_load_explicit(&armed, memory_order_acquire); }
void barrier_note_store(const void *p) {}
struct barrier_counts barrier_counts(void) { return counts; }

/* BARRIER_FULL: every page in use, chunk by chunk, as maximal runs. */
size_t barrier_collect_dirty(void (*visit)(uintptr_t, uintptr_t, void *), void *arg) {
  size_t reported = 0;
  counts.collect_calls++;
  FOR_EACH_CHUNK(c) {
    uintptr_t run_lo = 0;
    for (size_t i = 0; i < c->page_count; i++) {
      uint8_t state = atomic_load_explicit(&c->pages[i].state, memory_order_acquire);
      bool in_use = state == PAGE_SMALL || state == PAGE_LARGE_HEAD || state == PAGE_LARGE_TAIL;
      uintptr_t at = c->base + i * PAGE_BYTES;
      if (in_use && !run_lo) run_lo = at;
      if (!in_use && run_lo) {
        visit(run_lo, at, arg);
        reported += (at - run_lo) / PAGE_BYTES;
        run_lo = 0;
      }
    }
    if (run_lo) {
      uintptr_t end = c->base + c->page_count * PAGE_BYTES;
      visit(run_lo, end, arg);
      reported += (end - run_lo) / PAGE_BYTES;
    }
  }
  counts.dirty_pages += reported;
  return reported;
}
