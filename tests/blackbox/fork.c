/* fork: a multithreaded GC program forks (from the main thread and from a
 * secondary thread) while its other threads allocate and collect.  The child
 * -- which has only the forking thread -- verifies the data it inherited,
 * allocates, collects, starts and joins a thread of its own, verifies again
 * and exits 0.  The parent checks the child's status and keeps going.
 * The threads also allocate typed objects, so the child inherits other
 * threads' caches of them (sgc keeps those per thread) and must hand out
 * clean, distinct typed objects all the same.  Last, a child forked while
 * another thread holds uncollectable objects it freed gets them back.
 *
 * A child that deadlocks (e.g. on a collector lock held by a thread that
 * does not exist in the child) is killed by alarm() and reported.
 */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"
#include "gc/gc_typed.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

typedef struct cell {
    struct cell *next;
    uint64_t v;
    char *blob; /* atomic, pattern-filled, sometimes large */
    size_t blob_len;
} cell;

static cell *shared_list; /* .bss root */
#define SHARED_N 20000

static cell *build(int n, uint64_t seed)
{
    cell *h = NULL;
    for (int i = 0; i < n; i++) {
        cell *c = GC_malloc(sizeof *c);
        CHECK(c != NULL);
        c->v = t_mix64(seed + (uint64_t)i);
        c->blob_len = (i % 500 == 0) ? 100000 : 8 + (size_t)(c->v % 100);
        c->blob = GC_malloc_atomic(c->blob_len);
        CHECK(c->blob != NULL);
        for (size_t k = 0; k < c->blob_len; k++)
            c->blob[k] = (char)(c->v >> (8 * (k % 8)));
        c->next = h;
        h = c;
    }
    return h;
}

/* returns NULL if fine, else a description */
static const char *verify(const cell *h, int n, uint64_t seed)
{
    for (int i = n - 1; i >= 0; i--) {
        if (!h)
            return "list too short";
        if (h->v != t_mix64(seed + (uint64_t)i))
            return "cell value corrupted";
        for (size_t k = 0; k < h->blob_len; k++)
            if (h->blob[k] != (char)(h->v >> (8 * (k % 8))))
                return "blob corrupted";
        h = h->next;
    }
    return h ? "list too long" : NULL;
}

static _Atomic int stop;
static GC_descr typed_descr; /* word 1 may be a pointer */

/* N typed objects, each handed out zeroed and kept until a collection
 * has run; NULL, or what went wrong. */
static const char *typed_churn(int n, uint64_t seed)
{
    GC_word **objs = GC_malloc((size_t)n * sizeof *objs);
    if (!objs)
        return "GC_malloc failed";
    for (int i = 0; i < n; i++) {
        objs[i] = GC_malloc_explicitly_typed(3 * sizeof(GC_word), typed_descr);
        if (!objs[i])
            return "GC_malloc_explicitly_typed failed";
        if (objs[i][0] || objs[i][1] || objs[i][2])
            return "a typed object was handed out dirty";
        objs[i][0] = (GC_word)t_mix64(seed + (uint64_t)i);
        objs[i][2] = ~objs[i][0];
    }
    GC_gcollect();
    for (int i = 0; i < n; i++)
        if (objs[i][0] != (GC_word)t_mix64(seed + (uint64_t)i) || objs[i][2] != ~objs[i][0])
            return "a typed object was handed out twice";
    return NULL;
}

static void *mutator(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    for (int r = 0; !atomic_load(&stop); r++) {
        cell *l = build(3000, seed + (uint64_t)r);
        if (r % 4 == 0)
            GC_gcollect();
        const char *e = verify(l, 3000, seed + (uint64_t)r);
        CHECK(e == NULL, "mutator: %s", e);
        if (r % 4 == 1) {
            e = typed_churn(500, seed ^ (uint64_t)r);
            CHECK(e == NULL, "mutator: %s", e);
        }
    }
    return NULL;
}

static void *child_thread(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    cell *l = build(5000, seed);
    GC_gcollect();
    return verify(l, 5000, seed) ? NULL : l;
}

/* Everything the child does; returns its exit status. */
static int child_main(uint64_t seed)
{
    alarm(60); /* a deadlocked child must not hang the test */
    const char *e = verify(shared_list, SHARED_N, 1);
    if (e) {
        fprintf(stderr, "fork child: inherited list: %s\n", e);
        return 1;
    }
    cell *mine = build(20000, seed);
    if ((e = typed_churn(3000, seed + 5))) {
        fprintf(stderr, "fork child: %s\n", e);
        return 1;
    }
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 2000; k++)
            if (!GC_malloc(1000 + (size_t)k)) {
                fprintf(stderr, "fork child: GC_malloc failed\n");
                return 1;
            }
        GC_gcollect();
    }
    pthread_t t;
    if (pthread_create(&t, NULL, child_thread, (void *)(intptr_t)(seed + 9))) {
        fprintf(stderr, "fork child: pthread_create failed\n");
        return 1;
    }
    void *res = NULL;
    if (pthread_join(t, &res) || !res) {
        fprintf(stderr, "fork child: thread failed\n");
        return 1;
    }
    GC_gcollect();
    if ((e = verify(mine, 20000, seed)) || (e = verify(res, 5000, seed + 9)) ||
        (e = verify(shared_list, SHARED_N, 1))) {
        fprintf(stderr, "fork child: after collections: %s\n", e);
        return 1;
    }
    return 0;
}

static void do_fork(int k, const char *who)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0)
        _exit(child_main(1000 + (uint64_t)k));
    int st;
    while (waitpid(pid, &st, 0) < 0)
        CHECK(errno == EINTR, "waitpid: %s", strerror(errno));
    CHECK(!(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM),
          "fork child %d (forked by %s) hung (killed by alarm after 60 s)", k,
          who);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "fork child %d (forked by %s) failed: %s %d", k, who,
          WIFSIGNALED(st) ? "signal" : "exit status",
          WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

static void *forking_thread(void *arg)
{
    int n = (int)(intptr_t)arg;
    for (int k = 0; k < n; k++) {
        cell *l = build(2000, 77 + (uint64_t)k);
        do_fork(100 + k, "a secondary thread");
        const char *e = verify(l, 2000, 77 + (uint64_t)k);
        CHECK(e == NULL, "forking thread after fork: %s", e);
    }
    return NULL;
}

/* A thread holding freed uncollectable objects (sgc keeps them in a cache
 * of its own) while another forks: the child, which has no such thread,
 * must get them back rather than lose them for good (uncollectable pages
 * are never swept).  The holder records their addresses. */
enum { HELD = 64, HELD_BYTES = 96 };
static void *held[HELD];
static _Atomic int holder_ready, holder_release;

static void *holder(void *arg)
{
    (void)arg;
    for (int i = 0; i < HELD; i++)
        CHECK((held[i] = GC_MALLOC_UNCOLLECTABLE(HELD_BYTES)) != NULL);
    for (int i = 0; i < HELD; i++)
        GC_FREE(held[i]);
    atomic_store(&holder_ready, 1);
    while (!atomic_load(&holder_release))
        usleep(1000);
    return NULL;
}

static int child_reuses_held(void)
{
    int found = 0;
    for (int i = 0; i < 2 * HELD; i++) {
        void *p = GC_MALLOC_UNCOLLECTABLE(HELD_BYTES);
        if (!p)
            return 1;
        for (int j = 0; j < HELD; j++)
            found += p == held[j];
    }
#ifdef SGC_VERSION_STRING
    if (found < HELD / 2) {
        fprintf(stderr, "FAIL [fork] the child reused %d of %d objects another thread had "
                        "freed\n", found, HELD);
        return 1;
    }
#endif
    printf("[fork] the child reused %d of %d uncollectable objects a lost thread held\n",
           found, HELD);
    fflush(stdout);
    return 0;
}

static void fork_beside_holder(void)
{
    pthread_t h;
    CHECK(pthread_create(&h, NULL, holder, NULL) == 0);
    while (!atomic_load(&holder_ready))
        usleep(1000);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0)
        _exit(child_reuses_held());
    int st;
    while (waitpid(pid, &st, 0) < 0)
        CHECK(errno == EINTR, "waitpid: %s", strerror(errno));
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child beside a holder of freed objects failed");
    atomic_store(&holder_release, 1);
    CHECK(pthread_join(h, NULL) == 0);
}

int main(void)
{
    t_test_name = "fork";
    GC_INIT();
    {
        GC_word bitmap[1] = {0};
        GC_set_bit(bitmap, 1);
        typed_descr = GC_make_descriptor(bitmap, 3);
    }
    shared_list = build(SHARED_N, 1);

    int nforks = (int)t_env_long("FORK_ROUNDS", 6);
    enum { NM = 3 };
    pthread_t m[NM];
    for (int i = 0; i < NM; i++)
        CHECK(pthread_create(&m[i], NULL, mutator,
                             (void *)(intptr_t)(i * 100000)) == 0);
    usleep(50000);

    for (int k = 0; k < nforks; k++) {
        do_fork(k, "the main thread");
        /* the parent goes on */
        cell *l = build(5000, 500 + (uint64_t)k);
        GC_gcollect();
        const char *e = verify(l, 5000, 500 + (uint64_t)k);
        CHECK(e == NULL, "parent after fork: %s", e);
    }
    pthread_t ft;
    CHECK(pthread_create(&ft, NULL, forking_thread,
                         (void *)(intptr_t)(nforks / 2 + 1)) == 0);
    CHECK(pthread_join(ft, NULL) == 0);

    atomic_store(&stop, 1);
    for (int i = 0; i < NM; i++)
        CHECK(pthread_join(m[i], NULL) == 0);
    const char *e = verify(shared_list, SHARED_N, 1);
    CHECK(e == NULL, "parent's shared list at the end: %s", e);
    fork_beside_holder();
    t_note("%d forks from main, %d from a thread; gc_no %lu", nforks,
           nforks / 2 + 1, (unsigned long)GC_get_gc_no());
    t_note("PASS");
    return 0;
}
