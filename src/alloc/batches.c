/* Batches of freed objects.
 *
 * GC_free pushes onto the caller's own list without a lock.  Left alone,
 * a thread that frees a lot and then stops allocating would keep that
 * memory forever (the unbounded blow-up of thesis §2.3's AL policy); so
 * once a thread has freed FREE_FLUSH_BYTES of one class since its last
 * hand-back, the whole list moves out of the fast path as one batch.
 *
 * The batch stays with the thread that freed it (its stack of batches in
 * the thread record), and that thread's refills take it back first: the
 * objects are still in its core's cache.  Handing every batch to one
 * shared stack instead let two threads swap each other's objects, and
 * every first touch became a cache-to-cache transfer: `alloc -m free` at
 * 2 threads ran at 1.58x one thread that way, 1.88x with own batches.
 * Memory stays bounded as before: a thread whose own stack is empty takes
 * another thread's batch before the heap gets a fresh page (batch_steal),
 * the way LPS steals pages (thesis §2.2.3).
 *
 * Lent batches.  A steal from a thread that is still using its batches
 * leaves that thread short by one batch later in its cycle; if it then
 * stole in turn, every steal would beget another, and the threads'
 * objects would keep moving between them.  That cost more than the
 * steals' locks: objects two threads use alternately, on pages whose
 * neighbours the other thread uses, run at a fraction of the speed of
 * pages a thread keeps (tools/dev/page_interleave.c).  On the 16-CPU machine
 * `alloc -m free` ran 1.5x as fast at 16 threads with no steals at all
 * (history.md, "Steals that beget steals").  So a victim that pops a
 * batch of its own after a steal -- it was using them -- makes up the
 * shortfall from fresh pages instead, up to the number of objects taken
 * from it: memory grows by at most what was stolen, once, and the chain
 * stops.  A thread that was idle when robbed (the threads of `unfair`,
 * taking turns) pops nothing in between and steals as before, which
 * keeps memory flat under unfair use.
 *
 * The shared stack remains for batches nobody owns: those of threads that
 * exited, and per-CPU lists a refill could not install.
 *
 * A batch is a free list; its first object's second word links the
 * batches.  Collections drop every batch: their objects are unmarked, so
 * sweeping finds them again.  A thread's stack is under its batch_lock,
 * taken by the owner inside the page-path gate (alloc/page_path.h) and by
 * thieves under heap_lock; the shared stack is under heap_lock. */
#include <string.h>

#include "alloc/alloc.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "os/spin_lock.h"

static void *shared_batches[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
/* Threads whose stack of a class is not empty: batch_steal scans the
 * registry only when there is something to find.  Counted on the empty /
 * non-empty transitions, not per batch, so a thread cycling through its
 * own batches writes this shared line twice per cycle, not twice per
 * batch.  A hint (relaxed): a steal that finds nothing falls through to a
 * fresh page, as before the batch existed. */
static _Atomic long owned_batches[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];

/* A cap on a thread's lent count: one thread robbed of thousands of
 * batches over a long run still makes up at most this many objects per
 * class from fresh pages. */
enum { BATCH_LENT_MAX = 1u << 20 };

static void owned_add(unsigned kind, unsigned cls, long n) {
  atomic_fetch_add_explicit(&owned_batches[kind][cls], n, memory_order_relaxed);
}

void batch_push(unsigned kind, unsigned cls, void *list) {
  list_stack_push(&shared_batches[kind][cls], list);
}

void batch_push_own(struct thread_alloc *t, unsigned kind, unsigned cls, void *list) {
  spin_lock(&t->batch_lock);
  bool was_empty = !t->batches[kind][cls];
  list_stack_push(&t->batches[kind][cls], list);
  if (was_empty) owned_add(kind, cls, 1);
  spin_unlock(&t->batch_lock);
}

void *batch_pop_own(struct thread_alloc *t, unsigned kind, unsigned cls) {
  /* A peek without the lock (relaxed: a hint, confirmed under it). */
  if (!__atomic_load_n(&t->batches[kind][cls], __ATOMIC_RELAXED)) return NULL;
  spin_lock(&t->batch_lock);
  void *list = list_stack_pop(&t->batches[kind][cls]);
  if (list && t->batch_lent[kind][cls]) t->batch_used_since_lent[kind][cls] = true;
  if (list && !t->batches[kind][cls]) owned_add(kind, cls, -1);
  spin_unlock(&t->batch_lock);
  return list;
}

void *batch_pop(struct thread_alloc *t, unsigned kind, unsigned cls) {
  void *list = batch_pop_own(t, kind, cls);
  return list ? list : list_stack_pop(&shared_batches[kind][cls]);
}

void *batch_steal(struct thread_alloc *t, unsigned kind, unsigned cls) {
  if (!atomic_load_explicit(&owned_batches[kind][cls], memory_order_relaxed)) return NULL;
  void *list = NULL;
  lock_counted(&registry_lock);
  FOR_EACH_THREAD_ALLOC(victim) {
    if (victim == t || !__atomic_load_n(&victim->batches[kind][cls], __ATOMIC_RELAXED)) continue;
    spin_lock(&victim->batch_lock);
    list = list_stack_pop(&victim->batches[kind][cls]);
    if (list) {
      if (!victim->batches[kind][cls]) owned_add(kind, cls, -1);
      /* Counted as a full batch (hand_back's size): the exact length
       * would take a walk of the list. */
      uint32_t lent = victim->batch_lent[kind][cls] + free_flush_objects(cls);
      __atomic_store_n(&victim->batch_lent[kind][cls], lent < BATCH_LENT_MAX ? lent : BATCH_LENT_MAX,
                       __ATOMIC_RELAXED);
      victim->batch_used_since_lent[kind][cls] = false;
    }
    spin_unlock(&victim->batch_lock);
    if (list) break;
  }
  pthread_mutex_unlock(&registry_lock);
  return list;
}

bool batch_lent_outstanding(struct thread_alloc *t, unsigned kind, unsigned cls) {
  return t->batch_lent[kind][cls] && t->batch_used_since_lent[kind][cls];
}

void batch_lent_repaid(struct thread_alloc *t, unsigned kind, unsigned cls, unsigned n) {
  /* The owner's peek (relaxed: thieves store with the locks held, and
   * the owner is the only other writer), then the update under the lock. */
  if (!__atomic_load_n(&t->batch_lent[kind][cls], __ATOMIC_RELAXED)) return;
  spin_lock(&t->batch_lock);
  uint32_t lent = t->batch_lent[kind][cls];
  __atomic_store_n(&t->batch_lent[kind][cls], lent > n ? lent - n : 0, __ATOMIC_RELAXED);
  spin_unlock(&t->batch_lock);
}

void batches_retire(struct thread_alloc *t) {
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      void *list;
      while ((list = batch_pop_own(t, k, c)) != NULL) batch_push(k, c, list);
      if ((list = t->free_lists[k][c]) != NULL) {
        t->free_lists[k][c] = NULL;
        batch_push(k, c, list);
      }
    }
}

static void visit_stack(void *stack, void (*visit)(void *)) {
  for (void **batch = stack; batch; batch = batch[1])
    for (void **p = (void **)batch; p; p = *p) visit(p);
}

void batches_for_each_object(void (*visit)(void *object)) {
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++) {
      visit_stack(shared_batches[k][c], visit);
      FOR_EACH_THREAD_ALLOC(t) visit_stack(t->batches[k][c], visit);
    }
}

void batches_after_fork(struct thread_alloc *self) {
  /* Only SELF's record survives in the child; the other threads' batches
   * are unreferenced now and the next collection reclaims them. */
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
      atomic_store_explicit(&owned_batches[k][c], self && self->batches[k][c] ? 1 : 0,
                            memory_order_relaxed);
}

void batches_drop_all(void) {
  memset(shared_batches, 0, sizeof shared_batches);
  for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
    for (unsigned c = 0; c < SIZE_CLASS_COUNT; c++)
      atomic_store_explicit(&owned_batches[k][c], 0, memory_order_relaxed);
  FOR_EACH_THREAD_ALLOC(t) {
    memset(t->batches, 0, sizeof t->batches);
    memset(t->batch_lent, 0, sizeof t->batch_lent);
  }
}
