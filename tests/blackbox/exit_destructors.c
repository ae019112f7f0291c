/* exit_destructors: a thread's own thread-exit destructors run while the
 * collector still knows the thread.
 *
 * Guile 3.0 creates its threads with plain pthread_create, registers them
 * with GC_register_my_thread, and at exit runs a pthread key destructor
 * that frees the thread's VM stack (which a mark procedure of its thread
 * objects reads, and gives back to the OS with madvise) and only then
 * calls GC_unregister_my_thread.  bdwgc keeps such a thread registered --
 * stopped by collections, its stack scanned -- until that call.  sgc used
 * to unregister it at its own key's destructor, which glibc runs first
 * (its key was made first): the program's destructor then ran beside
 * collections, and Guile's `threads` program crashed about once in 170
 * to 500 runs with 4 GC threads (a mark procedure gave back pages of a
 * stack another thread had just mapped there).
 *
 * Here each worker, created and registered that way, keeps an object
 * referenced only by the value of a pthread key made after GC_INIT.  The
 * key's destructor, holding that object only in its frame, checks the
 * thread is registered, waits while another thread allocates objects of
 * the same size and collects several times, checks the object is intact,
 * and unregisters.  A thread the collector had forgotten would see its
 * object collected and reused.
 *
 *   EXIT_DESTRUCTOR_THREADS (default 12): workers, one after another. */
/* The thread API, without pthread_create redirected: workers are created
 * the way Guile creates them. */
#define GC_THREADS
#define GC_NO_THREAD_REDIRECTS
#include "gc.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "common.h"

enum { OBJECT_WORDS = 64, COLLECTIONS = 3 };
static pthread_key_t key;
static _Atomic int in_destructor, destructor_done, stop_churn;
static _Atomic int unregistered_in_destructor, damaged_words;

static uint64_t pattern(int worker, int i) {
    return 0x5eed000000000000ull ^ ((uint64_t)worker << 20) ^ (uint64_t)i;
}

static void destructor(void *value) {
    uint64_t *object = value;
    int worker = (int)((object[0] ^ pattern(0, 0)) >> 20);
    if (!GC_thread_is_registered())
        atomic_fetch_add(&unregistered_in_destructor, 1);
    GC_word start = GC_get_gc_no();
    atomic_store(&in_destructor, 1);
    /* No allocation here: that would register a forgotten thread again. */
    time_t deadline = time(NULL) + 20;
    while (GC_get_gc_no() < start + COLLECTIONS && time(NULL) < deadline)
        sched_yield();
    int damaged = 0;
    for (int i = 0; i < OBJECT_WORDS; i++)
        damaged += object[i] != pattern(worker, i);
    atomic_fetch_add(&damaged_words, damaged);
    atomic_store(&in_destructor, 0);
    GC_unregister_my_thread();
    atomic_store(&destructor_done, 1);
}

static T_NOINLINE void give_key_an_object(int worker) {
    uint64_t *object = GC_MALLOC(OBJECT_WORDS * sizeof *object);
    CHECK(object != NULL);
    for (int i = 0; i < OBJECT_WORDS; i++)
        object[i] = pattern(worker, i);
    CHECK(pthread_setspecific(key, object) == 0);
}

static void *worker_main(void *arg) {
    struct GC_stack_base sb;
    CHECK(GC_get_stack_base(&sb) == GC_SUCCESS);
    CHECK(GC_register_my_thread(&sb) == GC_SUCCESS);
    give_key_an_object((int)(intptr_t)arg);
    /* Leaves the only reference in the key's value, which the collector
     * does not scan: from here on the object lives as long as the
     * destructor's frame is scanned. */
    return NULL;
}

/* Allocates objects of the worker's size, patterned otherwise, and
 * collects while a destructor waits: a collected object is reused. */
static void *churn_main(void *arg) {
    (void)arg;
    struct GC_stack_base sb;
    CHECK(GC_get_stack_base(&sb) == GC_SUCCESS);
    CHECK(GC_register_my_thread(&sb) == GC_SUCCESS);
    while (!atomic_load(&stop_churn)) {
        if (!atomic_load(&in_destructor)) {
            sched_yield();
            continue;
        }
        for (int n = 0; n < 2000; n++) {
            uint64_t *o = GC_MALLOC(OBJECT_WORDS * sizeof *o);
            CHECK(o != NULL);
            memset(o, 0xc3, OBJECT_WORDS * sizeof *o);
        }
        GC_gcollect();
    }
    GC_unregister_my_thread();
    return NULL;
}

int main(void) {
    t_test_name = "exit_destructors";
    GC_INIT();
    GC_allow_register_threads();
    int workers = (int)t_env_long("EXIT_DESTRUCTOR_THREADS", 12);
    CHECK(pthread_key_create(&key, destructor) == 0);
    pthread_t churn;
    CHECK(pthread_create(&churn, NULL, churn_main, NULL) == 0);
    for (int w = 0; w < workers; w++) {
        atomic_store(&destructor_done, 0);
        pthread_t th;
        CHECK(pthread_create(&th, NULL, worker_main, (void *)(intptr_t)w) == 0);
        CHECK(pthread_join(th, NULL) == 0);
        CHECK(atomic_load(&destructor_done), "worker %d's destructor did not run", w);
    }
    atomic_store(&stop_churn, 1);
    CHECK(pthread_join(churn, NULL) == 0);
    t_note("%d workers: %d destructors ran unregistered, %d words damaged; %lu collections",
           workers, atomic_load(&unregistered_in_destructor), atomic_load(&damaged_words),
           (unsigned long)GC_get_gc_no());
    CHECK(atomic_load(&unregistered_in_destructor) == 0,
          "the thread was no longer registered in its own key's destructor");
    CHECK(atomic_load(&damaged_words) == 0,
          "an object held only by a thread-exit destructor's frame was collected");
    t_note("PASS");
    return 0;
}
