/*
 * bench_common.h: shared helpers of the sgc benchmark programs.
 *
 * Every program is compiled three ways from the same source:
 *   - against sgc    (BENCH_IMPL="sgc",   include dir of the sgc target),
 *   - against bdwgc  (BENCH_IMPL="bdwgc", /usr/include/gc.h, -lgc),
 *   - against malloc (BENCH_MALLOC defined; only alloc and unfair), where
 *     GC_malloc/GC_free map to malloc/free and threads are plain pthreads,
 *     so that the runner can LD_PRELOAD jemalloc, tcmalloc or mimalloc.
 *
 * Output contract (parsed by bench/run.py): exactly one line that starts with
 * "RESULT " followed by space-separated key=value pairs.  Always present:
 *   prog, impl, threads, wall_s, check (ok|FAIL).
 * A failed self-check prints check=FAIL plus a "CHECK FAILED: ..." line on
 * stderr and exits with status 1.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef BENCH_MALLOC
/* ---- explicit allocation build --------------------------------------- */
#include <pthread.h>
#define GC_INIT() ((void)0)
#define GC_malloc(n) malloc(n)
#define GC_malloc_atomic(n) malloc(n)
#define GC_MALLOC(n) malloc(n)
#define GC_MALLOC_ATOMIC(n) malloc(n)
#define GC_free(p) free(p)
#define GC_FREE(p) free(p)
#define GC_gcollect() ((void)0)
#define bench_thread_create(t, attr, fn, arg) pthread_create(t, attr, fn, arg)
#define bench_thread_join(t, ret) pthread_join(t, ret)
#ifndef BENCH_IMPL
#define BENCH_IMPL "malloc"
#endif
static inline size_t bench_heap_size(void) { return 0; }
static inline unsigned long bench_gc_count(void) { return 0; }
static const int bench_marked_enabled = 0;
static const unsigned long long bench_marked_objects = 0, bench_marked_bytes = 0;
static inline void bench_marked_init(void) {}
#else
/* ---- garbage-collected build (sgc or bdwgc, same source) ------------- */
#ifndef GC_THREADS
#define GC_THREADS 1
#endif
/* We call GC_pthread_create/GC_pthread_join explicitly; keep the plain
 * pthread names for the synchronisation objects. */
#define GC_NO_THREAD_REDIRECTS 1
#include <gc.h>
#include <pthread.h>
#define bench_thread_create(t, attr, fn, arg) GC_pthread_create(t, attr, fn, arg)
#define bench_thread_join(t, ret) GC_pthread_join(t, ret)
#ifndef BENCH_IMPL
#define BENCH_IMPL "gc"
#endif
/* Optional introspection: referenced weakly so that a library that does not
 * (yet) define them still links; the value is then reported as 0. */
#pragma weak GC_get_heap_size
#pragma weak GC_get_gc_no
static inline size_t bench_heap_size(void) {
  return GC_get_heap_size ? GC_get_heap_size() : 0;
}
static inline unsigned long bench_gc_count(void) {
  return GC_get_gc_no ? (unsigned long)GC_get_gc_no() : 0;
}
#include "bench_marked.h"
#endif

/* ---- time ------------------------------------------------------------ */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- process memory -------------------------------------------------- */
/* Peak resident set size (VmHWM) of this process in KiB, 0 if unknown. */
/* The process's user + system CPU time so far, all its threads (GC
 * threads included), setup included: what a GC thread spinning while the
 * program runs costs shows here and not in wall_s. */
static inline double bench_cpu_s(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static inline long bench_peak_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) {
      kb = strtol(line + 6, NULL, 10);
      break;
    }
  fclose(f);
  return kb;
}

static inline long bench_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) {
      kb = strtol(line + 6, NULL, 10);
      break;
    }
  fclose(f);
  return kb;
}

/* ---- deterministic pseudo-random numbers (splitmix64) ---------------- */
typedef struct { uint64_t s; } bench_rng;
static inline uint64_t bench_rng_next(bench_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/* uniform in [0, n) */
static inline uint32_t bench_rng_below(bench_rng *r, uint32_t n) {
  return (uint32_t)(((bench_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}
/* uniform in [0, 1) */
static inline double bench_rng_unit(bench_rng *r) {
  return (double)(bench_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* 64-bit mixing hash for result fingerprints. */
static inline uint64_t bench_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

/* ---- argument helpers ------------------------------------------------- */
static inline long bench_arg_long(const char *opt, const char *s, long lo, long hi) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == 0 || *end != 0 || v < lo || v > hi) {
    fprintf(stderr, "bad value '%s' for %s (allowed %ld..%ld)\n", s, opt, lo, hi);
    exit(2);
  }
  return v;
}

static inline double bench_arg_double(const char *opt, const char *s, double lo, double hi) {
  char *end;
  double v = strtod(s, &end);
  if (*s == 0 || *end != 0 || !(v >= lo && v <= hi)) {
    fprintf(stderr, "bad value '%s' for %s (allowed %g..%g)\n", s, opt, lo, hi);
    exit(2);
  }
  return v;
}

/* ---- checks and the result line ------------------------------------- */
static int bench_check_failed = 0;

static inline void bench_fail(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "CHECK FAILED: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  fflush(stderr);
  bench_check_failed = 1;
}

/* Result line builder: bench_result_begin(), any number of bench_kv_*(),
 * then bench_result_end() which prints check=..., flushes and returns the
 * process exit status to use. */
static char bench_result_buf[4096];
static size_t bench_result_len;

static inline void bench_kv(const char *key, const char *fmt, ...) {
  va_list ap;
  size_t room = sizeof bench_result_buf - bench_result_len;
  int n = snprintf(bench_result_buf + bench_result_len, room, " %s=", key);
  if (n < 0 || (size_t)n >= room) return;
  bench_result_len += (size_t)n;
  room -= (size_t)n;
  va_start(ap, fmt);
  n = vsnprintf(bench_result_buf + bench_result_len, room, fmt, ap);
  va_end(ap);
  if (n > 0 && (size_t)n < room) bench_result_len += (size_t)n;
}

static inline void bench_result_begin(const char *prog, int threads, double wall_s) {
  bench_result_len = 0;
  bench_result_buf[0] = 0;
  bench_kv("prog", "%s", prog);
  bench_kv("impl", "%s", BENCH_IMPL);
  bench_kv("threads", "%d", threads);
  bench_kv("wall_s", "%.6f", wall_s);
}

static inline int bench_result_end(void) {
  bench_kv("gc_count", "%lu", bench_gc_count());
  bench_kv("heap_bytes", "%zu", bench_heap_size());
  bench_kv("peak_rss_kb", "%ld", bench_peak_rss_kb());
  bench_kv("cpu_s", "%.6f", bench_cpu_s());
  if (bench_marked_enabled) {
    bench_kv("marked_objects_enum", "%llu", bench_marked_objects);
    bench_kv("marked_bytes_enum", "%llu", bench_marked_bytes);
  }
  bench_kv("check", "%s", bench_check_failed ? "FAIL" : "ok");
  printf("RESULT%s\n", bench_result_buf);
  fflush(stdout);
  return bench_check_failed ? 1 : 0;
}

/* ---- thread helpers -------------------------------------------------- */
/* Start n threads running fn(&args[i]) (args is an array of elements of
 * size `stride`) and wait for all of them. */
static inline void bench_run_threads(int n, void *(*fn)(void *), void *args, size_t stride) {
  pthread_t *tids = (pthread_t *)calloc((size_t)n, sizeof *tids);
  if (!tids) {
    perror("calloc");
    exit(3);
  }
  for (int i = 0; i < n; i++) {
    int e = bench_thread_create(&tids[i], NULL, fn, (char *)args + (size_t)i * stride);
    if (e) {
      fprintf(stderr, "thread create failed (%d of %d): %s\n", i, n, strerror(e));
      exit(3);
    }
  }
  for (int i = 0; i < n; i++) bench_thread_join(tids[i], NULL);
  free(tids);
}

static inline void *bench_xmalloc(size_t n) {
  void *p = GC_MALLOC(n);
  if (!p) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", n);
    exit(3);
  }
  return p;
}

static inline void *bench_xmalloc_atomic(size_t n) {
  void *p = GC_MALLOC_ATOMIC(n);
  if (!p) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", n);
    exit(3);
  }
  return p;
}

/* Usage printing helper. */
#define BENCH_USAGE_EXIT(text)        \
  do {                                \
    fputs(text, stderr);              \
    exit(2);                          \
  } while (0)

#endif /* BENCH_COMMON_H */
