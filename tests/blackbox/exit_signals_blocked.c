/* exit_signals_blocked: (sgc only) a thread that leaves with every signal
 * blocked is not waited for.
 *
 * sgc keeps an exiting thread registered through the other libraries'
 * thread-exit destructors (bb_exit_destructors), so collections stop it
 * there -- by a signal.  A thread that blocked every signal before it
 * returned cannot take that signal: sgc's destructor must then unregister
 * it at once, or a collection waits for it.  Here the worker blocks all
 * signals and returns; its key's destructor (a key made after GC_INIT,
 * so it runs after sgc's) waits for the main thread to finish a
 * collection.  Were the worker still registered, the collection would
 * wait for the worker and the worker for the collection: the destructor
 * gives up after 5 s and the run fails.  bdwgc keeps such a thread
 * registered and would wait forever, so this runs on sgc only. */
#define GC_THREADS
#define GC_NO_THREAD_REDIRECTS
#include "gc.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"

static pthread_key_t key;
static _Atomic int waiting, collected, gave_up;

static void destructor(void *value) {
    (void)value;
    atomic_store(&waiting, 1);
    for (int i = 0; i < 5000 && !atomic_load(&collected); i++)
        usleep(1000);
    if (!atomic_load(&collected))
        atomic_store(&gave_up, 1);
}

static void *worker_main(void *arg) {
    (void)arg;
    struct GC_stack_base sb;
    CHECK(GC_get_stack_base(&sb) == GC_SUCCESS);
    CHECK(GC_register_my_thread(&sb) == GC_SUCCESS);
    CHECK(GC_MALLOC(64) != NULL);
    sigset_t all;
    sigfillset(&all);
    CHECK(pthread_sigmask(SIG_BLOCK, &all, NULL) == 0);
    CHECK(pthread_setspecific(key, (void *)1) == 0);
    return NULL; /* exits registered, signals blocked */
}

int main(void) {
    t_test_name = "exit_signals_blocked";
    GC_INIT();
    GC_allow_register_threads();
    CHECK(pthread_key_create(&key, destructor) == 0);
    for (int round = 0; round < 5; round++) {
        atomic_store(&waiting, 0);
        atomic_store(&collected, 0);
        pthread_t th;
        CHECK(pthread_create(&th, NULL, worker_main, NULL) == 0);
        while (!atomic_load(&waiting))
            usleep(100);
        GC_gcollect();
        atomic_store(&collected, 1);
        CHECK(pthread_join(th, NULL) == 0);
        CHECK(!atomic_load(&gave_up),
              "round %d: the collection waited for a thread exiting with signals blocked", round);
    }
    t_note("PASS");
    return 0;
}
