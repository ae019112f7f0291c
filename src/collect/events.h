/* The bdwgc callbacks a collection reports to (api/compat_hooks.c):
 * GC_set_on_collection_event, GC_set_start_callback,
 * GC_set_push_other_roots and GC_set_on_heap_resize.  All are called with
 * heap_lock held, as bdwgc calls them with its allocation lock held: a
 * callback must not allocate. */
#ifndef SGC_COLLECT_EVENTS_H
#define SGC_COLLECT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

/* bdwgc's GC_EventType numbering, which the callback receives. */
enum collection_event {
  EVENT_START,
  EVENT_MARK_START,
  EVENT_MARK_END,
  EVENT_RECLAIM_START,
  EVENT_RECLAIM_END,
  EVENT_END,
  EVENT_PRE_STOP_WORLD,
  EVENT_POST_STOP_WORLD,
  EVENT_PRE_START_WORLD,
  EVENT_POST_START_WORLD,
};

void collection_event(enum collection_event event);
/* Whether the program set a function for a collection's start
 * (GC_set_on_collection_event, GC_set_start_callback). */
bool collection_start_hooks_set(void);
/* GC_set_start_callback's function, at the start of every collection. */
void collection_start_callback(void);
/* GC_set_push_other_roots's function, while roots are pushed. */
void collection_push_other_roots(void);
/* GC_call_with_alloc_lock's FN(CD), heap_lock held. */
void *call_with_lock_held(void *(*fn)(void *), void *cd);

#endif
