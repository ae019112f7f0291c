/* The collector's side of debugging allocation (collect/debug_alloc.c). */
#ifndef SGC_API_DEBUG_ALLOC_H
#define SGC_API_DEBUG_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* After marking, before sweeping, heap_lock held: checks every debugging
 * object, drops the unreachable ones from the list, and in leak mode
 * reports and keeps those never freed. */
void debug_objects_after_mark(void);
/* Prints what the last collections found; outside every lock. */
void debug_objects_print_reports(void);
/* Around fork, with the collector's locks held: takes (TAKE) or releases
 * the debugging objects' lock, so no child inherits it held. */
void debug_objects_fork_lock(bool take);
/* A plain object (no debugging header) found leaked (collect/leak_find.c):
 * listed with the next report, in bdwgc's words.  Takes debug_lock. */
void debug_report_plain_leak(void *object, size_t size, bool atomic);
/* A debugging object as back pointers and backtraces see it. */
struct debug_object {
  void *user; /* what the GC_debug_* call returned */
  const char *file;
  int line;
  size_t size; /* the program's bytes */
  int kind;    /* bdwgc's numbering */
  bool survived; /* a collection since its allocation found it reachable */
};
/* Whether the object starting at BASE (a live heap object of BYTES) carries a
 * debugging header, and if so what it says.  With the world stopped or
 * debug_lock held. */
bool debug_object_view(uintptr_t base, size_t bytes, struct debug_object *out);
/* One line about D in bdwgc's words (GC_print_obj's), through
 * GC_err_printf: call it outside sgc's locks. */
void debug_print_object(const struct debug_object *d);
/* Leak mode was switched on: one more collection at exit. */
void debug_objects_leak_mode_on(void);

#endif
