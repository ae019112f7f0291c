/* The gate between refills outside heap_lock and collections
 * (alloc/page_path.h). */
#include "alloc/page_path.h"

_Atomic bool page_path_closed;

void page_path_close(void) {
  atomic_store_explicit(&page_path_closed, true, memory_order_seq_cst);
  FOR_EACH_THREAD_ALLOC(t) {
    /* acquire: pairs with page_path_exit's release. */
    while (atomic_load_explicit(&t->in_page_path, memory_order_acquire)) sched_yield();
  }
}

void page_path_open(void) {
  /* release: the rebuilt sweep lists are visible to the next refill that
   * sees the gate open. */
  atomic_store_explicit(&page_path_closed, false, memory_order_release);
}
