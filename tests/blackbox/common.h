/* Shared helpers for sgc's black-box tests.
 *
 * Every test is an ordinary C11 program using only bdwgc's public gc.h API,
 * so that the same source builds against sgc (ctest) and against Debian's
 * libgc (tests/run-against-bdwgc.sh).  Include gc.h (with GC_THREADS defined
 * where threads are used) BEFORE this header.
 */
#ifndef SGC_TESTS_COMMON_H
#define SGC_TESTS_COMMON_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__)
#define T_NOINLINE __attribute__((noinline))
#define T_UNUSED __attribute__((unused))
#else
#define T_NOINLINE
#define T_UNUSED
#endif

/* CHECK is always on (independent of NDEBUG): on failure it names the test,
 * the source location and the failed condition, then exits with status 1. */
static T_UNUSED const char *t_test_name = "test";

static T_UNUSED void t_fail(const char *file, int line, const char *cond,
                            const char *fmt, ...)
{
    fprintf(stderr, "FAIL [%s] %s:%d: CHECK(%s) failed", t_test_name, file,
            line, cond);
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond))                                                        \
            t_fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);              \
    } while (0)

/* How many times NEEDLE occurs in HAYSTACK (counting a test's reports). */
static T_UNUSED int t_occurrences(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* What a collector's report shows of an object allocated in FILE at the
 * line a child printed as "line N" on its stderr (BUF): "(FILE:N, sz=". */
static T_UNUSED void t_report_site(const char *buf, const char *file, char *where, size_t cap)
{
    int line = 0;
    const char *l = strstr(buf, "line ");
    CHECK(l && sscanf(l, "line %d", &line) == 1, "no line named in: %s", buf);
    snprintf(where, cap, "(%s:%d, sz=", file, line);
}

/* A formatted note on stdout (visible in ctest -V / LastTest.log). */
static T_UNUSED void t_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("[%s] ", t_test_name);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* ---- conservative-retention helpers --------------------------------------
 * A conservative collector keeps an object alive while any word that looks
 * like a pointer to it remains in a scanned area: dead stack slots of
 * functions that returned long ago, callee-saved registers, etc.  Tests that
 * expect an object to become unreachable allocate it in a separate
 * non-inlined function and then call t_clear_stack(), which overwrites a
 * large part of the (now unused) stack below the caller's frame. */
T_NOINLINE static T_UNUSED void t_clear_stack_inner(void)
{
    volatile char buf[64 * 1024];
    memset((char *)buf, 0, sizeof buf);
    __asm__ __volatile__("" : : "r"(buf) : "memory");
}

T_NOINLINE static T_UNUSED void t_clear_stack(void)
{
    t_clear_stack_inner();
    /* Clobber caller-saved registers too, by calling something opaque. */
    __asm__ __volatile__("" : : : "memory");
}

/* ---- PRNG (splitmix64 / xorshift64*) ------------------------------------ */
static inline uint64_t t_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct {
    uint64_t s;
} t_rng;

static inline void t_rng_seed(t_rng *r, uint64_t seed)
{
    r->s = t_mix64(seed) | 1;
}

static inline uint64_t t_rng_next(t_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* uniform in [0, n) (n > 0) */
static inline uint64_t t_rng_below(t_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)t_rng_next(r) * n) >> 64);
}

/* uniform in [lo, hi] */
static inline uint64_t t_rng_range(t_rng *r, uint64_t lo, uint64_t hi)
{
    return lo + t_rng_below(r, hi - lo + 1);
}

/* ---- misc ---------------------------------------------------------------- */
static T_UNUSED long t_env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long x = strtol(v, &end, 0);
    return *end ? dflt : x;
}

static T_UNUSED double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Full collection a few times, so that finalizers/disappearing links that
 * depend on an earlier cycle get their chance. */
static T_UNUSED void t_collect_n(int n)
{
    for (int i = 0; i < n; i++)
        GC_gcollect();
}

/* Collections beside THREADS threads running THREAD_MAIN (argument i + 1
 * for thread i), each of which waits at *TOGETHER, does its work while
 * this thread makes garbage and collects COLLECTIONS times, and waits at
 * *TOGETHER again; then joins them.  For tests whose threads keep objects
 * only where the collector must find them (thread-local storage). */
static T_UNUSED void t_collect_beside_threads(int threads, void *(*thread_main)(void *),
                                              pthread_barrier_t *together, int collections,
                                              void (*make_garbage)(void))
{
    pthread_t *ids = (pthread_t *)calloc((size_t)threads, sizeof *ids);
    CHECK(ids != NULL);
    CHECK(pthread_barrier_init(together, NULL, (unsigned)threads + 1) == 0);
    for (int i = 0; i < threads; i++)
        CHECK(pthread_create(&ids[i], NULL, thread_main, (void *)(intptr_t)(i + 1)) == 0);
    pthread_barrier_wait(together);
    for (int r = 0; r < collections; r++) {
        make_garbage();
        GC_gcollect();
    }
    pthread_barrier_wait(together);
    for (int i = 0; i < threads; i++)
        CHECK(pthread_join(ids[i], NULL) == 0);
    CHECK(pthread_barrier_destroy(together) == 0);
    free(ids);
}

#endif
