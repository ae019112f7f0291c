/* The locks a collection takes before it stops the world
 * (threads/thread.h, collector_locks_take): the threads layer's, since
 * they span the heap's, the allocator's page path and the registry, and
 * fork, GC_stop_world_external and GC_suspend_thread take them too. */
#include "alloc/page_path.h"
#include "heap/heap_lock.h"
#include "threads/thread.h"

void collector_locks_take(void) {
  heap_lock_acquire();
  page_ops_wait();
  lock_counted(&registry_lock);
  page_path_close();
  pthread_mutex_lock(&meta_lock);
}

void collector_locks_release(void) {
  page_path_open();
  pthread_mutex_unlock(&meta_lock);
  pthread_mutex_unlock(&registry_lock);
  pthread_mutex_unlock(&heap_lock);
}
