/* threads: thread life cycle under collection.
 *
 *  A. Threads made with pthread_create (redirected to GC_pthread_create by
 *     gc.h under GC_THREADS) and with GC_pthread_create by name; ending by
 *     return and by GC_pthread_exit; joined (GC_pthread_join) or detached
 *     (GC_pthread_detach) -- all while other threads allocate and call
 *     GC_gcollect.  The start argument is a GC object referenced from
 *     nowhere else, and so is each thread's result (read after the join):
 *     both must survive.
 *  B. Foreign threads: created (and joined) by the real pthread functions,
 *     registered with
 *     GC_allow_register_threads + GC_get_stack_base + GC_register_my_thread
 *     (GC_DUPLICATE the second time), unregistered with
 *     GC_unregister_my_thread; their stack references survive collections
 *     while registered.
 *  C. GC_do_blocking: a thread blocked in read() inside GC_do_blocking while
 *     collections happen; its stack references survive; inside the blocking
 *     section GC_call_with_gc_active allocates and collects.
 *  D. GC_get_stack_base from main and from threads is sane.
 *  E. Many threads (THREADS_MANY, default 200) alive at once across
 *     collections.
 *  F. Deep recursion (main thread, a thread with a small stack, a thread on
 *     a program-provided stack) with an object live in every frame.
 *  G. pthread_cancel (GC_pthread_cancel) of threads blocked in read();
 *     collections afterwards still complete.
 *  H. read() in a registered thread is not interrupted (EINTR) by the
 *     collector's stop/restart signals (bdwgc uses SA_RESTART).
 *  I. Threads detached right after their creation, most before they run:
 *     once they have ended, the results they returned are not kept (a
 *     disappearing link to each is cleared).
 */
#define _GNU_SOURCE /* gettid */
#include <pthread.h>

/* The real pthread_create/join, taken before gc.h redirects the names. */
static int real_pthread_create(pthread_t *t, const pthread_attr_t *a,
                               void *(*fn)(void *), void *arg)
{
    return pthread_create(t, a, fn, arg);
}
static int real_pthread_join(pthread_t t, void **res)
{
    return pthread_join(t, res);
}

#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"

#define MAGIC 0x5448524541444f4bULL

typedef struct blob {
    uint64_t magic;
    uint64_t seed;
    size_t n;
    uint64_t w[];
} blob;

static blob *new_blob(uint64_t seed, size_t n)
{
    blob *b = GC_malloc(sizeof(blob) + n * 8);
    CHECK(b != NULL);
    b->magic = MAGIC;
    b->seed = seed;
    b->n = n;
    for (size_t i = 0; i < n; i++)
        b->w[i] = t_mix64(seed * 1000003 + i);
    return b;
}

static void check_blob(const blob *b, uint64_t seed, const char *what)
{
    CHECK(b != NULL, "%s: NULL", what);
    CHECK(b->magic == MAGIC, "%s: magic %llx (object freed?)", what,
          (unsigned long long)b->magic);
    CHECK(b->seed == seed, "%s: seed %llu, want %llu", what,
          (unsigned long long)b->seed, (unsigned long long)seed);
    for (size_t i = 0; i < b->n; i++)
        CHECK(b->w[i] == t_mix64(seed * 1000003 + i),
              "%s: word %zu corrupted", what, i);
}

/* A list kept only in the current thread's stack/registers. */
typedef struct cell {
    struct cell *next;
    uint64_t v;
    char pad[40];
} cell;

static cell *build_list(int n, uint64_t seed)
{
    cell *h = NULL;
    for (int i = 0; i < n; i++) {
        cell *c = GC_malloc(sizeof *c);
        CHECK(c != NULL);
        c->v = t_mix64(seed + (uint64_t)i);
        c->next = h;
        h = c;
    }
    return h;
}

static void check_list(const cell *h, int n, uint64_t seed, const char *what)
{
    for (int i = n - 1; i >= 0; i--) {
        CHECK(h != NULL, "%s: list too short", what);
        CHECK(h->v == t_mix64(seed + (uint64_t)i), "%s: cell %d corrupted",
              what, i);
        h = h->next;
    }
    CHECK(h == NULL, "%s: list too long", what);
}

static _Atomic int stop_background;
static _Atomic long collections_by_threads;

/* ---- background load: allocation and explicit collections --------------- */
static void *background(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    int round = 0;
    while (!atomic_load(&stop_background)) {
        cell *l = build_list(2000, seed + (uint64_t)round);
        for (int i = 0; i < 50; i++)
            CHECK(GC_malloc(100 + (size_t)i * 37) != NULL);
        if (round % 8 == 0) {
            GC_gcollect();
            atomic_fetch_add(&collections_by_threads, 1);
        }
        check_list(l, 2000, seed + (uint64_t)round, "background list");
        round++;
    }
    return NULL;
}

/* ---- A: created / exiting / joined / detached ---------------------------- */
enum { END_RETURN, END_EXIT };
typedef struct targ {
    uint64_t magic;
    uint64_t seed;
    int end_how;
    int detached;
    blob *payload; /* reachable only through this argument object */
} targ;

static _Atomic int detached_done;
#ifndef SGC_VERSION_STRING
/* volatile: the stores must not be optimized away (never read back) */
static void *volatile exit_values[64];
#endif

static void *worker(void *p)
{
    targ *a = p;
    /* A new thread's first free is of NULL: a no-op (GC_free's page
     * cache must not take a fresh thread's empty cache for a hit). */
    GC_free(NULL);
    /* make collections likely before we look at the argument */
    for (int i = 0; i < 3; i++) {
        cell *l = build_list(500, a ? a->seed : 0);
        (void)l;
    }
    CHECK(a->magic == MAGIC, "thread argument object was freed before the "
          "thread read it (magic %llx)", (unsigned long long)a->magic);
    check_blob(a->payload, a->seed, "thread argument's payload");
    cell *mine = build_list(3000, a->seed ^ 0x55);
    if (a->seed % 5 == 0)
        GC_gcollect();
    check_list(mine, 3000, a->seed ^ 0x55, "worker list");
    blob *result = new_blob(a->seed + 1, 64); /* only the thread has it */
    if (a->detached) {
        atomic_fetch_add(&detached_done, 1);
        result = NULL;
    }
    if (a->end_how == END_EXIT) {
#ifndef SGC_VERSION_STRING
        /* bdwgc keeps a returned result alive until the join, but not a
         * GC_pthread_exit() value (it lives only in glibc's descriptor of
         * the dead thread, which bdwgc does not scan), so against bdwgc
         * we keep an extra reference.  sgc must not need it. */
        if (result)
            exit_values[a->seed % 64] = result;
#endif
        GC_pthread_exit(result);
    }
    return result;
}

/* Creates a thread whose argument is referenced only by the new thread.
 * Non-inlined so that no copy stays in the caller's frame. */
T_NOINLINE static int spawn(pthread_t *t, uint64_t seed, int end_how,
                            int detached, int by_name)
{
    targ *a = GC_malloc(sizeof *a);
    CHECK(a != NULL);
    a->magic = MAGIC;
    a->seed = seed;
    a->end_how = end_how;
    a->detached = detached;
    a->payload = new_blob(seed, 32);
    int rc = by_name ? GC_pthread_create(t, NULL, worker, a)
                     : pthread_create(t, NULL, worker, a);
    a = NULL;
    return rc;
}

static void part_a(int rounds)
{
    int detached_started = 0;
    for (int r = 0; r < rounds; r++) {
        enum { K = 6 };
        pthread_t t[K];
        uint64_t seeds[K];
        int detached[K];
        for (int i = 0; i < K; i++) {
            seeds[i] = (uint64_t)(r * K + i) * 7919 + 1;
            detached[i] = (i == K - 1);
            int rc = spawn(&t[i], seeds[i], i % 2 ? END_EXIT : END_RETURN,
                           detached[i], i % 3 == 0);
            CHECK(rc == 0, "pthread_create: %s", strerror(rc));
            if (detached[i]) {
                CHECK(pthread_detach(t[i]) == 0, "pthread_detach failed");
                detached_started++;
            }
        }
        t_clear_stack();
        GC_gcollect();
        for (int i = 0; i < K; i++) {
            if (detached[i])
                continue;
            void *res = NULL;
            int rc = (i % 2) ? GC_pthread_join(t[i], &res)
                             : pthread_join(t[i], &res);
            CHECK(rc == 0, "pthread_join: %s", strerror(rc));
            /* collect before looking at the result: it is referenced only
             * by the collector's record of the dead thread, then by res */
            if (i == 0)
                GC_gcollect();
            char what[80];
            snprintf(what, sizeof what, "thread result after join (thread %d, %s)", i, i % 2 ? "GC_pthread_exit" : "return");
            check_blob(res, seeds[i] + 1, what);
        }
    }
    double t0 = t_now();
    while (atomic_load(&detached_done) < detached_started && t_now() - t0 < 30)
        usleep(1000);
    CHECK(atomic_load(&detached_done) == detached_started,
          "only %d of %d detached threads finished",
          atomic_load(&detached_done), detached_started);
    GC_gcollect(); /* with dead detached threads around */
}

/* ---- B: foreign threads registering themselves --------------------------- */
static _Atomic int foreign_ok;

static void *foreign(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    struct GC_stack_base sb;
    CHECK(GC_thread_is_registered() == 0,
          "thread from the real pthread_create is registered already");
    CHECK(GC_get_stack_base(&sb) == GC_SUCCESS, "GC_get_stack_base failed");
    int local;
    CHECK((char *)sb.mem_base > (char *)&local &&
              (char *)sb.mem_base - (char *)&local < (64 << 20),
          "stack base %p implausible for a local at %p", sb.mem_base,
          (void *)&local);
    int rc = GC_register_my_thread(&sb);
    CHECK(rc == GC_SUCCESS, "GC_register_my_thread returned %d", rc);
    CHECK(GC_thread_is_registered() != 0);
    rc = GC_register_my_thread(&sb);
    CHECK(rc == GC_DUPLICATE, "second GC_register_my_thread returned %d", rc);
    GC_free(NULL); /* the first free of a registered thread, as in worker */

    for (int round = 0; round < 5; round++) {
        cell *l = build_list(4000, seed + (uint64_t)round);
        blob *b = new_blob(seed + (uint64_t)round, 200);
        GC_gcollect();
        for (int i = 0; i < 200; i++)
            CHECK(GC_malloc(1000) != NULL);
        check_list(l, 4000, seed + (uint64_t)round, "foreign thread list");
        check_blob(b, seed + (uint64_t)round, "foreign thread blob");
    }
    rc = GC_unregister_my_thread();
    CHECK(rc == GC_SUCCESS, "GC_unregister_my_thread returned %d", rc);
    atomic_fetch_add(&foreign_ok, 1);
    return NULL;
}

static void part_b(int n)
{
    GC_allow_register_threads();
    pthread_t t[16];
    for (int i = 0; i < n; i++)
        CHECK(real_pthread_create(&t[i], NULL, foreign,
                                  (void *)(intptr_t)(1000 + i)) == 0);
    for (int i = 0; i < n; i++) {
        /* plain join: these threads were not created through the GC */
        CHECK(real_pthread_join(t[i], NULL) == 0);
    }
    CHECK(atomic_load(&foreign_ok) == n, "%d of %d foreign threads ok",
          atomic_load(&foreign_ok), n);
}

/* ---- C: GC_do_blocking / GC_call_with_gc_active -------------------------- */
static int pipefd[2];
static _Atomic int blocked_entered, active_ok;

static void *GC_CALLBACK active_fn(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    cell *l = build_list(3000, seed);
    GC_gcollect();
    check_list(l, 3000, seed, "list built inside GC_call_with_gc_active");
    atomic_fetch_add(&active_ok, 1);
    return (void *)l;
}

static void *GC_CALLBACK blocking_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add(&blocked_entered, 1);
    char c;
    ssize_t r;
    do
        r = read(pipefd[0], &c, 1);
    while (r < 0 && errno == EINTR);
    CHECK(r == 1, "read in GC_do_blocking failed");
    /* back to GC-active mode for a while, still inside the blocking call */
    void *res = GC_call_with_gc_active(active_fn, (void *)(intptr_t)777);
    CHECK(res != NULL);
    return (void *)(intptr_t)42;
}

static void *blocker(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    /* references held only in this frame while we are blocked */
    cell *l = build_list(5000, seed);
    blob *b = new_blob(seed, 500);
    void *r = GC_do_blocking(blocking_fn, NULL);
    CHECK(r == (void *)(intptr_t)42, "GC_do_blocking lost the result");
    check_list(l, 5000, seed, "list referenced from a blocked thread's stack");
    check_blob(b, seed, "blob referenced from a blocked thread's stack");
    return NULL;
}

static void part_c(void)
{
    CHECK(pipe(pipefd) == 0);
    enum { NB = 3 };
    pthread_t t[NB];
    for (int i = 0; i < NB; i++)
        CHECK(pthread_create(&t[i], NULL, blocker,
                             (void *)(intptr_t)(5000 + i)) == 0);
    double t0 = t_now();
    while (atomic_load(&blocked_entered) < NB && t_now() - t0 < 20)
        usleep(1000);
    CHECK(atomic_load(&blocked_entered) == NB);
    usleep(20000);
    /* collections and allocation while they are blocked: they must not
     * hang waiting for the blocked threads, and must not free their data */
    double g0 = t_now();
    for (int i = 0; i < 5; i++) {
        cell *l = build_list(20000, (uint64_t)i);
        (void)l;
        GC_gcollect();
    }
    double dt = t_now() - g0;
    CHECK(write(pipefd[1], "xxx", NB) == NB);
    for (int i = 0; i < NB; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(atomic_load(&active_ok) == NB);
    t_note("5 collections with %d threads blocked took %.3f s", NB, dt);
    close(pipefd[0]);
    close(pipefd[1]);
}

/* ---- E: many threads alive at once ------------------------------------- */
static pthread_barrier_t many_bar;

static void *many_fn(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    cell *l = build_list(200, seed);
    pthread_barrier_wait(&many_bar); /* all alive */
    pthread_barrier_wait(&many_bar); /* main collected meanwhile */
    check_list(l, 200, seed, "list of one of many threads");
    return NULL;
}

static void part_e(int n)
{
    pthread_t *t = malloc((size_t)n * sizeof *t);
    CHECK(t != NULL);
    CHECK(pthread_barrier_init(&many_bar, NULL, (unsigned)n + 1) == 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int i = 0; i < n; i++) {
        int rc = pthread_create(&t[i], &attr, many_fn,
                                (void *)(intptr_t)(90000 + i));
        CHECK(rc == 0, "creating thread %d of %d: %s", i, n, strerror(rc));
    }
    pthread_barrier_wait(&many_bar);
    for (int i = 0; i < 3; i++) {
        cell *l = build_list(5000, 3);
        (void)l;
        GC_gcollect();
    }
    pthread_barrier_wait(&many_bar);
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    pthread_attr_destroy(&attr);
    pthread_barrier_destroy(&many_bar);
    free(t);
}

/* ---- F: custom stacks, deep recursion ------------------------------------ */
/* Recurse `depth` levels with a GC pointer live in every frame; at the
 * bottom collect; on the way back check every frame's object. */
T_NOINLINE static long deep(int depth, uint64_t seed)
{
    volatile char pad[512];
    pad[0] = (char)depth;
    blob *b = new_blob(seed + (uint64_t)depth, 4);
    long r;
    if (depth == 0) {
        for (int i = 0; i < 4; i++) {
            cell *l = build_list(2000, seed);
            (void)l;
        }
        GC_gcollect();
        r = 0;
    } else {
        r = deep(depth - 1, seed) + 1;
    }
    check_blob(b, seed + (uint64_t)depth, "object held by a deep stack frame");
    return r + pad[0] * 0;
}

static void *deep_fn(void *arg)
{
    int depth = (int)(intptr_t)arg;
    CHECK(deep(depth, 4242) == depth);
    return (void *)1;
}

static void part_f(void)
{
    /* main thread: ~1 MiB of stack below us */
    CHECK(deep(1500, 1) == 1500);
    /* a thread with a small explicit stack size */
    pthread_attr_t attr;
    pthread_t t;
    void *res;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 512 * 1024);
    CHECK(pthread_create(&t, &attr, deep_fn, (void *)(intptr_t)300) == 0);
    CHECK(pthread_join(t, &res) == 0 && res == (void *)1);
    pthread_attr_destroy(&attr);
    /* a thread on a stack the program provides */
    size_t sz = 4 << 20;
    void *stk = malloc(sz);
    CHECK(stk != NULL);
    pthread_attr_init(&attr);
    CHECK(pthread_attr_setstack(&attr, stk, sz) == 0);
    CHECK(pthread_create(&t, &attr, deep_fn, (void *)(intptr_t)3000) == 0);
    CHECK(pthread_join(t, &res) == 0 && res == (void *)1);
    pthread_attr_destroy(&attr);
    free(stk);
}

/* ---- G: cancellation ------------------------------------------------------- */
static int cancel_pipe[2];
static _Atomic int cancel_ready;

static void *cancel_fn(void *arg)
{
    (void)arg;
    cell *l = build_list(1000, 8);
    (void)l;
    atomic_fetch_add(&cancel_ready, 1);
    char c;
    for (;;)
        (void)!read(cancel_pipe[0], &c, 1); /* cancellation point */
    return NULL;
}

static void part_g(void)
{
    CHECK(pipe(cancel_pipe) == 0);
    enum { NC = 4 };
    pthread_t t[NC];
    for (int i = 0; i < NC; i++)
        CHECK(pthread_create(&t[i], NULL, cancel_fn, NULL) == 0);
    double t0 = t_now();
    while (atomic_load(&cancel_ready) < NC && t_now() - t0 < 20)
        usleep(1000);
    GC_gcollect();
    for (int i = 0; i < NC; i++) {
        CHECK(pthread_cancel(t[i]) == 0, "pthread_cancel failed");
        void *res;
        CHECK(pthread_join(t[i], &res) == 0);
#ifdef SGC_VERSION_STRING
        CHECK(res == PTHREAD_CANCELED, "thread %d not cancelled: join gave %p",
              i, res);
#else
        /* bdwgc 8.2.2 very rarely (~1 run in 200) reports NULL here */
        CHECK(res == PTHREAD_CANCELED || res == NULL,
              "thread %d not cancelled: join gave %p", i, res);
#endif
    }
    /* the collector must have forgotten the cancelled threads: collections
     * complete (a collector that signals a dead thread hangs or crashes) */
    for (int i = 0; i < 3; i++) {
        cell *l = build_list(5000, (uint64_t)i);
        (void)l;
        GC_gcollect();
    }
    close(cancel_pipe[0]);
    close(cancel_pipe[1]);
}

/* ---- H: system calls are not broken by the collector's signals ---------- */
/* A registered thread (not in GC_do_blocking) blocked in read() while the
 * world is stopped and restarted many times: bdwgc's signal handlers use
 * SA_RESTART, so read() must not fail with EINTR.  Programs written for
 * bdwgc rarely retry on EINTR. */
static int eintr_pipe[2];
static _Atomic int eintr_waiting;

static void *eintr_fn(void *arg)
{
    (void)arg;
    char c = 0;
    atomic_store(&eintr_waiting, 1);
    ssize_t r = read(eintr_pipe[0], &c, 1);
    CHECK(r == 1, "read() in a registered thread returned %zd (%s) while "
          "collections stopped the world: signal handlers need SA_RESTART",
          r, r < 0 ? strerror(errno) : "eof");
    CHECK(c == 'x');
    return NULL;
}

static void part_h(void)
{
    CHECK(pipe(eintr_pipe) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, eintr_fn, NULL) == 0);
    while (!atomic_load(&eintr_waiting))
        usleep(1000);
    usleep(10000);
    for (int i = 0; i < 20; i++)
        GC_gcollect();
    CHECK(write(eintr_pipe[1], "x", 1) == 1);
    CHECK(pthread_join(t, NULL) == 0);
    close(eintr_pipe[0]);
    close(eintr_pipe[1]);
}

enum { DETACHED_N = 40 };
static GC_word detached_links[DETACHED_N]; /* hidden pointers, cleared by the collector */
static _Atomic int detached_tids[DETACHED_N];

static void *detached_result_fn(void *arg)
{
    int i = (int)(intptr_t)arg;
    char *result = GC_MALLOC_ATOMIC(1000);
    CHECK(result != NULL);
    detached_links[i] = GC_HIDE_POINTER(result);
    CHECK(GC_general_register_disappearing_link((void **)&detached_links[i], result) ==
          GC_SUCCESS);
    atomic_store(&detached_tids[i], (int)gettid());
    return result;
}

static void part_i(void)
{
    for (int i = 0; i < DETACHED_N; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, detached_result_fn, (void *)(intptr_t)i) == 0);
        CHECK(pthread_detach(t) == 0);
    }
    /* Until every one has ended for the kernel (its exit path done). */
    for (int i = 0; i < DETACHED_N; i++) {
        for (int w = 0; w < 10000 && !atomic_load(&detached_tids[i]); w++)
            usleep(1000);
        char task[64];
        snprintf(task, sizeof task, "/proc/self/task/%d", atomic_load(&detached_tids[i]));
        for (int w = 0; w < 10000 && access(task, F_OK) == 0; w++)
            usleep(1000);
        CHECK(access(task, F_OK) != 0, "detached thread %d has not ended", i);
    }
    t_clear_stack();
    for (int i = 0; i < 3; i++)
        GC_gcollect();
    int kept = 0;
    for (int i = 0; i < DETACHED_N; i++)
        kept += detached_links[i] != 0;
    /* A stale word on a stack may keep one or two; the records of
     * threads detached before they ran kept them all. */
    CHECK(kept <= DETACHED_N / 10, "%d of %d detached threads' results kept", kept, DETACHED_N);
    t_note("I: %d of %d results of threads detached at creation kept", kept, DETACHED_N);
}

int main(void)
{
    t_test_name = "threads";
    GC_INIT();
    struct GC_stack_base sb;
    CHECK(GC_get_stack_base(&sb) == GC_SUCCESS);
    int local;
    CHECK((char *)sb.mem_base > (char *)&local,
          "main stack base %p below a local %p", sb.mem_base, (void *)&local);
    CHECK(GC_thread_is_registered() != 0, "main thread not registered");

    int rounds = (int)t_env_long("THREADS_ROUNDS", 100);
    enum { NBG = 2 };
    pthread_t bg[NBG];
    for (int i = 0; i < NBG; i++)
        CHECK(pthread_create(&bg[i], NULL, background,
                             (void *)(intptr_t)(i * 100000)) == 0);

    double t0 = t_now();
    part_a(rounds);
    double t1 = t_now();
    part_b(4);
    double t2 = t_now();
    part_c();
    double t3 = t_now();
    part_e((int)t_env_long("THREADS_MANY", 200));
    double t4 = t_now();
    part_f();
    part_g();
    part_h();
    part_i();
    double t5 = t_now();

    atomic_store(&stop_background, 1);
    for (int i = 0; i < NBG; i++)
        CHECK(pthread_join(bg[i], NULL) == 0);
    t_note("A %.2f s, B %.2f s, C %.2f s, E %.2f s, F-H %.2f s; %ld "
           "collections by background threads; gc_no %lu",
           t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4,
           atomic_load(&collections_by_threads),
           (unsigned long)GC_get_gc_no());
    t_note("PASS");
    return 0;
}
