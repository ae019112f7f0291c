/* Per-thread state: the allocation fast path's free lists first, then what
 * the collector needs to find the thread's roots and stop it. */
#ifndef SGC_THREAD_H
#define SGC_THREAD_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ucontext.h>

#include "alloc/thread_alloc.h"
#include "heap/layout.h"
#include "os/spin_lock.h"
#include "base/lock_wait.h"

/* Modules with thread-local storage whose blocks a thread's record keeps
 * (roots_find_thread_tls): glibc, libstdc++, the program and a few more. */
enum { THREAD_TLS_RANGES_MAX = 16 };

struct sgc_thread {
  /* The allocator's part (alloc/thread_alloc.h), first: alloc_self. */
  struct thread_alloc alloc;

  /* Registry (threads/registry.c), protected by registry_lock. */
  struct sgc_thread *next, *prev;
  pthread_t pthread;
  int tid;
  bool is_main;
  bool detached;          /* GC_pthread_detach or created detached */
  bool created_by_sgc;    /* GC_pthread_create: sgc frees the record at exit */
  bool finalizing;        /* running finalizers: don't nest */
  uint8_t exit_rounds;    /* thread-exit destructor calls so far (registry.c) */
  uintptr_t stack_base;   /* highest address of the stack (exclusive) */
  /* The stack's lowest address, as pthreads (for the main thread,
   * RLIMIT_STACK) tells, valid while the stack still ends at stack_lo_end
   * (GC_set_stackbottom moves the end): threads/stacks.c. */
  uintptr_t stack_lo, stack_lo_end;
  /* Its thread-local storage blocks, found when it registered
   * (roots/roots.c, roots_find_thread_tls): roots at every collection. */
  struct { uintptr_t lo, hi; } tls[THREAD_TLS_RANGES_MAX];
  uint8_t tls_count;
  uintptr_t thread_pointer; /* its descriptor (roots/thread_specific.c) */

  /* Stop-the-world state (threads/stop_world.c). */
  _Atomic uintptr_t stopped_sp;    /* stack pointer when suspended */
  _Atomic uint32_t acked_epoch;     /* the stop this thread acknowledged last */
  greg_t stopped_regs[NGREG];       /* registers when suspended (scanned) */
  /* Inside GC_do_blocking: the collector does not signal the thread and
   * scans from blocked_sp; leaving the section waits for a stop in
   * progress to end (stop_world_leave_blocking, no lock). */
  _Atomic int blocked;
  uintptr_t blocked_sp;
  void *blocking_arg;
  void *exit_result;      /* kept as a root until GC_pthread_join */
  /* A joinable thread's descriptor as it exited, holding its result: a
   * root while the record is a zombie (registry.c, keep_result). */
  void *exit_descriptor;
  size_t exit_descriptor_bytes;
  /* GC_suspend_thread (threads/suspend.c): ext_suspend asks the thread
   * to park in the suspend handler until it is cleared; ext_parked says
   * it is parked there, its registers and stack pointer saved, so a
   * collection scans it without signalling it. */
  _Atomic uint32_t ext_suspend;
  _Atomic uint32_t ext_parked;
  /* Set by the thread itself while it marks for a concurrent cycle
   * (collect/assist.c), holding a marker slot the cycle's finish
   * waits for: asked to park then, it parks once done
   * (thread_park_if_asked), not in the handler.  Read by its own signal
   * handler only. */
  _Atomic bool assisting;
  /* GC_register_altstack: a thread stopped on its alternate signal stack
   * is scanned there from its stack pointer up, and over the whole of its
   * normal stack, where the stack pointer it left is unknown. */
  uintptr_t altstack_lo, altstack_hi, normstack_lo, normstack_hi;
  /* The alternate signal stack the thread was on when it last stopped
   * off its own stack, as sigaltstack told its suspend handler; 0s when
   * it stopped on its own stack (threads/stacks.c). */
  uintptr_t stopped_alt_lo, stopped_alt_hi;
  /* Set by stop_world for the collector: where to scan from and whether
   * stopped_regs holds this stop's registers. */
  uintptr_t scan_from;
  bool scan_regs;

  /* Start routine hand-over for GC_pthread_create: ARG stays here, in
   * a record the collector scans, until the new thread runs. */
  void *(*start_routine)(void *);
  void *start_arg;
  /* Set before the thread starts, unique to this record's use: the
   * creator, giving the record its pthread id after pthread_create
   * returned, finds it on the pending list by address and ticket, and a
   * record freed and reused meanwhile has another ticket. */
  uint64_t pending_ticket;
  /* The new thread's stack, found by its creator (thread_stack_give):
   * pthread_getattr_np mallocs, and a thread's first malloc makes glibc
   * give it an arena of 64 MiB of address space, which under a limit
   * (ulimit -v) the heap then lacks (history.md, "Malloc arenas under an
   * address-space limit").  STACK_GIVEN: 0 until the creator has looked, then 1 with the
   * bounds, or 2 when the thread must find them itself. */
  _Atomic uint32_t stack_given;
  uintptr_t given_stack_lo, given_stack_end;

  sigset_t exit_signal_mask; /* read by the thread-exit destructor (registry.c) */
};
_Static_assert(offsetof(struct sgc_thread, alloc) == 0,
               "alloc_self reads the allocator's part at sgc_self");

/* ---- registry.c ---- */
/* bdwgc's GC_stackbottom: the main thread's stack end, which a program
 * running coroutines moves to the running one's (include/gc.h). */
extern char *GC_stackbottom;
/* Where T's stack ends at this collection (the world stopped, or T the
 * caller): the main thread's is GC_stackbottom, read once (relaxed: T
 * wrote it before it stopped, and the stop orders the two). */
static inline uintptr_t thread_stack_end(const struct sgc_thread *t) {
  if (t->is_main) {
    char *bottom = __atomic_load_n(&GC_stackbottom, __ATOMIC_RELAXED);
    if (bottom) return (uintptr_t)bottom;
  }
  return t->stack_base;
}
/* Whether A lies in T's stack as pthreads told it, which the collector
 * scans whole while the stack still ends there: a created thread's
 * descriptor and static TLS lie at the top of that mapping. */
static inline bool thread_stack_mapping_holds(const struct sgc_thread *t, uintptr_t a) {
  uintptr_t end = thread_stack_end(t);
  return t->stack_lo_end == end && a >= t->stack_lo && a < end;
}

/* registry_lock, registry_lock_take, thread_registry_count,
 * thread_self_or_register and the walk over the allocator's parts
 * (thread_alloc_first) are declared in alloc/thread_alloc.h. */
struct sgc_thread *thread_registry_first(void);
/* ---- records.c ---- */
/* A zeroed, cache-line aligned record (thread_record_free releases it);
 * NULL when the system refuses memory. */
struct sgc_thread *thread_record_new(void);
void thread_record_free(struct sgc_thread *rec);
void thread_records_after_fork_child(void);
/* ---- registry.c ---- */
/* Records of threads GC_pthread_create started that are not running yet:
 * their start_arg is a root. */
struct sgc_thread *thread_pending_first(void);
void thread_pending_add(struct sgc_thread *rec);
void thread_pending_remove(struct sgc_thread *rec);
/* GC_pthread_create: REC, if it is still pending under TICKET, is thread
 * ID (which GC_suspend_thread may name before the thread runs). */
void thread_pending_set_id(struct sgc_thread *rec, uint64_t ticket, pthread_t id);
/* Joinable threads that exited: their result stays a root until joined. */
struct sgc_thread *thread_zombie_first(void);
/* The record on the list from FIRST (the registry's, the pending or the
 * zombie list) of the thread with pthread id ID, or NULL; registry_lock
 * held.  A pending record has id 0, no thread's, until
 * thread_pending_set_id. */
struct sgc_thread *thread_with_id(struct sgc_thread *first, pthread_t id);
/* THREAD was joined: its zombies (of kernel thread TID, or all when
 * TID is 0) go, with the results they kept. */
void thread_forget_zombie(pthread_t thread, int tid);
/* The kernel thread id of THREAD's record, running or a zombie; 0 when
 * it has none. */
int thread_tid_of(pthread_t thread);
/* Detaches THREAD with DETACH (glibc's pthread_detach) and, when that
 * succeeds, forgets its zombie or marks its record detached. */
int thread_detach(pthread_t thread, int (*detach)(pthread_t));

/* What registration asks of the roots layer, defined by roots/roots.c
 * (the seam points up: docs/design.md, "Layers"): records the calling
 * thread's thread-local storage blocks in T, its record (before T is
 * registered: it takes the loader's lock). */
void roots_find_thread_tls(struct sgc_thread *t);

/* ---- interpose.c ---- */
/* glibc's pthread_join and pthread_detach, behind sgc's own. */
int thread_join_next(pthread_t thread, void **result);
int thread_detach_next(pthread_t thread);
/* Finds the interposed calls' next definitions at start-up (threads_init). */
void interpose_init(void);

/* ---- sleep_calls.c ---- */
/* Sleeps NANOSECONDS in glibc's nanosleep, never in sgc's (which would
 * make sgc's own sleep a blocking section, left under its locks). */
void thread_nap(long nanoseconds);
/* sgc's own wait on a condition variable: glibc's, never the blocking
 * section the program's waits get (threads/cond_waits.c), whose exit
 * would wait for a stop while the caller holds a lock of sgc's that the
 * stop may need (concurrent.c's driver_lock). */
int thread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex);
/* Finds the sleeping calls' next definitions (interpose_init). */
void sleep_calls_init(void);
/* ---- fd_waits.c ---- */
/* Finds poll's, select's and epoll_wait's next definitions (interpose_init). */
void fd_waits_init(void);
/* Registers the calling thread with its stack base (0: ask pthreads). */
struct sgc_thread *thread_register_self(uintptr_t stack_base, struct sgc_thread *rec);
void thread_unregister_self(void);
void threads_init(void);
void threads_after_fork_child(void);
uintptr_t thread_stack_base_of_self(void);

/* ---- stacks.c ---- */
/* The calling thread's stack end (exclusive) and, in *LO, its lowest
 * address (0 when unknown). */
uintptr_t thread_stack_bounds_of_self(uintptr_t *lo);
/* A fork may have copied its lock held (stacks.c). */
void thread_stacks_after_fork_child(void);
/* The creator of THREAD, which REC's thread will register with: its stack
 * bounds into REC, and REC's thread woken if it waits for them. */
void thread_stack_give(struct sgc_thread *rec, pthread_t thread);
/* REC's thread, started by GC_pthread_create: waits for thread_stack_give
 * and returns the end with *LO, or 0 when it must find them itself. */
uintptr_t thread_stack_given(struct sgc_thread *rec, uintptr_t *lo);
/* Records in T (the caller, perhaps in its suspend handler) the alternate
 * signal stack it runs on, when SP is off the stack sgc knows for it.
 * Async-signal-safe. */
void thread_note_alternate_stack(struct sgc_thread *t, uintptr_t sp);
/* The memory to scan for T's stack at this collection, T stopped at SP
 * (or the caller), scanning from FROM (SP less a red zone): one range,
 * or two when T runs off its own stack (an alternate signal stack, a
 * coroutine's), the second then being the whole of its own stack. */
struct stack_ranges {
  unsigned count;
  struct { uintptr_t lo, hi; } range[2];
};
void thread_stack_ranges(struct sgc_thread *t, uintptr_t sp, uintptr_t from,
                         struct stack_ranges *out);
/* Gives the warnings thread_stack_ranges found (it runs with the world
 * stopped, when a warning could wait for a lock a stopped thread holds);
 * called by the collector once the world runs again. */
void thread_stacks_warn(void);

/* ---- stop_world.c ---- */
void stop_world_init(void);
/* Suspends every registered thread but the caller; returns how many. The
 * caller holds registry_lock for the whole stop. */
int stop_world(void);
void start_world(void);
/* Suspends thread T alone (GC_suspend_thread), registry_lock held: it
 * parks in the suspend handler.  Returns once it is parked. */
void stop_world_park(struct sgc_thread *t);
/* T, the caller, leaves its blocking section: clears T->blocked, after
 * waiting for a stop in progress to end.  No lock; async-signal-safe. */
void stop_world_leave_blocking(struct sgc_thread *t);
/* Lets a parked (or asked-to-park) thread go; no lock needed. */
void stop_world_unpark(struct sgc_thread *t);
/* The calling thread, its `assisting` just cleared: parks now if a
 * GC_suspend_thread came while it was set. */
void thread_park_if_asked(struct sgc_thread *self);
/* GC_set_suspend_signal: threads are stopped with SIG from now on, if it
 * is usable and no other thread is registered yet (else a warning). */
bool stop_world_move_signal(int sig);

/* ---- suspend.c ---- */
void suspend_after_fork_child(void);
/* A zombie THREAD was joined or detached: it leaves the suspended list
 * (registry_lock held: taken before suspend_lock, as GC_suspend_thread
 * does). */
void suspend_forget_ended(pthread_t thread);

#define FOR_EACH_THREAD(t) for (struct sgc_thread *t = thread_registry_first(); t; t = t->next)

/* Every lock a collection takes before it stops the world, in its order,
 * with no page op in flight and the page path closed: a thread stopped or
 * parked while they are held holds none of them, nor a sweep-list,
 * page-store or batch lock (fork, GC_stop_world_external,
 * GC_suspend_thread).  Released in the reverse order (world_locks.c). */
void collector_locks_take(void);
void collector_locks_release(void);

#endif
