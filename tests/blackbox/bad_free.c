/* bad_free (sgc-specific): GC_free of something that is not a GC heap object,
 * or of an object already freed, must stop the program with a clear
 * message mentioning GC_free, instead of corrupting the heap.
 *
 * Each case runs in a fresh child process (this executable re-executed with
 * the case name); the parent checks that the child died by SIGABRT or exited
 * non-zero, and that its stderr mentions "GC_free".
 *
 * bdwgc does not promise this (it typically crashes with SIGSEGV or silently
 * misbehaves), so run-against-bdwgc.sh leaves this test out.
 *
 * A control case (GC_free of real objects, then more allocation, with and
 * without per-CPU caches) must exit 0, so that a library that aborts on
 * every GC_free, or refuses a first free, does not pass.  Two
 * more misuses end the same way: GC_push_all outside a collection, and a
 * bad GC_free with a GC_set_abort_func function, which must get the
 * message in place of sgc's own line.
 */
#define GC_THREADS
#include "gc.h"
#include "gc/gc_mark.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include <unistd.h>

#include "common.h"
#include "spawn_case.h"

static int static_var[16];

static atomic_int freed_elsewhere;

/* Frees P into this thread's cache and stays, so the cache keeps it. */
static void *free_one_and_stay(void *p)
{
    GC_free(p);
    atomic_store(&freed_elsewhere, 1);
    for (;;) pause();
    return NULL;
}

/* Frees the first of N objects of SIZE from ALLOCATE, then the other
 * N - 1 (64 KiB of them, so the first leaves this thread's own list),
 * then the first again. */
static void free_with_many_then_again(void *(*allocate)(size_t), size_t size, int n)
{
    static void *objects[4096]; /* static: a root, as the objects must stay */
    CHECK(n <= 4096);
    for (int i = 0; i < n; i++) CHECK((objects[i] = allocate(size)) != NULL);
    for (int i = 0; i < n; i++) GC_free(objects[i]);
    GC_free(objects[0]);
}

/* P freed by another thread, which keeps it in its cache, then here. */
static void free_elsewhere_then_here(void *p)
{
    pthread_t t;
    CHECK(p != NULL && GC_pthread_create(&t, NULL, free_one_and_stay, p) == 0);
    while (!atomic_load(&freed_elsewhere)) usleep(1000);
    GC_free(p);
}

static void client_abort(const char *msg)
{
    fprintf(stderr, "client abort: %s\n", msg);
}

/* What the double-free tag (src/alloc/alloc.h) must never do: refuse a
 * first free, or leave its mark in an object handed out.  Objects freed,
 * handed back as batches, dropped by a collection and swept, then taken
 * again from every path (the thread's list, a batch, a page), are
 * checked zero where their kind is cleared and freed again unwritten:
 * pointer-free ones are not cleared, so a tag left in one would refuse
 * its free. */
static void control_tags(void)
{
    enum { N = 5000 };
    static void *objects[N];
    static const size_t sizes[] = {16, 32, 48, 64, 200, 1000};
    for (int round = 0; round < 4; round++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int atomic = 0; atomic < 2; atomic++) {
                size_t size = sizes[s];
                for (int i = 0; i < N; i++) {
                    void **p = atomic ? GC_malloc_atomic(size) : GC_malloc(size);
                    CHECK(p != NULL);
                    if (!atomic)
                        for (size_t w = 0; w < size / sizeof(void *); w++)
                            CHECK(p[w] == NULL, "a %zu-byte object handed out with word %zu set",
                                  size, w);
                    objects[i] = p;
                }
                for (int i = 0; i < N; i++) GC_free(objects[i]);
                if (round & 1) GC_gcollect();
            }
}

static int run_case(const char *mode)
{
    GC_INIT();
    /* some ordinary activity first */
    for (int i = 0; i < 1000; i++)
        CHECK(GC_malloc(32 + i % 500) != NULL);
    volatile long on_stack[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (!strcmp(mode, "control")) {
        void *p = GC_malloc(100), *q = GC_malloc_atomic(100000);
        GC_free(p);
        GC_free(q);
        GC_free(NULL);
        for (int i = 0; i < 100; i++)
            GC_free(GC_malloc_uncollectable(64));
        GC_gcollect();
        for (int i = 0; i < 1000; i++)
            CHECK(GC_malloc(32 + i % 500) != NULL);
        control_tags();
        return 0;
    } else if (!strncmp(mode, "twice", 5)) {
        /* "twice16" ... "twice200", "twice_atomic24": a small object freed
         * twice in a row, through each branch of GC_free's fast path (16
         * and 32 bytes by their mask, 48 by the general test, 200 by the
         * memset, pointer-free objects uncleared), and a large object. */
        bool atomic = strstr(mode, "atomic") != NULL;
        size_t size = (size_t)atoi(mode + strcspn(mode, "0123456789"));
        void *p = atomic ? GC_malloc_atomic(size) : GC_malloc(size);
        CHECK(p != NULL);
        memset(p, 0x5a, size);
        GC_free(p);
        GC_free(p);
    } else if (!strcmp(mode, "later_twice")) {
        /* Freed, then 100 other objects of its size, then again: a
         * second push would close a cycle through them. */
        void *p = GC_malloc(48), *others[100];
        for (int i = 0; i < 100; i++) CHECK((others[i] = GC_malloc(48)) != NULL);
        GC_free(p);
        for (int i = 0; i < 100; i++) GC_free(others[i]);
        GC_free(p);
    } else if (!strcmp(mode, "handed_back_twice")) {
        /* The thread's list becomes a batch (alloc/batches.c). */
        free_with_many_then_again(GC_malloc, 32, 2049);
    } else if (!strcmp(mode, "other_thread_twice")) {
        free_elsewhere_then_here(GC_malloc(64));
    } else if (!strcmp(mode, "stack")) {
        GC_free((void *)&on_stack[2]);
    } else if (!strcmp(mode, "malloc")) {
        void *m = malloc(64);
        GC_free(m);
    } else if (!strcmp(mode, "static")) {
        GC_free(static_var);
    } else if (!strcmp(mode, "abortfn")) {
        /* GC_set_abort_func: the client's function gets the message in
         * place of sgc's own line, and the program still stops. */
        GC_set_abort_func(client_abort);
        CHECK(GC_get_abort_func() == client_abort);
        GC_free(malloc(64));
    } else if (!strcmp(mode, "push_all")) {
        /* Roots pushed outside a collection would sit on a mark stack. */
        GC_push_all(static_var, static_var + 16);
    } else if (!strncmp(mode, "inside", 6)) {
        /* "inside16" / "inside32": an address inside a 16- or 32-byte
         * object, after a good free of a neighbour on the same page, so
         * GC_free's fastest path (its cached page, an aligned-start mask)
         * is the one that must refuse it; 16 bytes into a 32-byte object
         * is aligned to a granule but not to the object. */
        size_t size = (size_t)atoi(mode + 6);
        char *a = GC_malloc(size), *b = GC_malloc(size);
        CHECK(a && b && GC_size(b) == size);
        GC_free(a);
        GC_free(b + size / 2);
    } else if (!strcmp(mode, "uncollectable_twice")) {
        /* Freed into the thread's cache of uncollectable objects, then
         * again: the cache's path must still refuse the second. */
        void *u = GC_malloc_uncollectable(64);
        CHECK(u != NULL);
        GC_free(u);
        GC_free(u);
    } else if (!strcmp(mode, "uncollectable_handed_back_twice")) {
        /* Past what a thread's cache keeps: back to the shared list. */
        free_with_many_then_again(GC_malloc_uncollectable, 64, 1025);
    } else if (!strcmp(mode, "uncollectable_other_thread_twice")) {
        free_elsewhere_then_here(GC_malloc_uncollectable(64));
    } else if (!strcmp(mode, "wild")) {
        GC_free((void *)(uintptr_t)0x123456789a0ULL);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    /* Not reached if the library checks its argument.  Keep going a bit
     * so that silent corruption has a chance to show. */
    for (int i = 0; i < 10000; i++)
        CHECK(GC_malloc(64) != NULL);
    GC_gcollect();
    fprintf(stderr, "bad_free child (%s): GC_free returned normally\n", mode);
    return 0;
}

int main(int argc, char **argv)
{
    t_test_name = "bad_free";
    if (argc > 1)
        return run_case(argv[1]);

    char buf[8192];
    int st = spawn_case("control", buf, sizeof buf);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "control child (valid GC_free calls) failed: status 0x%x, "
          "stderr: %s", st, buf);

    /* The same with per-CPU caches, whose frees take the slow path. */
    setenv("SGC_LAB", "cpu", 1);
    st = spawn_case("control", buf, sizeof buf);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "control child with SGC_LAB=cpu failed: status 0x%x, stderr: %s", st, buf);
    unsetenv("SGC_LAB");

    const char *modes[] = {"stack", "malloc", "static", "wild", "inside16", "inside32",
                           "uncollectable_twice", "uncollectable_handed_back_twice",
                           "uncollectable_other_thread_twice", "twice16", "twice32",
                           "twice48", "twice200", "twice_atomic24", "later_twice",
                           "handed_back_twice", "other_thread_twice", "twice100000",
                           "cpu:twice16", "cpu:later_twice"};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        /* "cpu:" runs the case with per-CPU caches. */
        bool cpu = !strncmp(modes[i], "cpu:", 4);
        if (cpu) setenv("SGC_LAB", "cpu", 1);
        st = spawn_case(modes[i] + (cpu ? 4 : 0), buf, sizeof buf);
        if (cpu) unsetenv("SGC_LAB");
        int aborted = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
        int failed = WIFEXITED(st) && WEXITSTATUS(st) != 0;
        t_note("GC_free(%s address): %s %d; stderr: %.200s", modes[i],
               WIFSIGNALED(st) ? "signal" : "exit",
               WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), buf);
        CHECK(aborted || failed,
              "GC_free(%s address) did not stop the program (status 0x%x; "
              "signal %d)", modes[i], st,
              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        CHECK(strstr(buf, "GC_free") != NULL,
              "GC_free(%s address): stderr does not mention GC_free: %s",
              modes[i], buf);
        CHECK(strncmp(modes[i], "inside", 6) || strstr(buf, "not the start of an object"),
              "GC_free(%s): wrong message: %s", modes[i], buf);
        CHECK(!strstr(modes[i], "twice") || strstr(buf, "freed twice"),
              "GC_free(%s): wrong message: %s", modes[i], buf);
    }
    st = spawn_case("push_all", buf, sizeof buf);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(buf, "GC_push_all"),
          "GC_push_all outside a collection: status 0x%x, stderr: %s", st, buf);
    st = spawn_case("abortfn", buf, sizeof buf);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
          "with an abort function: status 0x%x, stderr: %s", st, buf);
    CHECK(strstr(buf, "client abort: GC_free") != NULL && !strstr(buf, "sgc: fatal"),
          "the abort function did not replace the message: %s", buf);
    t_note("PASS");
    return 0;
}
