/* bdwgc's <gc/gc_config_macros.h> for sgc: the override points and the
 * platform macros gc.h builds on.  Each override point (GC_API, GC_CALL,
 * the GC_ATTR_* attributes, GC_NOEXCEPT ...) is defined only when the
 * program has not defined it first, as bdwgc allows.  sgc runs on Linux
 * with glibc, so the answers are bdwgc's for that platform. */
#ifndef SGC_GC_CONFIG_MACROS_H
#define SGC_GC_CONFIG_MACROS_H

#if defined(__GNUC__) && !defined(__INTEL_COMPILER)
#define GC_GNUC_PREREQ(major, minor) ((__GNUC__ << 16) + __GNUC_MINOR__ >= ((major) << 16) + (minor))
#else
#define GC_GNUC_PREREQ(major, minor) 0
#endif

/* GC_THREADS (or an older platform name) means POSIX threads on Linux:
 * programs test GC_PTHREADS, as bdwgc defines it then. */
#if defined(GC_THREADS) || defined(GC_LINUX_THREADS) || defined(_REENTRANT) && defined(GC_PTHREADS)
#ifndef GC_LINUX_THREADS
#define GC_LINUX_THREADS
#endif
#ifndef GC_PTHREADS
#define GC_PTHREADS
#endif
#endif
#if defined(GC_PTHREADS) && !defined(GC_THREADS)
#define GC_THREADS
#endif

#ifndef GC_API
#define GC_API extern __attribute__((visibility("default")))
#endif
#ifndef GC_CALL
#define GC_CALL
#endif
#ifndef GC_CALLBACK
#define GC_CALLBACK GC_CALL
#endif
#ifndef GC_ATTR_MALLOC
#define GC_ATTR_MALLOC __attribute__((__malloc__))
#endif
#ifndef GC_ATTR_ALLOC_SIZE
#define GC_ATTR_ALLOC_SIZE(argnum) __attribute__((__alloc_size__(argnum)))
#endif
#ifndef GC_ATTR_CALLOC_SIZE
#define GC_ATTR_CALLOC_SIZE(n, s) __attribute__((__alloc_size__(n, s)))
#endif
#ifndef GC_ATTR_NONNULL
#define GC_ATTR_NONNULL(argnum) __attribute__((__nonnull__(argnum)))
#endif
#ifndef GC_ATTR_CONST
#define GC_ATTR_CONST __attribute__((__const__))
#endif
/* Empty: sgc's own deprecated calls (stubborn objects ...) still work, so
 * programs that use them build without warnings. */
#ifndef GC_ATTR_DEPRECATED
#define GC_ATTR_DEPRECATED
#endif

/* glibc has backtrace(), so bdwgc's debugging calls take no caller
 * address on this platform (GC_ADD_CALLER stays undefined, and with it
 * GC_RETURN_ADDR): GC_EXTRAS is the file and line. */
#if defined(__GLIBC__) && !defined(GC_MISSING_EXECINFO_H) && !defined(GC_HAVE_BUILTIN_BACKTRACE)
#define GC_HAVE_BUILTIN_BACKTRACE
#endif
#ifndef GC_CAN_SAVE_CALL_STACKS
#define GC_CAN_SAVE_CALL_STACKS
#endif

#ifdef GC_PTHREADS
#ifndef GC_HAVE_PTHREAD_EXIT
#define GC_HAVE_PTHREAD_EXIT
#define GC_PTHREAD_EXIT_ATTRIBUTE __attribute__((__noreturn__))
#endif
#endif

#ifdef __cplusplus
#ifndef GC_NOEXCEPT
#if __cplusplus >= 201103L
#define GC_NOEXCEPT noexcept
#else
#define GC_NOEXCEPT throw()
#endif
#endif
#ifndef GC_ATTR_EXPLICIT
#define GC_ATTR_EXPLICIT /* converting constructors stay implicit */
#endif
#endif

#endif
