/* backptr_threads: GC_get_back_ptr_info finds what threads hold the way
 * the collection finds it (collect/thread_roots.c), not only in stacks:
 *   k: an object only a pthread_setspecific value holds, under a key past
 *      glibc's first 32 (its value lies in a block glibc mallocs), of a
 *      thread asleep;
 *   r: an object only the result of an exited, unjoined thread holds.
 * Each must be answered as held from a root outside the asking thread's
 * stack (which may hold a copy of the pointer asked about).  Before the
 * back-pointer search and the root push shared one walk, k and r were
 * found unreferenced (or in the caller's stack) though the collection
 * kept them. */
#define _GNU_SOURCE 1
#define GC_DEBUG 1
#define GC_THREADS 1
#include <gc.h>
#include <gc/gc_backptr.h>

#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

enum { KEYS = 40 };

static pthread_key_t keys[KEYS];
static GC_hidden_pointer k_hidden, r_hidden;
static atomic_int keeper_ready, keeper_release, result_tid;

static T_NOINLINE void *keeper(void *arg)
{
    (void)arg;
    for (int i = 0; i < KEYS; i++) CHECK(pthread_key_create(&keys[i], NULL) == 0);
    void *k = GC_MALLOC(64);
    CHECK(k);
    CHECK(pthread_setspecific(keys[KEYS - 1], k) == 0);
    k_hidden = GC_HIDE_POINTER(k);
    k = NULL;
    atomic_store(&keeper_ready, 1);
    struct timespec tick = {0, 1000000};
    while (!atomic_load(&keeper_release)) nanosleep(&tick, NULL);
    CHECK(GC_REVEAL_POINTER(k_hidden) == pthread_getspecific(keys[KEYS - 1]));
    return NULL;
}

static T_NOINLINE void *returner(void *arg)
{
    (void)arg;
    void *r = GC_MALLOC(64);
    CHECK(r);
    r_hidden = GC_HIDE_POINTER(r);
    atomic_store(&result_tid, (int)syscall(SYS_gettid));
    return r;
}

/* The main thread's stack, from its limit to its end. */
static void main_stack(uintptr_t *lo, uintptr_t *hi)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    CHECK(pthread_getattr_np(pthread_self(), &attr) == 0);
    CHECK(pthread_attr_getstack(&attr, &addr, &size) == 0);
    pthread_attr_destroy(&attr);
    *lo = (uintptr_t)addr;
    *hi = *lo + size;
}

static T_NOINLINE void expect_held_from_root(const char *name, GC_hidden_pointer h)
{
    void *base = NULL;
    size_t offset = 12345;
    GC_ref_kind k = GC_get_back_ptr_info(GC_REVEAL_POINTER(h), &base, &offset);
    uintptr_t lo, hi;
    main_stack(&lo, &hi);
    CHECK(k == GC_REFD_FROM_ROOT, "%s: kind %d, want GC_REFD_FROM_ROOT (%d)", name, (int)k,
          (int)GC_REFD_FROM_ROOT);
    CHECK((uintptr_t)base < lo || (uintptr_t)base >= hi,
          "%s: answered from the asking thread's stack (%p), not where a thread holds it", name,
          base);
}

int main(void)
{
    t_test_name = "backptr_threads";
    GC_INIT();
    pthread_t kt, rt;
    CHECK(pthread_create(&kt, NULL, keeper, NULL) == 0);
    CHECK(pthread_create(&rt, NULL, returner, NULL) == 0);
    while (!atomic_load(&keeper_ready)) sched_yield();
    while (!atomic_load(&result_tid)) sched_yield();
    char task[64];
    snprintf(task, sizeof task, "/proc/self/task/%d", atomic_load(&result_tid));
    struct stat st;
    while (stat(task, &st) == 0) sched_yield(); /* the returner has exited */

    GC_gcollect();
    expect_held_from_root("k (a pthread_setspecific value)", k_hidden);
    expect_held_from_root("r (an unjoined thread's result)", r_hidden);

    atomic_store(&keeper_release, 1);
    CHECK(pthread_join(kt, NULL) == 0);
    void *r;
    CHECK(pthread_join(rt, &r) == 0);
    CHECK(r == GC_REVEAL_POINTER(r_hidden), "the result changed");
    printf("backptr_threads: ok\n");
    return 0;
}
