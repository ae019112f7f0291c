/* Write barriers of the concurrent collector (thesis §5.2.1): which heap
 * pages the program wrote while a cycle marked concurrently, so that the
 * marker rescans them (round after round, then at the finalize pause).
 *
 * One interface, a backend chosen at run time (SGC_BARRIER) and probed at
 * start; an unavailable one falls back, with a warning naming the
 * fallback, down to BARRIER_FULL, which needs nothing from the kernel and
 * reports every page in use as written (always correct, and as slow as a
 * full rescan).  The world need not be stopped for barrier_collect_dirty;
 * barrier_arm and barrier_disarm run with the world stopped. */
#ifndef SGC_BARRIER_H
#define SGC_BARRIER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum barrier_kind {
  BARRIER_UFFD = 0,  /* userfaultfd WP_ASYNC + PAGEMAP_SCAN (Linux 6.7+) */
  BARRIER_SOFTDIRTY, /* /proc/self/clear_refs and the pagemap's bit 55 */
  BARRIER_MPROTECT,  /* write-protection and a SIGSEGV handler */
  BARRIER_MANUAL,    /* the program marks its stores (GC_end_stubborn_change) */
  BARRIER_FULL,      /* no barrier: every page in use counts as written */
  BARRIER_KIND_COUNT
};

/* Per cycle, reset by barrier_arm (what the statistics report). */
struct barrier_counts {
  uint64_t dirty_pages;   /* pages reported by barrier_collect_dirty */
  uint64_t collect_calls; /* barrier_collect_dirty calls (scans) */
  uint64_t faults;        /* write faults taken (mprotect only) */
  uint64_t arm_ns;        /* time spent arming and re-arming */
};

/* Parses SGC_BARRIER (uffd|softdirty|mprotect|manual|full; unset: the
 * best available), probes it, falls back with a warning; returns the
 * kind in use.  Called once, before the first concurrent cycle. */
enum barrier_kind barrier_init(void);
enum barrier_kind barrier_in_use(void);
const char *barrier_name(enum barrier_kind kind);
/* Whether KIND works in this process (probe only, no warning). */
bool barrier_available(enum barrier_kind kind);

/* World stopped: forgets earlier writes and starts recording writes to
 * every heap page (the chunks' whole reserved ranges, so pages the heap
 * grows into during the cycle are covered too). */
void barrier_arm(void);
/* Whether the backend in use may be armed with the world running
 * (heap_lock held, no cycle marking): a cycle's start then arms before
 * its stop, and the walk over every page table entry of the heap (uffd:
 * milliseconds a GiB) leaves its pause. */
bool barrier_arm_beside_program(void);
/* A chunk added while armed (heap_grow): cover [LO, HI) as well.
 * heap_grow calls it itself, through heap_commit_hook (heap.h), which
 * barrier_init sets: the collector need not. */
void barrier_cover(uintptr_t lo, uintptr_t hi);
/* Calls VISIT for each run of pages [lo, hi) written since barrier_arm
 * or the previous call, re-arming them in the same step so that a write
 * after the report shows in the next call; returns the pages reported.
 * One caller at a time, heap_lock held or the world stopped.  Pages may
 * be reported unwritten (per backend: docs/barriers.md), never the
 * reverse, except pages holding no marked object that may hold pointers
 * (no rescan would find anything there): uffd and full leave those out,
 * and uffd leaves them unprotected, so a later collect reports them once
 * they hold one (docs/concurrent.md, invariant 3). */
size_t barrier_collect_dirty(void (*visit)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* barrier_collect_dirty in steps, for a caller that gives its locks up
 * between them (a round of the concurrent marking: docs/concurrent.md).
 * barrier_collect_begin takes the set of pages written so far (false:
 * the backend has no steps; do a whole barrier_collect_dirty); each
 * barrier_collect_step, heap_lock held, reports and re-arms about
 * MAX_PAGES of them as barrier_collect_dirty would, and sets *DONE after
 * the last.  A page written after the begin is reported by a later
 * collect.  One caller at a time, as barrier_collect_dirty; a begin not
 * stepped to the end is forgotten by the next collect of any kind. */
bool barrier_collect_begin(void);
size_t barrier_collect_step(void (*visit)(uintptr_t lo, uintptr_t hi, void *arg), void *arg,
                            size_t max_pages, bool *done);
/* World stopped, right before barrier_stop_recording (a cycle's finish):
 * barrier_collect_dirty, but the reported pages need not be re-armed. */
size_t barrier_collect_last(void (*visit)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* barrier_collect_last in parts that several threads report at once
 * (the finish's parallel rescan, world stopped): barrier_collect_last_parts
 * says how many (0: not in parts; call barrier_collect_last); any thread
 * reports part K with barrier_collect_last_part, which sets *PAGES and
 * is false when the kernel refused; once all are done, one thread calls
 * barrier_collect_last_end with the pages reported and whether any part
 * was refused (then every page in use is reported to VISIT, as for a
 * refused collect), and it returns the pages, as barrier_collect_last. */
size_t barrier_collect_last_parts(void);
bool barrier_collect_last_part(size_t k, void (*visit)(uintptr_t lo, uintptr_t hi, void *arg), void *arg,
                               size_t *pages);
size_t barrier_collect_last_end(size_t pages, bool refused,
                                void (*visit)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* Pages [LO, HI) begin holding new objects (a small page formatted, a
 * large object placed; alloc/): the mprotect barrier leaves them
 * writable for the rest of the cycle (thesis §5.2.1: the allocator
 * unprotects the pages it hands out).  A no-op when not armed. */
void barrier_pages_formatted(uintptr_t lo, uintptr_t hi);
/* World stopped: stops recording; pages are left writable. */
void barrier_disarm(void);
/* World stopped: stops recording at a cycle's finish, as barrier_disarm,
 * but a backend that keeps its protections between cycles (uffd) leaves
 * them: a write meanwhile faults once (the kernel resolves it), and the
 * next barrier_arm forgets it. */
void barrier_stop_recording(void);
bool barrier_armed(void);
/* The manual barrier's record of a store into P (GC_end_stubborn_change,
 * GC_ptr_store_and_dirty); a no-op for the other backends. */
void barrier_note_store(const void *p);
/* The same for every page of the object holding P (or P's page where no
 * object holds it): GC_end_stubborn_change, which names an object. */
void barrier_note_object(const void *p);
/* GC_set_manual_vdb_allowed: with it on and SGC_BARRIER unset,
 * barrier_init picks the manual barrier (bdwgc's rule). */
void barrier_set_manual_allowed(bool on);
bool barrier_manual_allowed(void);

struct barrier_counts barrier_counts(void);

/* SET without SIGSEGV and SIGBUS, in *COPY (which SET may already be),
 * once the mprotect barrier's handler is in: a write fault while they are
 * blocked kills the process.  Else SET.  For the interposed signal-mask
 * calls (threads/interpose.c). */
const sigset_t *barrier_mask_keeping_faults(const sigset_t *set, sigset_t *copy);

#endif
