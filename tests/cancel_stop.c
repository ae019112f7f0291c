/* cancel_stop: pthread_cancel of a thread blocked in read() while other
 * threads' collections keep stopping the world.
 *
 * A cancellation signal that arrives while the target sits in the
 * collector's suspend handler must still cancel it once the world
 * restarts.  Under glibc 2.41 it did not: glibc looked at where its signal
 * interrupted the thread, found the handler's futex wait, did nothing, and
 * the read() restarted past the cancellation check (bb_threads' part G
 * hung under Debian 13's glibc, 4 runs in 10 beside two busy loops).  A
 * background thread collects a heap of a few MiB back to back, so the
 * world is stopped for much of the time, and each round cancels one
 * blocked thread and requires it gone within CANCEL_WAIT_S seconds.
 *
 * With sgc the suspend handler's kernel mask must also hold glibc's
 * cancellation signal (the kernel's signal 32): that is how the signal is
 * kept back until the handler returns.
 *
 *   CANCEL_ROUNDS   threads cancelled (default 60)
 *   CANCEL_WAIT_S   seconds a cancellation may take (default 10)
 */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

typedef struct node {
    struct node *next;
    uint64_t payload[6];
} node;

static _Atomic int stop_collecting;
static _Atomic long background_collections;

/* Collections one after the other over a live list of a few MiB: the
 * stops. */
static void *collector(void *arg)
{
    (void)arg;
    node *head = NULL;
    for (int i = 0; i < 60000; i++) {
        node *n = GC_NEW(node);
        CHECK(n != NULL);
        n->next = head;
        n->payload[0] = (uint64_t)i;
        head = n;
    }
    while (!atomic_load(&stop_collecting)) {
        GC_gcollect();
        atomic_fetch_add(&background_collections, 1);
        /* Back to back, the collections starve the other threads of the
         * collector's locks (a thread's start and exit waited up to 1.5 s
         * on the Intel VM): a short pause lets them in. */
        usleep(100);
    }
    long i = 60000;
    for (node *n = head; n; n = n->next)
        CHECK(n->payload[0] == (uint64_t)--i, "list node %ld damaged", i);
    return NULL;
}

static int block_pipe[2];
static _Atomic int in_read, cleaned_up;

static void note_cleanup(void *arg)
{
    (void)arg;
    atomic_store(&cleaned_up, 1);
}

static void *blocked_reader(void *arg)
{
    (void)arg;
    pthread_cleanup_push(note_cleanup, NULL);
    atomic_store(&in_read, 1);
    char c;
    for (;;)
        (void)!read(block_pipe[0], &c, 1); /* a cancellation point */
    pthread_cleanup_pop(0);
    return NULL;
}

#ifdef SGC_VERSION_STRING
/* The handler's mask as the kernel holds it (x86-64 layout). */
static void check_handler_mask(void)
{
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } ks;
    CHECK(syscall(SYS_rt_sigaction, GC_get_suspend_signal(), NULL, &ks,
                  sizeof ks.mask) == 0);
    CHECK(ks.mask & (1ull << (32 - 1)),
          "glibc's cancellation signal (32) is not blocked in the suspend "
          "handler (kernel mask %#llx)", (unsigned long long)ks.mask);
}
#endif

int main(void)
{
    t_test_name = "cancel_stop";
    GC_INIT();
#ifdef SGC_VERSION_STRING
    check_handler_mask();
#endif
    int rounds = (int)t_env_long("CANCEL_ROUNDS", 60);
    double wait_s = (double)t_env_long("CANCEL_WAIT_S", 10);
    CHECK(pipe(block_pipe) == 0);
    pthread_t bg;
    CHECK(pthread_create(&bg, NULL, collector, NULL) == 0);
    while (atomic_load(&background_collections) < 2)
        usleep(1000);

    double start_worst = 0, cancel_worst = 0;
    for (int r = 0; r < rounds; r++) {
        atomic_store(&in_read, 0);
        atomic_store(&cleaned_up, 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, blocked_reader, NULL) == 0);
        double c0 = t_now();
        while (!atomic_load(&in_read))
            usleep(100);
        start_worst = start_worst > t_now() - c0 ? start_worst : t_now() - c0;
        /* vary where in a collection the cancellation lands */
        usleep((useconds_t)(1000 + (r * 1237) % 5000));
        CHECK(pthread_cancel(t) == 0);
        double t0 = t_now();
        while (!atomic_load(&cleaned_up) && t_now() - t0 < wait_s)
            usleep(1000);
        cancel_worst = cancel_worst > t_now() - t0 ? cancel_worst : t_now() - t0;
        CHECK(atomic_load(&cleaned_up),
              "round %d: a thread blocked in read() was not cancelled %.0f s "
              "after pthread_cancel, with collections stopping the world",
              r, wait_s);
        void *res;
        CHECK(pthread_join(t, &res) == 0);
        CHECK(res == PTHREAD_CANCELED, "round %d: join gave %p", r, res);
    }
    atomic_store(&stop_collecting, 1);
    CHECK(pthread_join(bg, NULL) == 0);
    close(block_pipe[0]);
    close(block_pipe[1]);
    t_note("%d threads cancelled during %ld background collections; at worst "
           "%.3f s to start one, %.3f s to cancel one", rounds,
           atomic_load(&background_collections), start_worst, cancel_worst);
    t_note("PASS");
    return 0;
}
