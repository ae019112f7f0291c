/* bdwgc's thread interface: thread creation wrappers, explicit
 * registration and blocking sections. */
#include <pthread.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "mark/mark.h"
#include "threads/thread.h"

static void *start_wrapper(void *arg) {
  struct sgc_thread *rec = arg;
  thread_register_self(0, rec);
  void *(*routine)(void *) = rec->start_routine;
  /* From here on the argument lives in this frame, which is scanned. */
  void *volatile client_arg = rec->start_arg;
  rec->start_arg = NULL;
  void *result = routine(client_arg);
  rec->exit_result = result;
  return result;
  /* Unregistration happens in the thread-exit key destructor, which also
   * covers pthread_exit and cancellation. */
}

/* The GC threads start at the first GC_pthread_create, in its caller
 * before its own pthread_create, rather than at the first collection.
 * pthread_create mallocs the new thread's TLS vector in its caller, and
 * glibc gives a thread its own malloc arena (64 MiB of address space) at
 * its first malloc: the first collection's thread is often one this call
 * made, which never mallocs otherwise, while this caller takes an arena
 * with its own pthread_create anyway (the main thread has glibc's).
 * Under an address-space limit that arena was the heap's (history.md,
 * "Malloc arenas under an address-space limit"). */
static void gc_threads_start_once(void) {
  static _Atomic bool started;
  /* Relaxed: only one caller starts them; the others go on at once, and
   * a collection meanwhile starts what is missing itself (under
   * heap_lock, as here). */
  if (atomic_load_explicit(&started, memory_order_relaxed) ||
      atomic_exchange_explicit(&started, true, memory_order_relaxed))
    return;
  heap_lock_acquire();
  parallel_ensure_markers(sgc_settings.markers);
  pthread_mutex_unlock(&heap_lock);
}

GC_API int GC_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                             void *(*routine)(void *), void *arg) {
  sgc_ensure_init();
  thread_self_or_register();
  gc_threads_start_once();
  struct sgc_thread *rec = thread_record_new();
  if (!rec) return EAGAIN; /* as pthread_create when resources lack */
  rec->created_by_sgc = true;
  int detach_state = PTHREAD_CREATE_JOINABLE;
  if (attr) pthread_attr_getdetachstate(attr, &detach_state);
  rec->detached = detach_state == PTHREAD_CREATE_DETACHED;
  rec->start_routine = routine;
  rec->start_arg = arg;
  static _Atomic uint64_t tickets;
  uint64_t ticket = atomic_fetch_add_explicit(&tickets, 1, memory_order_relaxed) + 1;
  rec->pending_ticket = ticket;
  thread_pending_add(rec); /* ARG is a root until the thread runs */
  /* ARG stays live in this frame until then: waiting for registry_lock
   * inside thread_pending_add, this thread is scanned (from its blocking
   * section) while a collection runs, and REC is sgc's own memory, which
   * no collection reads.  Dead after the store above, ARG was held by
   * nothing there, and bb_threads saw a thread's argument freed. */
  __asm__ volatile("" : : "g"(arg) : "memory");
  int r = pthread_create(thread, attr, start_wrapper, rec);
  if (r != 0) {
    thread_pending_remove(rec);
    thread_record_free(rec);
    return r;
  }
  /* The thread waits for this before it registers (thread.h). */
  thread_stack_give(rec, *thread);
  /* REC may be running, or (detached) gone, by now: looked up, not used. */
  thread_pending_set_id(rec, ticket, *thread);
  return 0;
}

struct join_call {
  pthread_t thread;
  void **result;
  int status;
};

static void *join_call_run(void *arg) {
  struct join_call *c = arg;
  c->status = thread_join_next(c->thread, c->result);
  return NULL;
}

/* A thread waiting for another to end touches no heap, so it waits in a
 * blocking section and collections meanwhile do not signal it: a thread
 * asleep in the kernel must be woken to take the signal, which cost most
 * of the time to stop the world on the 2-core VM (the main thread of
 * every parallel benchmark waits here).  The joined thread's result stays
 * a root in its zombie record until thread_forget_zombie. */
GC_API int GC_pthread_join(pthread_t thread, void **result) {
  int tid = thread_tid_of(thread);
  struct join_call call = {thread, result, 0};
  GC_do_blocking(join_call_run, &call);
  if (call.status == 0) thread_forget_zombie(thread, tid);
  return call.status;
}

GC_API int GC_pthread_detach(pthread_t thread) { return thread_detach(thread, thread_detach_next); }

GC_API int GC_pthread_cancel(pthread_t thread) { return pthread_cancel(thread); }

GC_API void GC_pthread_exit(void *result) {
  if (sgc_self) sgc_self->exit_result = result;
  pthread_exit(result);
}

/* The suspend signal must stay deliverable or a collection would wait
 * forever for this thread. */
GC_API int GC_pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  if (set && (how == SIG_BLOCK || how == SIG_SETMASK)) {
    sigset_t filtered = *set;
    sigdelset(&filtered, GC_get_suspend_signal());
    return pthread_sigmask(how, &filtered, old);
  }
  return pthread_sigmask(how, set, old);
}

GC_API void GC_allow_register_threads(void) { sgc_ensure_init(); }

GC_API int GC_register_my_thread(const struct GC_stack_base *sb) {
  sgc_ensure_init();
  if (sgc_self) return GC_DUPLICATE;
  thread_register_self(sb ? (uintptr_t)sb->mem_base : 0, NULL);
  return GC_SUCCESS;
}

GC_API int GC_unregister_my_thread(void) {
  thread_unregister_self();
  return GC_SUCCESS;
}

GC_API int GC_thread_is_registered(void) { return sgc_self != NULL; }

GC_API int GC_get_stack_base(struct GC_stack_base *sb) {
  sb->mem_base = (void *)thread_stack_base_of_self();
  return GC_SUCCESS;
}

GC_API void *GC_get_my_stackbottom(struct GC_stack_base *sb) {
  struct sgc_thread *t = thread_self_or_register();
  sb->mem_base = (void *)thread_stack_end(t);
  return t;
}

/* The thread may be running (the caller is it, or bdwgc's rule has the
 * caller hold the allocation lock, which sgc does not need): a collection
 * reads the end once the thread has stopped. */
GC_API void GC_set_stackbottom(void *gc_thread_handle, const struct GC_stack_base *sb) {
  struct sgc_thread *t = gc_thread_handle ? gc_thread_handle : sgc_self;
  if (!t) { /* before GC_init, or an unregistered thread: bdwgc's primordial-thread rule */
    __atomic_store_n(&GC_stackbottom, (char *)sb->mem_base, __ATOMIC_RELAXED);
    return;
  }
  /* The main thread's end is GC_stackbottom alone (thread_stack_end). */
  if (t->is_main) __atomic_store_n(&GC_stackbottom, (char *)sb->mem_base, __ATOMIC_RELAXED);
  else t->stack_base = (uintptr_t)sb->mem_base;
}

GC_API void *GC_call_with_stack_base(GC_stack_base_func fn, void *arg) {
  struct GC_stack_base sb;
  sb.mem_base = (void *)thread_stack_base_of_self();
  return fn(&sb, arg);
}

struct blocking_outer {
  struct sgc_thread *thread;
  uintptr_t sp;
  void *arg;
};

/* Leaving waits for a stop in progress to end, without a lock
 * (stop_world_leave_blocking); blocked_sp and blocking_arg change only
 * once the thread is out, when no stop reads them. */
static void blocking_leave(void *arg) {
  struct blocking_outer *outer = arg;
  struct sgc_thread *t = outer->thread;
  stop_world_leave_blocking(t);
  t->blocked_sp = outer->sp;
  t->blocking_arg = outer->arg;
}

/* Runs FN while the collector treats the thread as stopped: it is not
 * signalled and its stack above this frame is scanned as it was on entry.
 * The caller (GC_do_blocking) spilled the callee-saved registers into its
 * frame, above this one, so pointers held only in registers are on the
 * scanned stack. */
SGC_NOINLINE static void *blocking_section(struct sgc_thread *t, GC_fn_type fn, void *cd) {
  struct blocking_outer outer = {t, t->blocked_sp, t->blocking_arg};
  t->blocking_arg = cd; /* a root while blocked: it may live only in a register */
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  /* A signal handler's section (a sleeping call, threads/sleep_calls.c)
   * may run on an alternate stack: say so, as the suspend handler would,
   * or the scan would take it for a stack the program did not name. */
  int saved_errno = errno; /* the section's caller reads errno as FN left it */
  thread_note_alternate_stack(t, sp);
  errno = saved_errno;
  t->blocked_sp = sp;
  atomic_store_explicit(&t->blocked, 1, memory_order_release);
  void *result;
  /* FN may be a cancellation point (pthread_join is): a cancelled thread
   * leaves the section before the program's cleanup handlers run, since
   * they may allocate, and a collection must then stop the thread. */
  pthread_cleanup_push(blocking_leave, &outer);
  result = fn(cd);
  pthread_cleanup_pop(1);
  return result;
}

/* A wait for LOCK, one of the collector's: heap_lock and registry_lock
 * are counted waits (base/lock_wait.h), meta_lock a plain one. */
static void lock_wait(pthread_mutex_t *lock) {
  if (lock == &meta_lock) {
    lock_wait_check_not_held(lock);
    pthread_mutex_lock(lock);
  } else {
    lock_wait_counted(lock);
  }
}

/* A wait for LOCK inside a blocking section of its own, entered without
 * a lock, as the wait ends only once no collection can be in progress:
 * one holds heap_lock, registry_lock and meta_lock from before the world
 * stops to after it restarts. */
SGC_NOINLINE static void lock_wait_blocked(struct sgc_thread *t, pthread_mutex_t *lock) {
  t->blocked_sp = (uintptr_t)__builtin_frame_address(0);
  atomic_store_explicit(&t->blocked, 1, memory_order_release);
  lock_wait(lock);
  atomic_store_explicit(&t->blocked, 0, memory_order_release);
  t->blocked_sp = 0;
}

/* The wait of thread T (NULL: not registered) for one of the collector's
 * locks once its trylock has failed.  Every such wait of a program's
 * thread is in a blocking section, not only an allocation's: it spares
 * the collection a signal to a thread asleep in the kernel, and under
 * ThreadSanitizer a thread in pthread_mutex_lock takes no signal until the
 * call returns, so a collection waited forever for a thread in
 * GC_gcollect, GC_register_finalizer or GC_pthread_create
 * (bb_oracle_stress, bb_custom_kinds in tools/ci/sanitize.sh thread). */
SGC_NOINLINE static void collector_lock_wait(struct sgc_thread *t, pthread_mutex_t *lock) {
  if (!t || atomic_load_explicit(&t->blocked, memory_order_relaxed)) {
    lock_wait(lock);
    return;
  }
  /* The callee-saved registers into this frame, above blocked_sp: a
   * refill waiting here may hold a list it has just formatted in one. */
  __builtin_unwind_init();
  lock_wait_blocked(t, lock);
  __asm__ volatile("" : : : "memory"); /* no tail call: keep the spills */
}

/* heap_lock_take's trylock has failed. */
SGC_NOINLINE void heap_lock_wait(struct sgc_thread *t) { collector_lock_wait(t, &heap_lock); }

void heap_lock_acquire(void) {
  lock_turn_for_starving();
  if (likely(pthread_mutex_trylock(&heap_lock) == 0)) return;
  collector_lock_wait(sgc_self, &heap_lock);
}

void meta_lock_take(void) {
  if (likely(pthread_mutex_trylock(&meta_lock) == 0)) return;
  collector_lock_wait(sgc_self, &meta_lock);
}

void registry_lock_take(void) {
  if (likely(pthread_mutex_trylock(&registry_lock) == 0)) return;
  collector_lock_wait(sgc_self, &registry_lock);
}

/* Whether thread T may run a blocking section: not while it holds one
 * of the locks a collection takes (GC_stop_world_external, a callback
 * under heap_lock or meta_lock: the stop the exit would wait for may be
 * its own), is inside the page path (alloc/page_path.h) or marks for a
 * concurrent cycle, all of which a collection waits for before it
 * stops the world.  Such a thread, or one already in a section, runs FN
 * as it is. */
static bool may_block(struct sgc_thread *t) {
  return !atomic_load_explicit(&t->blocked, memory_order_relaxed) &&
         !lock_held_by(&heap_lock, t->tid) && !lock_held_by(&registry_lock, t->tid) &&
         !lock_held_by(&meta_lock, t->tid) &&
         !atomic_load_explicit(&t->alloc.in_page_path, memory_order_relaxed) &&
         !atomic_load_explicit(&t->assisting, memory_order_relaxed);
}

GC_API void *GC_do_blocking(GC_fn_type fn, void *cd) {
  struct sgc_thread *t = sgc_self;
  if (!t || !may_block(t)) return fn(cd);
  __builtin_unwind_init();
  void *result = blocking_section(t, fn, cd);
  /* No tail call: this frame holds the spilled registers while blocked. */
  __asm__ volatile("" : : "r"(result) : "memory");
  return result;
}

GC_API void *GC_call_with_gc_active(GC_fn_type fn, void *cd) {
  struct sgc_thread *t = sgc_self;
  if (!t || !atomic_load_explicit(&t->blocked, memory_order_relaxed)) return fn(cd);
  uintptr_t saved_sp = t->blocked_sp;
  stop_world_leave_blocking(t);
  void *result = fn(cd);
  /* Back to blocked: the frames between saved_sp and here belong to the
   * blocking function, which holds no heap pointers by contract. */
  t->blocked_sp = saved_sp;
  atomic_store_explicit(&t->blocked, 1, memory_order_release);
  return result;
}
