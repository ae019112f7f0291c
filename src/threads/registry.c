/* The thread registry: every thread whose stack and registers the
 * collector must scan.  Threads join by GC_pthread_create, by
 * GC_register_my_thread, or implicitly on their first allocation; they
 * leave by GC_unregister_my_thread or, at exit (the start routine's
 * return, GC_pthread_exit, cancellation), in the last round of pthread
 * key destructors. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <unistd.h>

#include "common.h"
#include "os/os.h"
#include "alloc/alloc.h"
#include "alloc/page_store.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "threads/thread.h"

__thread struct sgc_thread *sgc_self __attribute__((tls_model("initial-exec")));

pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sgc_thread *registry;
/* Changed under registry_lock, read without it (a sizing hint for page
 * reserves and the flip decision): relaxed. */
static _Atomic int registry_count;
static pthread_key_t exit_key;

static struct sgc_thread *pending; /* created by GC_pthread_create, not yet running */
static struct sgc_thread *zombies; /* exited, joinable, not joined yet */

struct sgc_thread *thread_zombie_first(void) { return zombies; }

/* registry_lock held: takes every zombie of THREAD (of kernel thread TID,
 * or any when TID is 0; never one of kernel thread SPARE) off the list
 * and returns them, linked. */
static struct sgc_thread *zombies_take(pthread_t thread, int tid, int spare) {
  struct sgc_thread *taken = NULL;
  for (struct sgc_thread **link = &zombies; *link;) {
    struct sgc_thread *z = *link;
    if (pthread_equal(z->pthread, thread) && (!tid || z->tid == tid) && z->tid != spare) {
      *link = z->next;
      z->next = taken;
      taken = z;
    } else {
      link = &z->next;
    }
  }
  if (taken) suspend_forget_ended(thread);
  return taken;
}

static void zombies_free(struct sgc_thread *list) {
  while (list) {
    struct sgc_thread *next = list->next;
    free(list->exit_descriptor);
    thread_record_free(list);
    list = next;
  }
}

void thread_forget_zombie(pthread_t thread, int tid) {
  registry_lock_take();
  struct sgc_thread *taken = zombies_take(thread, tid, 0);
  pthread_mutex_unlock(&registry_lock);
  zombies_free(taken);
}

int thread_tid_of(pthread_t thread) {
  registry_lock_take();
  struct sgc_thread *t = thread_with_id(registry, thread);
  if (!t) t = thread_with_id(zombies, thread);
  int tid = t ? t->tid : 0;
  pthread_mutex_unlock(&registry_lock);
  return tid;
}

struct sgc_thread *thread_with_id(struct sgc_thread *first, pthread_t id) {
  for (struct sgc_thread *t = first; t; t = t->next)
    if (pthread_equal(t->pthread, id)) return t;
  return NULL;
}

int thread_detach(pthread_t thread, int (*detach)(pthread_t)) {
  /* DETACH runs under registry_lock: the thread cannot become a zombie
   * between the two, nor a new thread take its id (it would register
   * under the lock) before the record is found. */
  registry_lock_take();
  int r = detach(thread);
  struct sgc_thread *taken = NULL;
  if (r == 0) {
    /* Running, or not yet: GC_pthread_create gave a pending record its id
     * before returning it (thread_pending_set_id).  Looking at running
     * threads only, a thread detached before it ran was kept as a zombie
     * at exit, its result a root for good (bb_threads part I: 25-40 of 40
     * results kept). */
    struct sgc_thread *t = thread_with_id(registry, thread);
    if (!t) t = thread_with_id(pending, thread);
    if (t) t->detached = true;
    taken = zombies_take(thread, 0, 0);
  }
  pthread_mutex_unlock(&registry_lock);
  zombies_free(taken);
  return r;
}

struct sgc_thread *thread_registry_first(void) { return registry; }
struct sgc_thread *thread_pending_first(void) { return pending; }

void thread_pending_add(struct sgc_thread *rec) {
  registry_lock_take();
  rec->prev = NULL;
  rec->next = pending;
  if (pending) pending->prev = rec;
  pending = rec;
  pthread_mutex_unlock(&registry_lock);
}

/* registry_lock held. */
static void pending_unlink(struct sgc_thread *rec) {
  if (rec->prev) rec->prev->next = rec->next;
  else if (pending == rec) pending = rec->next;
  else return; /* not pending */
  if (rec->next) rec->next->prev = rec->prev;
  rec->next = rec->prev = NULL;
}

void thread_pending_remove(struct sgc_thread *rec) {
  registry_lock_take();
  pending_unlink(rec);
  pthread_mutex_unlock(&registry_lock);
}
void thread_pending_set_id(struct sgc_thread *rec, uint64_t ticket, pthread_t id) {
  registry_lock_take();
  for (struct sgc_thread *p = pending; p; p = p->next)
    if (p == rec && p->pending_ticket == ticket) {
      p->pthread = id;
      break;
    }
  pthread_mutex_unlock(&registry_lock);
  suspend_forget_ended(id); /* a thread that had the id was joined */
}

int thread_registry_count(void) {
  return atomic_load_explicit(&registry_count, memory_order_relaxed);
}

/* The allocator's walk over the registry (alloc/thread_alloc.h). */
struct thread_alloc *thread_alloc_first(void) {
  return registry ? &registry->alloc : NULL;
}
struct thread_alloc *thread_alloc_next(const struct thread_alloc *a) {
  struct sgc_thread *next = ((const struct sgc_thread *)(const void *)a)->next;
  return next ? &next->alloc : NULL;
}
int thread_alloc_tid(const struct thread_alloc *a) {
  return ((const struct sgc_thread *)(const void *)a)->tid;
}

char *GC_stackbottom;

/* The rounds of key destructors a leaving thread stays registered
 * through (below).  ThreadSanitizer tears the thread's own state down in
 * the last round, from a key it made before sgc's, so under it sgc
 * leaves a round earlier: its atomics after that teardown crashed every
 * program whose threads exit (tools/ci/sanitize.sh thread). */
#if defined(__SANITIZE_THREAD__)
enum { EXIT_KEY_ROUNDS = PTHREAD_DESTRUCTOR_ITERATIONS - 1 };
#else
enum { EXIT_KEY_ROUNDS = PTHREAD_DESTRUCTOR_ITERATIONS };
#endif

/* A thread leaving: glibc calls key destructors in the order the keys
 * were made, sgc's first (made at start-up), so unregistering on the
 * first call let every other library's destructors run beside
 * collections that neither stopped the thread nor scanned its stack.
 * Guile's frees its thread's VM stack, which a mark procedure of its
 * thread objects reads and gives back to the OS, and only then calls
 * GC_unregister_my_thread, as bdwgc asks of threads that registered
 * themselves; a collection in between gives back whatever has been
 * mapped there since (bb_exit_destructors shows the destructors ran
 * unregistered; Guile's own race in a narrower window remains, as with
 * bdwgc: history.md, "Guile's threads program").  So the record is put
 * back until the last round of destructors glibc runs: the others run
 * their first rounds with the thread still registered.  Unless the stop
 * signal is blocked (bb_exit_signals_blocked): a collection would wait
 * for a thread that cannot take it. */
static void unregister(struct sgc_thread *rec, bool exiting);

static void exit_key_destructor(void *value) {
  struct sgc_thread *rec = value;
  if (!rec || sgc_self != rec) return;
  /* The mask goes in the record, not this frame: a cancelled thread
   * reaches here on a stack its unwound frames left poisoned for ASan. */
  bool stoppable = pthread_sigmask(SIG_BLOCK, NULL, &rec->exit_signal_mask) == 0 &&
                   !sigismember(&rec->exit_signal_mask, GC_get_suspend_signal());
  if (stoppable && ++rec->exit_rounds < EXIT_KEY_ROUNDS &&
      pthread_setspecific(exit_key, rec) == 0)
    return;
  unregister(rec, true);
}

void threads_init(void) {
  if (pthread_key_create(&exit_key, exit_key_destructor) != 0)
    sgc_fatal("cannot create the thread-exit key");
  interpose_init();
}

struct sgc_thread *thread_register_self(uintptr_t stack_base, struct sgc_thread *rec) {
  if (sgc_self) return sgc_self;
  if (!rec) rec = thread_record_new();
  /* A thread that allocates cannot go on unregistered. */
  if (!rec) sgc_fatal("out of memory for a thread record");
  rec->tid = os_gettid();
  rec->is_main = rec->tid == getpid();
  /* A main thread's stack end the program set before init stands. */
  if (!stack_base && rec->is_main && GC_stackbottom) stack_base = (uintptr_t)GC_stackbottom;
  uintptr_t own_lo = 0, own_end = rec->created_by_sgc ? thread_stack_given(rec, &own_lo) : 0;
  if (!own_end) own_end = thread_stack_bounds_of_self(&own_lo);
  rec->stack_base = stack_base ? stack_base : own_end;
  /* The lowest address holds for a given end inside this stack only. */
  if (own_lo && rec->stack_base > own_lo && rec->stack_base <= own_end) {
    rec->stack_lo = own_lo;
    rec->stack_lo_end = rec->stack_base;
  }
  if (rec->is_main) __atomic_store_n(&GC_stackbottom, (char *)rec->stack_base, __ATOMIC_RELAXED);
  /* glibc's rseq area (valid when __rseq_size says it registered one). */
  rec->alloc.rseq = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
  rec->thread_pointer = (uintptr_t)__builtin_thread_pointer();
  roots_find_thread_tls(rec); /* before registry_lock: the loader's lock comes after it */
  lock_counted(&registry_lock);
  /* Under the lock: its creator may be writing the same id into the
   * pending record (thread_pending_set_id). */
  rec->pthread = pthread_self();
  if (rec->created_by_sgc) pending_unlink(rec);
  rec->prev = NULL;
  rec->next = registry;
  if (registry) registry->prev = rec;
  registry = rec;
  atomic_fetch_add_explicit(&registry_count, 1, memory_order_relaxed);
  sgc_self = rec;
  /* An earlier thread with this id ended, and was joined or detached,
   * though perhaps not through a call sgc saw: its zombie goes.  Not
   * this thread's own, had it unregistered itself: start_wrapper still
   * stores its result there. */
  struct sgc_thread *stale = zombies_take(rec->pthread, 0, rec->tid);
  pthread_mutex_unlock(&registry_lock);
  zombies_free(stale);
  pthread_setspecific(exit_key, rec);
  /* An earlier thread with this id ended, not joined: not this one. */
  suspend_forget_ended(rec->pthread);
  /* GC_suspend_thread named it before it ran: it parks now, in the
   * suspend handler, before its start routine runs. */
  if (atomic_load_explicit(&rec->ext_suspend, memory_order_seq_cst))
    pthread_kill(rec->pthread, GC_get_suspend_signal());
  return rec;
}

/* The most of a leaving thread's descriptor kept (keep_result): glibc
 * 2.36's struct pthread takes about 2.3 KiB on x86-64. */
enum { DESCRIPTOR_KEPT_MAX = 16384 };

/* Whether REC's thread, leaving, is joinable, and if so its result kept
 * in REC.  glibc stores the result (the start routine's return value or
 * pthread_exit's argument) in the thread's descriptor, struct pthread,
 * before it runs key destructors; the descriptor is pthread_self() and
 * lies at the top of the thread's stack mapping, whose end
 * pthread_getattr_np gives.  The offset of the result in it is not
 * published, so a copy of [descriptor, stack end) stays a root until the
 * thread is joined or detached (threads/interpose.c): a copy, because
 * once joined, glibc may unmap or reuse the stack before the joiner has
 * returned to say so.  GC_pthread_create's threads keep exit_result too;
 * the copy also covers their plain pthread_exit. */
static bool keep_result(struct sgc_thread *rec) {
  if (rec->is_main || rec->detached) return false;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return rec->created_by_sgc;
  int state = PTHREAD_CREATE_DETACHED;
  void *addr = NULL;
  size_t size = 0;
  pthread_attr_getdetachstate(&attr, &state);
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  if (state != PTHREAD_CREATE_JOINABLE) return false;
  uintptr_t self = (uintptr_t)pthread_self(), end = (uintptr_t)addr + size;
  if (self < (uintptr_t)addr || self >= end || end - self > DESCRIPTOR_KEPT_MAX) {
    sgc_warn("thread %d exits joinable, but its descriptor is not at its stack's top: "
             "its result is not kept as a root until it is joined", rec->tid);
    return true;
  }
  rec->exit_descriptor = malloc(end - self);
  if (!rec->exit_descriptor)
    sgc_fatal("out of memory keeping the result of thread %d until it is joined", rec->tid);
  memcpy(rec->exit_descriptor, (void *)self, end - self);
  rec->exit_descriptor_bytes = end - self;
  return true;
}

/* REC, the caller's record, leaves the registry; EXITING: in the thread's
 * last key destructor, its result set, so a joinable thread's record
 * stays as a zombie keeping the result.  A thread unregistering itself
 * (GC_unregister_my_thread) is still running: only GC_pthread_create's
 * records are kept then, for the exit_result start_wrapper stores. */
static void unregister(struct sgc_thread *rec, bool exiting) {
  /* An exiting thread may have signals blocked (cancellation): count it
   * as blocked so a collection never waits for its acknowledgement while
   * it waits here for registry_lock.  What its stack still holds is
   * scanned from this frame up. */
  rec->blocked_sp = (uintptr_t)__builtin_frame_address(0);
  atomic_store_explicit(&rec->blocked, 1, memory_order_release);
  /* Before the locks: pthread_getattr_np and the copy call malloc. */
  bool joinable = exiting ? keep_result(rec) : rec->created_by_sgc && !rec->detached;
  heap_lock_acquire();
  batches_retire(&rec->alloc); /* its freed objects become anyone's */
  custom_cache_retire(&rec->alloc);
  uncollectable_cache_retire(&rec->alloc);
  pthread_mutex_unlock(&heap_lock);
  page_store_retire(&rec->alloc); /* its free pages go back to the pool */
  lock_counted(&registry_lock);
  free_counts_thread_exit(&rec->alloc);
  if (rec->prev) rec->prev->next = rec->next;
  else registry = rec->next;
  if (rec->next) rec->next->prev = rec->prev;
  atomic_fetch_sub_explicit(&registry_count, 1, memory_order_relaxed);
  /* Cleared under the lock: the collector never signals a thread whose
   * record is gone.  The objects left in its free lists are unmarked and
   * unreferenced, so the next collection reclaims them. */
  sgc_self = NULL;
  /* Detached meanwhile (thread_detach, under this lock): not kept. */
  bool keep = joinable && !rec->detached;
  if (keep) {
    /* pthread_join hands out the result later; until then it is a root. */
    rec->next = zombies;
    rec->prev = NULL;
    zombies = rec;
  }
  pthread_mutex_unlock(&registry_lock);
  pthread_setspecific(exit_key, NULL);
  if (!keep) {
    free(rec->exit_descriptor);
    thread_record_free(rec);
  }
}

void thread_unregister_self(void) {
  struct sgc_thread *rec = sgc_self;
  if (rec) unregister(rec, false);
}

struct sgc_thread *thread_self_or_register(void) {
  struct sgc_thread *t = sgc_self;
  if (likely(t != NULL)) return t;
  sgc_ensure_init();
  return thread_register_self(0, NULL);
}

/* After fork only the forking thread exists in the child. */
void threads_after_fork_child(void) {
  thread_records_after_fork_child();
  thread_stacks_after_fork_child();
  struct sgc_thread *self = sgc_self;
  struct sgc_thread *t = registry;
  while (t) {
    struct sgc_thread *next = t->next;
    if (t != self) {
      /* Objects on its caches are unmarked and unreferenced now: the
       * next collection reclaims them, but for uncollectable ones, whose
       * pages are never swept: those go back to the shared lists, as far
       * as the half-updated lists the fork may have copied allow. */
      uncollectable_cache_retire_lost(&t->alloc);
      custom_cache_forget(&t->alloc);
      thread_record_free(t);
    }
    t = next;
  }
  registry = self;
  atomic_store_explicit(&registry_count, self ? 1 : 0, memory_order_relaxed);
  if (self) {
    self->next = self->prev = NULL;
    self->tid = os_gettid();
    self->pthread = pthread_self();
  }
}
