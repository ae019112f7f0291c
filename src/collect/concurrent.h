/* Concurrent cycles (thesis §5.2, docs/concurrent.md): a short stop that
 * pushes the roots and arms the write barrier, GC threads marking beside
 * the program, rounds that rescan the pages it wrote, and a finish that
 * stops the world once more for the roots and the last written pages.
 * The start and the finish are collect.c's (they share its steps); this
 * file holds the cycle's state, the background marking and the policy. */
#ifndef SGC_CONCURRENT_H
#define SGC_CONCURRENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgc.h"

/* heap_lock held: switches the mode of the next collections (a running
 * cycle is finished by the next collection, whatever the mode). */
void concurrent_set_mode(bool on);
/* heap_lock held, before a cycle's start: the barrier chosen (once). */
void concurrent_prepare(void);
/* Between a cycle's start and its finish. */
bool concurrent_cycle_running(void);
/* The background marking has converged: the next slow path finishes. */
bool concurrent_cycle_ready(void);

/* heap_lock held.  Whether allocation since the last collection,
 * ALLOCATED, calls for a cycle to start, with THRESHOLD the stop
 * collector's trigger. */
bool concurrent_should_start(size_t allocated, size_t threshold);
/* Whether a running cycle is to finish now; *FALLBACK when it has not
 * converged (the program allocated past what the cycle may take). */
bool concurrent_should_finish(size_t allocated, size_t threshold, bool *fallback);
/* heap_lock held: how much a running cycle that has not converged is to
 * grow the heap by now (under SGC_CYCLE_GROWTH's cap), 0 when none. */
size_t concurrent_growth_step(size_t threshold);
/* heap_lock held, no cycle running: the heap was used up (it is about to
 * grow) at ALLOCATED since the last collection; later cycles start that
 * much earlier. */
void concurrent_note_heap_used_up(size_t allocated, size_t threshold);

/* collect.c's start, heap_lock held and the page path closed, the marks
 * cleared, before the world stops: arms the barrier there where the
 * backend allows it (barrier_arm_beside_program), so its walk over the
 * heap's page tables is not part of the pause. */
void concurrent_arm_before_stop(void);
/* collect.c's start, world stopped, after the roots: arms the barrier
 * (unless armed before the stop) and records the cycle as running.
 * ALLOCATED: the count at the start; THRESHOLD: the stop collector's
 * trigger (the assist rate from both). */
void concurrent_arm(size_t allocated, size_t threshold);
/* After the world restarts: the GC threads start marking. */
void concurrent_marking_begin(void);
/* heap_lock held, before the finish stops the world: stops the
 * background marking and waits until it has left every marker's stack. */
void concurrent_marking_stop(void);
/* World stopped, the roots pushed: moves the GC threads' leftover work to
 * marker 0, pushes the marked objects of every page written since the
 * last round, and stops the barrier's recording. */
void concurrent_finish_mark(void);
/* The cycle recorded as over: its figures go into the finish's record
 * (the concurrent fields of SGC_gc_record_t but the finish's own
 * parts). */
void concurrent_end(SGC_gc_record_t *out, bool fallback);
/* The start pause's length, for the finish's record. */
void concurrent_note_start_pause(uint64_t ns);

/* fork(): the background marking pauses around it; the child has no GC
 * threads and abandons the cycle. */
void concurrent_before_fork(void);
void concurrent_after_fork_parent(void);
void concurrent_after_fork_child(void);

/* The program set the mark of the object at BASE on PAGE during a cycle
 * (GC_set_mark_bit: a weak map resurrecting an entry): marked but never
 * scanned, its children would be lost.  Its pages are written onto
 * themselves, so every barrier reports them and a round or the finish
 * scans the object (the rescan takes marked objects of written pages). */
struct page_header;
void concurrent_object_blackened(struct page_header *page, uintptr_t base);

/* Totals since start (SGC_get_stats). */
uint64_t concurrent_cycles(void);
uint64_t concurrent_fallbacks(void);

#endif
