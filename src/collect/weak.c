/* Disappearing links: a registered location is set to NULL when its object
 * dies.  Short links are cleared before finalization marking (an object
 * revived for its finalizer is still gone for them), long links after. */
#include <stdio.h>

#include "collect/collect.h"
#include "collect/finalize.h"
#include "collect/ptr_table.h"
#include "common.h"

static struct ptr_table short_links, long_links;

static bool link_pointer_valid(void **link) {
  return link && ((uintptr_t)link & (sizeof(void *) - 1)) == 0;
}

static int register_link(struct ptr_table *t, void **link, const void *obj) {
  sgc_ensure_init();
  if (!link_pointer_valid(link)) sgc_fatal("disappearing link %p is not an aligned pointer", (void *)link);
  meta_lock_take();
  int result = GC_SUCCESS;
  struct ptr_entry *existing = ptr_table_find(t, link);
  if (existing) {
    /* bdwgc: the last object a link was registered with wins. */
    existing->value[0] = hide_pointer(obj);
    result = GC_DUPLICATE;
  } else {
    struct ptr_entry *e = ptr_table_insert(t, link);
    if (e) e->value[0] = hide_pointer(obj);
    else result = GC_NO_THREADS; /* bdwgc's GC_NO_MEMORY has the same value */
  }
  pthread_mutex_unlock(&meta_lock);
  return result;
}

static int unregister_link(struct ptr_table *t, void **link) {
  meta_lock_take();
  struct ptr_entry *e = ptr_table_remove(t, link);
  if (e) ptr_entry_release(e);
  pthread_mutex_unlock(&meta_lock);
  return e != NULL;
}

static int move_link(struct ptr_table *t, void **link, void **new_link) {
  if (!link_pointer_valid(new_link)) sgc_fatal("disappearing link %p is not an aligned pointer", (void *)new_link);
  meta_lock_take();
  int result;
  struct ptr_entry *e = ptr_table_find(t, link);
  if (!e) {
    result = GC_NOT_FOUND;
  } else if (link == new_link) {
    result = GC_SUCCESS;
  } else if (ptr_table_find(t, new_link)) {
    result = GC_DUPLICATE;
  } else {
    uintptr_t obj = e->value[0];
    ptr_entry_release(ptr_table_remove(t, link));
    struct ptr_entry *moved = ptr_table_insert(t, new_link); /* reuses the released entry */
    moved->value[0] = obj;
    result = GC_SUCCESS;
  }
  pthread_mutex_unlock(&meta_lock);
  return result;
}

GC_API int GC_general_register_disappearing_link(void **link, const void *obj) {
  return register_link(&short_links, link, obj);
}
/* The old form: LINK lies inside a heap object and is cleared when that
 * object (not *LINK) dies. */
GC_API int GC_register_disappearing_link(void **link) {
  void *container = GC_base(link);
  if (!container)
    sgc_fatal("GC_register_disappearing_link(%p): the link must lie inside a heap object",
              (void *)link);
  return register_link(&short_links, link, container);
}
GC_API int GC_unregister_disappearing_link(void **link) { return unregister_link(&short_links, link); }
GC_API int GC_move_disappearing_link(void **link, void **new_link) {
  return move_link(&short_links, link, new_link);
}
GC_API int GC_register_long_link(void **link, const void *obj) {
  return register_link(&long_links, link, obj);
}
GC_API int GC_unregister_long_link(void **link) { return unregister_link(&long_links, link); }
GC_API int GC_move_long_link(void **link, void **new_link) {
  return move_link(&long_links, link, new_link);
}

static bool target_dead(struct ptr_entry *e, void *arg) {
  (void)arg;
  if (object_is_marked(reveal_pointer(e->value[0]))) return false;
  *(void **)reveal_pointer(e->hidden_key) = NULL;
  return true;
}

static void release(struct ptr_entry *e, void *arg) {
  (void)arg;
  ptr_entry_release(e);
}

void weak_clear_unmarked(bool long_kind) {
  ptr_table_filter(long_kind ? &long_links : &short_links, target_dead, release, NULL);
}

/* A link stored inside an object that died goes with it. */
static bool link_in_dead_object(struct ptr_entry *e, void *arg) {
  (void)arg;
  return !object_is_marked(reveal_pointer(e->hidden_key));
}

void weak_drop_links_in_dead_objects(void) {
  ptr_table_filter(&short_links, link_in_dead_object, release, NULL);
  ptr_table_filter(&long_links, link_in_dead_object, release, NULL);
}

static bool print_link(struct ptr_entry *e, void *arg) {
  fprintf(stderr, "sgc:   %s link %p -> %p\n", (const char *)arg, reveal_pointer(e->hidden_key),
          reveal_pointer(e->value[0]));
  return false;
}

void weak_dump(void) {
  fprintf(stderr, "sgc: disappearing links: %zu short, %zu long\n", short_links.count,
          long_links.count);
  ptr_table_filter(&short_links, print_link, release, "short");
  ptr_table_filter(&long_links, print_link, release, "long");
}
