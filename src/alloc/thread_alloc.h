/* The allocator's part of a thread's record, and what the allocator asks
 * of the thread layer.
 *
 * struct sgc_thread (threads/thread.h) embeds struct thread_alloc as its
 * first member, so the allocation fast path's free lists stay first and
 * the allocator reaches its part of the calling thread's record from
 * sgc_self with no offset.  The allocator owns these fields; the
 * collector reads some of them with the thread stopped.
 *
 * The declarations at the end are the thread layer's (threads/), named
 * here so that alloc/ never includes threads/: the seam points up, as
 * alloc/collector.h does for the collector (docs/design.md, "Layers"). */
#ifndef SGC_ALLOC_THREAD_ALLOC_H
#define SGC_ALLOC_THREAD_ALLOC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/layout.h"
#include "os/spin_lock.h"

/* A bit no page address has: a cached page address carrying it (a fresh
 * record's, and every record's while per-CPU caches are on) never matches
 * GC_free's fast-path test (alloc/free.c). */
enum { FREE_CACHE_BYPASS = 1 };

struct page_header;
struct custom_cache;
struct page_store;
struct rseq;

struct thread_alloc {
  /* Thread-local free-object lists, one per kind and size class (thesis
   * §2.2.2).  Only the owner pushes and pops; the collector reads them with
   * the owner stopped. */
  void *free_lists[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  /* Objects GC_free may still put on each list before the list is handed
   * back as one of its batches (alloc/free.c): a count down, so the fast
   * path's test is a decrement and a branch on zero. */
  uint16_t free_budget[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  /* GC_free's last page-map lookup: header addresses never change while
   * a chunk exists, so this cache is always valid.  The page address has
   * FREE_CACHE_BYPASS added in a fresh record and while per-CPU caches
   * are on (alloc/free.c). */
  uintptr_t free_cache_page;
  struct page_header *free_cache_header;
  unsigned slow_path_count;      /* for SGC_TORTURE */
  /* Lists this thread freed and handed back, its refills' first choice
   * (alloc/batches.c), under batch_lock. */
  void *batches[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  struct spin_lock batch_lock;
  /* Objects other threads took from this thread's batches and not yet
   * made up for by fresh pages, and whether it has popped a batch of its
   * own since the last such steal (alloc/batches.c, "Lent batches");
   * written under batch_lock and heap_lock by thieves, read by the owner
   * under heap_lock. */
  uint32_t batch_lent[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  bool batch_used_since_lent[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  /* Free lists of the kinds the program made (alloc/custom_alloc.c),
   * made on first use; NULL for most threads. */
  struct custom_cache *custom_cache;
  /* Inside the page path without heap_lock (alloc/page_path.h). */
  _Atomic bool in_page_path;
  /* Bytes and refills of that path not yet added to heap_accounting. */
  size_t unlocked_bytes;
  uint64_t unlocked_refills;

  void *in_flight;        /* an object being handed out (a root) */
  /* Inside the small-object slow path: the stack below this holds only
   * its frames, which a collection this thread runs skips
   * (alloc/refill.c); else 0. */
  uintptr_t slow_path_sp;
  struct page_store *page_store; /* page policies (alloc/page_store.c) */
  struct rseq *rseq;      /* glibc's rseq area of this thread (SGC_LAB=cpu) */

  /* GC_get_expl_freed_bytes_since_gc (alloc/free.c), kept after the hot
   * fields so the fast paths' lines stay as they were.  Lists handed back
   * so far, per kind and class: with the budgets, the objects GC_free took
   * back (free_bytes_of), at no cost to the fast path. */
  uint32_t free_flushes[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
  /* Bytes freed by the other paths (large, uncollectable, custom kinds),
   * and free_bytes_of at the last collection; written by the owner (the
   * collector with the world stopped). */
  uint64_t freed_bytes_other, freed_bytes_at_gc;
  /* Free uncollectable objects this thread keeps (alloc/uncollectable.c),
   * by kind (less KIND_UNCOLLECTABLE) and class, linked through their first
   * words, in the mark state STATE_CACHED; only the owner touches them
   * (with no lock), or heap_lock's holder once the owner is gone. */
  void *uncollectable_cache[2][SIZE_CLASS_COUNT];
  uint32_t uncollectable_cached_bytes[2][SIZE_CLASS_COUNT];
  uint32_t uncollectable_cached_total; /* the sum of the above */
  /* Slow-path refills since its dead stack was last zeroed
   * (alloc/refill.c, threads/stack_clear.c). */
  uint32_t refills_since_stack_clear;
};

/* A slow path that may collect cuts T's stack at its caller's frame: a
 * collection it runs scans T only from there up (collect/collect.c), not
 * the frames below, laid over dead stack whose unwritten slots hold
 * pointers the program dropped long ago.  __builtin_unwind_init puts the
 * caller's callee-saved registers in this frame, above the cut, so they
 * are still scanned.  Always inlined: the stack pointer is the slow
 * path's own.  Returns the cut to restore (an outer slow path's). */
__attribute__((always_inline)) static inline uintptr_t slow_path_cut(struct thread_alloc *t) {
  __builtin_unwind_init();
  uintptr_t sp;
  __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
  uintptr_t outer = t->slow_path_sp;
  t->slow_path_sp = sp;
  atomic_signal_fence(memory_order_seq_cst); /* before any stop can find it */
  return outer;
}
/* Before the slow path runs the program's code (finalizers, the
 * out-of-memory function) or returns. */
__attribute__((always_inline)) static inline void slow_path_uncut(struct thread_alloc *t,
                                                                  uintptr_t outer) {
  atomic_signal_fence(memory_order_seq_cst);
  t->slow_path_sp = outer;
  atomic_signal_fence(memory_order_seq_cst);
}

/* ---- What the allocator asks of the thread layer (threads/) ---- */

struct sgc_thread;
/* The calling thread's record, or NULL when it is not registered.  The
 * initial-exec TLS model makes this one instruction and signal-safe. */
extern __thread struct sgc_thread *sgc_self
    __attribute__((tls_model("initial-exec")));
/* Registers the caller if it is not yet (threads that allocate without
 * GC_register_my_thread, e.g. created by plain pthread_create). */
struct sgc_thread *thread_self_or_register(void);

/* A record's allocator part and back: the part is the record's first
 * member (threads/thread.h checks it), so both are the same address. */
static inline struct thread_alloc *thread_alloc_of(struct sgc_thread *t) {
  return (struct thread_alloc *)(void *)t;
}
static inline struct sgc_thread *thread_of_alloc(struct thread_alloc *a) {
  return (struct sgc_thread *)(void *)a;
}
/* The calling thread's part, or NULL when it is not registered. */
static inline struct thread_alloc *alloc_self(void) { return thread_alloc_of(sgc_self); }
static inline struct thread_alloc *alloc_self_or_register(void) {
  return thread_alloc_of(thread_self_or_register());
}

/* The registry (threads/registry.c): its lock, its size, and a walk over
 * the registered threads' parts, registry_lock held (or the world
 * stopped). */
extern pthread_mutex_t registry_lock;
/* registry_lock for a program's thread: a wait for it waits out a
 * collection, in a blocking section (threads/pthread_api.c). */
void registry_lock_take(void);
int thread_registry_count(void);
struct thread_alloc *thread_alloc_first(void);
struct thread_alloc *thread_alloc_next(const struct thread_alloc *a);
#define FOR_EACH_THREAD_ALLOC(a) \
  for (struct thread_alloc *a = thread_alloc_first(); a; a = thread_alloc_next(a))
/* The kernel thread id of A's thread. */
int thread_alloc_tid(const struct thread_alloc *a);

/* threads/stack_clear.c: zeroes BYTES of the caller's dead stack below
 * its frame, where T (the caller) runs on its own stack with room to
 * spare; else nothing. */
void thread_stack_clear_dead(struct sgc_thread *t, size_t bytes);

#endif
