/* Finalization and disappearing links (bdwgc semantics), run by the
 * collector after the roots are marked; meta_lock held, world stopped. */
#ifndef SGC_FINALIZE_H
#define SGC_FINALIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pushes client data of registered finalizers and the objects waiting in
 * the finalization queue: they stay alive until their finalizer ran. */
void finalize_push_roots(void);
/* After marking from the roots: clears short links, finds objects ready
 * for finalization in bdwgc's topological order, marks them (they live
 * until finalized), clears long links, drops links stored in dead
 * objects.  Returns the number of objects queued. */
size_t finalize_after_mark(void);
size_t finalize_queue_length(void);
/* For back pointers (collect/backptr.c), meta_lock held, world stopped:
 * whether an object in [LO, HI) waits for its finalizer, and whether a
 * finalizer's client data points into [LO, HI). */
bool finalize_queue_holds(uintptr_t lo, uintptr_t hi);
bool finalize_client_data_holds(uintptr_t lo, uintptr_t hi);
/* After a collection, outside every lock. */
void finalize_run_or_notify(void);

/* toggleref.c: asking the program's function and pushing the strong
 * entries, before the roots are marked; forgetting weak entries whose
 * object died, after. */
void toggleref_before_mark(void);
void toggleref_after_mark(void);

/* weak.c */
void weak_clear_unmarked(bool long_links);
void weak_drop_links_in_dead_objects(void);
/* Prints every disappearing link (GC_dump_finalization), meta_lock held. */
void weak_dump(void);
/* A line's worth about the object at OBJ (api/compat_debug.c): the
 * program's GC_register_describe_type_fn for its kind, or kind and size. */
void describe_object(void *obj, char *out);

/* true when OBJ (an object start) is marked, or not a heap object */
bool object_is_marked(const void *obj);

#endif
