/* out_of_memory (sgc only): an allocation sgc cannot serve returns NULL
 * after one line on stderr that says which of the three it was, and the
 * program goes on allocating.
 *
 * Each case runs in a child process (spawn_case.h), which checks the NULL
 * and that allocation works afterwards; the parent checks the child's
 * line:
 *  - overflow: GC_calloc_explicitly_typed with count x size past SIZE_MAX;
 *  - reallocarray: GC_reallocarray (bdwgc's development branch) with
 *    count x size past SIZE_MAX leaves the object as it was; within
 *    bounds it grows it;
 *  - impossible: GC_malloc of 2^50 bytes, more than 48-bit addresses hold;
 *  - limit: 1 MiB objects kept under GC_set_max_heap_size(heap + 16 MiB)
 *    until one is refused: the line names the limit in MiB, and once the
 *    objects are dropped a collection makes room again;
 *  - system: RLIMIT_AS set 64 MiB above the process's address space, then
 *    2 GiB asked for (more than the 1 GiB a heap chunk keeps to grow in
 *    place, so a new chunk's address space is needed): the line says the
 *    system refused, with strerror's
 *    words (not under AddressSanitizer or ThreadSanitizer, whose own
 *    mappings need the room);
 *  - quiet: a GC_set_oom_fn function replaces the line;
 *  - ignored: GC_set_warn_proc(GC_ignore_warn_proc) silences it, as in
 *    bdwgc (sgc printed it past the warn procedure);
 *  - warn_format: a warn procedure gets bdwgc's arguments: a printf
 *    format, a whole line ending in a newline, whose one conversion is
 *    for the argument (here the heap's MiB); an ordinary warning too;
 *  - thread_record: GC_pthread_create when no memory for a thread
 *    record can be had (mmap fails: this program's own, which the
 *    library's call reaches first; glibc's own calls do not) returns
 *    EAGAIN, as pthread_create does when resources lack, and creates
 *    nothing; once it works again a thread starts and runs.  Threads
 *    that wait hold the records sgc has at hand until it needs more.
 *    Before, sgc ended the program ("out of memory for a thread record");
 *  - gc_threads: with SGC_MARKERS=4 and the address space limited to 4 MiB
 *    above what the process has before its first collection, no GC thread
 *    can start: one warning says so, and 100 collections mark with the
 *    collector alone and keep a list intact.  Before, each collection
 *    tried again, leaking the marker it had made, and the tenth died of
 *    "cannot allocate a mark stack".
 * Before, every case printed the same "heap limit or OS refused". */
#include "gc.h"
#include "gc/gc_typed.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "spawn_case.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED_BUILD 1
#else
#define SANITIZED_BUILD 0
#endif
enum { SANITIZED = SANITIZED_BUILD };

enum { MIB = 1 << 20 };

static int quiet_calls;

/* mmap failing on demand; the sanitizers intercept it themselves, so
 * there the case is skipped. */
static atomic_int mmap_refuses;
#if !SANITIZED_BUILD
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    if (atomic_load(&mmap_refuses)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, offset);
}
#endif

static void *started(void *arg)
{
    atomic_store((atomic_int *)arg, 1);
    return GC_MALLOC(64);
}

/* The thread_record case. */
enum { HELD_MAX = 256 };
static atomic_int held_go;

static void *held(void *arg)
{
    while (!atomic_load(&held_go)) usleep(1000);
    return arg;
}

static void thread_record_refused(void)
{
    static atomic_int ran;
    static pthread_t holders[HELD_MAX];
    pthread_t t;
    int r = 0, n = 0;
    CHECK(GC_pthread_create(&t, NULL, started, &ran) == 0); /* GC threads started */
    CHECK(GC_pthread_join(t, NULL) == 0);
    atomic_store(&ran, 0);
    atomic_store(&mmap_refuses, 1);
    while (n < HELD_MAX && (r = GC_pthread_create(&holders[n], NULL, held, NULL)) == 0) n++;
    if (r == EAGAIN) r = GC_pthread_create(&t, NULL, started, &ran);
    atomic_store(&mmap_refuses, 0);
    CHECK(r == EAGAIN, "GC_pthread_create without memory returned %d, not EAGAIN, after %d", r, n);
    fprintf(stderr, "EAGAIN after %d threads held the records at hand\n", n);
    usleep(20000);
    CHECK(!atomic_load(&ran), "a thread ran though GC_pthread_create failed");
    atomic_store(&held_go, 1);
    for (int i = 0; i < n; i++) CHECK(GC_pthread_join(holders[i], NULL) == 0);
    void *result = NULL;
    CHECK(GC_pthread_create(&t, NULL, started, &ran) == 0);
    CHECK(GC_pthread_join(t, &result) == 0 && result != NULL && atomic_load(&ran));
}

static void *quiet_oom(size_t bytes)
{
    (void)bytes;
    quiet_calls++;
    return NULL;
}

static char warned[2][512];
static int warnings;

static void recording_warn(char *msg, GC_word arg)
{
    if (warnings < 2)
        snprintf(warned[warnings], sizeof warned[0], msg, (unsigned long)arg);
    /* A whole line: one newline, at the end. */
    size_t n = strlen(msg);
    CHECK(n > 0 && msg[n - 1] == '\n' && strchr(msg, '\n') == msg + n - 1, "msg \"%s\"", msg);
    warnings++;
}

/* Allocation goes on after a refusal. */
static void still_allocates(void)
{
    for (int i = 0; i < 1000; i++) {
        char *p = GC_MALLOC(64 + i % 200);
        CHECK(p != NULL && p[0] == 0, "allocation %d after the refusal failed", i);
        p[0] = 1;
    }
}

static size_t address_space_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f != NULL);
    unsigned long pages = 0;
    CHECK(fscanf(f, "%lu", &pages) == 1);
    fclose(f);
    return pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Keeps 1 MiB objects in a chain until one is refused (at most 64);
 * returns how many, the chain dropped with this frame. */
T_NOINLINE static int fill_to_limit(void)
{
    void **chain = NULL;
    int kept = 0;
    for (; kept < 64; kept++) {
        void **next = GC_MALLOC(MIB);
        if (!next) break;
        *next = chain;
        chain = next;
    }
    return kept;
}

struct node {
    struct node *next;
    size_t value;
};

/* The gc_threads case: collections with no GC thread able to start. */
static void collect_without_gc_threads(void)
{
    struct rlimit as = {address_space_bytes() + 4 * MIB, RLIM_INFINITY};
    CHECK(setrlimit(RLIMIT_AS, &as) == 0);
    struct node *head = NULL;
    for (size_t i = 0; i < 100; i++) {
        struct node *n = GC_NEW(struct node);
        CHECK(n != NULL, "node %zu", i);
        n->value = i;
        n->next = head;
        head = n;
        for (int j = 0; j < 1000; j++) CHECK(GC_MALLOC(48) != NULL); /* garbage */
        GC_gcollect();
    }
    for (size_t i = 100; i-- > 0; head = head->next)
        CHECK(head != NULL && head->value == i, "list broken at %zu", i);
}

static int run_case(const char *mode)
{
    GC_INIT();
    if (!strcmp(mode, "gc_threads")) {
        if (SANITIZED) {
            fprintf(stderr, "skipped under a sanitizer\n");
            return 0;
        }
        collect_without_gc_threads();
        still_allocates();
        return 0;
    }
    GC_gcollect(); /* the GC threads exist before any limit */
    if (!strcmp(mode, "overflow")) {
        GC_word bitmap[1] = {1};
        GC_descr d = GC_make_descriptor(bitmap, 1);
        CHECK(GC_calloc_explicitly_typed(SIZE_MAX / 2, 4, d) == NULL);
    } else if (!strcmp(mode, "reallocarray")) {
        char *p = GC_malloc(10);
        strcpy(p, "kept");
        volatile size_t huge = SIZE_MAX / 2; /* past what the compiler checks */
        CHECK(GC_reallocarray(p, huge, 3) == NULL);
        CHECK(!strcmp(p, "kept"));
        p = GC_reallocarray(p, 1000, 100);
        CHECK(p != NULL && GC_size(p) >= 100000 && !strcmp(p, "kept"));
    } else if (!strcmp(mode, "impossible")) {
        CHECK(GC_malloc((size_t)1 << 50) == NULL);
    } else if (!strcmp(mode, "limit")) {
        size_t limit = GC_get_heap_size() + GC_get_unmapped_bytes() + 16 * MIB;
        GC_set_max_heap_size(limit);
        fprintf(stderr, "limit %zu MiB\n", limit / MIB);
        int kept = fill_to_limit();
        CHECK(kept < 64, "64 MiB kept under a limit of %zu MiB", limit / MIB);
        CHECK(kept >= 4, "only %d MiB kept under a limit of %zu MiB", kept, limit / MIB);
        t_clear_stack();
        GC_gcollect();
        CHECK(GC_MALLOC(MIB) != NULL, "no room after the kept objects were dropped");
    } else if (!strcmp(mode, "system")) {
        if (SANITIZED) {
            fprintf(stderr, "skipped under a sanitizer\n");
            return 0;
        }
        struct rlimit as = {address_space_bytes() + 64 * MIB, RLIM_INFINITY};
        CHECK(setrlimit(RLIMIT_AS, &as) == 0);
        CHECK(GC_malloc_atomic((size_t)2048 * MIB) == NULL);
    } else if (!strcmp(mode, "thread_record")) {
        if (SANITIZED) {
            fprintf(stderr, "skipped under a sanitizer\n");
            return 0;
        }
        thread_record_refused();
    } else if (!strcmp(mode, "quiet")) {
        GC_set_oom_fn(quiet_oom);
        CHECK(GC_malloc((size_t)1 << 50) == NULL);
        CHECK(quiet_calls == 1, "the oom function was called %d times", quiet_calls);
    } else if (!strcmp(mode, "ignored")) {
        GC_set_warn_proc(GC_ignore_warn_proc);
        CHECK(GC_malloc((size_t)1 << 50) == NULL);
    } else if (!strcmp(mode, "warn_format")) {
        GC_set_warn_proc(recording_warn);
        CHECK(GC_malloc((size_t)1 << 50) == NULL);
        CHECK(GC_memalign(48, 10) == NULL); /* not a power of two: a warning */
        GC_set_warn_proc(NULL);             /* back to the default */
        CHECK(warnings == 2, "%d warnings", warnings);
        char want[64];
        snprintf(want, sizeof want, "heap %lu MiB)\n", (unsigned long)(GC_get_heap_size() >> 20));
        /* bdwgc's prefix, which warn procedures filter on. */
        CHECK(!strncmp(warned[0], "GC Warning: ", 12) && !strncmp(warned[1], "GC Warning: ", 12),
              "warnings without bdwgc's prefix: \"%s\", \"%s\"", warned[0], warned[1]);
        CHECK(strstr(warned[0], "cannot allocate 1125899906842624 bytes") && strstr(warned[0], want),
              "out of memory: \"%s\", wanted \"%s\" in it", warned[0], want);
        CHECK(strstr(warned[1], "48") != NULL, "warning: \"%s\"", warned[1]);
    } else {
        fprintf(stderr, "unknown case %s\n", mode);
        return 2;
    }
    still_allocates();
    return 0;
}

/* Runs case MODE, which must exit 0; its stderr in BUF. */
static void expect_case(const char *mode, char *buf, size_t cap)
{
    int st = spawn_case(mode, buf, cap);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %s: status 0x%x, stderr: %s", mode, st,
          buf);
    t_note("%s: %.300s", mode, buf);
}

int main(int argc, char **argv)
{
    t_test_name = "out_of_memory";
    if (argc > 1)
        return run_case(argv[1]);
    char buf[8192], want[128];

    expect_case("overflow", buf, sizeof buf);
    CHECK(strstr(buf, "sgc: out of memory: cannot allocate SIZE_MAX bytes: a size that overflowed"),
          "overflow: %s", buf);
    expect_case("reallocarray", buf, sizeof buf);
    CHECK(strstr(buf, "cannot allocate SIZE_MAX bytes: a size that overflowed"), "reallocarray: %s",
          buf);

    expect_case("impossible", buf, sizeof buf);
    CHECK(strstr(buf, "cannot allocate 1125899906842624 bytes: more than a heap can hold"),
          "impossible size: %s", buf);

    expect_case("limit", buf, sizeof buf);
    size_t limit_mib = 0;
    CHECK(sscanf(buf, "limit %zu MiB", &limit_mib) == 1, "limit: %s", buf);
    snprintf(want, sizeof want, "cannot allocate %d bytes: the heap limit of %zu MiB is reached",
             MIB, limit_mib);
    CHECK(strstr(buf, want), "limit: wanted \"%s\" in %s", want, buf);

    expect_case("system", buf, sizeof buf);
    if (!strstr(buf, "skipped")) {
        snprintf(want, sizeof want, "the system refused more memory (%s;", strerror(ENOMEM));
        CHECK(strstr(buf, "cannot allocate 2147483648 bytes: ") && strstr(buf, want),
              "system: wanted \"%s\" in %s", want, buf);
    }

    expect_case("thread_record", buf, sizeof buf);

    expect_case("quiet", buf, sizeof buf);
    CHECK(!strstr(buf, "sgc: out of memory"), "quiet: the oom function did not replace the line: %s",
          buf);

    expect_case("ignored", buf, sizeof buf);
    CHECK(!strstr(buf, "out of memory"), "ignored: the warn procedure did not silence it: %s", buf);
    expect_case("warn_format", buf, sizeof buf);

    /* The heap reserved at start, so only the GC threads want more room. */
    setenv("SGC_MARKERS", "4", 1);
    setenv("SGC_INITIAL_HEAP_SIZE", "32M", 1);
    expect_case("gc_threads", buf, sizeof buf);
    unsetenv("SGC_MARKERS");
    unsetenv("SGC_INITIAL_HEAP_SIZE");
    if (!strstr(buf, "skipped")) {
        const char *w = strstr(buf, "cannot start GC thread 1 (");
        CHECK(w && strstr(w, "collections mark with 1 thread from now on"), "gc_threads: %s", buf);
        CHECK(!strstr(w + 1, "cannot start GC thread"), "gc_threads: warned more than once: %s",
              buf);
    }

    t_note("PASS");
    return 0;
}
