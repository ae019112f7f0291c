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
#include "collect/collect.h"
#include "roots/roots.h"
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

void thread_forget_zombie(pthread_t thread) {
  registry_lock_take();
  for (struct sgc_thread **link = &zombies; *link; link = &(*link)->next) {
    if (pthread_equal((*link)->pthread, thread)) {
      struct sgc_thread *z = *link;
      *link = z->next;
      suspend_forget_ended(thread);
      pthread_mutex_unlock(&registry_lock);
      free(z);
      return;
    }
  }
  pthread_mutex_unlock(&registry_lock);
}

struct sgc_thread *thread_with_id(struct sgc_thread *first, pthread_t id) {
  for (struct sgc_thread *t = first; t; t = t->next)
    if (pthread_equal(t->pthread, id)) return t;
  return NULL;
}

void thread_mark_detached(pthread_t thread) {
  registry_lock_take();
  /* Running, or not yet: GC_pthread_create gave a pending record its id
   * before returning it (thread_pending_set_id).  Looking at running
   * threads only, a thread detached before it ran was kept as a zombie
   * at exit, its result a root for good (bb_threads part I: 25-40 of 40
   * results kept). */
  struct sgc_thread *t = thread_with_id(registry, thread);
  if (!t) t = thread_with_id(pending, thread);
  if (t) t->detached = true;
  pthread_mutex_unlock(&registry_lock);
  thread_forget_zombie(thread);
}

/* Records are cache-line aligned and padded: two threads' hot fields
 * (free lists, counters) never share a line. */
struct sgc_thread *thread_record_new(void) {
  size_t size = (sizeof(struct sgc_thread) + 127) & ~(size_t)127;
  void *p = NULL;
  if (posix_memalign(&p, 128, size) != 0 || !p) return NULL;
  memset(p, 0, size);
  free_record_init(p);
  return p;
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

char *GC_stackbottom;

/* The rounds of key destructors a leaving thread stays registered
 * through (below).  ThreadSanitizer tears the thread's own state down in
 * the last round, from a key it made before sgc's, so under it sgc
 * leaves a round earlier: its atomics after that teardown crashed every
 * program whose threads exit (tools/sanitize.sh thread). */
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
  thread_unregister_self();
}

void threads_init(void) {
  if (pthread_key_create(&exit_key, exit_key_destructor) != 0)
    sgc_fatal("cannot create the thread-exit key");
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
  rec->rseq = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
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
  pthread_mutex_unlock(&registry_lock);
  pthread_setspecific(exit_key, rec);
  /* An earlier thread with this id ended, not joined: not this one. */
  suspend_forget_ended(rec->pthread);
  /* GC_suspend_thread named it before it ran: it parks now, in the
   * suspend handler, before its start routine runs. */
  if (atomic_load_explicit(&rec->ext_suspend, memory_order_seq_cst))
    pthread_kill(rec->pthread, GC_get_suspend_signal());
  return rec;
}

void thread_unregister_self(void) {
  struct sgc_thread *rec = sgc_self;
  if (!rec) return;
  /* An exiting thread may have signals blocked (cancellation): count it
   * as blocked so a collection never waits for its acknowledgement while
   * it waits here for registry_lock.  What its stack still holds is
   * scanned from this frame up. */
  rec->blocked_sp = (uintptr_t)__builtin_frame_address(0);
  atomic_store_explicit(&rec->blocked, 1, memory_order_release);
  heap_lock_acquire();
  batches_retire(rec); /* its freed objects become anyone's */
  custom_cache_retire(rec);
  uncollectable_cache_retire(rec);
  pthread_mutex_unlock(&heap_lock);
  page_store_retire(rec); /* its free pages go back to the pool */
  lock_counted(&registry_lock);
  free_counts_thread_exit(rec);
  if (rec->prev) rec->prev->next = rec->next;
  else registry = rec->next;
  if (rec->next) rec->next->prev = rec->prev;
  atomic_fetch_sub_explicit(&registry_count, 1, memory_order_relaxed);
  /* Cleared under the lock: the collector never signals a thread whose
   * record is gone.  The objects left in its free lists are unmarked and
   * unreferenced, so the next collection reclaims them. */
  sgc_self = NULL;
  bool keep = rec->created_by_sgc && !rec->detached;
  if (keep) {
    /* pthread_join hands out the result later; until then it is a root. */
    rec->next = zombies;
    rec->prev = NULL;
    zombies = rec;
  }
  pthread_mutex_unlock(&registry_lock);
  pthread_setspecific(exit_key, NULL);
  if (!keep) free(rec);
}

struct sgc_thread *thread_self_or_register(void) {
  struct sgc_thread *t = sgc_self;
  if (likely(t != NULL)) return t;
  sgc_ensure_init();
  return thread_register_self(0, NULL);
}

/* After fork only the forking thread exists in the child. */
void threads_after_fork_child(void) {
  struct sgc_thread *self = sgc_self;
  struct sgc_thread *t = registry;
  while (t) {
    struct sgc_thread *next = t->next;
    if (t != self) {
      /* Objects on its caches are unmarked and unreferenced now: the
       * next collection reclaims them, but for uncollectable ones, whose
       * pages are never swept: those go back to the shared lists, as far
       * as the half-updated lists the fork may have copied allow. */
      uncollectable_cache_retire_lost(t);
      custom_cache_forget(t);
      free(t);
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
