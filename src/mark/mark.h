/* Marking (thesis §3.3): a conservative scan from the roots over a mark
 * stack of address ranges.  This interface is what the parallel marker
 * (per-thread stacks, stealing, termination detection) replaces. */
#ifndef SGC_MARK_H
#define SGC_MARK_H

#include <stdbool.h>
#include <stdint.h>

#include "heap/heap.h"

void mark_init(void);
/* Clears the mark bits of every collectable object (world stopped). */
void mark_clear_all(void);
/* Queues [LO, HI) to be scanned conservatively (a root or an object). */
void mark_push_range(uintptr_t lo, uintptr_t hi);
/* Treats WORD as a possible pointer: marks and queues what it points to. */
void mark_word(uintptr_t word);
/* Marks the object at BASE without scanning it (free-list objects). */
void mark_without_scan(struct page_header *page, uintptr_t base);
/* Queues the contents of the object at BASE; with EXCLUDE_SELF, words
 * pointing back into the object are ignored (finalizer_ignore_self). */
void mark_push_contents(struct page_header *page, uintptr_t base);
void mark_scan_contents_excluding_self(struct page_header *page, uintptr_t base);
/* Processes the stack until it is empty. */
void mark_drain(void);

struct mark_totals {
  uint64_t bytes;   /* bytes of objects newly marked */
  uint64_t objects;
};
extern struct mark_totals mark_totals;

#endif
