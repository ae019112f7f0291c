/* weak: disappearing links (bdwgc's weak pointers).
 *
 *  - GC_general_register_disappearing_link(link, obj): *link is cleared once
 *    obj is unreachable, never while it is reachable; GC_SUCCESS, then
 *    GC_DUPLICATE for a link already registered.
 *  - GC_unregister_disappearing_link: 1 if it was registered, else 0; an
 *    unregistered link keeps its value.
 *  - GC_move_disappearing_link: GC_SUCCESS / GC_NOT_FOUND / GC_DUPLICATE;
 *    afterwards the new location is cleared and the old one is not.
 *  - links holding hidden pointers (GC_HIDE_POINTER) inside a GC object.
 *  - links are cleared before the object's finalizer runs.
 *  - long links (GC_register_long_link & co.): not cleared while a finalizer
 *    can still resurrect the object (short links are), cleared once it is
 *    truly gone; return codes as for short links.
 *  - GC_register_disappearing_link(link): bdwgc's definition is
 *    general_register(link, GC_base(link)), i.e. the link is a field of a
 *    heap object and is cleared when *that object* becomes unreachable
 *    (observable from the object's own finalizer, which runs afterwards).
 *
 * Links mostly live in malloc() memory, which the collector does not scan,
 * so they do not keep their targets alive.  "Cleared when dead" checks are
 * statistical (>= 90%) because of conservative retention; "not cleared"
 * checks are exact.
 */
#include "gc.h"

#include "common.h"

#define N 1000

static void *keep[N]; /* .bss roots */
static void **links;  /* malloc'd: invisible to the collector */
static void **links2;

typedef struct wobj {
    uint64_t magic;
    long idx;
    void *field; /* for GC_register_disappearing_link */
    uint64_t pad[4];
} wobj;
#define MAGIC 0x5745414b4f424a31ULL

static void cycles(int n)
{
    t_clear_stack();
    for (int i = 0; i < n; i++) {
        GC_gcollect();
        GC_invoke_finalizers();
    }
}

static int count_null(void **l, int from, int to)
{
    int k = 0;
    for (int i = from; i < to; i++)
        k += l[i] == NULL;
    return k;
}

T_NOINLINE static void make_objects(int n, int keep_them)
{
    for (int i = 0; i < n; i++) {
        wobj *o = GC_malloc(sizeof *o);
        CHECK(o != NULL);
        o->magic = MAGIC;
        o->idx = i;
        links[i] = o;
        int rc = GC_general_register_disappearing_link(&links[i], o);
        CHECK(rc == GC_SUCCESS, "register link %d: rc %d, want GC_SUCCESS", i,
              rc);
        if (keep_them)
            keep[i] = o;
    }
}

/* Drop whatever registrations are left (links kept by conservative
 * retention), so that the next section starts clean. */
static void unregister_all(void **l)
{
    for (int i = 0; i < N; i++)
        GC_unregister_disappearing_link(&l[i]);
}

#define AT_LEAST(k, n, what)                                                 \
    CHECK((k) * 10 >= (n) * 9, "%s: only %d of %d links cleared", what,      \
          (int)(k), (int)(n))

/* ---- hidden pointers inside a GC object ---------------------------------- */
typedef struct weak_table {
    GC_word hidden[N];
} weak_table;

static weak_table *wt; /* GC_malloc'd, scanned: values are hidden */

T_NOINLINE static void make_hidden(int n)
{
    for (int i = 0; i < n; i++) {
        wobj *o = GC_malloc(sizeof *o);
        CHECK(o != NULL);
        o->magic = MAGIC;
        o->idx = i;
        wt->hidden[i] = GC_HIDE_POINTER(o);
        CHECK(GC_general_register_disappearing_link((void **)&wt->hidden[i],
                                                    o) == GC_SUCCESS);
        if (i % 2 == 0)
            keep[i] = o;
    }
}

/* gc.h recommends revealing hidden pointers under GC_call_with_alloc_lock;
 * this test is single-threaded and no collection can run while we read, so
 * a plain call does (GC_call_with_alloc_lock itself is exercised by
 * compat_compile, where its absence fails one test, not the build). */
static void *GC_CALLBACK reveal_all(void *arg)
{
    int *alive_ok = arg;
    for (int i = 0; i < N; i += 2) {
        if (wt->hidden[i] == 0)
            continue;
        wobj *o = GC_REVEAL_POINTER(wt->hidden[i]);
        if (o->magic == MAGIC && o->idx == i)
            (*alive_ok)++;
    }
    return NULL;
}

/* ---- links vs finalizers ----------------------------------------------- */
/* Each part counts its own finalizer's calls: an object of part 6 kept a
 * while by a stale word (ASan's larger frames did) is finalized during
 * part 7, and must not count there. */
static int fin_seen, fin_link_was_clear, field_fin_seen, field_was_clear;

static void GC_CALLBACK fin_check_link(void *obj, void *cd)
{
    wobj *o = obj;
    long i = (long)(intptr_t)cd;
    CHECK(o->magic == MAGIC && o->idx == i);
    fin_seen++;
    if (links2[i] == NULL)
        fin_link_was_clear++;
}

T_NOINLINE static void make_finalizable_linked(int n)
{
    for (int i = 0; i < n; i++) {
        wobj *o = GC_malloc(sizeof *o);
        CHECK(o != NULL);
        o->magic = MAGIC;
        o->idx = i;
        links2[i] = o;
        CHECK(GC_general_register_disappearing_link(&links2[i], o) ==
              GC_SUCCESS);
        GC_register_finalizer(o, fin_check_link, (void *)(intptr_t)i, NULL,
                              NULL);
    }
}

static void GC_CALLBACK fin_check_field(void *obj, void *cd)
{
    wobj *o = obj;
    CHECK(o->magic == MAGIC && o->idx == (long)(intptr_t)cd);
    field_fin_seen++;
    if (o->field == NULL)
        field_was_clear++;
}

static int n_static_target;
T_NOINLINE static void make_self_field_links(int n)
{
    for (int i = 0; i < n; i++) {
        wobj *o = GC_malloc(sizeof *o);
        CHECK(o != NULL);
        o->magic = MAGIC;
        o->idx = i;
        o->field = &n_static_target; /* any non-null value */
        int rc = GC_register_disappearing_link(&o->field);
        CHECK(rc == GC_SUCCESS, "GC_register_disappearing_link rc %d", rc);
        rc = GC_register_disappearing_link(&o->field);
        CHECK(rc == GC_DUPLICATE, "second GC_register_disappearing_link rc %d",
              rc);
        GC_register_finalizer(o, fin_check_field, (void *)(intptr_t)i, NULL,
                              NULL);
    }
}

/* ---- long links ----------------------------------------------------------- */
static void **short_links, **long_links;
static void *resurrected[N]; /* .bss */
static int resurrect_calls;

static void GC_CALLBACK fin_resurrect(void *obj, void *cd)
{
    long i = (long)(intptr_t)cd;
    CHECK(((wobj *)obj)->magic == MAGIC && ((wobj *)obj)->idx == i);
    resurrected[i] = obj;
    resurrect_calls++;
}

T_NOINLINE static void make_long_linked(int n, int with_finalizer)
{
    for (int i = 0; i < n; i++) {
        wobj *o = GC_malloc(sizeof *o);
        CHECK(o != NULL);
        o->magic = MAGIC;
        o->idx = i;
        short_links[i] = long_links[i] = o;
        CHECK(GC_general_register_disappearing_link(&short_links[i], o) ==
              GC_SUCCESS);
        int rc = GC_register_long_link(&long_links[i], o);
        CHECK(rc == GC_SUCCESS, "GC_register_long_link rc %d", rc);
        rc = GC_register_long_link(&long_links[i], o);
        CHECK(rc == GC_DUPLICATE, "second GC_register_long_link rc %d", rc);
        if (with_finalizer)
            GC_register_finalizer(o, fin_resurrect, (void *)(intptr_t)i, NULL,
                                  NULL);
    }
}

static void test_long_links(void)
{
    short_links = calloc(N, sizeof(void *));
    long_links = calloc(N, sizeof(void *));
    CHECK(short_links && long_links);

    /* return codes */
    {
        void *never = NULL, *dst = NULL;
        CHECK(GC_unregister_long_link(&never) == 0);
        CHECK(GC_move_long_link(&never, &dst) == GC_NOT_FOUND);
    }

    /* with a resurrecting finalizer */
    resurrect_calls = 0;
    make_long_linked(N, 1);
    cycles(3);
    CHECK(resurrect_calls * 10 >= N * 9, "only %d of %d finalized",
          resurrect_calls, N);
    int long_cleared = 0, short_cleared = 0;
    for (int i = 0; i < N; i++) {
        if (!resurrected[i])
            continue;
        if (short_links[i] == NULL)
            short_cleared++;
        if (long_links[i] == NULL)
            long_cleared++;
        else
            CHECK(long_links[i] == resurrected[i]);
    }
    CHECK(long_cleared == 0,
          "%d long links cleared although their objects were resurrected by "
          "their finalizers", long_cleared);
    CHECK(short_cleared == resurrect_calls,
          "%d of %d short links to finalized objects not cleared",
          resurrect_calls - short_cleared, resurrect_calls);
    /* moving a long link */
    {
        void *dst = NULL;
        int i0 = -1;
        for (int i = 0; i < N && i0 < 0; i++)
            if (long_links[i])
                i0 = i;
        CHECK(i0 >= 0);
        CHECK(GC_move_long_link(&long_links[i0], &dst) == GC_SUCCESS);
        CHECK(GC_move_long_link(&long_links[i0], &dst) == GC_NOT_FOUND);
        CHECK(GC_unregister_long_link(&dst) == 1);
        CHECK(GC_unregister_long_link(&dst) == 0);
        long_links[i0] = NULL;
    }
    /* now truly unreachable (the finalizers are not registered again) */
    memset(resurrected, 0, sizeof resurrected);
    cycles(3);
    AT_LEAST(count_null(long_links, 0, N), N, "long links, objects gone");
    for (int i = 0; i < N; i++) {
        GC_unregister_long_link(&long_links[i]);
        GC_unregister_disappearing_link(&short_links[i]);
    }

    /* without finalizers long links behave like short ones */
    make_long_linked(N, 0);
    cycles(3);
    AT_LEAST(count_null(long_links, 0, N), N, "long links, no finalizer");
    for (int i = 0; i < N; i++) {
        GC_unregister_long_link(&long_links[i]);
        GC_unregister_disappearing_link(&short_links[i]);
    }
}

int main(void)
{
    t_test_name = "weak";
    GC_INIT();
    GC_set_finalize_on_demand(1);
    links = calloc(N, sizeof *links);
    links2 = calloc(N, sizeof *links2);
    CHECK(links && links2);

    /* 1. Reachable targets: links untouched; duplicates rejected. */
    make_objects(N, 1);
    for (int i = 0; i < N; i++) {
        int rc = GC_general_register_disappearing_link(&links[i], keep[i]);
        CHECK(rc == GC_DUPLICATE, "re-register link %d: rc %d, want "
              "GC_DUPLICATE", i, rc);
    }
    cycles(3);
    for (int i = 0; i < N; i++)
        CHECK(links[i] == keep[i],
              "link %d changed (%p) while its object is reachable", i,
              links[i]);

    /* 2. Unreachable targets: links cleared. */
    memset(keep, 0, sizeof keep);
    cycles(3);
    AT_LEAST(count_null(links, 0, N), N, "dead objects");
    for (int i = 0; i < N; i++)
        if (links[i])
            CHECK(((wobj *)links[i])->magic == MAGIC,
                  "uncleared link %d points to a corrupted object", i);
    /* all links are gone (cleared links are implicitly unregistered) */
    int still = 0;
    for (int i = 0; i < N; i++)
        if (!links[i])
            still += GC_unregister_disappearing_link(&links[i]);
    CHECK(still == 0, "%d cleared links were still registered", still);
    unregister_all(links);

    /* 1b. Re-registering a link with another object retargets it (gc.h:
     *     "all objects but the last one (link registered with) are
     *     ignored"): link first registered with a dying object, then with a
     *     reachable one, must not be cleared. */
    memset(links, 0, N * sizeof *links);
    for (int i = 0; i < N; i++) {
        wobj *y = GC_malloc(sizeof *y);
        CHECK(y != NULL);
        y->magic = MAGIC;
        y->idx = i;
        keep[i] = y;
    }
    /* no collection may clear the first registrations before we retarget */
    GC_disable();
    make_objects(N, 0); /* links[i] -> dying object */
    for (int i = 0; i < N; i++) {
        int rc = GC_general_register_disappearing_link(&links[i], keep[i]);
        CHECK(rc == GC_DUPLICATE, "retarget link %d: rc %d, want "
              "GC_DUPLICATE", i, rc);
    }
    GC_enable();
    cycles(3);
    for (int i = 0; i < N; i++)
        CHECK(links[i] != NULL,
              "link %d cleared although the object it was last registered "
              "with is reachable", i);
    unregister_all(links);
    memset(keep, 0, sizeof keep);

    /* 3. Unregistering. */
    memset(links, 0, N * sizeof *links);
    make_objects(N, 1); /* kept until the unregistrations are done */
    for (int i = 0; i < N; i += 2) {
        CHECK(GC_unregister_disappearing_link(&links[i]) == 1,
              "unregister of registered link %d did not return 1", i);
        CHECK(GC_unregister_disappearing_link(&links[i]) == 0,
              "second unregister of link %d did not return 0", i);
    }
    {
        void *never = NULL;
        CHECK(GC_unregister_disappearing_link(&never) == 0);
    }
    memset(keep, 0, sizeof keep);
    cycles(3);
    for (int i = 0; i < N; i += 2)
        CHECK(links[i] != NULL, "unregistered link %d was cleared", i);
    {
        int k = 0;
        for (int i = 1; i < N; i += 2)
            k += links[i] == NULL;
        AT_LEAST(k, N / 2, "registered half");
    }
    unregister_all(links);

    /* 4. Moving links. */
    memset(links, 0, N * sizeof *links);
    memset(links2, 0, N * sizeof *links2);
    make_objects(N, 1);
    {
        void *unreg = NULL;
        CHECK(GC_move_disappearing_link(&unreg, &links2[0]) == GC_NOT_FOUND,
              "moving an unregistered link must give GC_NOT_FOUND");
        for (int i = 0; i < N; i++) {
            int rc = GC_move_disappearing_link(&links[i], &links[i]);
            CHECK(rc == GC_SUCCESS, "move to itself (registered check) rc %d",
                  rc);
            if (i + 1 < N) {
                rc = GC_move_disappearing_link(&links[i], &links[i + 1]);
                CHECK(rc == GC_DUPLICATE,
                      "move onto another registered link: rc %d, want "
                      "GC_DUPLICATE", rc);
            }
            rc = GC_move_disappearing_link(&links[i], &links2[i]);
            CHECK(rc == GC_SUCCESS, "move link %d: rc %d", i, rc);
            rc = GC_move_disappearing_link(&links[i], &links2[i]);
            CHECK(rc == GC_NOT_FOUND, "move from old place again: rc %d", rc);
            CHECK(links2[i] == NULL, "move must not write *new_link");
            links2[i] = links[i];
        }
    }
    memset(keep, 0, sizeof keep);
    cycles(3);
    for (int i = 0; i < N; i++)
        CHECK(links[i] != NULL, "old location of moved link %d was cleared",
              i);
    AT_LEAST(count_null(links2, 0, N), N, "moved links");
    for (int i = 0; i < N; i++)
        CHECK(GC_unregister_disappearing_link(&links[i]) == 0,
              "old location of moved link %d still registered", i);
    unregister_all(links2);

    /* 5. Hidden pointers in a scanned GC object. */
    wt = GC_malloc(sizeof *wt);
    CHECK(wt != NULL);
    make_hidden(N);
    cycles(3);
    {
        int alive_ok = 0, odd_cleared = 0;
        reveal_all(&alive_ok);
        CHECK(alive_ok == N / 2,
              "only %d of %d reachable objects behind hidden links intact",
              alive_ok, N / 2);
        for (int i = 1; i < N; i += 2)
            odd_cleared += wt->hidden[i] == 0;
        AT_LEAST(odd_cleared, N / 2, "hidden links");
    }
    memset(keep, 0, sizeof keep);

    /* 6. Links are cleared before the target's finalizer runs. */
    fin_seen = fin_link_was_clear = 0;
    make_finalizable_linked(N);
    cycles(3);
    CHECK(fin_seen * 10 >= N * 9, "only %d of %d finalized", fin_seen, N);
    CHECK(fin_link_was_clear == fin_seen,
          "%d of %d finalizers saw their object's weak link not cleared",
          fin_seen - fin_link_was_clear, fin_seen);

    /* 7. GC_register_disappearing_link(link): link inside an object, cleared
     *    when that object dies, before its finalizer runs. */
    field_fin_seen = field_was_clear = 0;
    make_self_field_links(N);
    cycles(3);
    CHECK(field_fin_seen * 10 >= N * 9, "only %d of %d finalized",
          field_fin_seen, N);
    CHECK(field_was_clear == field_fin_seen,
          "%d of %d objects had their registered field not cleared",
          field_fin_seen - field_was_clear, field_fin_seen);

    /* 8. Long links. */
    test_long_links();

    t_note("PASS");
    return 0;
}
