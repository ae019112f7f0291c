/* What the barrier's backends share (barrier.c dispatches through their
 * ops): the ranges they cover, a byte per heap page, the runs they report
 * and the statistics.  Internal to src/barrier/. */
#ifndef SGC_BARRIER_BACKEND_H
#define SGC_BARRIER_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "barrier/barrier.h"

typedef void barrier_visit_fn(uintptr_t lo, uintptr_t hi, void *arg);

enum { BARRIER_COLLECT_FAILED = -1 };

struct barrier_ops {
  /* Whether the backend works in this process; may set it up. */
  bool (*probe)(void);
  /* Once, when barrier_init picks the backend, the world running (NULL:
   * nothing to do); false when it cannot start after all. */
  bool (*start)(void);
  /* World stopped (or running, with arm_beside_program): forget earlier
   * writes, record from now on.  False when the kernel refused now (the
   * caller reports every page, as full). */
  bool (*arm)(void);
  /* [LO, HI) just committed by heap_grow (heap_lock held), armed or not. */
  void (*cover)(uintptr_t lo, uintptr_t hi);
  /* barrier_pages_formatted, while armed. */
  void (*formatted)(uintptr_t lo, uintptr_t hi);
  /* Reports the pages written since arm or the previous call and re-arms
   * them; BARRIER_COLLECT_FAILED when the kernel refused (barrier.c then
   * reports every page in use, for the rest of the cycle). */
  size_t (*collect)(barrier_visit_fn *visit, void *arg);
  /* barrier_collect_last's, where it need not re-arm (NULL: collect). */
  size_t (*collect_last)(barrier_visit_fn *visit, void *arg);
  /* barrier_collect_begin and _step (NULL: no steps; the caller does a
   * whole collect).  begin false: the kernel refused (as collect's
   * BARRIER_COLLECT_FAILED); step returns that too. */
  bool (*collect_begin)(void);
  size_t (*collect_step)(barrier_visit_fn *visit, void *arg, size_t max_pages, bool *done);
  /* barrier_collect_last in parts (NULL: not in parts): last_parts gives
   * their count, 0 when it cannot now; last_part reports part K as
   * collect_last would, BARRIER_COLLECT_FAILED when the kernel refused.
   * Several threads call last_part at once. */
  size_t (*last_parts)(void);
  size_t (*last_part)(size_t k, barrier_visit_fn *visit, void *arg);
  void (*disarm)(void);
  /* barrier_stop_recording leaves the protections (no disarm): a page
   * left protected and not written counts as unwritten at the next arm,
   * which is what it is. */
  bool keeps_protections;
  /* arm may run with the world running (heap_lock held, the page path
   * closed): the kernel records every write from its protection on, so
   * writes before the cycle's stop are only reported too (rescanned if
   * their objects are marked by then). */
  bool arm_beside_program;
};
/* A probe's reason for saying no, for the fallback's warning (static). */
void barrier_probe_refused(enum barrier_kind kind, const char *why);
extern const struct barrier_ops barrier_uffd_ops, barrier_softdirty_ops, barrier_mprotect_ops,
    barrier_manual_ops;

/* ---- barrier.c: the heap's ranges a backend covers ----
 * Every chunk's whole reservation [base, base + reserved_pages pages),
 * appended at arm and when a chunk is added; never removed (chunks are
 * never unmapped).  Readers iterate without a lock (acquire on the
 * count), so a collect concurrent with heap_grow sees a prefix. */
struct barrier_range {
  uintptr_t lo, hi;
};
size_t barrier_range_count(void);
struct barrier_range barrier_range_at(size_t i);
/* Adds [LO, HI) unless a range holds LO; true when it was added. */
bool barrier_range_add(uintptr_t lo, uintptr_t hi);
/* The range holding A, or NULL. */
const struct barrier_range *barrier_range_of(uintptr_t a);

/* Coalesces pages reported in address order into maximal runs. */
struct barrier_runs {
  barrier_visit_fn *visit;
  void *arg;
  uintptr_t lo, hi;
  size_t pages;
  bool stop; /* set by a visitor: barrier_select_runs walks no further */
};
void barrier_runs_add(struct barrier_runs *r, uintptr_t lo, uintptr_t hi);
void barrier_runs_flush(struct barrier_runs *r);

/* Which pages a walk of barrier_for_each_run selects, all in use by
 * kinds that may hold pointers (free and pointer-free pages never need a
 * rescan): those that held survivors of the last collection (small pages
 * of the thread-local kinds with none, formatted since, are left out),
 * with every large object and page of the other kinds; or those holding
 * a marked object (small pages, large objects). */
enum barrier_pages { BARRIER_PAGES_SURVIVORS, BARRIER_PAGES_MARKED, BARRIER_PAGES_POINTERS };
/* Calls VISIT for each maximal run of the heap pages WHICH selects.
 * heap_lock held or the world stopped (the walk reads the pool). */
void barrier_for_each_run(enum barrier_pages which, barrier_visit_fn *visit, void *arg);
/* The same over [LO, HI), within one chunk's reservation, added to RUNS
 * (not flushed): for a backend that knows which pages were written
 * first, and walks only those. */
void barrier_select_runs(enum barrier_pages which, uintptr_t lo, uintptr_t hi, struct barrier_runs *runs);

/* Statistics shared with the backends (barrier_counts reads them). */
extern _Atomic uint64_t barrier_fault_count, barrier_arm_ns;

/* ---- page_table.c: one byte per heap page, for manual and mprotect ----
 * Two levels like the page map (heap.h): a 4 MiB slot's 1024 bytes.  The
 * lookup is lock-free and async-signal-safe; the tables are made at arm
 * and cover, outside any signal handler, and never freed. */
bool page_table_cover(uintptr_t lo, uintptr_t hi);
/* The byte of A's page, or NULL where nothing covers A. */
_Atomic uint8_t *page_table_byte(uintptr_t a);

/* Whether the page at A holds only pointer-free objects now (atomic
 * kinds) or is free: read without a lock, so only a hint while the world
 * runs; exact with it stopped.  (pointer_free.c) */
enum page_content { PAGE_CONTENT_FREE, PAGE_CONTENT_POINTER_FREE, PAGE_CONTENT_POINTERS };
enum page_content barrier_page_content(uintptr_t a);

#endif
