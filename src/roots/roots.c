/* Static roots: the writable PT_LOAD segments of every loaded object
 * except sgc itself (its tables point only to memory the collector
 * manages by other means), minus GC_exclude_static_roots ranges, plus
 * GC_add_roots ranges. */
#include "roots/roots.h"
#include "roots/range_set.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>
#include <link.h>
#include <string.h>

#include "alloc/percpu.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "heap/heap.h"
#include "mark/mark.h"
#include "os/os.h"
#include "threads/thread.h"

static struct range_set static_roots, user_roots, exclusions, user_exclusions;
SGC_EXPORT int GC_no_dls;
static uintptr_t own_base;

void roots_exclude_own_table(const void *table, size_t bytes) {
  range_set_add(&exclusions, (uintptr_t)table, (uintptr_t)table + bytes, "excluded root ranges");
}

void roots_init(void) {
  Dl_info info;
  if (dladdr((void *)&roots_init, &info) && info.dli_fbase) own_base = (uintptr_t)info.dli_fbase;
  roots_exclude_own_table(pagemap_l1, sizeof pagemap_l1);
  roots_exclude_own_table(cpu_caches, sizeof cpu_caches);
  roots_thread_specific_init();
  roots_dynamic_tls_init();
}

/* GC_register_has_static_roots_callback: asked about every writable
 * segment before it becomes a root (relaxed: read at each snapshot). */
static _Atomic(GC_has_static_roots_func) has_static_roots;

GC_API void GC_register_has_static_roots_callback(GC_has_static_roots_func f) {
  atomic_store_explicit(&has_static_roots, f, memory_order_relaxed);
}

/* Whether INFO is libsgc itself (its data points only to memory the
 * collector manages by other means).  In a static link sgc is part of
 * the program, which is scanned whole. */
static bool is_sgc_itself(const struct dl_phdr_info *info) {
  return own_base && info->dlpi_addr == own_base && info->dlpi_name && info->dlpi_name[0];
}

static int add_object_segments(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  if (is_sgc_itself(info)) return 0;
  /* GC_no_dls: only the main program's data (dl_iterate_phdr reports it
   * first, with an empty name). */
  if (GC_no_dls && info->dlpi_name && info->dlpi_name[0]) return 0;
  roots_dynamic_tls_note(info);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    GC_has_static_roots_func wanted = atomic_load_explicit(&has_static_roots, memory_order_relaxed);
    if (wanted && !wanted(info->dlpi_name ? info->dlpi_name : "", (void *)lo, ph->p_memsz)) continue;
    range_set_add(&static_roots, lo, lo + ph->p_memsz, "static root segments");
  }
  return 0;
}

void roots_snapshot_static(void) {
  static_roots.count = 0;
  roots_dynamic_tls_begin();
  dl_iterate_phdr(add_object_segments, NULL);
}

/* glibc's dl_iterate_phdr holds the loader's write lock (recursive)
 * while it calls back, and dlclose unmaps an object's segments and
 * unlinks it from the list inside that same lock (elf/dl-close.c).  So
 * inside a callback the list is still: every object in it stays mapped,
 * and a thread stopped on its way to unmapping one is stopped before it.
 * Stopping the world there is safe, as no thread we stop can hold the
 * lock: we do.  The snapshot is a second iteration nested in the first,
 * which the recursive lock allows. */
struct snapshot_then {
  void (*then)(void *);
  void *arg;
  bool ran;
};

static int snapshot_then_in_callback(struct dl_phdr_info *info, size_t size, void *data) {
  (void)info;
  (void)size;
  struct snapshot_then *call = data;
  roots_snapshot_static();
  call->then(call->arg);
  call->ran = true;
  return 1; /* one call is enough */
}

void roots_snapshot_static_then(void (*then)(void *), void *arg) {
  struct snapshot_then call = {then, arg, false};
  dl_iterate_phdr(snapshot_then_in_callback, &call);
  if (!call.ran) { /* no object reported: nothing could be unmapped */
    roots_snapshot_static();
    then(arg);
  }
}

/* Thread-local storage.  bdwgc scans none (its documentation asks that
 * what a __thread variable references also be referenced from somewhere
 * it scans, and programs found out by losing objects: bdwgc issue #191,
 * Nim issue #14364).  A thread glibc creates has its static TLS at the
 * top of its stack mapping, which the stack scan covers, but the main
 * thread's lies in memory the loader allocated.  So a thread registering
 * records, from itself (dlpi_tls_data is the calling thread's block),
 * every module's block in its static TLS but sgc's own, and collections
 * scan them.  Only static TLS: it lasts as long as the thread, where a
 * block allocated on first use (dynamic TLS, modules loaded later) is
 * malloc's and goes with its module's dlclose.  On x86-64 static TLS
 * ends at the thread pointer and is at most glibc's static TLS size long
 * (_dl_get_tls_static_info, which the sanitizers' runtimes read too);
 * without that function no block is taken. */
struct tls_search {
  struct sgc_thread *thread;
  uintptr_t static_lo, static_hi;
};

static int add_tls_block(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct tls_search *search = data;
  struct sgc_thread *t = search->thread;
  if (!info->dlpi_tls_data) return 0; /* no TLS, or not allocated for this thread yet */
  if (is_sgc_itself(info)) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_TLS || ph->p_memsz == 0) continue;
    uintptr_t lo = (uintptr_t)info->dlpi_tls_data, hi = lo + ph->p_memsz;
    if (lo < search->static_lo || hi > search->static_hi) return 0; /* dynamic TLS */
    if (t->tls_count == THREAD_TLS_RANGES_MAX) {
      static atomic_flag warned = ATOMIC_FLAG_INIT;
      if (!atomic_flag_test_and_set_explicit(&warned, memory_order_relaxed))
        sgc_warn("more than %d modules with thread-local storage: the blocks of the rest "
                 "are not roots",
                 THREAD_TLS_RANGES_MAX);
      return 1;
    }
    t->tls[t->tls_count].lo = lo;
    t->tls[t->tls_count].hi = hi;
    t->tls_count++;
  }
  return 0;
}

void roots_find_thread_tls(struct sgc_thread *t) {
  t->tls_count = 0;
  static void (*_Atomic static_info)(size_t *, size_t *);
  void (*info)(size_t *, size_t *) = atomic_load_explicit(&static_info, memory_order_relaxed);
  if (!info) {
    info = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    if (!info) return;
    atomic_store_explicit(&static_info, info, memory_order_relaxed);
  }
  size_t static_size = 0, static_align = 0;
  info(&static_size, &static_align);
  uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
  struct tls_search search = {t, tp - static_size, tp};
  dl_iterate_phdr(add_tls_block, &search);
}

void roots_visit_thread_tls(const struct sgc_thread *t, roots_range_visit *visit, void *arg) {
  for (unsigned i = 0; i < t->tls_count; i++) visit(t->tls[i].lo, t->tls[i].hi, arg);
}

/* An exclusion overlapping [lo, hi), or NULL. */
static const struct range *exclusion_overlapping(uintptr_t lo, uintptr_t hi) {
  const struct range_set *sets[] = {&exclusions, &user_exclusions};
  for (int s = 0; s < 2; s++)
    for (size_t i = 0; i < sets[s]->count; i++) {
      const struct range *x = &sets[s]->items[i];
      if (x->hi > lo && x->lo < hi) return x;
    }
  return NULL;
}

/* Calls VISIT for [lo, hi) minus the exclusions; returns the bytes. */
static size_t visit_excluding(uintptr_t lo, uintptr_t hi, roots_range_visit *visit, void *arg) {
  const struct range *x = exclusion_overlapping(lo, hi);
  if (x) {
    uintptr_t x_lo = x->lo, x_hi = x->hi;
    return visit_excluding(lo, x_lo > lo ? x_lo : lo, visit, arg) +
           visit_excluding(x_hi < hi ? x_hi : hi, hi, visit, arg);
  }
  if (hi > lo) visit(lo, hi, arg);
  return hi > lo ? hi - lo : 0;
}

/* Heap lock held: a fresh snapshot of the loaded objects' segments (the
 * next collection takes its own). */
bool roots_hold(uintptr_t a, bool loaded_objects_only) {
  roots_snapshot_static();
  meta_lock_take();
  bool held = !exclusion_overlapping(a, a + 1) &&
              (range_set_holds(&static_roots, a) ||
               (!loaded_objects_only && range_set_holds(&user_roots, a)));
  pthread_mutex_unlock(&meta_lock);
  return held;
}

GC_API int GC_is_tmp_root(void *p) {
  sgc_ensure_init();
  heap_lock_acquire();
  bool tmp = roots_hold((uintptr_t)p, true);
  pthread_mutex_unlock(&heap_lock);
  return tmp;
}

size_t roots_for_each_range(roots_range_visit *visit, void *arg) {
  size_t bytes = 0;
  for (size_t i = 0; i < static_roots.count; i++)
    bytes += visit_excluding(static_roots.items[i].lo, static_roots.items[i].hi, visit, arg);
  for (size_t i = 0; i < user_roots.count; i++)
    bytes += visit_excluding(user_roots.items[i].lo, user_roots.items[i].hi, visit, arg);
  return bytes;
}

static void push_range(uintptr_t lo, uintptr_t hi, void *arg) {
  (void)arg;
  mark_push_range(lo, hi);
}

size_t roots_push_all(void) { return roots_for_each_range(push_range, NULL); }

/* Whether every page of [LO, HI) is mapped: msync answers ENOMEM for a
 * range with an unmapped page, one system call whatever its length (and
 * MS_ASYNC writes nothing back).  A root range that is not mapped would
 * fault in the next collection's marker, with the world stopped and no
 * word of which range. */
static bool roots_range_mapped(uintptr_t lo, uintptr_t hi) {
  uintptr_t first = lo & ~(uintptr_t)(PAGE_BYTES - 1);
  return msync((void *)first, hi - first, MS_ASYNC) == 0 || errno != ENOMEM;
}

GC_API void GC_add_roots(void *low, void *high) {
  sgc_ensure_init();
  uintptr_t lo = (uintptr_t)low, hi = (uintptr_t)high;
  if (lo < hi && !roots_range_mapped(lo, hi)) {
    sgc_warn("GC_add_roots(%p, %p): the range is not all mapped memory; not added", low, high);
    return;
  }
  meta_lock_take();
  range_set_add_or_extend(&user_roots, (uintptr_t)low, (uintptr_t)high, "GC_add_roots ranges");
  pthread_mutex_unlock(&meta_lock);
}

GC_API void GC_remove_roots(void *low, void *high) {
  meta_lock_take();
  range_set_remove(&user_roots, (uintptr_t)low, (uintptr_t)high);
  pthread_mutex_unlock(&meta_lock);
}

GC_API void GC_clear_roots(void) {
  meta_lock_take();
  range_set_clear(&user_roots);
  pthread_mutex_unlock(&meta_lock);
}

GC_API void GC_exclude_static_roots(void *low, void *high) {
  meta_lock_take();
  range_set_add_or_extend(&user_exclusions, (uintptr_t)low, (uintptr_t)high, "excluded root ranges");
  pthread_mutex_unlock(&meta_lock);
}

GC_API void GC_clear_exclusion_table(void) {
  meta_lock_take();
  range_set_clear(&user_exclusions);
  pthread_mutex_unlock(&meta_lock);
}
