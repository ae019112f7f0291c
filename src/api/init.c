/* Start-up: settings from the environment (documented in the README),
 * SGC_init, GC_init, and the fork handlers.
 *
 * sgc initialises itself from a library constructor, so a program that
 * never calls GC_INIT (or runs with libsgc preloaded in place of libgc)
 * still has its main thread registered. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/alloc.h"
#include "alloc/page_path.h"
#include "alloc/page_store.h"
#include "alloc/percpu.h"
#include "collect/debug_alloc.h"
#include "base/env.h"
#include "collect/collect.h"
#include "collect/concurrent.h"
#include "common.h"
#include "heap/heap.h"
#include "mark/mark.h"
#include "os/numa.h"
#include "os/os.h"
#include "roots/roots.h"
#include "stats/stats.h"
#include "threads/thread.h"

struct sgc_settings sgc_settings = {.trace_fd = -1, .small_request_limit = MAX_SMALL_BYTES};
_Atomic int sgc_initialised;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static SGC_attr_t requested;
static bool requested_set;

/* SGC_MARKERS_CYCLE=1,2: a comma-separated list of marker counts, each
 * 1 or more; anything else is ignored with a warning. */
static void read_markers_cycle(struct sgc_settings *s) {
  const char *v = env_value("SGC_MARKERS_CYCLE");
  if (!v) return;
  unsigned n = 0;
  const char *p = v;
  for (;;) {
    char *end;
    long count = strtol(p, &end, 10);
    if (end == p || count < 1 || count > (long)os_markers_limit() || n == MARKERS_CYCLE_MAX ||
        (*end && *end != ',')) {
      sgc_warn("ignoring SGC_MARKERS_CYCLE=%s: want up to %d counts from 1 to %u, comma-separated",
               v, MARKERS_CYCLE_MAX, os_markers_limit());
      return;
    }
    s->markers_cycle[n++] = (unsigned)count;
    if (!*end) break;
    p = end + 1;
  }
  s->markers_cycle_length = n;
}

/* SGC_MARKERS (or bdwgc's GC_MARKERS): a number, the most GC threads (0
 * or unset: the CPUs), which the fast predictor lowers each collection;
 * or the word for who chooses up to the CPUs, auto (the default) or rule.
 * SGC_ADAPTIVE=0 makes a number exact. */
static void read_markers(struct sgc_settings *s) {
  const char *name = env_first("SGC_MARKERS", "GC_MARKERS");
  const char *v = env_value(name);
  bool adaptive = env_long_in("SGC_ADAPTIVE", 1, 0, 1) != 0;
  s->markers = 0;
  s->markers_choice = adaptive ? MARKERS_AUTO : MARKERS_FIXED;
  if (!v) return;
  static const struct env_word words[] = {{"auto", MARKERS_AUTO}, {"rule", MARKERS_RULE}};
  for (unsigned i = 0; i < ENV_WORDS_COUNT(words); i++) {
    if (strcmp(v, words[i].word)) continue;
    /* A chooser named outright wins over the switch that turns choosing off. */
    if (!adaptive) sgc_warn("ignoring SGC_ADAPTIVE=0: %s=%s chooses the GC threads", name, v);
    s->markers_choice = (enum markers_choice)words[i].value;
    return;
  }
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (end == v || *end || errno || n < 0 || n > (long)os_markers_limit()) {
    sgc_warn("ignoring %s=%s: want auto, rule or a number from 0 to %u", name, v, os_markers_limit());
    return;
  }
  s->markers = (unsigned)n;
}

/* The padding is bdwgc's default (no SGC_EXTRA_BYTES, libgc stood in
 * for), so it follows GC_set_all_interior_pointers as bdwgc's does. */
static bool padding_follows_interior;

/* bdwgc pads only while interior pointers are recognised (ECL turns them
 * off before GC_init and gets unpadded objects).  Changed only while one
 * thread is registered: the allocation paths read the padding unlocked. */
void settings_interior_pointers_set(bool on) {
  if (!padding_follows_interior || thread_registry_count() > 1) return;
  sgc_settings.extra_bytes = on ? 1 : 0;
  sgc_settings.small_request_limit = MAX_SMALL_BYTES - sgc_settings.extra_bytes;
}

static void read_settings(void) {
  struct sgc_settings *s = &sgc_settings;
  s->initial_heap_bytes =
      env_size_in(env_first("SGC_INITIAL_HEAP_SIZE", "GC_INITIAL_HEAP_SIZE"), 0, HEAP_BYTES_MAX);
  s->max_heap_bytes = env_size(env_first("SGC_MAXIMUM_HEAP_SIZE", "GC_MAXIMUM_HEAP_SIZE"), 0);
  /* A power of two from a page to a chunk: the largest not above what
   * was asked (heap/heap.c rounds growths up to it). */
  size_t step = env_size_in("SGC_HEAP_STEP", CHUNK_BYTES, CHUNK_BYTES);
  s->heap_step_bytes = PAGE_BYTES;
  while (s->heap_step_bytes * 2 <= step) s->heap_step_bytes *= 2;
  s->torture_interval = (unsigned)env_long_in("SGC_TORTURE", 0, 0, INT32_MAX);
  static const struct env_word mode_words[] = {{"stop", 0}, {"concurrent", 1}};
  s->concurrent = env_choice("SGC_MODE", mode_words, ENV_WORDS_COUNT(mode_words), 0) != 0;
  /* bdwgc's switch for its incremental mode, unless SGC_MODE says. */
  if (!env_value("SGC_MODE") && env_long_in("GC_ENABLE_INCREMENTAL", 0, 0, 1)) s->concurrent = true;
  s->concurrent_trigger = (unsigned)env_long_in("SGC_CONCURRENT_TRIGGER", 0, 0, 100);
  s->concurrent_hold_ms = (unsigned)env_long_in("SGC_CONCURRENT_HOLD_MS", 0, 0, 60000);
  s->cycle_growth = (unsigned)env_long_in("SGC_CYCLE_GROWTH", 50, 0, 1000);
  s->assist_yield = env_long_in("SGC_ASSIST_YIELD", 1, 0, 1) != 0;
  static const struct env_word rescan_words[] = {{"serial", 0}, {"parallel", 1}};
  s->finish_rescan_parallel =
      env_choice("SGC_FINISH_RESCAN", rescan_words, ENV_WORDS_COUNT(rescan_words), 1) != 0;
  /* A program built for libgc was tested with bdwgc's byte past each
   * object, and some write it (goo); one linked with -lsgc gets none
   * unless asked (docs/behaviour.md, "Padding"). */
  long default_extra = preload_stands_in_for_libgc() ? 1 : 0;
  s->extra_bytes = (unsigned)env_long_in("SGC_EXTRA_BYTES", default_extra, 0, 256);
  padding_follows_interior = default_extra && !env_value("SGC_EXTRA_BYTES");
  long divisor = env_long_in("GC_FREE_SPACE_DIVISOR", 0, 1, 1L << 20);
  if (divisor > 0) GC_free_space_divisor = (GC_word)divisor;
  read_markers(s);
  s->stop_spin_ns = (uint64_t)env_long_in("SGC_STOP_SPIN_US", 50, 0, 10000000) * 1000;
  s->prewake_ns = (uint64_t)env_long_in("SGC_PREWAKE_US", 2000, 0, 10000000) * 1000;
  static const struct env_word sweep_words[] = {{"lazy", 0}, {"parallel", 1}};
  s->sweep_parallel = env_choice("SGC_SWEEP", sweep_words, ENV_WORDS_COUNT(sweep_words), 0) != 0;
  s->print_stats = (int)env_long_in("SGC_STATS", 0, 0, 2);
  s->print_each_gc = getenv("GC_PRINT_STATS") != NULL || env_long_in("SGC_PRINT_STATS", 0, 0, 1) != 0;
  if (getenv("GC_DONT_GC")) GC_dont_gc = 1;
  if (getenv("GC_FIND_LEAK")) { /* bdwgc's: leak-finding mode */
    GC_find_leak = 1;
    debug_objects_leak_mode_on();
  }
  s->abort_on_leak = getenv("GC_ABORT_ON_LEAK") != NULL; /* bdwgc's: set is enough */
  const char *backtraces = getenv("GC_BACKTRACES"); /* bdwgc's: empty means 1 */
  if (backtraces) s->backtraces = *backtraces ? (unsigned)env_long_in("GC_BACKTRACES", 0, 0, 1000) : 1;
  const char *trace = getenv("SGC_TRACE");
  if (trace && *trace) s->trace_path = trace; /* opened at the first collection */
  if (requested_set) {
    const SGC_attr_t *a = &requested;
    if (a->initial_heap_bytes > HEAP_BYTES_MAX)
      sgc_warn("ignoring SGC_attr_t initial_heap_bytes=%zu: too large (at most %zu)",
               a->initial_heap_bytes, HEAP_BYTES_MAX);
    else if (a->initial_heap_bytes)
      s->initial_heap_bytes = a->initial_heap_bytes;
    if (a->max_heap_bytes) s->max_heap_bytes = a->max_heap_bytes;
    if (a->free_space_divisor > 0) GC_free_space_divisor = (GC_word)a->free_space_divisor;
    if (a->torture_interval > 0) s->torture_interval = (unsigned)a->torture_interval;
    if (a->mode == SGC_MODE_CONCURRENT) s->concurrent = true;
    else if (a->mode == SGC_MODE_STOP) s->concurrent = false;
    if (a->extra_bytes > 0) s->extra_bytes = (unsigned)a->extra_bytes;
    if (s->extra_bytes > 256) {
      sgc_warn("SGC_attr_t extra_bytes=%u is too large; using 256", s->extra_bytes);
      s->extra_bytes = 256;
    }
  }
  s->small_request_limit = MAX_SMALL_BYTES - s->extra_bytes;
  s->usable_cpus = os_usable_cpus();
  read_markers_cycle(s);
  /* A cycle needs GC threads for its largest count, whatever SGC_MARKERS says. */
  for (unsigned i = 0; i < s->markers_cycle_length; i++)
    if (s->markers_cycle[i] > s->markers) s->markers = s->markers_cycle[i];
  settings_set_markers(s->markers ? s->markers : s->usable_cpus);
}

/* fork(): the child gets only the forking thread, so every lock is taken
 * before and released on both sides, and the child forgets the others. */
static void fork_prepare(void) {
  /* No page is left half swept or formatted in the child (a custom
   * kind's page there would keep stale words for its mark procedure), and
   * no thread holds a sweep-list, page-store or batch lock the child would
   * inherit held. */
  collector_locks_take();
  /* With heap_lock held no cycle starts or finishes: a running one's GC
   * threads stop marking, so none holds a mark stack's lock at the fork. */
  concurrent_before_fork();
  debug_objects_fork_lock(true); /* after heap_lock, as collections take it */
  stats_before_fork();
}
static void fork_parent(void) {
  concurrent_after_fork_parent();
  stats_after_fork_parent();
  debug_objects_fork_lock(false);
  collector_locks_release();
}
static void fork_child(void) {
  /* fork_prepare waited for page operations, and none began after. */
  stats_after_fork_child();
  page_stores_after_fork(sgc_self ? sgc_self->alloc.page_store : NULL);
  batches_after_fork(alloc_self());
  threads_after_fork_child();
  suspend_after_fork_child();
  parallel_after_fork_child();
  concurrent_after_fork_child();
  /* The parent's waiters are not in the child: a stale count would make
   * every explicit collection there, and every heap_lock taker, wait out
   * the bound of a turn. */
  atomic_store_explicit(&lock_waiters, 0, memory_order_relaxed);
  atomic_store_explicit(&lock_starving, 0, memory_order_relaxed);
  debug_objects_fork_lock(false);
  collector_locks_release();
}

/* The initial heap (heap_lock held).  One above the maximum is clamped to
 * it, as bdwgc does, and one the OS refuses falls back to a chunk, each
 * with a warning naming the settings: before, both stopped the program
 * with "cannot reserve the initial heap" and no word of why. */
static void initial_heap_grow(void) {
  struct sgc_settings *s = &sgc_settings;
  const char *initial = env_first("SGC_INITIAL_HEAP_SIZE", "GC_INITIAL_HEAP_SIZE");
  const char *max = env_first("SGC_MAXIMUM_HEAP_SIZE", "GC_MAXIMUM_HEAP_SIZE");
  if (s->max_heap_bytes && s->initial_heap_bytes > s->max_heap_bytes) {
    sgc_warn("%s=%zu is above %s=%zu: the initial heap is the maximum", initial,
             s->initial_heap_bytes, max, s->max_heap_bytes);
    s->initial_heap_bytes = s->max_heap_bytes;
  }
  if (s->max_heap_bytes && s->max_heap_bytes < CHUNK_BYTES) {
    sgc_warn("%s=%zu is below the smallest heap, %u bytes: the limit is that", max,
             s->max_heap_bytes, (unsigned)CHUNK_BYTES);
    s->max_heap_bytes = CHUNK_BYTES;
  }
  if (s->initial_heap_bytes && heap_grow(s->initial_heap_bytes)) return;
  if (s->initial_heap_bytes) {
    sgc_warn("%s=%zu: the system refused a heap that large (%s); starting with %u bytes",
             initial, s->initial_heap_bytes, strerror(heap_grow_refusal() > 0 ? heap_grow_refusal() : ENOMEM),
             (unsigned)CHUNK_BYTES);
    s->initial_heap_bytes = 0;
  }
  if (!heap_grow(CHUNK_BYTES))
    sgc_fatal("cannot reserve the initial heap of %u bytes (%s)", (unsigned)CHUNK_BYTES,
              strerror(heap_grow_refusal() > 0 ? heap_grow_refusal() : ENOMEM));
}

void sgc_ensure_init(void) {
  if (likely(atomic_load_explicit(&sgc_initialised, memory_order_acquire))) return;
  pthread_mutex_lock(&init_lock);
  if (!atomic_load_explicit(&sgc_initialised, memory_order_relaxed)) {
    read_settings();
    numa_init(); /* before anything places or pins (heap, page stores, GC threads) */
    lock_wait_name(&heap_lock, "allocation lock");
    lock_wait_name(&registry_lock, "thread registry lock");
    lock_wait_name(&meta_lock, "finalization lock");
    size_classes_init();
    page_policy_init();
    percpu_init();
    free_init();
    mark_init();
    roots_init();
    threads_init();
    stop_world_init();
    stats_init();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    heap_lock_acquire();
    initial_heap_grow();
    pthread_mutex_unlock(&heap_lock);
    atomic_store_explicit(&sgc_initialised, 1, memory_order_release);
  }
  pthread_mutex_unlock(&init_lock);
}

__attribute__((constructor)) static void sgc_constructor(void) {
  sgc_ensure_init();
  preload_check();
  /* Registers the main thread (the constructor runs on it at start-up). */
  if (os_gettid() == getpid()) thread_self_or_register();
}

GC_API void GC_init(void) {
  sgc_ensure_init();
  thread_self_or_register();
}

GC_API int GC_is_init_called(void) { return atomic_load(&sgc_initialised); }

GC_API void SGC_attr_init(SGC_attr_t *attr) { memset(attr, 0, sizeof *attr); }

/* The thesis's entry point.  The settings apply when SGC_init runs before
 * anything else initialised sgc; sgc initialises itself at load time, so
 * here they are applied on top of the running configuration where that
 * is safe (heap limits, divisor, torture), and NGCP sets the marker count. */
GC_API int SGC_init(int ngcp, const SGC_attr_t *attr) {
  sgc_ensure_init();
  heap_lock_acquire();
  if (attr) {
    requested = *attr;
    requested_set = true;
    if (attr->initial_heap_bytes > heap_size_bytes()) heap_grow(attr->initial_heap_bytes - heap_size_bytes());
    if (attr->initial_heap_bytes) sgc_settings.initial_heap_bytes = attr->initial_heap_bytes;
    if (attr->max_heap_bytes) sgc_settings.max_heap_bytes = attr->max_heap_bytes;
    if (attr->free_space_divisor > 0) GC_free_space_divisor = (GC_word)attr->free_space_divisor;
    if (attr->torture_interval > 0) sgc_settings.torture_interval = (unsigned)attr->torture_interval;
    if (attr->extra_bytes != (int)sgc_settings.extra_bytes && attr->extra_bytes > 0)
      sgc_warn("SGC_init: extra_bytes can only be set by SGC_EXTRA_BYTES before start-up");
    if (attr->page_policy >= SGC_PAGE_POLICY_PS && attr->page_policy <= SGC_PAGE_POLICY_LPS)
      page_policy = (enum page_policy)(attr->page_policy - 1);
    else if (attr->page_policy)
      sgc_warn("SGC_init: ignoring page_policy %d: not an SGC_PAGE_POLICY_ value", attr->page_policy);
    if (attr->lps_k >= 1.0) page_policy_k = attr->lps_k;
    else if (attr->lps_k != 0.0)
      sgc_warn("SGC_init: ignoring lps_k %g: LPS's k is at least 1", attr->lps_k);
    if (attr->mode == SGC_MODE_CONCURRENT || attr->mode == SGC_MODE_STOP)
      concurrent_set_mode(attr->mode == SGC_MODE_CONCURRENT);
    else if (attr->mode)
      sgc_warn("SGC_init: ignoring mode %d: not an SGC_MODE_ value", attr->mode);
    if (attr->lab >= SGC_LAB_THREAD && attr->lab <= SGC_LAB_FLIP) percpu_set_mode(attr->lab);
    else if (attr->lab) sgc_warn("SGC_init: ignoring lab %d: not an SGC_LAB_ value", attr->lab);
  }
  if (ngcp > 0) settings_set_markers((unsigned)ngcp);
  else if (ngcp < 0) sgc_warn("SGC_init: ignoring ngcp %d: want 0 (the default) or more", ngcp);
  pthread_mutex_unlock(&heap_lock);
  thread_self_or_register();
  return 0;
}
