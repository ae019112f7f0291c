/* debug_smash: bdwgc's debugging allocation (GC_DEBUG).  Each case runs
 * in a child (spawn_case.h); the parent reads its stderr:
 *  - smashtest: bdwgc's smashtest shape: 7000 objects of 40 bytes, one
 *    written 2 bytes past its end; the collections after it report that
 *    object and no other, with this file and its line (each collection
 *    again, as bdwgc's do);
 *  - free_smashed: GC_FREE of an object written past its end says so;
 *  - double_free: a second GC_FREE of an object is reported, not done,
 *    and the program goes on;
 *  - plain_free: debugging objects given to GC_free (not GC_FREE), their
 *    memory then reused, are said to be, once, and the program goes on
 *    (sgc only: bdwgc keeps no list of them to break);
 *  - threads: four threads allocating, freeing and dropping debugging
 *    objects while collections run: nothing to report, no crash;
 *  - objects: no report for correct use; GC_base gives the header, the
 *    object survives while referenced, a finalizer gets the program's
 *    pointer, GC_REALLOC keeps the contents.
 * Before, GC_DEBUG objects were plain ones and nothing was reported. */
#define GC_DEBUG 1
#define GC_THREADS 1
#include <gc.h>
#include <gc/gc_mark.h> /* GC_get_debug_header_size */

#include "common.h"

#include <stdbool.h>
#include "spawn_case.h"

enum { COUNT = 7000, SIZE = 40 };
static char *objects[COUNT];
static char *volatile sink;
static int smash_line;

static void smashtest(void)
{
    for (int i = 0; i < COUNT; ++i) {
        char *p;
        smash_line = __LINE__ + 1;
        objects[i] = p = (char *)GC_MALLOC(SIZE);
        CHECK(p != NULL);
        if (i % 3000 == 0) {
            sink = NULL;
            GC_gcollect();
        } else if (i % 5678 == 0) {
            p[SIZE + i / 2000] = 42;
        }
    }
    GC_gcollect();
    fprintf(stderr, "line %d\n", smash_line);
}

static void free_smashed(void)
{
    smash_line = __LINE__ + 1;
    char *p = (char *)GC_MALLOC(100);
    p[100] = 1;
    GC_FREE(p);
    fprintf(stderr, "line %d\n", smash_line);
}

static void double_free(void)
{
    smash_line = __LINE__ + 1;
    objects[0] = (char *)GC_MALLOC(64);
    GC_FREE(objects[0]);
    GC_FREE(objects[0]);
    GC_gcollect();
    fprintf(stderr, "line %d\n", smash_line);
}

static int finalized;
static void *finalized_obj;
static void count_final(void *obj, void *cd)
{
    finalized++;
    finalized_obj = obj;
    CHECK(cd == (void *)&finalized);
}

static T_NOINLINE GC_word make_finalizable(void)
{
    char *p = (char *)GC_MALLOC(24);
    GC_REGISTER_FINALIZER(p, count_final, &finalized, NULL, NULL);
    return ~(GC_word)p;
}

static void objects_case(void)
{
    char *p = (char *)GC_MALLOC(30);
    CHECK((char *)GC_base(p) + GC_get_debug_header_size() == p, "GC_base %p of %p", GC_base(p),
          (void *)p);
    memset(p, 7, 30);
    objects[1] = p;
    char *s = GC_STRDUP("debugging");
    CHECK(s && !strcmp(s, "debugging"));
    GC_word hidden = make_finalizable();
    for (int i = 0; i < 5 && !finalized; i++) {
        char junk[4096];
        memset(junk, 0, sizeof junk);
        sink = junk;
        GC_gcollect();
        GC_invoke_finalizers();
    }
    CHECK(finalized == 1 && finalized_obj == (void *)~hidden, "finalized %d times, with %p",
          finalized, finalized_obj);
    for (int i = 0; i < 30; i++) CHECK(objects[1][i] == 7);
    char *r = (char *)GC_REALLOC(objects[1], 5000);
    objects[1] = r;
    for (int i = 0; i < 30; i++) CHECK(r[i] == 7);
    r[4999] = 1;
    void *u = GC_MALLOC_UNCOLLECTABLE(50);
    GC_FREE(u);
    GC_FREE(r);
    objects[1] = NULL;
    GC_gcollect();
}

static void plain_free(void)
{
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 100; i++) objects[i] = (char *)GC_MALLOC(32);
        GC_free(GC_base(objects[round]));
        objects[round] = NULL;
        GC_gcollect();
    }
}

static void *debug_worker(void *arg)
{
    char *keep[64] = {0};
    for (int i = 0; i < 40000; i++) {
        int k = i % 64;
        if (keep[k] && (i & 1)) GC_FREE(keep[k]);
        size_t n = 16 + (size_t)(i % 300);
        keep[k] = (char *)GC_MALLOC(n);
        CHECK(keep[k] != NULL);
        memset(keep[k], 1, n);
        if (i % 10000 == 0) GC_gcollect();
    }
    return arg;
}

static void threads_case(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, debug_worker, NULL) == 0);
    for (int i = 0; i < 4; i++) CHECK(pthread_join(t[i], NULL) == 0);
    GC_gcollect();
}

static int run_case(const char *mode)
{
    GC_INIT();
    if (!strcmp(mode, "smashtest")) smashtest();
    else if (!strcmp(mode, "free_smashed")) free_smashed();
    else if (!strcmp(mode, "double_free")) double_free();
    else if (!strcmp(mode, "plain_free")) plain_free();
    else if (!strcmp(mode, "threads")) threads_case();
    else objects_case();
    return 0;
}


/* Runs MODE: WHAT must be reported (by collections, each of which may
 * report it again, or just once by GC_debug_free), every report naming
 * the line the case printed. */
static void expect(const char *mode, const char *what, bool by_collections)
{
    static char buf[65536];
    int st = spawn_case(mode, buf, sizeof buf);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %s: status 0x%x, stderr: %s", mode, st, buf);
    t_note("%s: %.400s\n", mode, buf);
    if (!what) {
        CHECK(buf[0] == 0, "case %s: reported %s", mode, buf);
        return;
    }
    char where[256];
    t_report_site(buf, __FILE__, where, sizeof where);
    int reports = t_occurrences(buf, what), objects = t_occurrences(buf, " in or near object at ");
    CHECK(by_collections ? reports >= 1 : reports == 1,
          "case %s: \"%s\" reported %d times: %s", mode, what, reports, buf);
    CHECK(objects == reports && t_occurrences(buf, where) == reports,
          "case %s: %d objects reported, %d at %s: %s", mode, objects,
          t_occurrences(buf, where), where, buf);
}

int main(int argc, char **argv)
{
    t_test_name = "debug_smash";
    if (argc > 1)
        return run_case(argv[1]);
    expect("smashtest", "found 1 smashed heap objects", true);
    expect("free_smashed", "GC_debug_free: found smashed location", false);
    expect("double_free", "GC_debug_free: found previously deallocated", false);
    expect("objects", NULL, false);
    expect("threads", NULL, false);
    static char buf[8192];
    int st = spawn_case("plain_free", buf, sizeof buf);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "plain_free: status 0x%x: %s", st, buf);
    CHECK(t_occurrences(buf, "was freed with GC_free, not GC_debug_free") == 1, "plain_free: %s", buf);
    t_note("PASS\n");
    return 0;
}
