/* Toggle-refs (bdwgc's GC_toggleref_add, made for runtimes whose objects
 * have a peer in another heap, such as Mono's bridge to Objective-C).
 *
 * Each collection, before it marks, asks the program's function about
 * every registered object: STRONG keeps it (its entry is a root this
 * collection), WEAK keeps it only if something else does (the entry is
 * forgotten when the object is found unreachable), DROP forgets the
 * entry.  Entries hold hidden pointers in malloc'd memory, which the
 * collector does not scan, so only STRONG ones keep anything alive.
 * Everything here runs under meta_lock; the collection holds it with the
 * world stopped, so the function runs then and must not allocate. */
#include <stdlib.h>

#include "collect/collect.h"
#include "collect/finalize.h"
#include "collect/ptr_table.h"
#include "common.h"
#include "mark/mark.h"

/* hide_pointer(object) of each entry.  IS_STRONG at registration needs no
 * keeping: the function is asked again before every marking. */
static uintptr_t *entries;
static size_t entry_count, entry_capacity;
/* Read by the collection under meta_lock; written under it too. */
static GC_toggleref_func toggleref_func;

GC_API void GC_set_toggleref_func(GC_toggleref_func fn) {
  sgc_ensure_init();
  meta_lock_take();
  toggleref_func = fn;
  pthread_mutex_unlock(&meta_lock);
}

GC_API GC_toggleref_func GC_get_toggleref_func(void) {
  sgc_ensure_init();
  meta_lock_take();
  GC_toggleref_func fn = toggleref_func;
  pthread_mutex_unlock(&meta_lock);
  return fn;
}

GC_API int GC_toggleref_add(void *obj, int is_strong) {
  (void)is_strong;
  sgc_ensure_init();
  if (!obj) sgc_fatal("GC_toggleref_add(NULL)");
  int result = GC_SUCCESS;
  meta_lock_take();
  /* As bdwgc: without a function there is nothing to ask, and no entry. */
  if (toggleref_func) {
    if (entry_count == entry_capacity) {
      size_t capacity = entry_capacity ? 2 * entry_capacity : 64;
      uintptr_t *grown = realloc(entries, capacity * sizeof *grown);
      if (grown) {
        entries = grown;
        entry_capacity = capacity;
      }
    }
    if (entry_count < entry_capacity)
      entries[entry_count++] = hide_pointer(obj);
    else
      result = GC_NO_MEMORY;
  }
  pthread_mutex_unlock(&meta_lock);
  return result;
}

/* World stopped, meta_lock held, before the roots are marked: asks the
 * function about every entry and pushes the strong ones. */
void toggleref_before_mark(void) {
  size_t kept = 0;
  for (size_t i = 0; i < entry_count; i++) {
    void *obj = reveal_pointer(entries[i]);
    switch (toggleref_func ? toggleref_func(obj) : GC_TOGGLE_REF_DROP) {
    case GC_TOGGLE_REF_STRONG:
      entries[kept++] = entries[i];
      mark_word((uintptr_t)obj);
      break;
    case GC_TOGGLE_REF_WEAK:
      entries[kept++] = entries[i];
      break;
    default: /* GC_TOGGLE_REF_DROP, or an answer bdwgc does not define */
      break;
    }
  }
  entry_count = kept;
}

/* After marking from the roots, before finalization marks what
 * finalizable objects reach (bdwgc's order): weak entries whose object
 * was not reached are forgotten (strong ones were marked above). */
void toggleref_after_mark(void) {
  size_t kept = 0;
  for (size_t i = 0; i < entry_count; i++)
    if (object_is_marked(reveal_pointer(entries[i]))) entries[kept++] = entries[i];
  entry_count = kept;
}
