/* The heap's locks and allocation counts (heap/heap_lock.h,
 * heap/accounting.h): defined at the heap's layer, so that every layer
 * above can take them without depending on the collector. */
#include "heap/accounting.h"
#include "heap/heap_lock.h"

pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic uint32_t gc_epoch = 1;
_Atomic unsigned page_ops_in_progress;
struct heap_accounting heap_accounting;
_Atomic size_t allocated_unlocked;
_Atomic uint64_t refills_unlocked;

size_t allocated_since_gc_bytes(void) {
  return heap_accounting.allocated_since_gc +
         atomic_load_explicit(&allocated_unlocked, memory_order_relaxed);
}
