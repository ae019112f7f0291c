/*
 * gc.h: the bdwgc-compatible interface of sgc.
 *
 * A program written for the Boehm-Demers-Weiser collector includes this
 * header unchanged and links -lsgc (or runs with libsgc.so preloaded in place
 * of libgc.so.1).  The names, types and semantics follow bdwgc 8.x; where sgc
 * differs the comment says so.  sgc's own extensions live in <sgc.h>.
 */
#ifndef SGC_GC_H
#define SGC_GC_H
#define GC_H /* programs test this to see whether gc.h was included */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "gc/gc_version.h"

#include "gc/gc_config_macros.h"

typedef void *GC_PTR; /* old name kept for source compatibility */
typedef uintptr_t GC_word;
typedef void *(*GC_fn_type)(void *client_data);
typedef intptr_t GC_signed_word;
typedef unsigned long GC_hidden_pointer_t;
/* bdwgc's development branch names the unsigned pointer-sized integer. */
typedef uintptr_t GC_uintptr_t;

/* Return codes shared with bdwgc. */
#define GC_SUCCESS 0
#define GC_DUPLICATE 1
#define GC_NO_THREADS 2
#define GC_UNIMPLEMENTED 3
#define GC_NOT_FOUND 4
#define GC_NO_MEMORY 2 /* bdwgc shares the value with GC_NO_THREADS */

/* ---- initialisation and tuning ---------------------------------------- */
GC_API void GC_init(void);
GC_API int GC_is_init_called(void);
/* sgc initialises itself when the library is loaded; GC_INIT() is kept so
 * bdwgc programs compile, and it registers the calling thread if needed.
 * As bdwgc's, it first applies the settings a program #defines before it
 * includes gc.h: GC_INITIAL_HEAP_SIZE, GC_MAXIMUM_HEAP_SIZE,
 * GC_FREE_SPACE_DIVISOR, GC_MARKERS, GC_DONT_EXPAND, GC_IGNORE_WARN,
 * GC_FORCE_UNMAP_ON_GCOLLECT, GC_MAX_RETRIES, GC_FULL_FREQ,
 * GC_TIME_LIMIT and GC_ALLOCD_BYTES_PER_FINALIZER (those of bdwgc's
 * tuning knobs sgc keeps without effect are accepted all the same). */
#ifdef GC_DONT_EXPAND
#define GC_INIT_CONF_DONT_EXPAND GC_set_dont_expand(1)
#else
#define GC_INIT_CONF_DONT_EXPAND (void)0
#endif
#ifdef GC_FORCE_UNMAP_ON_GCOLLECT
#define GC_INIT_CONF_FORCE_UNMAP_ON_GCOLLECT GC_set_force_unmap_on_gcollect(1)
#else
#define GC_INIT_CONF_FORCE_UNMAP_ON_GCOLLECT (void)0
#endif
#ifdef GC_MAX_RETRIES
#define GC_INIT_CONF_MAX_RETRIES GC_set_max_retries(GC_MAX_RETRIES)
#else
#define GC_INIT_CONF_MAX_RETRIES (void)0
#endif
#ifdef GC_ALLOCD_BYTES_PER_FINALIZER
#define GC_INIT_CONF_ALLOCD_BYTES_PER_FINALIZER GC_set_allocd_bytes_per_finalizer(GC_ALLOCD_BYTES_PER_FINALIZER)
#else
#define GC_INIT_CONF_ALLOCD_BYTES_PER_FINALIZER (void)0
#endif
#ifdef GC_FREE_SPACE_DIVISOR
#define GC_INIT_CONF_FREE_SPACE_DIVISOR GC_set_free_space_divisor(GC_FREE_SPACE_DIVISOR)
#else
#define GC_INIT_CONF_FREE_SPACE_DIVISOR (void)0
#endif
#ifdef GC_FULL_FREQ
#define GC_INIT_CONF_FULL_FREQ GC_set_full_freq(GC_FULL_FREQ)
#else
#define GC_INIT_CONF_FULL_FREQ (void)0
#endif
#ifdef GC_TIME_LIMIT
#define GC_INIT_CONF_TIME_LIMIT GC_set_time_limit(GC_TIME_LIMIT)
#else
#define GC_INIT_CONF_TIME_LIMIT (void)0
#endif
#ifdef GC_MARKERS
#define GC_INIT_CONF_MARKERS GC_set_markers_count(GC_MARKERS)
#else
#define GC_INIT_CONF_MARKERS (void)0
#endif
#ifdef GC_MAXIMUM_HEAP_SIZE
#define GC_INIT_CONF_MAXIMUM_HEAP_SIZE GC_set_max_heap_size(GC_MAXIMUM_HEAP_SIZE)
#else
#define GC_INIT_CONF_MAXIMUM_HEAP_SIZE (void)0
#endif
#ifdef GC_IGNORE_WARN
#define GC_INIT_CONF_IGNORE_WARN GC_set_warn_proc(GC_ignore_warn_proc)
#else
#define GC_INIT_CONF_IGNORE_WARN (void)0
#endif
#ifdef GC_INITIAL_HEAP_SIZE
#define GC_INIT_CONF_INITIAL_HEAP_SIZE                                              \
  do {                                                                          \
    size_t sgc_heap_size_ = GC_get_heap_size();                                 \
    if (sgc_heap_size_ < (size_t)(GC_INITIAL_HEAP_SIZE))                        \
      (void)GC_expand_hp((size_t)(GC_INITIAL_HEAP_SIZE) - sgc_heap_size_);      \
  } while (0)
#else
#define GC_INIT_CONF_INITIAL_HEAP_SIZE (void)0
#endif
#if defined(GC_SIG_SUSPEND) && defined(GC_THREADS)
#define GC_INIT_CONF_SUSPEND_SIGNAL GC_set_suspend_signal(GC_SIG_SUSPEND)
#else
#define GC_INIT_CONF_SUSPEND_SIGNAL (void)0
#endif
#if defined(GC_SIG_THR_RESTART) && defined(GC_THREADS)
#define GC_INIT_CONF_THR_RESTART_SIGNAL GC_set_thr_restart_signal(GC_SIG_THR_RESTART)
#else
#define GC_INIT_CONF_THR_RESTART_SIGNAL (void)0
#endif
/* sgc finds the program's data itself, wherever the library lies. */
#define GC_INIT_CONF_ROOTS (void)0
#define GC_INIT()                                                               \
  do {                                                                          \
    GC_INIT_CONF_DONT_EXPAND;                                                   \
    GC_INIT_CONF_FORCE_UNMAP_ON_GCOLLECT;                                       \
    GC_INIT_CONF_MAX_RETRIES;                                                   \
    GC_INIT_CONF_ALLOCD_BYTES_PER_FINALIZER;                                    \
    GC_INIT_CONF_FREE_SPACE_DIVISOR;                                            \
    GC_INIT_CONF_FULL_FREQ;                                                     \
    GC_INIT_CONF_TIME_LIMIT;                                                    \
    GC_INIT_CONF_MARKERS;                                                       \
    GC_INIT_CONF_SUSPEND_SIGNAL;                                                \
    GC_INIT_CONF_THR_RESTART_SIGNAL;                                            \
    GC_INIT_CONF_MAXIMUM_HEAP_SIZE;                                             \
    GC_init();                                                                  \
    GC_INIT_CONF_ROOTS;                                                         \
    GC_INIT_CONF_IGNORE_WARN;                                                   \
    GC_INIT_CONF_INITIAL_HEAP_SIZE;                                             \
  } while (0)

GC_API unsigned GC_get_version(void);

/* Collection frequency: a collection is triggered when the bytes allocated
 * since the last one exceed heap_size / divisor (default 3, as bdwgc). */
GC_API GC_word GC_free_space_divisor;
GC_API void GC_set_free_space_divisor(GC_word);
GC_API GC_word GC_get_free_space_divisor(void);

/* Non-zero: never collect, grow the heap instead. */
GC_API int GC_dont_gc;
GC_API void GC_disable(void);
GC_API void GC_enable(void);
GC_API int GC_is_disabled(void);

/* Interior pointers are recognised by default; see docs/behaviour.md about the
 * one-past-the-end rule (SGC_EXTRA_BYTES). */
GC_API int GC_all_interior_pointers;
GC_API void GC_set_all_interior_pointers(int);
GC_API int GC_get_all_interior_pointers(void);
GC_API void GC_register_displacement(size_t offset);

GC_API int GC_expand_hp(size_t bytes);
GC_API void GC_set_max_heap_size(GC_word bytes);
GC_API void GC_set_pages_executable(int);
GC_API int GC_get_pages_executable(void);
/* Incremental mode is sgc's concurrent mode (docs/concurrent.md): cycles
 * that mark beside the program between two short pauses.  This call (or
 * GC_ENABLE_INCREMENTAL=1, or SGC_MODE=concurrent) turns it on; the
 * environment's SGC_MODE=stop wins over the call. */
GC_API void GC_enable_incremental(void);
GC_API int GC_is_incremental_mode(void);
/* What incremental mode write-protects: the heap under the mprotect
 * barrier (GC_PROTECTS_POINTER_HEAP), else nothing (GC_PROTECTS_NONE:
 * uffd's write faults are resolved by the kernel, without a signal). */
#define GC_PROTECTS_POINTER_HEAP 1
#define GC_PROTECTS_PTRFREE_HEAP 2
#define GC_PROTECTS_STATIC_DATA 4
#define GC_PROTECTS_STACK 8
#define GC_PROTECTS_NONE 0
GC_API int GC_incremental_protection_needs(void);
/* sgc always times its collections (GC_get_full_gc_total_time): this
 * call, which turns bdwgc's timing on, changes nothing. */
GC_API void GC_start_performance_measurement(void);
GC_API void GC_set_markers_count(unsigned);
GC_API int GC_get_parallel(void);
GC_API void GC_start_mark_threads(void);

/* ---- allocation ------------------------------------------------------- */
GC_API GC_ATTR_MALLOC GC_ATTR_ALLOC_SIZE(1) void *GC_malloc(size_t);
GC_API GC_ATTR_MALLOC GC_ATTR_ALLOC_SIZE(1) void *GC_malloc_atomic(size_t);
GC_API GC_ATTR_MALLOC GC_ATTR_ALLOC_SIZE(1) void *GC_malloc_uncollectable(size_t);
GC_API GC_ATTR_MALLOC GC_ATTR_ALLOC_SIZE(1) void *GC_malloc_atomic_uncollectable(size_t);
GC_API GC_ATTR_MALLOC GC_ATTR_ALLOC_SIZE(1) void *GC_malloc_ignore_off_page(size_t);
GC_API GC_ATTR_MALLOC GC_ATTR_ALLOC_SIZE(1) void *GC_malloc_atomic_ignore_off_page(size_t);
GC_API GC_ATTR_MALLOC char *GC_strdup(const char *);
GC_API GC_ATTR_MALLOC char *GC_strndup(const char *, size_t);
GC_API void *GC_realloc(void *old, size_t new_size) GC_ATTR_ALLOC_SIZE(2);
/* bdwgc's development branch: GC_realloc to COUNT * SIZE bytes, a product
 * that overflows going to the oom function instead. */
GC_API void *GC_reallocarray(void *old, size_t count, size_t size) GC_ATTR_CALLOC_SIZE(2, 3);
GC_API int GC_posix_memalign(void **memptr, size_t align, size_t bytes);
GC_API void *GC_memalign(size_t align, size_t bytes);
/* bdwgc's development branch: page-aligned objects (pvalloc rounds the
 * size up to whole pages). */
GC_API GC_ATTR_MALLOC void *GC_valloc(size_t bytes);
GC_API GC_ATTR_MALLOC void *GC_pvalloc(size_t bytes);
/* Explicit deallocation.  A pointer that is not the start of an object sgc
 * allocated is a program error: sgc prints a message and aborts. */
GC_API void GC_free(void *);

GC_API void *GC_base(void *);
GC_API int GC_is_heap_ptr(const void *);
GC_API size_t GC_size(const void *);

/* ---- collection ------------------------------------------------------- */
GC_API void GC_gcollect(void);
GC_API void GC_gcollect_and_unmap(void);
typedef int (*GC_stop_func)(void);
GC_API int GC_try_to_collect(GC_stop_func);

/* bdwgc's variables, kept for source compatibility.  GC_gc_no counts
 * collections; GC_no_dls=1 stops scanning shared libraries' data;
 * GC_find_leak (GC_set_find_leak, or GC_FIND_LEAK in the environment)
 * reports objects from the GC_debug_* calls (GC_DEBUG, leak_detector.h)
 * found unreachable without GC_FREE, with their file and line, and keeps
 * them; the others are accepted and have no effect in sgc. */
GC_API GC_word GC_gc_no;
GC_API int GC_no_dls;
GC_API int GC_find_leak;
GC_API int GC_quiet;
GC_API int GC_full_freq;
GC_API GC_word GC_non_gc_bytes;
GC_API GC_word GC_max_retries;
GC_API int GC_use_entire_heap;
GC_API unsigned long GC_time_limit;
GC_API int GC_dont_expand;
GC_API int GC_dont_precollect;
GC_API int GC_parallel; /* GC threads besides the collecting one */
#define GC_TIME_UNLIMITED 999999

/* Runs FN(CD) holding the allocator's lock; FN must not allocate. */
GC_API void *GC_call_with_alloc_lock(GC_fn_type fn, void *cd);

GC_API size_t GC_get_heap_size(void);
GC_API size_t GC_get_free_bytes(void);
GC_API size_t GC_get_unmapped_bytes(void);
GC_API size_t GC_get_bytes_since_gc(void);
/* Bytes GC_free has taken back since the last collection. */
GC_API size_t GC_get_expl_freed_bytes_since_gc(void);
GC_API size_t GC_get_total_bytes(void);
GC_API GC_word GC_get_gc_no(void);
GC_API void GC_get_heap_usage_safe(GC_word *heap_size, GC_word *free_bytes,
                                   GC_word *unmapped_bytes,
                                   GC_word *bytes_since_gc, GC_word *total_bytes);

/* ---- roots ------------------------------------------------------------ */
GC_API void GC_add_roots(void *low, void *high_plus_1);
GC_API void GC_remove_roots(void *low, void *high_plus_1);
GC_API void GC_clear_roots(void);
GC_API void GC_exclude_static_roots(void *low, void *high_plus_1);
/* Forgets every GC_exclude_static_roots range. */
GC_API void GC_clear_exclusion_table(void);

/* ---- finalization ----------------------------------------------------- */
/* Unless GC_finalize_on_demand is set, finalizers run in the thread that
 * ran a collection, once it has let go of the collector's locks: inside
 * an allocation call, GC_gcollect, or a GC_register_finalizer* call whose
 * registration started a collection (sgc starts one every 16,384 new
 * registrations past twice what its table held after the last one, so
 * that finalizable objects registered and dropped in a loop are found a
 * few thousand at a time rather than 150,000 in one pause). */
typedef void (*GC_finalization_proc)(void *obj, void *client_data);
GC_API void GC_register_finalizer(void *obj, GC_finalization_proc fn, void *cd,
                                  GC_finalization_proc *ofn, void **ocd);
GC_API void GC_register_finalizer_ignore_self(void *obj, GC_finalization_proc fn,
                                              void *cd, GC_finalization_proc *ofn,
                                              void **ocd);
GC_API void GC_register_finalizer_no_order(void *obj, GC_finalization_proc fn,
                                           void *cd, GC_finalization_proc *ofn,
                                           void **ocd);
GC_API void GC_register_finalizer_unreachable(void *obj, GC_finalization_proc fn,
                                              void *cd, GC_finalization_proc *ofn,
                                              void **ocd);
GC_API int GC_invoke_finalizers(void);
GC_API int GC_should_invoke_finalizers(void);
GC_API int GC_finalize_on_demand;
GC_API int GC_java_finalization;
GC_API void GC_set_finalize_on_demand(int);
GC_API int GC_get_finalize_on_demand(void);
GC_API void GC_set_java_finalization(int);
GC_API int GC_get_java_finalization(void);
typedef void (*GC_finalizer_notifier_proc)(void);
GC_API void GC_set_finalizer_notifier(GC_finalizer_notifier_proc);
GC_API GC_finalizer_notifier_proc GC_get_finalizer_notifier(void);
/* bdwgc's variable behind the setter, which older programs assign. */
GC_API GC_finalizer_notifier_proc GC_finalizer_notifier;
/* Called, heap lock held and the world stopped, for each object a
 * collection finds unreachable and queues for finalization. */
typedef void (*GC_await_finalize_proc)(void *obj);
GC_API void GC_set_await_finalize_proc(GC_await_finalize_proc);
GC_API GC_await_finalize_proc GC_get_await_finalize_proc(void);

/* Toggle-refs (bdwgc's, for runtimes whose objects have a peer in another
 * heap): at the start of every collection the function says of each
 * registered object whether it is to be kept (strong), kept only if
 * otherwise reachable (weak, and forgotten once collected) or forgotten. */
typedef enum {
  GC_TOGGLE_REF_DROP,
  GC_TOGGLE_REF_STRONG,
  GC_TOGGLE_REF_WEAK
} GC_ToggleRefStatus;
typedef GC_ToggleRefStatus (*GC_toggleref_func)(void *obj);
GC_API void GC_set_toggleref_func(GC_toggleref_func);
GC_API GC_toggleref_func GC_get_toggleref_func(void);
/* Returns GC_SUCCESS, or GC_NO_MEMORY. */
GC_API int GC_toggleref_add(void *obj, int is_strong);

/* Disappearing links ("weak pointers"): *link is cleared when obj dies. */
GC_API int GC_register_disappearing_link(void **link);
GC_API int GC_general_register_disappearing_link(void **link, const void *obj);
GC_API int GC_move_disappearing_link(void **link, void **new_link);
GC_API int GC_unregister_disappearing_link(void **link);
GC_API int GC_register_long_link(void **link, const void *obj);
GC_API int GC_move_long_link(void **link, void **new_link);
GC_API int GC_unregister_long_link(void **link);

/* ---- errors and warnings ---------------------------------------------- */
typedef void (*GC_warn_proc)(char *msg, GC_word arg);
GC_API void GC_set_warn_proc(GC_warn_proc);
GC_API GC_warn_proc GC_get_warn_proc(void);
GC_API void GC_ignore_warn_proc(char *, GC_word);
typedef void *(*GC_oom_func)(size_t bytes_requested);
GC_API void GC_set_oom_fn(GC_oom_func);
GC_API GC_oom_func GC_get_oom_fn(void);
/* bdwgc's variable behind the setter, which older programs assign. */
GC_API GC_oom_func GC_oom_fn;
/* Prints that memory ran out and aborts (an oom function may call it). */
GC_API __attribute__((noreturn)) void GC_abort_on_oom(void);
/* Where GC_printf, GC_err_printf and GC_log_printf write (bdwgc's log
 * descriptor; by default standard output for GC_printf, standard error
 * for the others). */
GC_API void GC_set_log_fd(int fd);
/* Called with the message of a fatal error (a bad GC_free, ...) in place
 * of printing it; the process then aborts. */
typedef void (*GC_abort_func)(const char *msg);
GC_API void GC_set_abort_func(GC_abort_func);
GC_API GC_abort_func GC_get_abort_func(void);
GC_API void GC_printf(const char *format, ...);     /* to stdout */
GC_API void GC_err_printf(const char *format, ...); /* to stderr */
GC_API void GC_log_printf(const char *format, ...); /* to stderr */

/* ---- threads ---------------------------------------------------------- */
struct GC_stack_base {
  void *mem_base; /* the hot end: the highest address on x86-64 */
};
typedef void *(*GC_stack_base_func)(struct GC_stack_base *sb, void *arg);

GC_API int GC_get_stack_base(struct GC_stack_base *);
/* Coroutine stacks (Crystal's fibers, for one): a program that runs on a
 * stack of its own tells the collector where that stack ends, so a
 * collection scans from the stack pointer to there (the stacks not
 * running it pushes itself, e.g. from GC_set_push_other_roots).
 * GC_get_my_stackbottom returns the calling thread's handle and fills in
 * its stack's end; GC_set_stackbottom sets a thread's (NULL: the
 * caller's; before GC_init: the main thread's).  GC_stackbottom is the
 * main thread's, read at every collection, and may be written directly
 * (as bdwgc allows; the calls are the better way). */
GC_API char *GC_stackbottom;
GC_API void *GC_get_my_stackbottom(struct GC_stack_base *);
GC_API void GC_set_stackbottom(void *gc_thread_handle, const struct GC_stack_base *);
GC_API void *GC_call_with_stack_base(GC_stack_base_func, void *arg);
GC_API void GC_allow_register_threads(void);
GC_API int GC_register_my_thread(const struct GC_stack_base *);
GC_API int GC_unregister_my_thread(void);
GC_API int GC_thread_is_registered(void);
GC_API void *GC_do_blocking(GC_fn_type fn, void *client_data);
GC_API void *GC_call_with_gc_active(GC_fn_type fn, void *client_data);
/* sgc stops threads with SIGPWR and resumes them through a futex; the
 * restart signal (SIGXCPU) is reported for bdwgc compatibility only. */
GC_API int GC_get_suspend_signal(void);
GC_API int GC_get_thr_restart_signal(void);
/* A thread that runs signal handlers on an alternate stack (sigaltstack)
 * may say where that stack and its normal stack lie: stopped on the
 * alternate stack, it is scanned there from its stack pointer up and over
 * the whole normal stack, whose bytes must all be mapped.  sgc needs no
 * call: a thread stopped off its own stack is scanned on the alternate
 * stack sigaltstack reports, or (a coroutine's stack nobody announced)
 * over the readable memory around its stack pointer, with a warning,
 * and over the whole of its own stack either way. */
GC_API void GC_register_altstack(void *normstack, GC_word normstack_size, void *altstack,
                                 GC_word altstack_size);
/* Stops every other registered thread, and restarts them.  In between the
 * caller holds the collector's locks: it must not allocate or call sgc
 * (bdwgc's rule too, its caller holding the allocation lock). */
GC_API void GC_stop_world_external(void);
GC_API void GC_start_world_external(void);

#include <pthread.h>
#include <signal.h>
#ifndef GC_PTHREAD_CREATE_CONST
#define GC_PTHREAD_CREATE_CONST const /* a program may define it empty */
#endif
GC_API int GC_pthread_create(pthread_t *, GC_PTHREAD_CREATE_CONST pthread_attr_t *,
                             void *(*)(void *), void *);
GC_API int GC_pthread_join(pthread_t, void **);
GC_API int GC_pthread_detach(pthread_t);
#ifndef GC_PTHREAD_EXIT_DECLARED
#define GC_PTHREAD_EXIT_DECLARED
GC_API void GC_pthread_exit(void *) __attribute__((__noreturn__));
#endif
GC_API int GC_pthread_cancel(pthread_t);
/* sigset_t is POSIX: a strict ISO C compilation (-std=c11) has no
 * pthread_sigmask to redirect, and no GC_pthread_sigmask either. */
#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199506L
#define SGC_HAVE_SIGSET 1
GC_API int GC_pthread_sigmask(int how, const sigset_t *set, sigset_t *oset);
#endif
/* dlopen while a collection runs is safe in sgc: GC_dlopen just calls it,
 * and is redirected to only as bdwgc does (GC_NO_DLOPEN leaves it). */
GC_API void *GC_dlopen(const char *, int);

/* With GC_THREADS, as bdwgc's gc_pthread_redirects.h: the program's
 * thread calls go through sgc's wrappers.  GC_NO_THREAD_REDIRECTS (or
 * GC_USE_LD_WRAP, linking with --wrap) keeps them all, GC_NO_DLOPEN,
 * GC_NO_PTHREAD_SIGMASK and GC_NO_PTHREAD_CANCEL one each. */
#if defined(GC_PTHREADS) && !defined(SGC_PTHREAD_REDIRECTS_DONE)
#define SGC_PTHREAD_REDIRECTS_DONE
#define GC_PTHREAD_REDIRECTS_H
#if !defined(GC_NO_THREAD_REDIRECTS) && !defined(GC_USE_LD_WRAP) && !defined(SGC_BUILDING_LIBRARY)
#ifndef GC_NO_DLOPEN
#include <dlfcn.h>
#undef dlopen
#define dlopen GC_dlopen
#endif
#undef pthread_create
#undef pthread_join
#undef pthread_detach
#undef pthread_exit
#define pthread_create GC_pthread_create
#define pthread_join GC_pthread_join
#define pthread_detach GC_pthread_detach
#define pthread_exit GC_pthread_exit
#ifndef GC_NO_PTHREAD_CANCEL
#undef pthread_cancel
#define pthread_cancel GC_pthread_cancel
#endif
#if defined(SGC_HAVE_SIGSET) && !defined(GC_NO_PTHREAD_SIGMASK)
#undef pthread_sigmask
#define pthread_sigmask GC_pthread_sigmask
#endif
#endif
#endif

/* ---- debugging allocation ---------------------------------------------- */
/* Objects with a header (file, line, size) and a check word after their
 * bytes: each collection reports objects whose check words were
 * overwritten ("smashed"), as does GC_debug_free, which also reports a
 * second free of the same object (it keeps a collectable object,
 * overwritten, until it is unreachable).  GC_base gives the header's
 * address; only GC_debug_free and GC_debug_realloc take these objects. */
GC_API void *GC_debug_malloc(size_t, const char *file, int line);
GC_API void *GC_debug_malloc_atomic(size_t, const char *file, int line);
GC_API void *GC_debug_malloc_uncollectable(size_t, const char *file, int line);
GC_API void *GC_debug_realloc(void *, size_t, const char *file, int line);
GC_API void GC_debug_free(void *);
GC_API char *GC_debug_strdup(const char *, const char *file, int line);
GC_API void GC_debug_register_finalizer(void *, GC_finalization_proc, void *,
                                        GC_finalization_proc *, void **);

GC_API void *GC_debug_malloc_ignore_off_page(size_t, const char *file, int line);
GC_API void *GC_debug_malloc_atomic_ignore_off_page(size_t, const char *file, int line);
GC_API void *GC_debug_malloc_atomic_uncollectable(size_t, const char *file, int line);
GC_API void *GC_debug_malloc_stubborn(size_t, const char *file, int line);
GC_API void GC_debug_change_stubborn(const void *);
GC_API void GC_debug_end_stubborn_change(const void *);
GC_API void GC_debug_ptr_store_and_dirty(void *, const void *);
GC_API void *GC_debug_malloc_replacement(size_t);
GC_API void *GC_debug_realloc_replacement(void *, size_t);
GC_API char *GC_debug_strndup(const char *, size_t, const char *file, int line);
GC_API void GC_debug_register_displacement(size_t);
GC_API void GC_debug_register_finalizer_ignore_self(void *, GC_finalization_proc, void *,
                                                    GC_finalization_proc *, void **);
GC_API void GC_debug_register_finalizer_no_order(void *, GC_finalization_proc, void *,
                                                 GC_finalization_proc *, void **);
GC_API void GC_debug_register_finalizer_unreachable(void *, GC_finalization_proc, void *,
                                                    GC_finalization_proc *, void **);
/* The bytes of the header before a debugging object's own. */
GC_API size_t GC_get_debug_header_size(void);
GC_API const size_t GC_debug_header_size;
/* Called when GC_same_obj, GC_is_valid_displacement or GC_is_visible
 * finds the program wrong; the defaults print and abort.  GC_is_visible
 * takes the heap lock for an address outside the heap (it reads the
 * loaded objects' segments afresh). */
GC_API void (*GC_same_obj_print_proc)(void *p, void *q);
GC_API void (*GC_is_valid_displacement_print_proc)(void *p);
GC_API void (*GC_is_visible_print_proc)(void *p);
GC_API void *GC_same_obj(void *, void *);
GC_API void *GC_pre_incr(void **, ptrdiff_t);
GC_API void *GC_post_incr(void **, ptrdiff_t);
GC_API void *GC_is_visible(void *);
GC_API void *GC_is_valid_displacement(void *);
GC_API void GC_noop1(GC_word);

/* ---- more of bdwgc's calls (api/compat_alloc.c, api/compat_hooks.c) ---- */
/* A list of objects linked through their first words, for GC_NEXT. */
GC_API void *GC_malloc_many(size_t);
#define GC_NEXT(p) (*(void **)(p))
/* Stubborn objects are ordinary ones; GC_end_stubborn_change and
 * GC_ptr_store_and_dirty report a store to the manual write barrier of
 * concurrent mode (SGC_BARRIER=manual), and are plain stores otherwise. */
GC_API void *GC_malloc_stubborn(size_t);
GC_API void GC_change_stubborn(const void *);
GC_API void GC_end_stubborn_change(const void *);
GC_API void GC_ptr_store_and_dirty(void *, const void *);
/* A collection if one is due (concurrent mode: a cycle started, or
 * finished once its marking converged); nonzero while a cycle runs. */
GC_API int GC_collect_a_little(void);
GC_API size_t GC_get_memory_use(void);
GC_API size_t GC_get_obtained_from_os_bytes(void);
GC_API unsigned long GC_get_full_gc_total_time(void); /* ms of pauses */
GC_API void GC_dump(void);
GC_API void GC_dump_named(const char *);
/* The heap's chunks and the runs of pages in them, in address order
 * (takes the collector's locks). */
GC_API void GC_dump_regions(void);
/* Every registered finalizer and disappearing link. */
GC_API void GC_dump_finalization(void);
/* bdwgc's counters in one call.  Fields sgc does not count (bytes
 * reclaimed, bytes freed explicitly) read (GC_word)-1, bdwgc's "unknown";
 * the size argument lets older and newer layouts meet. */
struct GC_prof_stats_s {
  GC_word heapsize_full;          /* heap, returned memory included */
  GC_word free_bytes_full;        /* free, returned memory included */
  GC_word unmapped_bytes;
  GC_word bytes_allocd_since_gc;
  GC_word allocd_bytes_before_gc;
  GC_word non_gc_bytes;
  GC_word gc_no;
  GC_word markers_m1;             /* GC threads besides the collecting one */
  GC_word bytes_reclaimed_since_gc;
  GC_word reclaimed_bytes_before_gc;
  GC_word expl_freed_bytes_since_gc;
  GC_word obtained_from_os_bytes;
};
GC_API size_t GC_get_prof_stats(struct GC_prof_stats_s *, size_t stats_size);
GC_API size_t GC_get_prof_stats_unsafe(struct GC_prof_stats_s *, size_t stats_size);
/* The bytes a request of I bytes takes ((size_t)-1 beyond small objects). */
GC_API size_t GC_get_size_map_at(int i);
/* Callbacks run with sgc's heap lock held, most with the world stopped:
 * they must not allocate (bdwgc's rule too). */
typedef enum {
  GC_EVENT_START,
  GC_EVENT_MARK_START,
  GC_EVENT_MARK_END,
  GC_EVENT_RECLAIM_START,
  GC_EVENT_RECLAIM_END,
  GC_EVENT_END,
  GC_EVENT_PRE_STOP_WORLD,
  GC_EVENT_POST_STOP_WORLD,
  GC_EVENT_PRE_START_WORLD,
  GC_EVENT_POST_START_WORLD,
  GC_EVENT_THREAD_SUSPENDED,   /* to GC_set_on_thread_event's callback */
  GC_EVENT_THREAD_UNSUSPENDED
} GC_EventType;
typedef void (*GC_on_collection_event_proc)(GC_EventType);
GC_API void GC_set_on_collection_event(GC_on_collection_event_proc);
GC_API GC_on_collection_event_proc GC_get_on_collection_event(void);
typedef void (*GC_on_heap_resize_proc)(GC_word new_size);
GC_API void GC_set_on_heap_resize(GC_on_heap_resize_proc);
GC_API GC_on_heap_resize_proc GC_get_on_heap_resize(void);
/* bdwgc's variable behind the setter, which older programs assign. */
GC_API GC_on_heap_resize_proc GC_on_heap_resize;
/* Told of each thread a collection stops (GC_EVENT_THREAD_SUSPENDED) once
 * all are stopped, and of each as the world restarts
 * (GC_EVENT_THREAD_UNSUSPENDED); THREAD_ID is its pthread_t. */
typedef void (*GC_on_thread_event_proc)(GC_EventType, void *thread_id);
GC_API void GC_set_on_thread_event(GC_on_thread_event_proc);
GC_API GC_on_thread_event_proc GC_get_on_thread_event(void);

/* Honoured: collections only when asked for; GC_gcollect also returning
 * free memory to the OS; skipping shared libraries' data as roots. */
GC_API void GC_set_disable_automatic_collection(int);
GC_API int GC_get_disable_automatic_collection(void);
GC_API void GC_set_force_unmap_on_gcollect(int);
GC_API int GC_get_force_unmap_on_gcollect(void);
GC_API void GC_set_no_dls(int);
GC_API int GC_get_no_dls(void);
/* Kept and read back, without effect: bdwgc's tuning of its incremental
 * and generational modes, retries and interruptible collections. */
GC_API void GC_set_stop_func(GC_stop_func);
GC_API GC_stop_func GC_get_stop_func(void);
GC_API void GC_set_dont_expand(int);
GC_API int GC_get_dont_expand(void);
GC_API void GC_set_dont_precollect(int);
GC_API int GC_get_dont_precollect(void);
GC_API void GC_set_max_retries(GC_word);
GC_API GC_word GC_get_max_retries(void);
GC_API void GC_set_full_freq(int);
GC_API int GC_get_full_freq(void);
GC_API void GC_set_time_limit(unsigned long);
GC_API unsigned long GC_get_time_limit(void);
struct GC_timeval_s {
  unsigned long tv_ms;   /* milliseconds */
  unsigned long tv_nsec; /* and nanoseconds (below 1000000) */
};
GC_API void GC_set_time_limit_tv(struct GC_timeval_s);
GC_API struct GC_timeval_s GC_get_time_limit_tv(void);
GC_API void GC_set_non_gc_bytes(GC_word);
GC_API GC_word GC_get_non_gc_bytes(void);
GC_API void GC_set_find_leak(int); /* see GC_find_leak */
GC_API int GC_get_find_leak(void);
GC_API void GC_set_handle_fork(int); /* sgc always handles fork */
GC_API void GC_set_rate(int);
GC_API int GC_get_rate(void);
GC_API void GC_set_max_prior_attempts(int);
GC_API int GC_get_max_prior_attempts(void);
GC_API void GC_set_min_bytes_allocd(size_t);
GC_API size_t GC_get_min_bytes_allocd(void);
GC_API void GC_set_allocd_bytes_per_finalizer(GC_word);
GC_API GC_word GC_get_allocd_bytes_per_finalizer(void);
GC_API void GC_deinit(void); /* sgc keeps running; nothing to release */
/* Asked, at each collection, about every writable segment of every loaded
 * object (the main program's name is ""): nonzero scans it as roots. */
typedef int (*GC_has_static_roots_func)(const char *dlpi_name, void *section_start,
                                        size_t section_size);
GC_API void GC_register_has_static_roots_callback(GC_has_static_roots_func);
/* Concurrent mode: starts a cycle now unless one runs (else nothing). */
GC_API void GC_start_incremental_collection(void);
GC_API void GC_set_manual_vdb_allowed(int);
GC_API int GC_get_manual_vdb_allowed(void);
/* sgc handles fork itself (pthread_atfork): these do nothing. */
GC_API void GC_atfork_prepare(void);
GC_API void GC_atfork_parent(void);
GC_API void GC_atfork_child(void);
GC_API void GC_alloc_lock(void); /* the allocator's lock; do not allocate */
GC_API void GC_alloc_unlock(void);
GC_API void GC_set_suspend_signal(int); /* warns unless SIGPWR */
GC_API void GC_set_thr_restart_signal(int); /* no restart signal is used */

/* ---- the usual macros ------------------------------------------------- */
/* The caller's file and line, which the GC_debug_* calls take. */
#define GC_EXTRAS __FILE__, __LINE__
#define GC_EXTRA_PARAMS const char *s, int i
#ifdef GC_DEBUG_REPLACEMENT
#define GC_MALLOC(sz) GC_debug_malloc_replacement(sz)
#define GC_REALLOC(p, sz) GC_debug_realloc_replacement(p, sz)
#elif defined(GC_DEBUG)
#define GC_MALLOC(sz) GC_debug_malloc(sz, GC_EXTRAS)
#define GC_REALLOC(p, sz) GC_debug_realloc(p, sz, GC_EXTRAS)
#else
#define GC_MALLOC(sz) GC_malloc(sz)
#define GC_REALLOC(p, sz) GC_realloc(p, sz)
#endif
#ifdef GC_DEBUG
#define GC_MALLOC_ATOMIC(sz) GC_debug_malloc_atomic(sz, GC_EXTRAS)
#define GC_MALLOC_UNCOLLECTABLE(sz) GC_debug_malloc_uncollectable(sz, GC_EXTRAS)
#define GC_MALLOC_ATOMIC_UNCOLLECTABLE(sz) GC_debug_malloc_atomic_uncollectable(sz, GC_EXTRAS)
#define GC_MALLOC_IGNORE_OFF_PAGE(sz) GC_debug_malloc_ignore_off_page(sz, GC_EXTRAS)
#define GC_MALLOC_ATOMIC_IGNORE_OFF_PAGE(sz) GC_debug_malloc_atomic_ignore_off_page(sz, GC_EXTRAS)
#define GC_STRDUP(s) GC_debug_strdup(s, GC_EXTRAS)
#define GC_STRNDUP(s, n) GC_debug_strndup(s, n, GC_EXTRAS)
#define GC_FREE(p) GC_debug_free(p)
#define GC_REGISTER_FINALIZER(p, f, d, of, od) GC_debug_register_finalizer(p, f, d, of, od)
#define GC_REGISTER_FINALIZER_IGNORE_SELF(p, f, d, of, od) \
  GC_debug_register_finalizer_ignore_self(p, f, d, of, od)
#define GC_REGISTER_FINALIZER_NO_ORDER(p, f, d, of, od) \
  GC_debug_register_finalizer_no_order(p, f, d, of, od)
#define GC_REGISTER_FINALIZER_UNREACHABLE(p, f, d, of, od) \
  GC_debug_register_finalizer_unreachable(p, f, d, of, od)
#define GC_END_STUBBORN_CHANGE(p) GC_debug_end_stubborn_change(p)
#define GC_PTR_STORE_AND_DIRTY(p, q) GC_debug_ptr_store_and_dirty(p, q)
#define GC_GENERAL_REGISTER_DISAPPEARING_LINK(link, obj) \
  GC_general_register_disappearing_link(link, GC_base((void *)(obj)))
#define GC_REGISTER_LONG_LINK(link, obj) GC_register_long_link(link, GC_base((void *)(obj)))
#define GC_REGISTER_DISPLACEMENT(n) GC_debug_register_displacement(n)
#else
#define GC_MALLOC_ATOMIC(sz) GC_malloc_atomic(sz)
#define GC_MALLOC_UNCOLLECTABLE(sz) GC_malloc_uncollectable(sz)
#define GC_MALLOC_ATOMIC_UNCOLLECTABLE(sz) GC_malloc_atomic_uncollectable(sz)
#define GC_MALLOC_IGNORE_OFF_PAGE(sz) GC_malloc_ignore_off_page(sz)
#define GC_MALLOC_ATOMIC_IGNORE_OFF_PAGE(sz) GC_malloc_atomic_ignore_off_page(sz)
#define GC_STRDUP(s) GC_strdup(s)
#define GC_STRNDUP(s, n) GC_strndup(s, n)
#define GC_FREE(p) GC_free(p)
#define GC_REGISTER_FINALIZER(p, f, d, of, od) GC_register_finalizer(p, f, d, of, od)
#define GC_REGISTER_FINALIZER_IGNORE_SELF(p, f, d, of, od) \
  GC_register_finalizer_ignore_self(p, f, d, of, od)
#define GC_REGISTER_FINALIZER_NO_ORDER(p, f, d, of, od) \
  GC_register_finalizer_no_order(p, f, d, of, od)
#define GC_REGISTER_FINALIZER_UNREACHABLE(p, f, d, of, od) \
  GC_register_finalizer_unreachable(p, f, d, of, od)
#define GC_END_STUBBORN_CHANGE(p) GC_end_stubborn_change(p)
#define GC_PTR_STORE_AND_DIRTY(p, q) GC_ptr_store_and_dirty(p, q)
#define GC_GENERAL_REGISTER_DISAPPEARING_LINK(link, obj) \
  GC_general_register_disappearing_link(link, obj)
#define GC_REGISTER_LONG_LINK(link, obj) GC_register_long_link(link, obj)
#define GC_REGISTER_DISPLACEMENT(n) GC_register_displacement(n)
#endif
#ifdef GC_REQUIRE_WCSDUP
#include <wchar.h>
GC_API GC_ATTR_MALLOC wchar_t *GC_wcsdup(const wchar_t *);
GC_API GC_ATTR_MALLOC wchar_t *GC_debug_wcsdup(const wchar_t *, const char *file, int line);
#ifdef GC_DEBUG
#define GC_WCSDUP(s) GC_debug_wcsdup(s, GC_EXTRAS)
#else
#define GC_WCSDUP(s) GC_wcsdup(s)
#endif
#endif
/* Stubborn objects are ordinary ones. */
#define GC_MALLOC_STUBBORN(sz) GC_MALLOC(sz)
#define GC_NEW_STUBBORN(t) GC_NEW(t)
#define GC_CHANGE_STUBBORN(p) GC_change_stubborn(p)
#define GC_NEW(t) ((t *)GC_MALLOC(sizeof(t)))
#define GC_NEW_ATOMIC(t) ((t *)GC_MALLOC_ATOMIC(sizeof(t)))
#define GC_NEW_UNCOLLECTABLE(t) ((t *)GC_MALLOC_UNCOLLECTABLE(sizeof(t)))
typedef GC_word GC_hidden_pointer;
#define GC_HIDE_POINTER(p) (~(GC_hidden_pointer_t)(p))
#define GC_REVEAL_POINTER(p) ((void *)GC_HIDE_POINTER(p))
#define HIDE_POINTER(p) GC_HIDE_POINTER(p)
#define REVEAL_POINTER(p) GC_REVEAL_POINTER(p)
/* bdwgc's pointer-arithmetic checks: under GC_DEBUG the result must stay
 * in the same object, and stores go to visible places; plain arithmetic
 * otherwise. */
#define GC_PTR_ADD3(x, n, type_of_result) ((type_of_result)GC_same_obj((x) + (n), (x)))
#define GC_PRE_INCR3(x, n, type_of_result) \
  ((type_of_result)GC_pre_incr((void **)(&(x)), (n) * sizeof(*x)))
#define GC_POST_INCR3(x, n, type_of_result) \
  ((type_of_result)GC_post_incr((void **)(&(x)), (n) * sizeof(*x)))
#if defined(GC_DEBUG) && (defined(__GNUC__) || defined(__clang__))
#define GC_PTR_ADD(x, n) GC_PTR_ADD3(x, n, __typeof__(x))
#define GC_PRE_INCR(x, n) GC_PRE_INCR3(x, n, __typeof__(x))
#define GC_POST_INCR(x) GC_POST_INCR3(x, 1, __typeof__(x))
#define GC_POST_DECR(x) GC_POST_INCR3(x, -1, __typeof__(x))
#else
#define GC_PTR_ADD(x, n) ((x) + (n))
#define GC_PRE_INCR(x, n) ((x) += (n))
#define GC_POST_INCR(x) ((x)++)
#define GC_POST_DECR(x) ((x)--)
#endif
#ifdef GC_DEBUG
#define GC_PTR_STORE(p, q) \
  (*(void **)GC_is_visible((void *)(p)) = GC_is_valid_displacement((void *)(q)))
#else
#define GC_PTR_STORE(p, q) (*(p) = (q))
#endif
/* Keeps PTR, and what it points to, alive up to this point: the compiler
 * must have it in a register or memory here (a conservative root). */
#if defined(__GNUC__) || defined(__clang__)
#define GC_reachable_here(ptr) __asm__ __volatile__(" " : : "X"(ptr) : "memory")
#else
#define GC_reachable_here(ptr) GC_noop1((GC_word)(ptr))
#endif

#ifdef __cplusplus
}
#endif
#endif /* SGC_GC_H */
