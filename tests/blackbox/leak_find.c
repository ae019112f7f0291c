/* leak_find: bdwgc's leak-finding mode (GC_set_find_leak, GC_FIND_LEAK,
 * leak_detector.h).  Each case runs in a child (spawn_case.h) whose
 * stderr the parent reads, counting the leaks reported:
 *  - leaktest: bdwgc's leaktest shape, malloc and free through
 *    leak_detector.h: ten objects, nine freed, nine more allocated over
 *    the array, so the first one is dropped without free: exactly one
 *    leak, reported once (four collections), with this file and the line
 *    that allocated it;
 *  - threads: bdwgc's threadleaktest shape: five threads each leak one of
 *    their ten objects: five leaks, each with its line;
 *  - env: the leaktest case with GC_FIND_LEAK set in the environment
 *    instead of GC_set_find_leak;
 *  - at_exit: one object dropped and no CHECK_LEAKS: the collection leak
 *    mode runs at exit (as bdwgc's) reports it;
 *  - off: the same program without leak mode reports nothing;
 *  - GC_ABORT_ON_LEAK set: the leaktest case aborts after its report.
 * Before, sgc accepted GC_set_find_leak with a warning and found nothing. */
#define GC_THREADS 1
/* First, as in bdwgc's leaktest: it defines GC_DEBUG before gc.h. */
#include <gc/leak_detector.h>

#include "common.h"
#include "spawn_case.h"

enum { OBJECTS = 10, THREADS = 5 };
static char *kept[OBJECTS];
static int first_line; /* the line of the first loop's malloc */

/* Deeper frames, so the dropped pointer lingers in none of main's. */
static T_NOINLINE void first_round(void)
{
    for (int i = 0; i < OBJECTS; ++i) {
        first_line = __LINE__ + 1;
        kept[i] = (char *)malloc(sizeof(int) + i);
    }
}

static T_NOINLINE void second_round(void)
{
    for (int i = 1; i < OBJECTS; ++i) free(kept[i]);
    for (int i = 0; i < OBJECTS - 1; ++i) kept[i] = (char *)malloc(sizeof(int) + i);
}

/* Overwrites the stack below the caller's frame and the registers the
 * rounds used, so only the array holds the objects. */
static T_NOINLINE void clear_stack(void)
{
    volatile char junk[16384];
    memset((char *)junk, 0, sizeof junk);
}

static void leaktest(void)
{
    first_round();
    clear_stack();
    CHECK_LEAKS();
    second_round();
    clear_stack();
    CHECK_LEAKS();
    CHECK_LEAKS();
    CHECK_LEAKS();
    fprintf(stderr, "line %d\n", first_line);
}

static int thread_line;

static void *leaking_thread(void *arg)
{
    (void)arg;
    int *p[OBJECTS];
    for (int i = 0; i < OBJECTS; ++i) {
        thread_line = __LINE__ + 1;
        p[i] = (int *)malloc(sizeof(int) + i);
    }
    CHECK_LEAKS();
    for (int i = 1; i < OBJECTS; ++i) free(p[i]);
    return NULL;
}

static void threadleaktest(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) CHECK(pthread_create(&t[i], NULL, leaking_thread, NULL) == 0);
    for (int i = 0; i < THREADS; ++i) CHECK(pthread_join(t[i], NULL) == 0);
    clear_stack();
    CHECK_LEAKS();
    CHECK_LEAKS();
    CHECK_LEAKS();
    fprintf(stderr, "line %d\n", thread_line);
}

static int exit_line;

static T_NOINLINE void drop_one(void)
{
    exit_line = __LINE__ + 1;
    char *volatile p = (char *)malloc(100);
    p[0] = 1;
}

static int run_case(const char *mode)
{
    if (strcmp(mode, "env") != 0 && strcmp(mode, "off") != 0) GC_set_find_leak(1);
    GC_INIT();
    if (!strcmp(mode, "threads")) {
        threadleaktest();
    } else if (!strcmp(mode, "at_exit")) {
        drop_one();
        clear_stack();
        fprintf(stderr, "line %d\n", exit_line);
    } else {
        leaktest();
    }
    return 0;
}


static void expect_leaks(const char *mode, int leaks)
{
    static char buf[65536];
    int st = spawn_case(mode, buf, sizeof buf);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %s: status 0x%x, stderr: %s", mode, st, buf);
    char where[256];
    t_report_site(buf, __FILE__, where, sizeof where);
    int found = t_occurrences(buf, where), any = t_occurrences(buf, " leaked objects:");
    t_note("%s: %d leaks reported at %s (%d reports)\n", mode, found, where, any);
    CHECK(found == leaks, "case %s: %d leaks at %s reported, %d expected: %s", mode, found, where,
          leaks, buf);
    CHECK(t_occurrences(buf, "sz=") == leaks, "case %s: other objects reported: %s", mode, buf);
}

/* GC_ABORT_ON_LEAK set: the leaktest case aborts once its leak is
 * reported, as bdwgc does. */
static void expect_abort(void)
{
    static char buf[65536];
    setenv("GC_ABORT_ON_LEAK", "1", 1);
    int st = spawn_case("leaktest", buf, sizeof buf);
    unsetenv("GC_ABORT_ON_LEAK");
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "GC_ABORT_ON_LEAK: status 0x%x, stderr: %s",
          st, buf);
    CHECK(strstr(buf, "Found 1 leaked objects"), "GC_ABORT_ON_LEAK: no report before: %s", buf);
}

int main(int argc, char **argv)
{
    t_test_name = "leak_find";
    if (argc > 1)
        return run_case(argv[1]);
    expect_leaks("leaktest", 1);
    expect_leaks("threads", THREADS);
    expect_leaks("at_exit", 1);
    setenv("GC_FIND_LEAK", "1", 1);
    expect_leaks("env", 1);
    unsetenv("GC_FIND_LEAK");
    expect_leaks("off", 0);
    expect_abort();
    t_note("PASS\n");
    return 0;
}
