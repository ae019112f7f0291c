/* Shared batches of freed objects.
 *
 * GC_free pushes onto the caller's own list without a lock.  Left alone,
 * a thread that frees a lot and then stops allocating would keep that
 * memory forever (the unbounded blow-up of thesis §2.3's AL policy); so
 * once a thread has freed FREE_FLUSH_BYTES of one class since its last
 * hand-back, the whole list moves here as one batch, and any thread's
 * refill takes a batch before sweeping.  A batch is a free list; its first
 * object's second word links the batches.  Collections drop the batches:
 * their objects are unmarked, so sweeping finds them again. */
#include "alloc/alloc.h"
#include "collect/collect.h"
#include "common.h"

static void *batches[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];

void batch_push(unsigned kind, unsigned cls, void *list) {
  ((void **)list)[1] = batches[kind][cls];
  batches[kind][cls] = list;
}

void *batch_pop(unsigned kind, unsigned cls) {
  void **list = batches[kind][cls];
  if (!list) return NULL;
  batches[kind][cls] = list[1];
  list[1] = NULL; /* objects on free lists are zero but for the link */
  return list;
}

void batches_drop_all(void) {
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) batches[k][c] = NULL;
}
