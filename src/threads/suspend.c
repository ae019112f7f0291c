/* Stopping threads for the program: bdwgc's GC_suspend_thread /
 * GC_resume_thread (javaxfc.h, for runtimes with Java's Thread.suspend),
 * GC_stop_world_external / GC_start_world_external, and
 * GC_register_altstack.
 *
 * A suspended thread parks in the suspend handler (threads/stop_world.c)
 * with its context saved, so collections scan it without signalling it.
 * It is parked while the suspender holds the collector's locks with the
 * page path closed (collector_locks_take), so it never parks holding one
 * of them: collections and other threads' slow paths go on while it is
 * suspended.  A lock of the program's it holds stays held, as with bdwgc.
 *
 * GC_resume_thread takes only suspend_lock, never a collector lock: a
 * thread parked inside a short sgc critical section the suspender cannot
 * exclude (a finalizer registration's, a statistics read's) can make a
 * collection wait, and that collection must not keep the resume out.
 *
 * A thread parked while it waited for one of the collector's locks leaves
 * the waiters' counts until it is resumed (lock_wait_park): else an
 * explicit collection would first yield to it for the bound of a turn
 * (2 ms), and, had it waited long enough to count as starving, so would
 * every taker of heap_lock (unit_suspend_waiters). */
#include <stdlib.h>

#include "common.h"
#include "gc/javaxfc.h"
#include "threads/thread.h"

static pthread_mutex_t suspend_lock = PTHREAD_MUTEX_INITIALIZER;

/* The threads suspended now, under suspend_lock, in an array grown as
 * needed (a debugger may suspend every thread).  A parked thread cannot
 * exit, so a record on the list stays valid until it is resumed.
 * bdwgc's gctest suspends a thread right after GC_pthread_create, which
 * may not have started yet, or may have finished already:
 *  - one not started yet (pending, threads/registry.c) parks as it
 *    registers, before its start routine; its record stays valid, as
 *    it cannot exit before it is resumed;
 *  - one that ended but is not joined yet (a zombie) has nothing to
 *    park: its entry has no record, and leaves the list when the thread
 *    is resumed, joined or detached, or its id goes to a new thread. */
struct suspended_thread {
  pthread_t id;
  struct sgc_thread *record; /* NULL: ended, not joined */
};
static struct suspended_thread *suspended;
static unsigned suspended_count, suspended_capacity;

static int suspended_index(pthread_t thread) {
  for (unsigned i = 0; i < suspended_count; i++)
    if (pthread_equal(suspended[i].id, thread)) return (int)i;
  return -1;
}

static void suspended_add(pthread_t id, struct sgc_thread *record) {
  if (suspended_count == suspended_capacity) {
    unsigned capacity = suspended_capacity ? 2 * suspended_capacity : 16;
    struct suspended_thread *grown = realloc(suspended, capacity * sizeof *grown);
    if (!grown) sgc_fatal("GC_suspend_thread: out of memory for %u suspended threads", capacity);
    suspended = grown;
    suspended_capacity = capacity;
  }
  suspended[suspended_count++] = (struct suspended_thread){id, record};
}

static void suspended_remove(unsigned i) { suspended[i] = suspended[--suspended_count]; }

GC_API void GC_suspend_thread(GC_SUSPEND_THREAD_ID id) {
  sgc_ensure_init();
  pthread_t thread = (pthread_t)id;
  if (pthread_equal(thread, pthread_self())) {
    /* Itself: it holds no collector lock here, and parks at once (the
     * signal is delivered before pthread_kill returns) until another
     * thread resumes it. */
    struct sgc_thread *self = sgc_self;
    if (!self) return;
    pthread_mutex_lock(&suspend_lock);
    bool already = suspended_index(thread) >= 0;
    if (!already) {
      suspended_add(thread, self);
      atomic_store_explicit(&self->ext_suspend, 1, memory_order_seq_cst);
    }
    pthread_mutex_unlock(&suspend_lock);
    if (!already) pthread_kill(thread, GC_get_suspend_signal());
    return;
  }
  collector_locks_take();
  /* A running or starting thread is looked for first: glibc gives a
   * joined thread's id to the next thread it creates. */
  struct sgc_thread *t = thread_with_id(thread_registry_first(), thread);
  struct sgc_thread *starting = t ? NULL : thread_with_id(thread_pending_first(), thread);
  bool ended = !t && !starting && thread_with_id(thread_zombie_first(), thread);
  pthread_mutex_lock(&suspend_lock);
  int i = suspended_index(thread);
  if (i >= 0 && !suspended[i].record && (t || starting)) {
    suspended_remove((unsigned)i); /* an ended thread's, whose id this one has */
    i = -1;
  }
  bool add = (t || starting || ended) && i < 0;
  if (add) suspended_add(thread, t ? t : starting);
  /* Under suspend_lock, as GC_resume_thread clears it: the thread parks
   * as it registers (registry.c), which waits for collector_locks. */
  if (add && starting) atomic_store_explicit(&starting->ext_suspend, 1, memory_order_seq_cst);
  pthread_mutex_unlock(&suspend_lock);
  if (add && t) stop_world_park(t);
  collector_locks_release();
}

GC_API void GC_resume_thread(GC_SUSPEND_THREAD_ID id) {
  pthread_t thread = (pthread_t)id;
  pthread_mutex_lock(&suspend_lock);
  int i = suspended_index(thread);
  if (i >= 0) {
    struct sgc_thread *t = suspended[i].record;
    suspended_remove((unsigned)i);
    if (t) stop_world_unpark(t);
  }
  pthread_mutex_unlock(&suspend_lock);
}

GC_API int GC_is_thread_suspended(GC_SUSPEND_THREAD_ID id) {
  pthread_mutex_lock(&suspend_lock);
  int found = suspended_index((pthread_t)id) >= 0;
  pthread_mutex_unlock(&suspend_lock);
  return found;
}

void suspend_forget_ended(pthread_t thread) {
  pthread_mutex_lock(&suspend_lock);
  int i = suspended_index(thread);
  if (i >= 0 && !suspended[i].record) suspended_remove((unsigned)i);
  pthread_mutex_unlock(&suspend_lock);
}

/* The child of fork has only the forking thread, which was not parked. */
void suspend_after_fork_child(void) {
  suspended_count = 0;
  pthread_mutex_init(&suspend_lock, NULL);
}

/* Between the two calls every other registered thread is stopped and the
 * caller holds the collector's locks: it must not allocate or call into
 * sgc meanwhile (bdwgc's caller holds its allocation lock, the same rule). */
GC_API void GC_stop_world_external(void) {
  sgc_ensure_init();
  collector_locks_take();
  stop_world();
}

GC_API void GC_start_world_external(void) {
  start_world();
  collector_locks_release();
}

GC_API void GC_register_altstack(void *normstack, GC_word normstack_size, void *altstack,
                                 GC_word altstack_size) {
  struct sgc_thread *t = thread_self_or_register();
  /* registry_lock: no collection reads the bounds half written. */
  registry_lock_take();
  t->normstack_lo = (uintptr_t)normstack;
  t->normstack_hi = (uintptr_t)normstack + normstack_size;
  t->altstack_lo = (uintptr_t)altstack;
  t->altstack_hi = (uintptr_t)altstack + altstack_size;
  pthread_mutex_unlock(&registry_lock);
}
