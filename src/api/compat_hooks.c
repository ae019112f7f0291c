/* bdwgc's callbacks, tuning calls and object queries that have an sgc
 * meaning, so that programs using them (through sgc's gc.h, or linked
 * with libgc.so.1 and run with sgc preloaded) work rather than reaching
 * bdwgc (api/preload_check.c).
 *
 * Callbacks run with heap_lock held, most of them with the world stopped
 * (collect/events.h); like bdwgc's, they must not allocate. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "collect/debug_alloc.h"
#include "collect/collect.h"
#include "collect/concurrent.h"
#include "collect/events.h"
#include "common.h"
#include "gc/gc_mark.h"
#include "heap/heap.h"
#include "heap/layout.h"
#include "mark/custom_kind.h"
#include "mark/mark.h"
#include "stats/stats.h"
#include "threads/thread.h"

/* The collector loads these relaxed: a callback installed while a
 * collection runs is seen by that collection or the next. */
static _Atomic(GC_on_collection_event_proc) on_event;
static _Atomic(GC_start_callback_proc) on_start;
/* bdwgc's variable, which older clients (ECL) assign directly and chain;
 * GC_set_push_other_roots writes the same one. */
SGC_EXPORT void (*GC_push_other_roots)(void);
/* bdwgc's variable behind GC_set_on_heap_resize, assigned directly by
 * older programs: plain, read with relaxed atomic builtins. */
SGC_EXPORT GC_on_heap_resize_proc GC_on_heap_resize;
static _Atomic(GC_stop_func) stop_func;
static _Atomic int automatic_collection_disabled, force_unmap;
/* bdwgc's variables of the same meaning, which some programs set
 * directly; no effect in sgc. */
SGC_EXPORT int GC_dont_expand, GC_dont_precollect;
static _Atomic int rate = 10, max_prior_attempts = 1;
static _Atomic size_t min_bytes_allocd = 1;
static _Atomic GC_word allocd_bytes_per_finalizer = 10000;

/* Runs CALL, a program's function sgc calls with heap_lock held, named
 * NAME for the fatal error should it wait for that lock, which it would
 * do for ever (threads/lock_wait.h). */
#define CALLED_WITH_LOCK_HELD(name, call)            \
  do {                                               \
    const char *outer = lock_holding_callback;       \
    lock_holding_callback = name;                    \
    call;                                            \
    lock_holding_callback = outer;                   \
  } while (0)

void collection_event(enum collection_event event) {
  GC_on_collection_event_proc f = atomic_load_explicit(&on_event, memory_order_relaxed);
  if (f) CALLED_WITH_LOCK_HELD("the GC_set_on_collection_event callback", f((GC_EventType)event));
}
bool collection_start_hooks_set(void) {
  return atomic_load_explicit(&on_event, memory_order_relaxed) ||
         atomic_load_explicit(&on_start, memory_order_relaxed);
}
void collection_start_callback(void) {
  GC_start_callback_proc f = atomic_load_explicit(&on_start, memory_order_relaxed);
  if (f) CALLED_WITH_LOCK_HELD("the GC_set_start_callback callback", f());
}
void collection_push_other_roots(void) {
  GC_push_other_roots_proc f = GC_push_other_roots;
  if (f) CALLED_WITH_LOCK_HELD("the GC_set_push_other_roots callback", f());
}
void heap_resized(size_t new_size) {
  GC_on_heap_resize_proc f = __atomic_load_n(&GC_on_heap_resize, __ATOMIC_RELAXED);
  if (f) CALLED_WITH_LOCK_HELD("the GC_set_on_heap_resize callback", f((GC_word)new_size));
}
void *call_with_lock_held(GC_fn_type fn, void *cd) {
  void *result;
  CALLED_WITH_LOCK_HELD("the function given to GC_call_with_alloc_lock", result = fn(cd));
  return result;
}
bool collect_automatic_disabled(void) {
  return atomic_load_explicit(&automatic_collection_disabled, memory_order_relaxed);
}

GC_API void GC_set_on_collection_event(GC_on_collection_event_proc f) {
  atomic_store(&on_event, f);
}
GC_API GC_on_collection_event_proc GC_get_on_collection_event(void) {
  return atomic_load(&on_event);
}
GC_API void GC_set_start_callback(GC_start_callback_proc f) { atomic_store(&on_start, f); }
GC_API GC_start_callback_proc GC_get_start_callback(void) { return atomic_load(&on_start); }
GC_API void GC_set_on_heap_resize(GC_on_heap_resize_proc f) {
  __atomic_store_n(&GC_on_heap_resize, f, __ATOMIC_RELAXED);
}
GC_API GC_on_heap_resize_proc GC_get_on_heap_resize(void) {
  return __atomic_load_n(&GC_on_heap_resize, __ATOMIC_RELAXED);
}
GC_API void GC_set_push_other_roots(GC_push_other_roots_proc f) {
  heap_lock_acquire(); /* no collection reads it meanwhile */
  GC_push_other_roots = f;
  pthread_mutex_unlock(&heap_lock);
}
GC_API GC_push_other_roots_proc GC_get_push_other_roots(void) { return GC_push_other_roots; }

/* From a push_other_roots callback: the words of [BOTTOM, TOP) are
 * roots, tested conservatively like a stack's. */
GC_API void GC_push_all(void *bottom, void *top) {
  /* Only the collector calls back here, inside a collection; a push at
   * any other time would leave entries on a mark stack between
   * collections. */
  if (!heap_accounting.collecting)
    sgc_fatal("GC_push_all(%p, %p) outside a collection (call it from a "
              "GC_set_push_other_roots callback)", bottom, top);
  /* From a mark procedure, which may run on any GC thread: onto the stack
   * of the marker running it. */
  struct marker *m = custom_kind_current_marker();
  mark_push_range_on(m ? m : mark_collector, (uintptr_t)bottom, (uintptr_t)top);
}
GC_API void GC_push_all_eager(void *bottom, void *top) { GC_push_all(bottom, top); }
/* Without dirty bits every page counts: the whole range, whatever ALL. */
GC_API void GC_push_conditional(void *bottom, void *top, int all) {
  (void)all;
  GC_push_all(bottom, top);
}

/* A stop-the-world collection is never abandoned midway (as
 * GC_try_to_collect): the function is kept for GC_get_stop_func only. */
GC_API void GC_set_stop_func(GC_stop_func f) { atomic_store(&stop_func, f); }
GC_API GC_stop_func GC_get_stop_func(void) { return atomic_load(&stop_func); }

/* Collections only when asked for (GC_gcollect), unlike GC_disable. */
GC_API void GC_set_disable_automatic_collection(int on) {
  atomic_store(&automatic_collection_disabled, on != 0);
}
GC_API int GC_get_disable_automatic_collection(void) {
  return atomic_load(&automatic_collection_disabled);
}
/* GC_gcollect then also gives free memory back (GC_gcollect_and_unmap). */
GC_API void GC_set_force_unmap_on_gcollect(int on) { atomic_store(&force_unmap, on != 0); }
GC_API int GC_get_force_unmap_on_gcollect(void) { return atomic_load(&force_unmap); }
bool collect_force_unmap(void) { return atomic_load_explicit(&force_unmap, memory_order_relaxed); }

/* Tuning of bdwgc's own policies (incremental and generational modes,
 * retries, leak finding) that sgc does not have: kept, so that a program
 * reads back what it set, and without effect; see docs/behaviour.md. */
GC_API void GC_set_dont_expand(int on) { GC_dont_expand = on != 0; }
GC_API int GC_get_dont_expand(void) { return GC_dont_expand; }
GC_API void GC_set_dont_precollect(int on) { GC_dont_precollect = on != 0; }
GC_API int GC_get_dont_precollect(void) { return GC_dont_precollect; }
GC_API void GC_set_max_retries(GC_word n) { GC_max_retries = n; }
GC_API GC_word GC_get_max_retries(void) { return GC_max_retries; }
GC_API void GC_set_full_freq(int n) { GC_full_freq = n; }
GC_API int GC_get_full_freq(void) { return GC_full_freq; }
GC_API void GC_set_time_limit(unsigned long ms) { GC_time_limit = ms; }
GC_API unsigned long GC_get_time_limit(void) { return GC_time_limit; }
static unsigned long time_limit_nsec;
GC_API void GC_set_time_limit_tv(struct GC_timeval_s tv) {
  GC_time_limit = tv.tv_ms;
  time_limit_nsec = tv.tv_nsec;
}
GC_API struct GC_timeval_s GC_get_time_limit_tv(void) {
  return (struct GC_timeval_s){GC_time_limit, time_limit_nsec};
}
GC_API void GC_set_non_gc_bytes(GC_word n) { GC_non_gc_bytes = n; }
GC_API GC_word GC_get_non_gc_bytes(void) { return GC_non_gc_bytes; }
/* GC_no_dls is honoured: the static roots of shared libraries are skipped. */
GC_API void GC_set_no_dls(int on) { GC_no_dls = on != 0; }
GC_API int GC_get_no_dls(void) { return GC_no_dls; }
/* Leak-finding mode (collect/debug_alloc.c): a plain int, as bdwgc's, which
 * programs set before GC_INIT; read relaxed at each collection. */
GC_API void GC_set_find_leak(int on) {
  __atomic_store_n(&GC_find_leak, on != 0, __ATOMIC_RELAXED);
  if (on) debug_objects_leak_mode_on();
}
GC_API int GC_get_find_leak(void) { return __atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED); }
GC_API void GC_set_handle_fork(int on) { (void)on; /* sgc always handles fork (pthread_atfork) */ }
GC_API void GC_set_rate(int n) { atomic_store(&rate, n); }
GC_API int GC_get_rate(void) { return atomic_load(&rate); }
GC_API void GC_set_max_prior_attempts(int n) { atomic_store(&max_prior_attempts, n); }
GC_API int GC_get_max_prior_attempts(void) { return atomic_load(&max_prior_attempts); }
GC_API void GC_set_min_bytes_allocd(size_t n) { atomic_store(&min_bytes_allocd, n); }
GC_API size_t GC_get_min_bytes_allocd(void) { return atomic_load(&min_bytes_allocd); }
GC_API void GC_set_allocd_bytes_per_finalizer(GC_word n) {
  atomic_store(&allocd_bytes_per_finalizer, n);
}
GC_API GC_word GC_get_allocd_bytes_per_finalizer(void) {
  return atomic_load(&allocd_bytes_per_finalizer);
}
GC_API void GC_deinit(void) {}

/* sgc registers its own fork handlers (pthread_atfork) whatever the
 * program asks: calling these as well must not take its locks twice. */
GC_API void GC_atfork_prepare(void) {}
GC_API void GC_atfork_parent(void) {}
GC_API void GC_atfork_child(void) {}
/* The allocator's lock (bdwgc's GC_alloc_lock): heap_lock. */
GC_API void GC_alloc_lock(void) {
  heap_lock_acquire();
  lock_holding_callback = "code between GC_alloc_lock and GC_alloc_unlock";
}
GC_API void GC_alloc_unlock(void) {
  lock_holding_callback = NULL;
  pthread_mutex_unlock(&heap_lock);
}
/* In concurrent mode (GC_enable_incremental) a cycle starts now unless
 * one runs; the program's next slow paths finish it.  A no-op in stop
 * mode, as bdwgc's without incremental mode. */
GC_API void GC_start_incremental_collection(void) {
  sgc_ensure_init();
  heap_lock_acquire();
  if (sgc_settings.concurrent) collect_start_cycle(SGC_REASON_EXPLICIT);
  pthread_mutex_unlock(&heap_lock);
}
/* sgc stops threads with SIGPWR from start-up, before main; a program
 * that needs that signal moves sgc to another before GC_INIT
 * (threads/stop_world.c).  GC_set_thr_restart_signal is there too. */
GC_API void GC_set_suspend_signal(int sig) { stop_world_move_signal(sig); }

static void print_to(FILE *out, const char *format, va_list ap) {
  vfprintf(out, format, ap);
  fflush(out);
}
GC_API void GC_printf(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  print_to(stdout, format, ap);
  va_end(ap);
}
GC_API void GC_err_printf(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  print_to(stderr, format, ap);
  va_end(ap);
}
/* bdwgc's log: standard error unless GC_set_log_fd redirected it. */
static _Atomic int log_fd = -1;
GC_API void GC_set_log_fd(int fd) { atomic_store(&log_fd, fd); }
GC_API void GC_log_printf(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int fd = atomic_load(&log_fd);
  if (fd >= 0) vdprintf(fd, format, ap);
  else print_to(stderr, format, ap);
  va_end(ap);
}

/* A collection if one is due (in concurrent mode: a cycle started, or
 * finished once its marking converged); nonzero while a cycle runs. */
GC_API int GC_collect_a_little(void) {
  sgc_ensure_init();
  heap_lock_acquire();
  bool collected = false;
  collect_if_due(&collected);
  /* Not while collections are off: a loop until 0 would never end. */
  int more = concurrent_cycle_running() && !GC_dont_gc && !heap_accounting.disable_count;
  pthread_mutex_unlock(&heap_lock);
  collect_after_unlock();
  return more;
}

GC_API size_t GC_get_memory_use(void) {
  size_t heap = GC_get_heap_size(), free_bytes = GC_get_free_bytes();
  return heap > free_bytes ? heap - free_bytes : 0;
}
GC_API size_t GC_get_obtained_from_os_bytes(void) { return GC_get_heap_size(); }

GC_API size_t GC_get_prof_stats(struct GC_prof_stats_s *out, size_t size) {
  struct GC_prof_stats_s s;
  memset(&s, 0xff, sizeof s); /* what sgc does not count stays "unknown" */
  s.heapsize_full = GC_get_heap_size();
  s.free_bytes_full = GC_get_free_bytes();
  s.unmapped_bytes = GC_get_unmapped_bytes();
  s.bytes_allocd_since_gc = GC_get_bytes_since_gc();
  s.allocd_bytes_before_gc = GC_get_total_bytes() - s.bytes_allocd_since_gc;
  s.non_gc_bytes = GC_non_gc_bytes;
  s.gc_no = GC_get_gc_no();
  s.markers_m1 = (GC_word)GC_get_parallel();
  s.obtained_from_os_bytes = GC_get_obtained_from_os_bytes();
  size_t n = size < sizeof s ? size : sizeof s;
  memcpy(out, &s, n);
  if (size > sizeof s) memset((char *)out + sizeof s, 0xff, size - sizeof s);
  return n;
}
GC_API size_t GC_get_prof_stats_unsafe(struct GC_prof_stats_s *out, size_t size) {
  return GC_get_prof_stats(out, size);
}
GC_API size_t GC_get_size_map_at(int i) {
  if (i < 0 || (size_t)i > sgc_settings.small_request_limit) return (size_t)-1;
  return size_class_bytes[size_class_for_bytes((size_t)i + sgc_settings.extra_bytes)];
}
GC_API unsigned long GC_get_full_gc_total_time(void) {
  SGC_stats_t s;
  SGC_get_stats(&s);
  return (unsigned long)(s.total_pause_ns / 1000000u);
}

/* The object P starts, or a fatal error naming CALLER: these queries,
 * as bdwgc's, take an object's base address. */
static uintptr_t object_at(const void *p, struct page_header **page, const char *caller) {
  *page = NULL;
  uintptr_t base = object_start_rule((uintptr_t)p, page, true);
  if (!base || base != (uintptr_t)p || !*page)
    sgc_fatal("%s(%p): not the start of an object sgc allocated", caller, p);
  return base;
}

/* bdwgc's kind numbers: PTRFREE 0, NORMAL 1, UNCOLLECTABLE 2,
 * AUNCOLLECTABLE 3; sgc numbers NORMAL 0 and ATOMIC 1 the other way. */
GC_API int GC_get_kind_and_size(const void *p, size_t *size) {
  struct page_header *page;
  object_at(p, &page, "GC_get_kind_and_size");
  if (size) *size = object_size(page);
  static const int bdwgc_kind[KIND_COUNT] = {1, 0, 2, 3};
  return kind_is_custom(page->kind) ? page->kind : bdwgc_kind[page->kind];
}

/* Meaningful, as in bdwgc, inside a collection or right after one. */
GC_API int GC_is_marked(const void *p) {
  struct page_header *page;
  uintptr_t base = object_at(p, &page, "GC_is_marked");
  return mark_bit_test_held(page, base);
}

/* The object survives the collection in progress (bdwgc's rule); its
 * mark is cleared when the next collection starts.  During a concurrent
 * cycle a white object made black so is scanned too (concurrent.h). */
GC_API void GC_set_mark_bit(const void *p) {
  struct page_header *page;
  uintptr_t base = object_at(p, &page, "GC_set_mark_bit");
  mark_bit_set(page, base);
  if (concurrent_cycle_running()) concurrent_object_blackened(page, base);
}
GC_API void GC_clear_mark_bit(const void *p) {
  struct page_header *page;
  uintptr_t base = object_at(p, &page, "GC_clear_mark_bit");
  mark_bit_clear(page, base);
}

GC_API void GC_dump(void) { stats_print_summary(); }
GC_API void GC_dump_named(const char *name) {
  if (name) fprintf(stderr, "sgc: %s\n", name);
  stats_print_summary();
}

/* sgc reads the loaded objects' segments at each collection, under the
 * loader's own lock, so a plain dlopen is safe. */
GC_API void *GC_dlopen(const char *path, int mode) { return dlopen(path, mode); }

