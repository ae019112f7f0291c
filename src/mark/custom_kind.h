/* Object kinds a program makes (bdwgc's GC_new_kind and GC_new_proc):
 * each has a mark descriptor that says how the marker finds its pointers
 * -- a length, a bitmap, a descriptor inside the object, or a mark
 * procedure the program supplies -- where sgc's own kinds are scanned
 * whole or not at all.  Language runtimes use them for objects whose
 * fields they mark themselves: Guile's threads (which mark their VM
 * stacks) and weak tables (which mark only the strong half of each
 * entry).
 *
 * A custom kind's number is its page_header.kind, KIND_COUNT and up, the
 * same number bdwgc's API hands out and takes back.  Allocation and
 * reclamation are in alloc/custom_alloc.c; descriptors are read here. */
#ifndef SGC_CUSTOM_KIND_H
#define SGC_CUSTOM_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/layout.h"
#include "mark/marker.h"

struct page_header;

enum {
  MARK_PROC_MAX = 64,    /* bdwgc's GC_MAX_MARK_PROCS: the index has 6 bits */
};

/* bdwgc's descriptor encoding (gc_mark.h), which compiled programs carry
 * in their GC_MAKE_PROC constants: the tag in the low 2 bits. */
enum descriptor_tag {
  DESCRIPTOR_LENGTH = 0,     /* the word is a byte count from the start */
  DESCRIPTOR_BITMAP = 1,     /* bit 63 says word 0 is a pointer, bit 62 word 1, ... */
  DESCRIPTOR_PROC = 2,       /* bits 2..7 a mark procedure, the rest its argument */
  DESCRIPTOR_PER_OBJECT = 3, /* the real descriptor is read from the object */
  DESCRIPTOR_TAG_BITS = 2,
  DESCRIPTOR_PROC_INDEX_BITS = 6,
};

struct custom_kind {
  uintptr_t descriptor;
  bool adjust; /* length and per-object descriptors add the object's size (bdwgc) */
  bool proc;   /* the descriptor names a mark procedure */
  bool clear;  /* asked for cleared objects; sgc always clears them */
  /* Its objects may run a mark procedure (a procedure's kind, or one
   * whose per-object descriptors may name one): several GC threads set
   * their marks with the exchange, so each procedure runs once (mark.c). */
  bool once;
};

extern struct custom_kind custom_kinds[CUSTOM_KIND_MAX];

/* Whether KIND is a kind GC_new_kind returned. */
bool custom_kind_valid(int kind);

/* Marks what the object at BASE (SIZE bytes, of custom KIND) points to by
 * its kind's descriptor, with marker M: ranges go on M's stack, and an
 * object whose descriptor names a mark procedure goes there as a
 * procedure entry (MARK_ENTRY_PROC, marker.h), so a chain of objects
 * marked by procedures costs no C stack. */
void custom_kind_scan(struct marker *m, unsigned kind, uintptr_t base, size_t size);
/* A popped procedure entry (MARK_ENTRY_PROC): the procedure DESCRIPTOR
 * names runs on M for the object at BASE. */
void custom_kind_run_entry(struct marker *m, uintptr_t base, uintptr_t descriptor);
/* KIND's per-object descriptors never name a procedure (gc_typed.h's,
 * which GC_make_descriptor makes): its marks keep SGC_MARK_SET's rule. */
void custom_kind_without_procs(unsigned kind);
/* Whether procedures wait for a concurrent cycle's finish
 * (custom_kind_defer_procs) rather than run where their objects are
 * found. */
extern _Atomic bool custom_procs_wait_for_finish;

/* Before marking (world stopped): bdwgc's GC_least_plausible_heap_addr
 * and GC_greatest_plausible_heap_addr, which mark procedures read through
 * GC_MARK_AND_PUSH, cover the heap. */
void custom_kind_publish_heap_bounds(uintptr_t lowest, uintptr_t highest);

/* Concurrent cycles: from custom_kind_defer_procs (before the start's
 * stop: the start's root scan may scan small objects in place) an object
 * whose descriptor names a mark procedure is kept for the finish, where
 * custom_kind_run_deferred (world stopped, markers idle) runs them on M:
 * no procedure runs beside the program, nor on the start's state alone.
 * After a fork the child forgets the abandoned cycle's. */
void custom_kind_defer_procs(void);
void custom_kind_run_deferred(struct marker *m);
void custom_kind_forget_deferred(void);

/* The marker of the mark procedure this thread is running, or NULL. */
struct marker *custom_kind_current_marker(void);

#endif
