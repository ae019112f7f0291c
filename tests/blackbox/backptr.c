/* backptr: bdwgc's back pointers (gc_backptr.h) for debugging objects.
 * A graph of GC_debug_malloc objects, collected once:
 *   croot (static) -> c;   root (static) -> a -> b (only at a[B_SLOT]);
 *   f: finalizable, unreachable, waiting for its finalizer;
 *   u: allocated after the collection; p: a plain GC_malloc object.
 * GC_get_back_ptr_info must say: b from the heap, at a + B_SLOT words
 * (also for a pointer into b); c and a from a root (c's word is croot);
 * f from the finalizable list; u unreferenced; p has no debug info.
 * GC_print_backtrace(b) (in a child: it prints to stderr) names both
 * levels; GC_generate_random_backtrace runs; GC_BACKTRACES=2 prints
 * two random backtraces after each collection; queries while threads
 * allocate and collect neither crash nor hang.
 *
 * Against bdwgc: Debian's libgc.so.1 is built without back pointers (it
 * defines none of these calls), so run-against-bdwgc.sh leaves this test
 * out; a bdwgc 8.2.2 configured with CFLAGS=-DKEEP_BACK_PTRS passes it.
 * Where bdwgc may answer otherwise, only what both guarantee is checked:
 * a's answer (bdwgc records the word its marking came from first, which
 * may be a stack slot or a register) is a root or a register, and c's
 * root word, when it is not croot, points to c.
 * Before sgc had back pointers every answer was GC_NO_SPACE. */
#define GC_DEBUG 1
#define GC_THREADS 1
#include <gc.h>
#include <gc/gc_backptr.h>

#include "common.h"
#include "spawn_case.h"

enum { A_WORDS = 8, B_SLOT = 3, THREADS = 3 };

static void *root, *croot;
static GC_hidden_pointer f_hidden, b_hidden;
static int a_line, b_line;
static volatile int finalized;

static void on_finalize(void *obj, void *cd)
{
    (void)obj;
    (void)cd;
    finalized = 1;
}

/* In frames that are gone once the graph is built, so that no stack word
 * the test controls keeps b, c or f. */
static T_NOINLINE void build(void)
{
    a_line = __LINE__ + 1;
    void **a = (void **)GC_MALLOC(A_WORDS * sizeof(void *));
    b_line = __LINE__ + 1;
    void **b = (void **)GC_MALLOC(4 * sizeof(void *));
    CHECK(a && b);
    a[B_SLOT] = b;
    root = a;
    b_hidden = GC_HIDE_POINTER(b);
    croot = GC_MALLOC(32);
    void *f = GC_MALLOC(48);
    CHECK(croot && f);
    GC_REGISTER_FINALIZER(f, on_finalize, NULL, NULL, NULL);
    f_hidden = GC_HIDE_POINTER(f);
}

static T_NOINLINE void clear_stack(void)
{
    volatile char junk[16384];
    memset((char *)junk, 0, sizeof junk);
}

static T_NOINLINE void setup(void)
{
    GC_set_finalize_on_demand(1); /* f waits in the queue */
    build();
    clear_stack();
    GC_gcollect();
    CHECK(!finalized, "f was finalized though finalization is on demand");
}

static void check_graph(void)
{
    void **a = (void **)root;
    void *b = GC_REVEAL_POINTER(b_hidden);
    void *base = NULL;
    size_t offset = 12345;

    GC_ref_kind k = GC_get_back_ptr_info(b, &base, &offset);
    CHECK(k == GC_REFD_FROM_HEAP, "b: kind %d, want GC_REFD_FROM_HEAP", (int)k);
    CHECK(base == (void *)a && offset == B_SLOT * sizeof(void *),
          "b: from %p offset %zu, want %p offset %zu", base, offset, (void *)a,
          (size_t)(B_SLOT * sizeof(void *)));

    base = NULL;
    offset = 12345;
    k = GC_get_back_ptr_info((char *)b + 8, &base, &offset);
    CHECK(k == GC_REFD_FROM_HEAP && base == (void *)a && offset == B_SLOT * sizeof(void *),
          "inside b: kind %d from %p offset %zu", (int)k, base, offset);

    base = NULL;
    offset = 12345;
    k = GC_get_back_ptr_info(croot, &base, &offset);
    CHECK(k == GC_REFD_FROM_ROOT, "c: kind %d, want GC_REFD_FROM_ROOT", (int)k);
    CHECK(offset == 0 && base && GC_base(base) == NULL, "c: root %p offset %zu", base, offset);
    CHECK(GC_base(*(void **)base) == GC_base(croot), "c: the root word %p does not point to c",
          base);
#ifndef GC_BACKPTR_BDWGC /* bdwgc may name a stale stack word of c's */
    CHECK(base == (void *)&croot, "c: root %p, want &croot %p", base, (void *)&croot);
#endif

    k = GC_get_back_ptr_info(a, &base, &offset);
    CHECK(k == GC_REFD_FROM_ROOT || k == GC_REFD_FROM_REG, "a: kind %d, want a root", (int)k);
    if (k == GC_REFD_FROM_ROOT)
        CHECK(GC_base(base) == NULL && offset == 0, "a: root %p offset %zu", base, offset);

    k = GC_get_back_ptr_info(GC_REVEAL_POINTER(f_hidden), &base, &offset);
    CHECK(k == GC_FINALIZER_REFD, "f: kind %d, want GC_FINALIZER_REFD", (int)k);

    void *u = GC_MALLOC(24);
    k = GC_get_back_ptr_info(u, &base, &offset);
    CHECK(k == GC_UNREFERENCED, "u (allocated since the collection): kind %d", (int)k);

    void *p = GC_malloc(24); /* no debugging header */
    CHECK(p);
    k = GC_get_back_ptr_info(p, &base, &offset);
    CHECK(k == GC_NO_SPACE, "plain object: kind %d, want GC_NO_SPACE", (int)k);
    GC_reachable_here(u);
    GC_reachable_here(p);
}

/* ---- in a child: what GC_print_backtrace prints ---- */

static void print_case(void)
{
    setup();
    fprintf(stderr, "a line %d b line %d\n", a_line, b_line);
    GC_print_backtrace(GC_REVEAL_POINTER(b_hidden));
    fprintf(stderr, "--\n");
    GC_generate_random_backtrace();
    fprintf(stderr, "random done\n");
}

static void check_printed(void)
{
    static char buf[1 << 16];
    int st = spawn_case("print", buf, sizeof buf);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d:\n%s", st, buf);
    int al = 0, bl = 0;
    const char *lines = strstr(buf, "a line ");
    CHECK(lines && sscanf(lines, "a line %d b line %d", &al, &bl) == 2, "%s", buf);
    char a_site[64], b_site[64], offset_line[96];
    snprintf(a_site, sizeof a_site, "backptr.c:%d,", al);
    snprintf(b_site, sizeof b_site, "backptr.c:%d,", bl);
    snprintf(offset_line, sizeof offset_line,
             "Reachable via 0 levels of pointers from offset %d in object:",
             (int)(B_SLOT * sizeof(void *)));
    const char *trace = strstr(buf, b_site);
    CHECK(trace, "b's line (%s) not printed:\n%s", b_site, buf);
    const char *off = strstr(trace, offset_line);
    CHECK(off, "no \"%s\" after b:\n%s", offset_line, buf);
    CHECK(strstr(off, a_site), "a's line (%s) not printed after the offset:\n%s", a_site, buf);
    CHECK(strstr(off, "Reachable via 1 levels of pointers from root"),
          "a's root not printed:\n%s", buf);
    CHECK(strstr(buf, "random done"), "GC_generate_random_backtrace did not return:\n%s", buf);
}

/* GC_BACKTRACES=2 (set by the parent): each collection is followed by two
 * random backtraces, each ending in one of these lines. */
static int backtraces_printed(const char *buf)
{
    return t_occurrences(buf, "levels of pointers from root") +
           t_occurrences(buf, "levels of pointers from list of finalizable") +
           t_occurrences(buf, "Reference could not be found") +
           t_occurrences(buf, "No debug info in object");
}

static void backtraces_case(void)
{
    setup();
    GC_gcollect();
}

static void check_env_backtraces(void)
{
    static char buf[1 << 16];
    setenv("GC_BACKTRACES", "2", 1);
    int st = spawn_case("backtraces", buf, sizeof buf);
    unsetenv("GC_BACKTRACES");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d:\n%s", st, buf);
    int n = backtraces_printed(buf);
    CHECK(n >= 2 && n % 2 == 0, "GC_BACKTRACES=2: %d backtraces printed:\n%s", n, buf);
}

/* ---- queries while other threads allocate and collect ---- */

static volatile int stop_threads;

static void *churn(void *arg)
{
    (void)arg;
    void **keep = NULL;
    for (unsigned i = 0; !stop_threads; i++) {
        void **o = (void **)GC_MALLOC(8 * sizeof(void *));
        CHECK(o);
        o[0] = keep;
        keep = (i % 64) ? o : NULL;
        if (i % 2000 == 0)
            GC_gcollect();
    }
    return NULL;
}

static void check_with_threads(void)
{
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, churn, NULL) == 0);
    for (int i = 0; i < 200; i++) {
        void *base;
        size_t offset;
        GC_ref_kind k = GC_get_back_ptr_info(GC_REVEAL_POINTER(b_hidden), &base, &offset);
        CHECK(k == GC_REFD_FROM_HEAP && base == root, "b with threads: kind %d", (int)k);
    }
    stop_threads = 1;
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
}

int main(int argc, char **argv)
{
    t_test_name = "backptr";
    GC_INIT();
    if (argc > 1 && strcmp(argv[1], "print") == 0) {
        print_case();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "backtraces") == 0) {
        backtraces_case();
        return 0;
    }
    alarm(60);
    signal(SIGALRM, spawn_case_on_alarm);
    setup();
    check_graph();
    check_printed();
    check_env_backtraces();
    check_with_threads();
    printf("backptr: ok\n");
    return 0;
}
