/* Allocation accounting: what the collection trigger and the statistics
 * read (bytes allocated since the last collection, live bytes after it). */
#ifndef SGC_HEAP_ACCOUNTING_H
#define SGC_HEAP_ACCOUNTING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_accounting {
  size_t allocated_since_gc; /* bytes handed out since the last collection */
  /* Written under heap_lock and read without it (GC_get_total_bytes,
   * GC_get_gc_no): relaxed atomics, a load and a store under the lock. */
  _Atomic size_t total_allocated;
  size_t live_after_gc;      /* marked bytes at the last collection */
  size_t live_atomic_after_gc; /* of them, in pointer-free objects */
  size_t root_bytes;         /* static roots at the last collection */
  _Atomic uint64_t gc_count; /* as total_allocated */
  uint64_t page_refills;      /* free-list refills that took heap_lock */
  uint64_t stolen_batches;    /* ... that took another thread's freed objects */
  uint64_t large_allocations;
  int disable_count;         /* GC_disable nesting */
  bool collecting;
};
extern struct heap_accounting heap_accounting; /* under heap_lock */

/* Records bytes handed to a thread (refill or large object). */
static inline void account_allocation(size_t bytes) {
  heap_accounting.allocated_since_gc += bytes;
  size_t total = atomic_load_explicit(&heap_accounting.total_allocated, memory_order_relaxed);
  atomic_store_explicit(&heap_accounting.total_allocated, total + bytes, memory_order_relaxed);
}

/* Refills outside heap_lock (alloc/page_path.h) count their bytes in the
 * thread's record and add them here in steps of UNLOCKED_FLUSH_BYTES, so
 * the collection trigger sees them without a shared write per refill.
 * Collections fold both into heap_accounting. */
enum { UNLOCKED_FLUSH_BYTES = 64 << 10 };
extern _Atomic size_t allocated_unlocked;
extern _Atomic uint64_t refills_unlocked;
/* Bytes allocated since the last collection, all paths together. */
size_t allocated_since_gc_bytes(void);

#endif
