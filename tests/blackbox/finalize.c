/* finalize: GC_register_finalizer and friends, with bdwgc's semantics.
 *
 * Finalizers run on demand here (GC_set_finalize_on_demand(1)): they may only
 * run inside GC_invoke_finalizers().  A "cycle" below is GC_gcollect()
 * followed by GC_invoke_finalizers().
 *
 * Conservative retention: any stale word on the stack or in a register may
 * keep one of our objects alive, so everything that must die is allocated in
 * non-inlined helpers, the stack is cleared before collecting, and checks
 * that an object *is* finalized are statistical ("at least 90% of N").
 * Checks that an object is *not* finalized (still referenced, unregistered,
 * cycles, finalizer already ran) are exact: retention can only help them.
 *
 * Also: objects referenced only by interior pointers are not finalized;
 * several threads register, drop and keep finalizable objects while others
 * collect and a finalizer thread runs finalizers: a finalizer always gets
 * its own intact object, never runs on an object its thread still
 * references, never twice, and most dropped ones get theirs
 * (FINALIZE_MT_ROUNDS rounds, default 4).
 */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "common.h"

#define MAGIC 0x46494e414c495a45ULL /* "FINALIZE" */

typedef struct fobj {
    struct fobj *next; /* another object (ordering tests) or NULL */
    struct fobj *self; /* self pointer (ignore_self tests) or NULL */
    uint64_t magic;
    long idx;
    uint64_t pattern[6];
} fobj;

#define N 1000
static int fin_count[N];      /* times finalized, per index */
static unsigned fin_batch[N]; /* cycle number of the (last) finalization */
static unsigned batch;        /* current cycle number */
static long total_fin;        /* all finalizer invocations */
static int notifier_calls;

static void *keep[N];         /* .bss roots */
static void *resurrected[N];  /* .bss: where finalizers resurrect objects */

static unsigned section;
static void reset(void)
{
    section++;
    memset(fin_count, 0, sizeof fin_count);
    memset(fin_batch, 0, sizeof fin_batch);
}

static int count_finalized(int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += fin_count[i] > 0;
    return k;
}

static void check_at_most_once(int n, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(fin_count[i] <= 1, "%s: object %d finalized %d times", what, i,
              fin_count[i]);
}

static void check_obj(fobj *o, long idx)
{
    CHECK(o->magic == MAGIC, "finalized object %ld has bad magic %llx", idx,
          (unsigned long long)o->magic);
    CHECK(o->idx == idx, "finalized object idx %ld, client data says %ld",
          o->idx, idx);
    for (int j = 0; j < 6; j++)
        CHECK(o->pattern[j] == t_mix64((uint64_t)idx * 6 + j),
              "object %ld contents corrupted before its finalizer ran", idx);
}

/* One GC cycle: collect; finalizers must not run by themselves (on-demand
 * mode); then run them.  Returns the number GC_invoke_finalizers ran. */
static int cycle(void)
{
    long before = total_fin;
    GC_gcollect();
    CHECK(total_fin == before,
          "a finalizer ran during GC_gcollect although finalize_on_demand "
          "is set");
    int pending = GC_should_invoke_finalizers();
    batch++;
    int ran = GC_invoke_finalizers();
    CHECK(ran >= 0);
    CHECK(total_fin - before == ran,
          "GC_invoke_finalizers returned %d but %ld finalizers ran", ran,
          total_fin - before);
    CHECK(!pending ? ran == 0 : 1,
          "GC_should_invoke_finalizers was 0 but %d finalizers ran", ran);
    CHECK(GC_should_invoke_finalizers() == 0,
          "GC_should_invoke_finalizers still nonzero after "
          "GC_invoke_finalizers");
    return ran;
}

static void cycles(int n)
{
    t_clear_stack();
    for (int i = 0; i < n; i++)
        cycle();
}

static fobj *new_fobj(long idx)
{
    fobj *o = GC_malloc(sizeof *o);
    CHECK(o != NULL);
    o->magic = MAGIC;
    o->idx = idx;
    for (int j = 0; j < 6; j++)
        o->pattern[j] = t_mix64((uint64_t)idx * 6 + j);
    return o;
}

/* Client data encodes (section, index).  Objects left over from an earlier
 * section (kept alive for a while by conservative retention, or leaked on
 * purpose) may be finalized later; such calls are counted as strays and do
 * not disturb the bookkeeping of the current section. */
static long stray_fin;
#define CD(i) ((void *)(intptr_t)(((intptr_t)section << 16) | ((i) + 1)))
#define IDX(cd) ((long)((intptr_t)(cd)&0xffff) - 1)
#define SEC(cd) ((unsigned)((intptr_t)(cd) >> 16))

/* ---- finalizers ---------------------------------------------------------- */
static void GC_CALLBACK fin_plain(void *obj, void *cd)
{
    long i = IDX(cd);
    CHECK(i >= 0 && i < N);
    check_obj(obj, i);
    if (SEC(cd) != section) {
        stray_fin++;
        total_fin++;
        return;
    }
    fin_count[i]++;
    fin_batch[i] = batch;
    total_fin++;
}

static int fin_other_calls;
static void GC_CALLBACK fin_other(void *obj, void *cd)
{
    (void)obj;
    (void)cd;
    fin_other_calls++;
    total_fin++;
}

/* client data is a GC object referenced from nowhere else */
static void GC_CALLBACK fin_cd_object(void *obj, void *cd)
{
    uint64_t *c = cd;
    long i = IDX((void *)(uintptr_t)c[0]);
    CHECK(i >= 0 && i < N, "client data object corrupted");
    for (int j = 1; j < 8; j++)
        CHECK(c[j] == t_mix64((uint64_t)i + 1000 * j),
              "client data object of %ld freed/corrupted while its finalizer "
              "was pending", i);
    fin_plain(obj, (void *)(uintptr_t)c[0]);
}

/* A -> B ordering: when A is finalized B must still be intact and not yet
 * finalized. */
static void GC_CALLBACK fin_first(void *obj, void *cd)
{
    fobj *a = obj;
    long i = IDX(cd);
    CHECK(a->next != NULL);
    check_obj(a->next, i + 1);
    CHECK(SEC(cd) != section || fin_count[i + 1] == 0,
          "B (%ld) was finalized before A (%ld) although A points to B", i + 1,
          i);
    fin_plain(obj, cd);
}

static void GC_CALLBACK fin_resurrect(void *obj, void *cd)
{
    fin_plain(obj, cd);
    if (SEC(cd) == section)
        resurrected[IDX(cd)] = obj;
}

static void GC_CALLBACK fin_reregister(void *obj, void *cd)
{
    fin_plain(obj, cd);
    if (SEC(cd) == section && fin_count[IDX(cd)] == 1)
        GC_register_finalizer(obj, fin_reregister, cd, NULL, NULL);
}

static void GC_CALLBACK notifier(void)
{
    notifier_calls++;
}

/* ---- allocation helpers (non-inlined: no stale locals in main) -------- */
T_NOINLINE static void make_plain(int n, int keep_them)
{
    for (int i = 0; i < n; i++) {
        fobj *o = new_fobj(i);
        GC_register_finalizer(o, fin_plain, CD(i), NULL, NULL);
        if (keep_them)
            keep[i] = o;
    }
}

T_NOINLINE static void make_with_cd_object(int n)
{
    for (int i = 0; i < n; i++) {
        fobj *o = new_fobj(i);
        uint64_t *c = GC_malloc_atomic(8 * sizeof(uint64_t));
        CHECK(c != NULL);
        c[0] = (uint64_t)(uintptr_t)CD(i);
        for (int j = 1; j < 8; j++)
            c[j] = t_mix64((uint64_t)i + 1000 * j);
        GC_register_finalizer(o, fin_cd_object, c, NULL, NULL);
    }
}

/* pairs (2i -> 2i+1); both finalizable with the given registration */
typedef void(GC_CALL *reg_fn)(void *, GC_finalization_proc, void *,
                              GC_finalization_proc *, void **);
T_NOINLINE static void make_pairs(int npairs, reg_fn reg, GC_finalization_proc fa)
{
    for (int p = 0; p < npairs; p++) {
        fobj *a = new_fobj(2 * p), *b = new_fobj(2 * p + 1);
        a->next = b;
        reg(a, fa, CD(2 * p), NULL, NULL);
        reg(b, fin_plain, CD(2 * p + 1), NULL, NULL);
    }
}

T_NOINLINE static void make_self_refs(int n, reg_fn reg)
{
    for (int i = 0; i < n; i++) {
        fobj *o = new_fobj(i);
        o->self = o;
        reg(o, fin_plain, CD(i), NULL, NULL);
    }
}

T_NOINLINE static void make_two_cycles(int npairs)
{
    for (int p = 0; p < npairs; p++) {
        fobj *a = new_fobj(2 * p), *b = new_fobj(2 * p + 1);
        a->next = b;
        b->next = a;
        GC_register_finalizer(a, fin_plain, CD(2 * p), NULL, NULL);
        GC_register_finalizer(b, fin_plain, CD(2 * p + 1), NULL, NULL);
    }
}

T_NOINLINE static void make_reregistered(int n, int unregister)
{
    for (int i = 0; i < n; i++) {
        fobj *o = new_fobj(i);
        GC_finalization_proc ofn = (GC_finalization_proc)1;
        void *ocd = (void *)1;
        GC_register_finalizer(o, fin_other, CD(i), &ofn, &ocd);
        CHECK(ofn == NULL && ocd == NULL,
              "first registration must report no old finalizer");
        GC_register_finalizer(o, fin_plain, CD(i), &ofn, &ocd);
        CHECK(ofn == fin_other && ocd == CD(i),
              "re-registration must return the old fn/cd (got %p/%p)",
              (void *)ofn, ocd);
        if (unregister) {
            GC_register_finalizer(o, NULL, NULL, &ofn, &ocd);
            CHECK(ofn == fin_plain && ocd == CD(i),
                  "unregistration must return the old fn/cd");
            GC_register_finalizer(o, NULL, NULL, &ofn, &ocd);
            CHECK(ofn == NULL && ocd == NULL,
                  "after unregistration there is no finalizer");
        }
    }
}

T_NOINLINE static void make_resurrecting(int n)
{
    for (int i = 0; i < n; i++) {
        fobj *a = new_fobj(i);
        /* B: reachable only through A, not finalizable; must survive A's
         * finalization and A's resurrection. */
        uint64_t *b = GC_malloc(256);
        CHECK(b != NULL);
        for (int j = 0; j < 32; j++)
            b[j] = t_mix64((uint64_t)i * 77 + j);
        a->next = (fobj *)b;
        GC_register_finalizer(a, fin_resurrect, CD(i), NULL, NULL);
    }
}

T_NOINLINE static void make_self_reregistering(int n)
{
    for (int i = 0; i < n; i++) {
        fobj *o = new_fobj(i);
        GC_register_finalizer(o, fin_reregister, CD(i), NULL, NULL);
    }
}

T_NOINLINE static void churn(size_t bytes)
{
    /* garbage of many sizes, filled with junk, to reuse any freed memory */
    size_t done = 0;
    unsigned k = 0;
    while (done < bytes) {
        size_t sz = 16 + (t_mix64(k++) % 600);
        char *p = GC_malloc(sz);
        CHECK(p != NULL);
        memset(p, 0xA5, sz);
        done += sz;
    }
}

/* ---- interior pointers only ------------------------------------------------ */
#define NI 200
static char *interior_refs[NI]; /* .bss, interior pointers only */

T_NOINLINE static void make_interior_referenced(void)
{
    for (int i = 0; i < NI; i++) {
        size_t sz = (i % 10 == 0) ? 150000 : sizeof(fobj) + 64;
        fobj *o = GC_malloc(sz);
        CHECK(o != NULL);
        o->magic = MAGIC;
        o->idx = i;
        for (int j = 0; j < 6; j++)
            o->pattern[j] = t_mix64((uint64_t)i * 6 + j);
        GC_register_finalizer(o, fin_plain, CD(i), NULL, NULL);
        interior_refs[i] = (char *)o + sz / 2 + 1;
    }
}

/* ---- several threads ------------------------------------------------------ */
#define MT_THREADS 4
#define MT_PER 5000
static _Atomic int mt_count[MT_THREADS * MT_PER];
static _Atomic int mt_live_violation = -1;
static _Atomic long mt_total;

typedef struct mtobj {
    uint64_t magic;
    long idx;
    _Atomic int live; /* set while its thread holds it */
    char pad[40];
} mtobj;

static _Atomic int mt_round_no;
static _Atomic long mt_stray;
#define MT_CD(r, i) ((void *)(intptr_t)(((intptr_t)(r) << 24) | (i)))

static void GC_CALLBACK mt_fin(void *obj, void *cd)
{
    mtobj *o = obj;
    long i = (long)((intptr_t)cd & 0xffffff);
    int r = (int)((intptr_t)cd >> 24);
    CHECK(o->magic == MAGIC && o->idx == i,
          "multi-thread: finalizer for object %ld got %p holding magic %llx "
          "idx %ld live %d (object reclaimed before its finalizer ran?)",
          i, obj, (unsigned long long)o->magic, o->idx, atomic_load(&o->live));
    if (atomic_load(&o->live))
        atomic_store(&mt_live_violation, (int)i);
    if (r != atomic_load(&mt_round_no)) { /* left over from a past round */
        atomic_fetch_add(&mt_stray, 1);
        return;
    }
    atomic_fetch_add(&mt_count[i], 1);
    atomic_fetch_add(&mt_total, 1);
}

/* A finalizer thread, as programs with finalize_on_demand have: runs
 * finalizers while the workers allocate and collect. */
static _Atomic int mt_stop;
static void *mt_finalizer_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&mt_stop)) {
        if (GC_should_invoke_finalizers())
            GC_invoke_finalizers();
        else
            sched_yield();
    }
    return NULL;
}

static void *mt_worker(void *arg)
{
    int tid = (int)(intptr_t)arg;
    mtobj **live = GC_malloc(MT_PER * sizeof *live);
    CHECK(live != NULL);
    for (int k = 0; k < MT_PER; k++) {
        long i = (long)tid * MT_PER + k;
        mtobj *o = GC_malloc(sizeof *o);
        CHECK(o != NULL);
        o->magic = MAGIC;
        o->idx = i;
        GC_register_finalizer(o, mt_fin, MT_CD(atomic_load(&mt_round_no), i),
                              NULL, NULL);
        if (k % 4 == 0) {
            atomic_store(&o->live, 1);
            live[k] = o;
        }
        if (k % 250 == 0) {
            if (tid < 2)
                GC_gcollect();
            GC_invoke_finalizers();
        }
    }
    GC_gcollect();
    GC_invoke_finalizers();
    /* the kept ones: intact and never finalized */
    for (int k = 0; k < MT_PER; k += 4) {
        CHECK(live[k]->magic == MAGIC && live[k]->idx == (long)tid * MT_PER + k,
              "multi-thread: kept object corrupted");
        CHECK(atomic_load(&mt_count[tid * MT_PER + k]) == 0,
              "multi-thread: finalizer ran on object %d still referenced",
              tid * MT_PER + k);
    }
    for (int k = 0; k < MT_PER; k += 4) {
        atomic_store(&live[k]->live, 0);
        live[k] = NULL;
    }
    return NULL;
}

static void mt_round(void)
{
    atomic_fetch_add(&mt_round_no, 1);
    memset(mt_count, 0, sizeof mt_count);
    atomic_store(&mt_stop, 0);
    atomic_store(&mt_total, 0);
    pthread_t th[MT_THREADS], fth;
    CHECK(pthread_create(&fth, NULL, mt_finalizer_thread, NULL) == 0);
    for (int t = 0; t < MT_THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, mt_worker, (void *)(intptr_t)t) ==
              0);
    for (int t = 0; t < MT_THREADS; t++)
        CHECK(pthread_join(th[t], NULL) == 0);
    atomic_store(&mt_stop, 1);
    CHECK(pthread_join(fth, NULL) == 0);
    CHECK(atomic_load(&mt_live_violation) < 0,
          "multi-thread: object %d finalized while its thread held it",
          atomic_load(&mt_live_violation));
    t_clear_stack();
    for (int i = 0; i < 3; i++) {
        GC_gcollect();
        GC_invoke_finalizers();
    }
    int done = 0;
    for (int i = 0; i < MT_THREADS * MT_PER; i++) {
        int c = atomic_load(&mt_count[i]);
        CHECK(c <= 1, "multi-thread: object %d finalized %d times", i, c);
        done += c;
    }
    CHECK(done * 10 >= MT_THREADS * MT_PER * 9,
          "multi-thread: only %d of %d objects finalized", done,
          MT_THREADS * MT_PER);
}

#define AT_LEAST(k, n, what)                                                 \
    CHECK((k) * 10 >= (n) * 9, "%s: only %d of %d objects finalized", what,   \
          (int)(k), (int)(n))

#ifdef SGC_VERSION_STRING
static void count_none(void *obj, void *cd) { (void)obj; (void)cd; }

T_NOINLINE static void register_and_drop(long n)
{
    for (long i = 0; i < n; i++) {
        void *o = GC_malloc(16);
        CHECK(o != NULL);
        GC_register_finalizer(o, count_none, NULL, NULL, NULL);
    }
}

static void *locked_objects[40000];
static void *register_many_locked(void *arg)
{
    (void)arg;
    for (int i = 0; i < 40000; i++)
        GC_register_finalizer(locked_objects[i], count_none, NULL, NULL, NULL);
    return NULL;
}
#endif

int main(void)
{
    t_test_name = "finalize";
    GC_INIT();
    GC_set_finalize_on_demand(1);
    CHECK(GC_get_finalize_on_demand() != 0);
    GC_set_finalizer_notifier(notifier);
    CHECK(GC_get_finalizer_notifier() == notifier);

    /* 1. Reachable objects are never finalized. */
    reset();
    make_plain(N, 1);
    cycles(3);
    CHECK(count_finalized(N) == 0,
          "%d objects still referenced from a global were finalized",
          count_finalized(N));

    /* 2. Once unreachable: finalized exactly once; finalizers wait for
     *    GC_invoke_finalizers; the notifier is told. */
    memset(keep, 0, sizeof keep);
    notifier_calls = 0;
    t_clear_stack();
    GC_gcollect();
    CHECK(count_finalized(N) == 0, "finalizer ran without GC_invoke_finalizers");
    CHECK(GC_should_invoke_finalizers() != 0,
          "GC_should_invoke_finalizers() == 0 with finalizers pending");
    CHECK(notifier_calls >= 1, "finalizer notifier was not called");
    batch++;
    int ran = GC_invoke_finalizers();
    CHECK(ran > 0, "GC_invoke_finalizers ran nothing");
    cycles(3);
    AT_LEAST(count_finalized(N), N, "unreachable objects");
    check_at_most_once(N, "plain");
    cycles(2);
    check_at_most_once(N, "plain (after more cycles)");
    t_note("plain: %d/%d finalized, notifier called %d times",
           count_finalized(N), N, notifier_calls);

    /* 3. Client data object stays alive until the finalizer ran. */
    reset();
    make_with_cd_object(N);
    churn(4 << 20);
    cycles(4);
    AT_LEAST(count_finalized(N), N, "objects with GC'd client data");
    check_at_most_once(N, "client data");

    /* 4. Ordering: A -> B, both finalizable: A first, B in a later cycle. */
    reset();
    make_pairs(N / 2, GC_register_finalizer, fin_first);
    cycles(6);
    {
        int a_done = 0, b_done = 0;
        for (int p = 0; p < N / 2; p++) {
            a_done += fin_count[2 * p] > 0;
            b_done += fin_count[2 * p + 1] > 0;
            if (fin_count[2 * p + 1])
                CHECK(fin_count[2 * p] && fin_batch[2 * p] < fin_batch[2 * p + 1],
                      "pair %d: B finalized in cycle %u, A in cycle %u", p,
                      fin_batch[2 * p + 1], fin_batch[2 * p]);
        }
        AT_LEAST(a_done, N / 2, "ordered pairs, first object");
        AT_LEAST(b_done, N / 2, "ordered pairs, second object");
        check_at_most_once(N, "ordered");
    }

    /* 5. No-order: A -> B, both no_order: both in the same cycle. */
    reset();
    make_pairs(N / 2, GC_register_finalizer_no_order, fin_plain);
    cycles(4);
    {
        int same = 0;
        for (int p = 0; p < N / 2; p++)
            same += fin_count[2 * p] && fin_count[2 * p + 1] &&
                    fin_batch[2 * p] == fin_batch[2 * p + 1];
        CHECK(same * 10 >= (N / 2) * 8,
              "no_order: only %d of %d pairs finalized in the same cycle", same,
              N / 2);
        check_at_most_once(N, "no_order");
    }

    /* 6. Self-reference: ignored by _ignore_self (and _no_order) ... */
    reset();
    make_self_refs(N, GC_register_finalizer_ignore_self);
    cycles(3);
    AT_LEAST(count_finalized(N), N, "ignore_self on self-referencing objects");
    check_at_most_once(N, "ignore_self");

    reset();
    make_self_refs(N, GC_register_finalizer_no_order);
    cycles(3);
    AT_LEAST(count_finalized(N), N, "no_order on self-referencing objects");

    /* ... but with ordinary registration a self-cycle is never finalized,
     * and neither is a cycle of two finalizable objects (bdwgc: "any
     * finalizable object that is reachable from itself ... will not be
     * finalized").  These leak, by design. */
    /* bdwgc warns about these cycles at every later collection */
    GC_set_warn_proc(GC_ignore_warn_proc);
    CHECK(GC_get_warn_proc() == GC_ignore_warn_proc);
    reset();
    make_self_refs(N / 4, GC_register_finalizer);
    cycles(3);
    CHECK(count_finalized(N / 4) == 0,
          "%d self-referencing objects with ordinary finalizers finalized",
          count_finalized(N / 4));
    reset();
    make_two_cycles(N / 4);
    cycles(3);
    CHECK(count_finalized(N / 2) == 0,
          "%d objects in 2-cycles of finalizable objects were finalized",
          count_finalized(N / 2));

    /* 7. Re-registration replaces (ofn/ocd report the old one); only the
     *    last finalizer runs; fn = NULL unregisters. */
    reset();
    fin_other_calls = 0;
    make_reregistered(N, 0);
    cycles(3);
    CHECK(fin_other_calls == 0, "replaced finalizer ran %d times",
          fin_other_calls);
    AT_LEAST(count_finalized(N), N, "re-registered objects");
    reset();
    make_reregistered(N, 1);
    cycles(3);
    CHECK(fin_other_calls == 0 && count_finalized(N) == 0,
          "unregistered finalizers ran (%d + %d)", fin_other_calls,
          count_finalized(N));
    /* registering on a non-heap address: ignored, ofn/ocd = NULL */
    {
        static fobj not_heap;
        GC_finalization_proc ofn = fin_other;
        void *ocd = (void *)1;
        GC_register_finalizer(&not_heap, fin_other, NULL, &ofn, &ocd);
        CHECK(ofn == NULL && ocd == NULL,
              "register_finalizer on a static object must set ofn/ocd to "
              "NULL");
        cycles(2);
        CHECK(fin_other_calls == 0, "finalizer on a non-heap object ran");
    }

    /* 8. Resurrection: the finalizer stores the object in a global; it and
     *    what it references stay intact; it is not finalized again. */
    reset();
    memset(resurrected, 0, sizeof resurrected);
    make_resurrecting(N / 2);
    cycles(3);
    {
        int k = 0;
        for (int i = 0; i < N / 2; i++)
            k += resurrected[i] != NULL;
        AT_LEAST(k, N / 2, "resurrecting objects");
        churn(32 << 20);
        cycles(3);
        churn(8 << 20);
        for (int i = 0; i < N / 2; i++) {
            fobj *a = resurrected[i];
            if (!a)
                continue;
            check_obj(a, i);
            uint64_t *b = (uint64_t *)a->next;
            CHECK(b != NULL);
            for (int j = 0; j < 32; j++)
                CHECK(b[j] == t_mix64((uint64_t)i * 77 + j),
                      "object referenced by resurrected object %d corrupted "
                      "(word %d)",
                      i, j);
        }
        check_at_most_once(N / 2, "resurrected");
        memset(resurrected, 0, sizeof resurrected);
        cycles(3);
        check_at_most_once(N / 2, "resurrected then dropped");
    }

    /* 9. A finalizer may register a new finalizer for its object. */
    reset();
    make_self_reregistering(N / 2);
    cycles(6);
    {
        int twice = 0;
        for (int i = 0; i < N / 2; i++) {
            CHECK(fin_count[i] <= 2, "object %d finalized %d times", i,
                  fin_count[i]);
            twice += fin_count[i] == 2;
        }
        CHECK(twice * 10 >= (N / 2) * 8,
              "re-registered in finalizer: only %d of %d finalized twice",
              twice, N / 2);
    }

    /* 9b. Objects referenced only through interior pointers stay alive and
     *     are not finalized. */
    reset();
    make_interior_referenced();
    cycles(3);
    churn(8 << 20);
    cycles(2);
    CHECK(count_finalized(NI) == 0,
          "%d objects referenced by interior pointers were finalized",
          count_finalized(NI));
    for (int i = 0; i < NI; i++) {
        fobj *o = GC_base(interior_refs[i]);
        CHECK(o != NULL, "GC_base(interior pointer) = NULL");
        check_obj(o, i);
    }
    memset(interior_refs, 0, sizeof interior_refs);
    cycles(3);
    AT_LEAST(count_finalized(NI), NI, "objects once referenced by interior "
             "pointers");

    /* 9c. Several threads at once (finalizers still on demand, run by a
     *     finalizer thread and by whichever worker calls
     *     GC_invoke_finalizers), a few rounds. */
    {
        int rounds = (int)t_env_long("FINALIZE_MT_ROUNDS", 4);
        for (int r = 0; r < rounds; r++)
            mt_round();
    }

    /* 10. Default mode: finalizers run without GC_invoke_finalizers (from
     *     GC_gcollect or allocation, or another thread; we wait up to 2 s). */
    GC_set_finalize_on_demand(0);
    GC_set_finalizer_notifier(0);
    reset();
    make_plain(N, 0);
    t_clear_stack();
    {
        double t0 = t_now();
        do {
            GC_gcollect();
            churn(256 << 10);
        } while (count_finalized(N) * 10 < N * 9 && t_now() - t0 < 2.0);
        AT_LEAST(count_finalized(N), N,
                 "finalize_on_demand=0 (no GC_invoke_finalizers call)");
        check_at_most_once(N, "automatic");
    }

#ifdef SGC_VERSION_STRING
    /* 11. (sgc) Registrations start collections of their own: 200,000
     *     finalizable objects of 16 bytes, registered and dropped, are
     *     3.2 MB of allocation, about one collection's worth by the heap's
     *     rule, but every 16,384 registrations past twice the table's
     *     size after the last collection start one (collect/finalize.c):
     *     without that a collection's finalizer walks grew with all the
     *     objects registered since the last one. */
    {
        for (int i = 0; i < 40000; i++)
            CHECK((locked_objects[i] = GC_malloc(16)) != NULL);
        unsigned long before = (unsigned long)GC_get_gc_no();
        register_and_drop(200000);
        unsigned long collections = (unsigned long)GC_get_gc_no() - before;
        CHECK(collections >= 8,
              "200,000 registrations started %lu collections; at least 8 expected",
              collections);
        t_note("11: 200,000 registrations, %lu collections", collections);
        /* Inside GC_call_with_alloc_lock (bdwgc would wait for its own
         * lock here): the registrations' collections must not wait for
         * the lock the caller holds; the run would hang. */
        GC_call_with_alloc_lock(register_many_locked, NULL);
        t_note("11: 40,000 registrations inside GC_call_with_alloc_lock");
    }
#endif

    t_note("%ld stray finalizations of objects from earlier sections",
           stray_fin);
    t_note("PASS");
    return 0;
}
