/* Roots besides thread stacks: the writable segments of the program and
 * its shared libraries, ranges the program registers, exclusions. */
#ifndef SGC_ROOTS_H
#define SGC_ROOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void roots_init(void);
/* Leaves one of sgc's own static tables out of the roots.  With sgc linked
 * statically its tables sit in the program's data segment, which is
 * scanned whole; none holds the only reference to a collectable object
 * (free lists are marked by the collector itself), and together they are
 * 4.7 MB, mostly zeros, scanned at every collection. */
void roots_exclude_own_table(const void *table, size_t bytes);
/* Re-reads the loaded objects' segments (dl_iterate_phdr).  Never with
 * the world stopped: the loader's lock may be held by a thread we stop. */
void roots_snapshot_static(void);
/* Takes that snapshot and runs THEN(ARG) while no loaded object can be
 * unmapped or unlinked: dlopen and dlclose in other threads wait until
 * THEN returns.  Without it a dlclose between the snapshot and the stop
 * (or, in a thread the collector does not stop, during marking) unmapped
 * a segment the markers then read (SIGSEGV/SIGBUS;
 * tests/blackbox/dso_unload.c).  THEN may stop the world: no stopped
 * thread holds the loader's lock. */
void roots_snapshot_static_then(void (*then)(void *), void *arg);
/* Pushes every static and registered root range on the mark stack
 * (world stopped, meta_lock held); returns their total bytes. */
size_t roots_push_all(void);
/* Calls VISIT(lo, hi, ARG) for each of those ranges, as roots_push_all
 * would push them (world stopped, meta_lock held); returns their bytes. */
typedef void roots_range_visit(uintptr_t lo, uintptr_t hi, void *arg);
size_t roots_for_each_range(roots_range_visit *visit, void *arg);
/* Whether A lies in a root range, not excluded: a loaded object's
 * writable data, or (unless LOADED_OBJECTS_ONLY) a GC_add_roots range.
 * Heap lock held. */
bool roots_hold(uintptr_t a, bool loaded_objects_only);

struct sgc_thread;
/* roots_find_thread_tls: declared in threads/thread.h, which calls it. */
/* Visits T's thread-local storage blocks (world stopped). */
void roots_visit_thread_tls(const struct sgc_thread *t, roots_range_visit *visit, void *arg);
/* One of the layout descriptions glibc exports for libthread_db
 * (_thread_db_*: an element's size in bits, a count, an offset; a size
 * alone for the _sizeof_ ones), or NULL (roots/thread_specific.c). */
const uint32_t *roots_glibc_description(const char *name);
/* Reads glibc's thread descriptor layout (roots/thread_specific.c). */
void roots_thread_specific_init(void);
/* Visits the memory holding T's pthread_setspecific values where the
 * stack scan misses them (world stopped). */
void roots_visit_thread_specific(const struct sgc_thread *t, roots_range_visit *visit, void *arg);

/* Thread-local storage of dlopen()ed libraries (roots/dynamic_tls.c):
 * reads glibc's layout once; the snapshot starts a list (begin) and notes
 * every library it takes (note); with the world stopped, resolve keeps
 * those loaded by dlopen, and visit_thread visits T's blocks of them. */
struct dl_phdr_info;
void roots_dynamic_tls_init(void);
void roots_dynamic_tls_begin(void);
void roots_dynamic_tls_note(const struct dl_phdr_info *info);
void roots_dynamic_tls_resolve(void);
void roots_visit_thread_dynamic_tls(const struct sgc_thread *t, roots_range_visit *visit,
                                     void *arg);

#endif
