/* heap_limits (sgc only): sizes and limits the program gives, and the
 * heap's own memory, each case in a child process (spawn_case.h) whose
 * stderr the parent reads.
 *  - expand_huge: GC_expand_hp of SIZE_MAX, or anything within a chunk of
 *    it, fails (rounding it up to whole chunks wrapped to 4 MiB, and it
 *    reported success); GC_memalign near SIZE_MAX with SGC_EXTRA_BYTES
 *    set returns NULL, not a small object (bytes + extra wrapped), and
 *    GC_realloc of a large object to SIZE_MAX - 4 returns NULL (rounding
 *    wrapped to 0, and it "grew" in place to an object of 0 bytes).
 *  - initial_huge: GC_INITIAL_HEAP_SIZE=18446744073709551615 warns naming
 *    the setting and collections still run (before, none ever did: the
 *    collection floor was half the setting).
 *  - initial_above_max: GC_INITIAL_HEAP_SIZE above GC_MAXIMUM_HEAP_SIZE
 *    starts (before: "cannot reserve the initial heap" and an abort), with
 *    a warning naming both, and the heap stays under the maximum.
 *  - add_roots_unmapped: GC_add_roots of an unmapped range warns naming
 *    GC_add_roots and adds nothing (before, the next collection died of a
 *    segmentation fault and no message).
 *  - trace_full: SGC_TRACE=/dev/full warns once, naming the file and the
 *    error (before, every record was dropped silently).
 *  - uncollectable_reuse: under a 32 MiB limit, the heap filled with
 *    64-byte uncollectable objects, all freed, then a collection: pointer-
 *    free objects of 16 B to 4 MiB can be allocated (before, the freed
 *    pages served only 64-byte uncollectable objects again, and every
 *    other allocation failed for good).
 *  - huge_atomic: GC_malloc_atomic(16 GiB) raises the resident memory by
 *    less than 64 MiB (before, 1.4 GB: a page header written for each of
 *    its 4 Mi pages), and an interior pointer into its middle keeps it.
 *  - threads_as_limit: under an address-space limit of 320 MiB, 4 threads
 *    from GC_pthread_create keep 1 MiB objects until one is refused; the
 *    heap reaches 5/8 of the limit, 200 MiB.  glibc gives a thread a malloc
 *    arena of 64 MiB of address space at its first malloc: each thread's
 *    pthread_getattr_np as it registered took one (8 MiB reached), then
 *    the collecting thread's pthread_create of the GC thread (184 MiB).
 *  - plain_threads_as_limit: the same with threads from plain
 *    pthread_create, which register at their first allocation: the first
 *    one's pthread_getattr_np still takes an arena, the others read their
 *    stacks from their descriptors: 188 MiB, or 128 when the first
 *    collection is another thread's, whose pthread_create of the GC thread
 *    (glibc's calloc of its TLS vector) takes a second arena; at least 120
 *    is asked (before, each thread took one at its record's posix_memalign
 *    too: 8 MiB). */
#include <pthread.h>

/* pthread_create itself, where gc.h below redirects the name. */
static int plain_pthread_create(pthread_t *thread, void *(*routine)(void *), void *arg) {
    return pthread_create(thread, NULL, routine, arg);
}

#define GC_THREADS
#include "gc.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common.h"
#include "spawn_case.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

enum { MIB = 1 << 20, SKIP = 77 };

static int expand_huge(void) {
    CHECK(GC_expand_hp((size_t)-1) == 0, "GC_expand_hp(SIZE_MAX) reported success");
    CHECK(GC_expand_hp((size_t)-1 - MIB) == 0, "GC_expand_hp(SIZE_MAX - 1 MiB) reported success");
    CHECK(GC_expand_hp((size_t)1 << 62) == 0, "GC_expand_hp(2^62) reported success");
    CHECK(GC_memalign(64, (size_t)-1 - 8) == NULL, "GC_memalign(64, SIZE_MAX - 8) gave memory");
    CHECK(GC_malloc((size_t)-1) == NULL);
    CHECK(GC_malloc_atomic((size_t)-1 - 4096) == NULL);
    CHECK(GC_malloc_uncollectable((size_t)-1) == NULL);
    /* GC_realloc of a large object to a size that wraps when rounded. */
    char *big = GC_malloc(64 * 1024);
    CHECK(big != NULL);
    CHECK(GC_realloc(big, (size_t)-1 - 4) == NULL, "GC_realloc to SIZE_MAX - 4 gave memory");
    CHECK(GC_size(big) >= 64 * 1024, "the failed GC_realloc shrank the object to %zu bytes",
          (size_t)GC_size(big));
    CHECK(GC_expand_hp(8 * MIB) == 1, "a possible GC_expand_hp failed");
    return 0;
}

/* Garbage until the collection count moves, within 2 GiB allocated. */
static int collections_run(void) {
    GC_word before = GC_get_gc_no();
    for (int i = 0; i < 2048 && GC_get_gc_no() == before; i++) CHECK(GC_malloc(MIB) != NULL);
    CHECK(GC_get_gc_no() != before, "2 GiB of garbage and no collection");
    return 0;
}

static int initial_above_max(void) {
    void *keep[64];
    for (int i = 0; i < 64; i++) keep[i] = GC_malloc(MIB);
    CHECK(GC_get_heap_size() <= 16 * MIB, "heap %zu above the 16 MiB maximum",
          (size_t)GC_get_heap_size());
    GC_gcollect();
    return keep[0] == keep[1];
}

static int add_roots_unmapped(void) {
    size_t len = 16 * 4096;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK(munmap(p, len) == 0);
    GC_add_roots(p, p + len);
    GC_gcollect();
    /* A mapped range still works. */
    static void *holder[4];
    GC_add_roots(holder, holder + 4);
    holder[0] = GC_malloc(64);
    GC_gcollect();
    CHECK(GC_base(holder[0]) == holder[0]);
    return 0;
}

static int trace_full(void) {
    for (int i = 0; i < 3; i++) GC_gcollect();
    return 0;
}

static int uncollectable_reuse(void) {
    GC_set_max_heap_size(32 * MIB);
    size_t cap = 32 * MIB / 64, n = 0;
    void **objs = malloc(cap * sizeof *objs);
    CHECK(objs != NULL);
    while (n < cap && (objs[n] = GC_malloc_uncollectable(64)) != NULL) n++;
    CHECK(n > 100000, "only %zu uncollectable objects under 32 MiB", n);
    for (size_t i = 0; i < n; i++) GC_free(objs[i]);
    GC_gcollect();
    for (size_t bytes = 16; bytes <= 4 * MIB; bytes *= 4) {
        void *p = GC_malloc_atomic(bytes);
        CHECK(p != NULL, "GC_malloc_atomic(%zu) failed after the uncollectable objects were freed "
              "(%zu of them; heap %zu)", bytes, n, (size_t)GC_get_heap_size());
        GC_free(p);
    }
    free(objs);
    return 0;
}

static long resident_pages(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f != NULL);
    long size, resident;
    CHECK(fscanf(f, "%ld %ld", &size, &resident) == 2);
    fclose(f);
    return resident;
}

static int huge_atomic(void) {
    if (SANITIZED) return SKIP;
    GC_gcollect();
    long before = resident_pages();
    size_t bytes = (size_t)16 << 30;
    char *p = GC_malloc_atomic(bytes);
    if (!p) return SKIP; /* the system would not commit 16 GiB */
    long grown = (resident_pages() - before) * sysconf(_SC_PAGESIZE);
    CHECK(grown < 64L * MIB, "GC_malloc_atomic(16 GiB) made %ld MiB resident", grown / MIB);
    /* Only an interior pointer into its middle keeps it. */
    static char *volatile middle;
    middle = p + bytes / 2 + 12345;
    middle[0] = 7;
    p = NULL;
    GC_gcollect();
    CHECK(GC_base(middle) != NULL && (char *)GC_base(middle) + bytes / 2 + 12345 == middle);
    CHECK(GC_size(GC_base(middle)) >= bytes);
    CHECK(middle[0] == 7);
    /* Written in its middle and freed, its pages come back zeroed: a
     * pointer-free object is not cleared, so sgc must not take them for
     * clean when they are not.  16 GiB again fits the same pages. */
    GC_free(GC_base(middle));
    middle = NULL;
    size_t heap = GC_get_heap_size();
    p = GC_malloc_atomic(bytes);
    CHECK(p != NULL && GC_get_heap_size() == heap, "heap %zu after %zu", (size_t)GC_get_heap_size(), heap);
    CHECK(p[bytes / 2 + 12345] == 0, "the freed object's byte is still there: its pages were "
          "taken for clean");
    grown = (resident_pages() - before) * sysconf(_SC_PAGESIZE);
    CHECK(grown < 64L * MIB, "the second 16 GiB made %ld MiB resident", grown / MIB);
    return 0;
}

/* threads_as_limit: each thread keeps 1 MiB objects on its stack-rooted
 * list until GC_malloc refuses one. */
static atomic_int refused;
static void *keep_until_refused(void *arg) {
    (void)arg;
    void **list = NULL;
    while (!atomic_load(&refused)) {
        void **obj = GC_malloc(MIB);
        if (!obj) {
            atomic_store(&refused, 1);
            break;
        }
        *obj = list;
        list = obj;
    }
    return list;
}

static void *quiet_oom(size_t bytes) {
    (void)bytes;
    return NULL;
}

enum { AS_LIMIT_MIB = 320 };

/* 4 threads from GC_pthread_create (or, PLAIN, pthread_create) keep
 * objects until refused; the heap must reach MIN_MIB. */
static int as_limit_run(bool plain, size_t min_mib) {
    GC_set_oom_fn(quiet_oom);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        CHECK((plain ? plain_pthread_create(&th[i], keep_until_refused, NULL)
                     : pthread_create(&th[i], NULL, keep_until_refused, NULL)) == 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    size_t heap = GC_get_heap_size();
    fprintf(stderr, "heap reached %zu MiB under a %d MiB address-space limit (%s)\n", heap / MIB,
            AS_LIMIT_MIB, plain ? "pthread_create" : "GC_pthread_create");
    return heap >= min_mib * MIB ? 0 : 1;
}
static int threads_as_limit_run(void) { return as_limit_run(false, AS_LIMIT_MIB / 8 * 5); }
/* The first thread's arena costs 64 MiB of the limit, and the collecting
 * thread's another when it is not that thread (its pthread_create of the
 * GC thread is its first malloc): 188 or 128 MiB, as the race goes. */
static int plain_threads_as_limit_run(void) { return as_limit_run(true, AS_LIMIT_MIB / 8 * 3); }

/* The limit is set before sgc starts (it reserves at load time): here,
 * then this program again. */
static int as_limit_exec(const char *run) {
    if (SANITIZED) return SKIP;
    struct rlimit r;
    r.rlim_cur = r.rlim_max = (rlim_t)AS_LIMIT_MIB * MIB;
    CHECK(setrlimit(RLIMIT_AS, &r) == 0);
    /* Stacks of 8 MiB, and one GC thread, on any machine. */
    struct rlimit stack = {8 * MIB, 8 * MIB};
    CHECK(setrlimit(RLIMIT_STACK, &stack) == 0);
    setenv("SGC_MARKERS", "2", 1);
    execl("/proc/self/exe", "/proc/self/exe", run, (char *)NULL);
    return 127;
}
static int threads_as_limit(void) { return as_limit_exec("threads_as_limit_run"); }
static int plain_threads_as_limit(void) { return as_limit_exec("plain_threads_as_limit_run"); }

static const struct {
    const char *name;
    int (*run)(void);
} cases[] = {
    {"expand_huge", expand_huge},
    {"initial_huge", collections_run},
    {"initial_above_max", initial_above_max},
    {"add_roots_unmapped", add_roots_unmapped},
    {"trace_full", trace_full},
    {"uncollectable_reuse", uncollectable_reuse},
    {"huge_atomic", huge_atomic},
    {"threads_as_limit", threads_as_limit},
    {"threads_as_limit_run", threads_as_limit_run},
    {"plain_threads_as_limit", plain_threads_as_limit},
    {"plain_threads_as_limit_run", plain_threads_as_limit_run},
};

/* Runs case NAME in a child under ENV (NAME=VALUE or NULL); its stderr in
 * BUF; returns its exit status, or fails on a signal. */
static int run_case(const char *name, const char *env, char *buf, size_t cap) {
    char var[128] = "";
    if (env) {
        snprintf(var, sizeof var, "%s", env);
        char *eq = strchr(var, '=');
        *eq = 0;
        setenv(var, eq + 1, 1);
    }
    int st = spawn_case(name, buf, cap);
    if (env) unsetenv(var);
    CHECK(WIFEXITED(st), "case %s: killed by signal %d; stderr:\n%s", name,
          WIFSIGNALED(st) ? WTERMSIG(st) : 0, buf);
    return WEXITSTATUS(st);
}

static unsigned count_of(const char *hay, const char *needle) {
    unsigned n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
    return n;
}

int main(int argc, char **argv) {
    t_test_name = "heap_limits";
    if (argc > 1) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (!strcmp(argv[1], cases[i].name)) return cases[i].run();
        return 2;
    }
    static char buf[1 << 16];
    const char *only = getenv("HEAP_LIMITS_CASE");
#define WANT(n) (!only || !strcmp(only, n))
    if (WANT("expand_huge")) {
        CHECK(run_case("expand_huge", "SGC_EXTRA_BYTES=16", buf, sizeof buf) == 0, "%s", buf);
    }
    if (WANT("initial_huge")) {
        CHECK(run_case("initial_huge", "GC_INITIAL_HEAP_SIZE=18446744073709551615", buf,
                       sizeof buf) == 0, "%s", buf);
        CHECK(strstr(buf, "GC Warning: sgc: ignoring GC_INITIAL_HEAP_SIZE=18446744073709551615"),
              "no warning: %s", buf);
        CHECK(run_case("initial_huge", "GC_INITIAL_HEAP_SIZE=18446744073705357312", buf,
                       sizeof buf) == 0, "%s", buf);
        CHECK(strstr(buf, "GC Warning: sgc: ignoring GC_INITIAL_HEAP_SIZE="), "no warning: %s", buf);
    }
    if (WANT("initial_above_max")) {
        setenv("GC_MAXIMUM_HEAP_SIZE", "16m", 1);
        int rc = run_case("initial_above_max", "GC_INITIAL_HEAP_SIZE=64m", buf, sizeof buf);
        unsetenv("GC_MAXIMUM_HEAP_SIZE");
        CHECK(rc == 0, "%s", buf);
        CHECK(strstr(buf, "GC_INITIAL_HEAP_SIZE") && strstr(buf, "GC_MAXIMUM_HEAP_SIZE"),
              "no warning naming both settings: %s", buf);
    }
    if (WANT("add_roots_unmapped")) {
        CHECK(run_case("add_roots_unmapped", NULL, buf, sizeof buf) == 0, "%s", buf);
        CHECK(count_of(buf, "GC Warning: sgc: GC_add_roots(") == 1, "want one warning: %s", buf);
    }
    if (WANT("trace_full")) {
        CHECK(run_case("trace_full", "SGC_TRACE=/dev/full", buf, sizeof buf) == 0, "%s", buf);
        CHECK(count_of(buf, "GC Warning: sgc: SGC_TRACE: cannot write to /dev/full") == 1,
              "want one warning naming /dev/full: %s", buf);
        CHECK(strstr(buf, strerror(ENOSPC)), "the error is not named: %s", buf);
    }
    if (WANT("uncollectable_reuse")) {
        CHECK(run_case("uncollectable_reuse", NULL, buf, sizeof buf) == 0, "%s", buf);
    }
    if (WANT("huge_atomic")) {
        int rc = run_case("huge_atomic", NULL, buf, sizeof buf);
        CHECK(rc == 0 || rc == SKIP, "%s", buf);
        if (rc == SKIP) printf("huge_atomic: skipped (16 GiB not committed)\n");
    }
    if (WANT("threads_as_limit")) {
        int rc = run_case("threads_as_limit", NULL, buf, sizeof buf);
        CHECK(rc == 0 || rc == SKIP, "%s", buf);
        fputs(buf, stdout);
    }
    if (WANT("plain_threads_as_limit")) {
        int rc = run_case("plain_threads_as_limit", NULL, buf, sizeof buf);
        CHECK(rc == 0 || rc == SKIP, "%s", buf);
        fputs(buf, stdout);
    }
    printf("heap_limits: ok\n");
    return 0;
}
