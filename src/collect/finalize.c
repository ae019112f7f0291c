/* Finalizers with bdwgc's ordering rule: when A and B are both unreachable
 * and A points to B, A is finalized first and B only in a later cycle,
 * because marking from A's contents marks B.  Objects in a cycle of
 * finalizable objects are therefore never finalized (as bdwgc), unless
 * registered with _no_order; _ignore_self skips pointers to the object
 * itself. */
#include <stdio.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/finalize.h"
#include "collect/ptr_table.h"
#include "common.h"
#include "gc/gc_mark.h"
#include "mark/mark.h"
#include "threads/thread.h"

enum finalizer_mode { FINALIZE_ORDERED, FINALIZE_IGNORE_SELF, FINALIZE_NO_ORDER };

static struct ptr_table finalizers;
static struct ptr_entry *queue_head, *queue_tail; /* ready to run */
/* Changed with the queue (under its lock), read without it as a hint
 * (GC_should_invoke_finalizers, after a collection): relaxed. */
static _Atomic size_t queue_length;

SGC_EXPORT int GC_finalize_on_demand;
SGC_EXPORT int GC_java_finalization;
/* bdwgc's variable behind GC_set_finalizer_notifier, which older programs
 * assign directly: plain, read with relaxed atomic builtins. */
SGC_EXPORT GC_finalizer_notifier_proc GC_finalizer_notifier;
/* GC_set_await_finalize_proc's, called as each object is queued (relaxed:
 * one installed during a collection counts from the next). */
static _Atomic(GC_await_finalize_proc) await_proc;

bool object_is_marked(const void *obj) {
  struct page_header *page;
  uintptr_t base = object_start_rule((uintptr_t)obj, &page, true);
  return !base || mark_bit_test(page, base);
}

/* Finalizable objects registered since the last collection, and how
 * many the table held after it.  Each collection walks the whole table
 * with the world stopped, and every object registered since the last
 * one is new work there (marked from, queued): 1,000,000 objects
 * registered and dropped in a loop gave 7 collections of about 150,000
 * each, 11 ms apiece (bench-shapes -s finalizers), where bdwgc, whose
 * finalizer records are heap objects that count as allocation, collects
 * about 1,800 times.  So registrations start a collection of their own
 * once they exceed FINALIZERS_PER_COLLECTION and twice what the table
 * held after the last one: a collection's walks then cost at most 1.5
 * entries per registration, and a program keeping many finalizable
 * objects alive is not made to collect every few registrations.  The
 * price: bench-shapes -s finalizers-kept (1,000,000 kept, 2,000,000
 * dropped) takes 1.107x the time of collecting only when the heap asks
 * (5 paired runs; with 4 as the factor 1.053).  Under meta_lock. */
enum { FINALIZERS_PER_COLLECTION = 16384 };
static size_t registered_since_gc, table_after_gc;

/* Only when heap_lock is free: the caller may hold it already (inside
 * GC_call_with_alloc_lock, which bdwgc does not allow either, but a wait
 * here would hang the program), and a thread that holds it may be about
 * to collect anyway.  The count stays, so a later registration asks
 * again. */
static void collect_for_finalizers(void) {
  thread_self_or_register();
  if (pthread_mutex_trylock(&heap_lock) != 0) return;
  /* Another thread may have collected meanwhile (the count is reset). */
  meta_lock_take();
  size_t due = registered_since_gc;
  pthread_mutex_unlock(&meta_lock);
  if (due >= FINALIZERS_PER_COLLECTION && !collect_automatic_disabled())
    collect_locked(SGC_REASON_FINALIZERS);
  pthread_mutex_unlock(&heap_lock);
  collect_after_unlock();
}

static void register_finalizer(void *obj, GC_finalization_proc fn, void *cd,
                               GC_finalization_proc *ofn, void **ocd, int mode) {
  sgc_ensure_init();
  void *base = GC_base(obj);
  if (!base || base != obj) {
    /* bdwgc ignores objects it did not allocate; say so. */
    if (ofn) *ofn = NULL;
    if (ocd) *ocd = NULL;
    if (obj) sgc_warn("GC_register_finalizer: %p is not the start of a heap object", obj);
    return;
  }
  meta_lock_take();
  struct ptr_entry *e = ptr_table_find(&finalizers, obj);
  if (ofn) *ofn = e ? (GC_finalization_proc)e->fn : NULL;
  if (ocd) *ocd = e ? (void *)e->value[0] : NULL;
  if (!fn) {
    if (e) ptr_entry_release(ptr_table_remove(&finalizers, obj));
  } else {
    bool fresh = !e;
    if (!e) e = ptr_table_insert(&finalizers, obj);
    if (!e) {
      pthread_mutex_unlock(&meta_lock);
      sgc_warn("GC_register_finalizer: out of memory for the finalizer table");
      return;
    }
    e->fn = fn;
    e->value[0] = (uintptr_t)cd;
    e->mode = mode;
    if (fresh && ++registered_since_gc >= FINALIZERS_PER_COLLECTION &&
        registered_since_gc >= 2 * table_after_gc) {
      pthread_mutex_unlock(&meta_lock);
      collect_for_finalizers();
      return;
    }
  }
  pthread_mutex_unlock(&meta_lock);
}

GC_API void GC_register_finalizer(void *obj, GC_finalization_proc fn, void *cd,
                                  GC_finalization_proc *ofn, void **ocd) {
  register_finalizer(obj, fn, cd, ofn, ocd, FINALIZE_ORDERED);
}
GC_API void GC_register_finalizer_ignore_self(void *obj, GC_finalization_proc fn, void *cd,
                                              GC_finalization_proc *ofn, void **ocd) {
  register_finalizer(obj, fn, cd, ofn, ocd, FINALIZE_IGNORE_SELF);
}
GC_API void GC_register_finalizer_no_order(void *obj, GC_finalization_proc fn, void *cd,
                                           GC_finalization_proc *ofn, void **ocd) {
  register_finalizer(obj, fn, cd, ofn, ocd, FINALIZE_NO_ORDER);
}
GC_API void GC_register_finalizer_unreachable(void *obj, GC_finalization_proc fn, void *cd,
                                              GC_finalization_proc *ofn, void **ocd) {
  register_finalizer(obj, fn, cd, ofn, ocd, FINALIZE_NO_ORDER);
}

static bool push_client_data(struct ptr_entry *e, void *arg) {
  (void)arg;
  mark_word(e->value[0]);
  return false;
}
static void never_drop(struct ptr_entry *e, void *arg) { (void)e; (void)arg; }

void finalize_push_roots(void) {
  ptr_table_filter(&finalizers, push_client_data, never_drop, NULL);
  for (struct ptr_entry *e = queue_head; e; e = e->next) {
    mark_word((uintptr_t)reveal_pointer(e->hidden_key));
    mark_word(e->value[0]);
  }
}

struct held_search {
  uintptr_t lo, hi;
  bool found;
};
static bool cd_in_range(struct ptr_entry *e, void *arg) {
  struct held_search *s = arg;
  s->found |= e->value[0] >= s->lo && e->value[0] < s->hi;
  return false;
}

bool finalize_queue_holds(uintptr_t lo, uintptr_t hi) {
  for (struct ptr_entry *e = queue_head; e; e = e->next) {
    uintptr_t obj = reveal_pointer_value(e->hidden_key);
    if (obj >= lo && obj < hi) return true;
  }
  return false;
}

bool finalize_client_data_holds(uintptr_t lo, uintptr_t hi) {
  struct held_search s = {lo, hi, false};
  for (struct ptr_entry *e = queue_head; e && !s.found; e = e->next)
    s.found = e->value[0] >= lo && e->value[0] < hi;
  if (!s.found) ptr_table_filter(&finalizers, cd_in_range, never_drop, &s);
  return s.found;
}

/* Marks what an unreachable finalizable object references, not itself
 * (ordered finalization: an object such a one reaches waits for a later
 * collection).  What ends up marked is everything reachable from their
 * contents together, whenever the drains come, so they come once per
 * FINALIZE_DRAIN_OBJECTS objects, not after each: with a drain per
 * object, bench-shapes -s finalizers (1,000,000 objects, 7 collections)
 * paused 116 ms in all, against 103 ms now (tools/dev/ab.sh -t -f pause_ns,
 * 7 paired runs, 0.790, AMD VM).  A pushed object that a later drain
 * marks only has its contents pushed once more.  ARG counts the objects
 * since the last drain. */
enum { FINALIZE_DRAIN_OBJECTS = 256 };

static bool mark_from_unreachable(struct ptr_entry *e, void *arg) {
  unsigned *since_drain = arg;
  if (e->mode == FINALIZE_NO_ORDER) return false;
  struct page_header *page = NULL;
  uintptr_t base = object_start_rule((uintptr_t)reveal_pointer(e->hidden_key), &page, true);
  if (!base || mark_bit_test(page, base)) return false; /* reachable (object_is_marked) */
  if (e->mode == FINALIZE_IGNORE_SELF) mark_scan_contents_excluding_self(page, base);
  else mark_push_contents(page, base);
  if (++*since_drain == FINALIZE_DRAIN_OBJECTS) {
    mark_drain();
    *since_drain = 0;
  }
  return false;
}

static bool still_unmarked(struct ptr_entry *e, void *arg) {
  (void)arg;
  return !object_is_marked(reveal_pointer(e->hidden_key));
}

static void enqueue(struct ptr_entry *e, void *arg) {
  size_t *queued = arg;
  GC_await_finalize_proc await = atomic_load_explicit(&await_proc, memory_order_relaxed);
  if (await) await(reveal_pointer(e->hidden_key));
  e->next = NULL;
  if (queue_tail) queue_tail->next = e;
  else queue_head = e;
  queue_tail = e;
  atomic_fetch_add_explicit(&queue_length, 1, memory_order_relaxed);
  (*queued)++;
}

/* Queues E and keeps its object (and what it reaches) until its
 * finalizer has run.  Marking the object here, in the pass that queues,
 * rather than in a walk over the queue after it, spares that walk; the
 * pass's other tests are unchanged by it, each reading its own object's
 * mark, and what the object reaches is only pushed, drained after. */
static void enqueue_and_keep(struct ptr_entry *e, void *arg) {
  enqueue(e, arg);
  mark_word((uintptr_t)reveal_pointer(e->hidden_key));
}

size_t finalize_after_mark(void) {
  toggleref_after_mark();
  weak_clear_unmarked(false);
  unsigned since_drain = 0;
  ptr_table_filter(&finalizers, mark_from_unreachable, never_drop, &since_drain);
  mark_drain();
  size_t queued = 0;
  ptr_table_filter(&finalizers, still_unmarked, enqueue_and_keep, &queued);
  mark_drain();
  registered_since_gc = 0;
  table_after_gc = finalizers.count;
  weak_clear_unmarked(true);
  weak_drop_links_in_dead_objects();
  return queued;
}

size_t finalize_queue_length(void) {
  return atomic_load_explicit(&queue_length, memory_order_relaxed);
}

GC_API int GC_should_invoke_finalizers(void) { return finalize_queue_length() != 0; }

GC_API int GC_invoke_finalizers(void) {
  int count = 0;
  for (;;) {
    /* The object and its client data move to this frame while meta_lock
     * is held: once the entry leaves the queue, nothing else keeps them
     * alive, and a collection may start the moment the lock is free. */
    void *volatile obj = NULL;
    void *volatile cd = NULL;
    GC_finalization_proc fn = NULL;
    meta_lock_take();
    struct ptr_entry *e = queue_head;
    if (e) {
      queue_head = e->next;
      if (!queue_head) queue_tail = NULL;
      atomic_fetch_sub_explicit(&queue_length, 1, memory_order_relaxed);
      obj = reveal_pointer(e->hidden_key);
      cd = (void *)e->value[0];
      fn = (GC_finalization_proc)e->fn;
      ptr_entry_release(e);
    }
    pthread_mutex_unlock(&meta_lock);
    if (!e) return count;
    fn(obj, cd);
    count++;
  }
}

GC_API void GC_set_finalize_on_demand(int on) { GC_finalize_on_demand = on; }
GC_API int GC_get_finalize_on_demand(void) { return GC_finalize_on_demand; }
GC_API void GC_set_java_finalization(int on) { GC_java_finalization = on; }
GC_API int GC_get_java_finalization(void) { return GC_java_finalization; }
GC_API void GC_set_finalizer_notifier(GC_finalizer_notifier_proc fn) {
  __atomic_store_n(&GC_finalizer_notifier, fn, __ATOMIC_RELAXED);
}
GC_API GC_finalizer_notifier_proc GC_get_finalizer_notifier(void) {
  return __atomic_load_n(&GC_finalizer_notifier, __ATOMIC_RELAXED);
}
GC_API void GC_set_await_finalize_proc(GC_await_finalize_proc fn) {
  atomic_store_explicit(&await_proc, fn, memory_order_relaxed);
}
GC_API GC_await_finalize_proc GC_get_await_finalize_proc(void) {
  return atomic_load_explicit(&await_proc, memory_order_relaxed);
}

static bool every_entry(struct ptr_entry *e, void *arg) {
  (void)e;
  (void)arg;
  return true;
}

/* javaxfc.h: every registered object joins the queue, reachable or not
 * (the queue is a root, so the objects stay valid while their finalizers
 * run), until finalizers stop registering more. */
GC_API void GC_finalize_all(void) {
  sgc_ensure_init();
  for (;;) {
    size_t queued = 0;
    meta_lock_take();
    ptr_table_filter(&finalizers, every_entry, enqueue, &queued);
    pthread_mutex_unlock(&meta_lock);
    int ran = GC_invoke_finalizers();
    if (!queued && !ran) return;
  }
}

static bool print_finalizer(struct ptr_entry *e, void *arg) {
  (void)arg;
  static const char *const modes[] = {"ordered", "ignore self", "no order"};
  void *obj = reveal_pointer(e->hidden_key);
  char what[GC_TYPE_DESCR_LEN + 1];
  describe_object(obj, what);
  fprintf(stderr, "sgc:   %p (%s): finalizer %p, client data %p, %s\n", obj, what,
          (void *)e->fn, (void *)e->value[0], modes[e->mode]);
  return false;
}

GC_API void GC_dump_finalization(void) {
  sgc_ensure_init();
  meta_lock_take();
  fprintf(stderr, "sgc: objects with a finalizer:\n");
  ptr_table_filter(&finalizers, print_finalizer, never_drop, NULL);
  fprintf(stderr, "sgc: %zu queued for finalization\n", finalize_queue_length());
  weak_dump();
  pthread_mutex_unlock(&meta_lock);
}

/* The collection the program was last told of. */
static _Atomic GC_word notified_gc_no;

/* After a collection, outside every lock: run the finalizers here unless
 * the program asked to run them itself, then tell it instead. */
void finalize_run_or_notify(void) {
  if (!finalize_queue_length()) return;
  if (GC_finalize_on_demand) {
    /* Once per collection, as bdwgc: told again at every slow path while
     * the queue waits, Guile's finalizer thread stayed awake on a full
     * pipe and took the queue from under its own (gc), which runs the
     * finalizers itself right after collecting -- a guardian then came
     * back empty.  Relaxed: a lost race only notifies twice. */
    GC_word gc_no = GC_get_gc_no();
    if (atomic_exchange_explicit(&notified_gc_no, gc_no, memory_order_relaxed) == gc_no) return;
    GC_finalizer_notifier_proc notifier = GC_get_finalizer_notifier();
    if (notifier) notifier();
    return;
  }
  struct sgc_thread *t = sgc_self;
  if (!t || t->finalizing) return;
  t->finalizing = true;
  GC_invoke_finalizers();
  t->finalizing = false;
}
