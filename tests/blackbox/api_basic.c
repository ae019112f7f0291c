/* api_basic: the everyday bdwgc API, one section per call family.
 *
 * "Stays alive" checks are exact: a disappearing link to the object must not
 * be cleared and the object's contents must be intact after collections and
 * churn.  "Becomes collectable" checks are statistical (>= 90% of N links
 * cleared) because conservative scanning may retain a few objects.
 *
 * test_scan_extent: every size from 16 to ~1 KiB (step 8) and up to
 * ~740 KiB: a pointer in the last word of an object keeps its target alive.
 *
 * Order matters at the end: GC_clear_roots and the max-heap/OOM section run
 * last because they change global collector state.
 */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"

#include <errno.h>
#include <signal.h>
#include <stdalign.h>
#include <stddef.h>

#include "common.h"

#define N 1000

/* ---- helpers ----------------------------------------------------------- */
static void fill(void *p, size_t n, uint64_t seed)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)(t_mix64(seed + i / 8) >> (8 * (i % 8)));
}

static int intact(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i] != (unsigned char)(t_mix64(seed + i / 8) >> (8 * (i % 8))))
            return 0;
    return 1;
}

static int all_zero(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i])
            return 0;
    return 1;
}

T_NOINLINE static void churn(size_t bytes, int junk)
{
    size_t done = 0;
    uint64_t k = 12345;
    while (done < bytes) {
        size_t sz = 16 + t_mix64(k++) % 3000;
        if (t_mix64(k) % 97 == 0)
            sz = 20000 + t_mix64(k) % 200000;
        char *p = (k & 1) ? GC_malloc(sz) : GC_malloc_atomic(sz);
        CHECK(p != NULL, "churn: allocation of %zu bytes failed", sz);
        if (junk)
            memset(p, 0xEE, sz);
        done += sz;
    }
}

static void collect_churn(void)
{
    t_clear_stack();
    for (int i = 0; i < 3; i++) {
        churn(8 << 20, 1);
        GC_gcollect();
    }
}

static void **links; /* malloc'd, invisible to the collector */

static void watch(int i, void *obj)
{
    links[i] = obj;
    CHECK(GC_general_register_disappearing_link(&links[i], obj) == GC_SUCCESS);
}

static int count_cleared(int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += links[i] == NULL;
    return k;
}

static void unwatch_all(int n)
{
    for (int i = 0; i < n; i++) {
        GC_unregister_disappearing_link(&links[i]);
        links[i] = NULL;
    }
}

static int oom_calls;
static void *GC_CALLBACK counting_oom(size_t bytes)
{
    (void)bytes;
    oom_calls++;
    return NULL;
}

static int warn_calls;
static void GC_CALLBACK my_warn(char *msg, GC_word arg)
{
    (void)msg;
    (void)arg;
    warn_calls++;
}

static int fin_calls;
static void GC_CALLBACK count_fin(void *obj, void *cd)
{
    (void)obj;
    (void)cd;
    fin_calls++;
}

struct pair {
    struct pair *next;
    long val;
};

/* roots in .data (initialized, nonzero) and .bss */
static int data_anchor = 42;
static void *g_data_ptr = &data_anchor;
static void *g_data_interior = &data_anchor;
static void *g_bss_ptr;

/* ---- sections ------------------------------------------------------------- */
T_NOINLINE static void dirty_and_drop(void)
{
    for (int i = 0; i < 2000; i++) {
        size_t sz = 16 + (size_t)(t_mix64(i) % 4000);
        char *p = GC_malloc(sz);
        CHECK(p != NULL);
        memset(p, 0xAB, sz);
        if (i % 3 == 0)
            GC_free(p);
    }
}

static void test_malloc_clears(void)
{
    /* Recycle memory full of junk (explicitly freed and collected), then
     * check that fresh objects are all zero. */
    for (int round = 0; round < 3; round++) {
        dirty_and_drop();
        t_clear_stack();
        GC_gcollect();
        for (int i = 0; i < 2000; i++) {
            size_t sz = 16 + (size_t)(t_mix64(i + 7) % 4000);
            char *p = GC_malloc(sz);
            CHECK(p != NULL);
            CHECK(all_zero(p, sz), "GC_malloc(%zu) returned non-zeroed memory",
                  sz);
            memset(p, 0xCD, sz);
        }
    }
    for (size_t sz = 1; sz <= 1 << 20; sz = sz * 3 + 1) {
        char *p = GC_malloc(sz);
        CHECK(p != NULL);
        CHECK(all_zero(p, sz), "GC_malloc(%zu) not zeroed", sz);
        CHECK(((uintptr_t)p % 16) == 0 || sz < 16,
              "GC_malloc(%zu) = %p is not 16-byte aligned", sz, (void *)p);
        CHECK(((uintptr_t)p % sizeof(void *)) == 0);
        CHECK(GC_size(p) >= sz, "GC_size %zu < %zu", GC_size(p), sz);
    }
    void *z = GC_malloc(0);
    CHECK(z != NULL, "GC_malloc(0) returned NULL (bdwgc returns an object)");
    CHECK(GC_base(z) == z);
}

static void test_atomic(void)
{
    for (size_t sz = 1; sz <= 3 << 20; sz = sz * 5 + 3) {
        char *p = GC_malloc_atomic(sz);
        CHECK(p != NULL, "GC_malloc_atomic(%zu) = NULL", sz);
        CHECK(((uintptr_t)p % 16) == 0 || sz < 16);
        CHECK(GC_size(p) >= sz);
        fill(p, sz, sz);
        CHECK(GC_base(p + sz - 1) == p);
        CHECK(intact(p, sz, sz), "GC_malloc_atomic(%zu): contents lost", sz);
    }
}

T_NOINLINE static void make_uncollectable(GC_word *hidden_u, int atomic)
{
    void **u = atomic ? GC_malloc_atomic_uncollectable(256)
                      : GC_malloc_uncollectable(256);
    CHECK(u != NULL);
    fill(u + 1, 256 - sizeof(void *), 99);
    u[0] = NULL;
    if (!atomic) {
        /* a collectable object referenced only from u */
        char *c = GC_malloc(5000);
        CHECK(c != NULL);
        fill(c, 5000, 1234);
        u[0] = c;
        watch(0, c);
    }
    watch(1, u);
    *hidden_u = GC_HIDE_POINTER(u);
}

static void test_uncollectable(void)
{
    for (int atomic = 0; atomic <= 1; atomic++) {
        GC_word hu;
        make_uncollectable(&hu, atomic);
        collect_churn();
        void **u = GC_REVEAL_POINTER(hu);
        CHECK(links[1] == u, "uncollectable object%s was collected",
              atomic ? " (atomic)" : "");
        CHECK(intact(u + 1, 256 - sizeof(void *), 99),
              "uncollectable object contents overwritten (memory reused?)");
        if (!atomic) {
            CHECK(links[0] != NULL && u[0] == links[0],
                  "object referenced only from an uncollectable object was "
                  "collected");
            CHECK(intact(u[0], 5000, 1234),
                  "object referenced from an uncollectable object corrupted");
        }
        unwatch_all(2);
        GC_free(u);
    }
}

static void test_free_reuse(void)
{
    /* GC_free(NULL) is a no-op */
    GC_free(NULL);
    /* Freed memory can be handed out again: with collection disabled, most
     * of 1000 freed objects come back from 1000 allocations, cleared.  16
     * and 32 bytes take GC_free's fastest path (its own clear), 48 the
     * general one. */
    static void *ptrs[N]; /* .bss: keeps them alive until freed */
    static const size_t sizes[] = {16, 32, 48};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t size = sizes[k];
        GC_disable();
        for (int i = 0; i < N; i++) {
            ptrs[i] = GC_malloc(size);
            CHECK(ptrs[i] != NULL);
            memset(ptrs[i], 0x77, size);
        }
        uintptr_t *addrs = malloc(N * sizeof *addrs);
        CHECK(addrs != NULL);
        for (int i = 0; i < N; i++) {
            addrs[i] = (uintptr_t)ptrs[i];
            GC_free(ptrs[i]);
            ptrs[i] = NULL;
        }
        int reused = 0;
        for (int i = 0; i < N; i++) {
            char *p = GC_malloc(size);
            CHECK(p != NULL);
            CHECK(all_zero(p, size), "reallocated freed %zu-byte object not zeroed", size);
            for (int j = 0; j < N; j++)
                if (addrs[j] == (uintptr_t)p) {
                    reused++;
                    break;
                }
            ptrs[i] = p;
        }
        GC_enable();
        CHECK(reused >= N / 2,
              "only %d of %d GC_free'd %zu-byte objects were reused by GC_malloc",
              reused, N, size);
        t_note("GC_free: %d/%d %zu-byte objects reused", reused, N, size);
        free(addrs);
        memset(ptrs, 0, sizeof ptrs);
    }
    /* free of large and atomic objects */
    for (int i = 0; i < 50; i++) {
        char *big = GC_malloc(300000);
        char *at = GC_malloc_atomic(100000);
        CHECK(big && at);
        GC_free(big);
        GC_free(at);
    }
}

static void test_realloc(void)
{
    size_t sizes[] = {8, 100, 5000, 200000, 50, 3, 1 << 20, 4096, 17};
    char *p = GC_realloc(NULL, 10);
    CHECK(p != NULL, "GC_realloc(NULL, n) must allocate");
    fill(p, 10, 555);
    size_t cur = 10;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t ns = sizes[k];
        char *q = GC_realloc(p, ns);
        CHECK(q != NULL, "GC_realloc to %zu failed", ns);
        size_t keep = cur < ns ? cur : ns;
        CHECK(intact(q, keep, 555),
              "GC_realloc %zu -> %zu lost the first %zu bytes", cur, ns, keep);
        CHECK(GC_size(q) >= ns);
        fill(q, ns, 555);
        p = q;
        cur = ns;
    }
    /* pointers inside a reallocated object still keep their targets */
    void **v = GC_malloc(4 * sizeof(void *));
    CHECK(v != NULL);
    char *target = GC_malloc_atomic(777);
    CHECK(target != NULL);
    fill(target, 777, 31337);
    v[3] = target;
    watch(0, target);
    target = NULL;
    v = GC_realloc(v, 100000);
    CHECK(v != NULL);
    v = GC_realloc(v, 5 * sizeof(void *));
    CHECK(v != NULL);
    collect_churn();
    CHECK(links[0] != NULL && v[3] == links[0],
          "object referenced from a realloc'd object was collected");
    CHECK(intact(v[3], 777, 31337));
    unwatch_all(1);
    /* realloc of an atomic object */
    char *a = GC_malloc_atomic(100);
    CHECK(a != NULL);
    fill(a, 100, 8);
    a = GC_realloc(a, 10000);
    CHECK(a != NULL && intact(a, 100, 8));
    /* huge realloc fails cleanly, leaving the object alone */
    oom_calls = 0;
    GC_oom_func old = GC_get_oom_fn();
    GC_set_oom_fn(counting_oom);
    volatile size_t huge = SIZE_MAX / 2;
    char *f = GC_realloc(a, huge);
    CHECK(f == NULL, "GC_realloc(p, SIZE_MAX/2) returned %p", (void *)f);
    CHECK(intact(a, 100, 8), "failed GC_realloc damaged the object");
    GC_set_oom_fn(old);
}

static void test_base_size(void)
{
    size_t sizes[] = {1, 16, 24, 100, 2048, 4096, 4097, 65536, 300000, 2 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t sz = sizes[k];
        char *p = GC_malloc(sz);
        CHECK(p != NULL);
        CHECK(GC_base(p) == p, "GC_base(p) != p for size %zu", sz);
        CHECK(GC_base(p + sz / 2) == p,
              "GC_base(interior %zu of %zu) wrong", sz / 2, sz);
        CHECK(GC_base(p + sz - 1) == p, "GC_base(last byte of %zu) wrong", sz);
        CHECK(GC_size(p) >= sz, "GC_size(%zu-byte object) = %zu", sz,
              GC_size(p));
        CHECK(GC_is_heap_ptr(p + sz / 2) != 0);
    }
    int on_stack = 0;
    static int in_bss;
    char *m = malloc(100);
    CHECK(m != NULL);
    CHECK(GC_base(&on_stack) == NULL, "GC_base(stack address) != NULL");
    CHECK(GC_base(&in_bss) == NULL, "GC_base(static address) != NULL");
    CHECK(GC_base(&data_anchor) == NULL);
    CHECK(GC_base(m + 10) == NULL, "GC_base(malloc'd address) != NULL");
    CHECK(GC_base(NULL) == NULL);
    CHECK(GC_base((void *)(uintptr_t)0x10) == NULL);
    CHECK(GC_base((void *)~(uintptr_t)0xff) == NULL);
    CHECK(GC_is_heap_ptr(&on_stack) == 0 && GC_is_heap_ptr(m) == 0);
    free(m);
}

typedef struct {
    long a;
    double b;
    void *c;
} rec;

static void test_macros(void)
{
    rec *r = GC_NEW(rec);
    CHECK(r != NULL && r->a == 0 && r->c == NULL);
    rec *ra = GC_NEW_ATOMIC(rec);
    CHECK(ra != NULL);
    ra->a = 5;
    rec *ru = GC_NEW_UNCOLLECTABLE(rec);
    CHECK(ru != NULL);
    char *m = GC_MALLOC(100);
    CHECK(m != NULL && all_zero(m, 100));
    char *ma = GC_MALLOC_ATOMIC(100);
    CHECK(ma != NULL);
    char *mu = GC_MALLOC_UNCOLLECTABLE(64);
    CHECK(mu != NULL);
    m = GC_REALLOC(m, 1000);
    CHECK(m != NULL && all_zero(m, 100));
    char *s = GC_STRDUP("macro");
    CHECK(s != NULL && strcmp(s, "macro") == 0);
    GC_finalization_proc ofn = (GC_finalization_proc)1;
    void *ocd = (void *)1;
    GC_REGISTER_FINALIZER(r, count_fin, NULL, &ofn, &ocd);
    CHECK(ofn == NULL && ocd == NULL);
    GC_REGISTER_FINALIZER(r, NULL, NULL, &ofn, &ocd);
    CHECK(ofn == count_fin, "GC_REGISTER_FINALIZER did not register");
    GC_FREE(ru);
    GC_FREE(mu);
    GC_word w = GC_HIDE_POINTER(s);
    CHECK(GC_REVEAL_POINTER(w) == s);
}

static void test_strdup(void)
{
    const char *src = "the quick brown fox \xc3\xa9 jumps";
    char *d = GC_strdup(src);
    CHECK(d != NULL && d != src && strcmp(d, src) == 0);
    CHECK(GC_base(d) == d);
    CHECK(GC_size(d) >= strlen(src) + 1);
    char *e = GC_strdup("");
    CHECK(e != NULL && e[0] == 0);
    CHECK(GC_strdup(NULL) == NULL, "GC_strdup(NULL) must return NULL");
    char big[10000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    char *bd = GC_strdup(big);
    CHECK(bd && strlen(bd) == sizeof big - 1);
    /* GC_strndup terminates the copy itself: pointer-free objects come
     * back from GC_free uncleared, and the next one of that size may be
     * one of these, full of 'x'. */
    /* (The terminator past the first word: the free-list link clears
     * that one.) */
    for (int i = 0; i < 64; i++) {
        char *junk = GC_malloc_atomic(11);
        CHECK(junk != NULL);
        memset(junk, 'x', GC_size(junk));
        GC_free(junk);
        char *n = GC_strndup("hello, world", 10);
        CHECK(n && strcmp(n, "hello, wor") == 0, "GC_strndup gave \"%.16s\"", n ? n : "(null)");
    }
}

static void test_stats(void)
{
    size_t hs = GC_get_heap_size(), fb = GC_get_free_bytes();
    CHECK(hs > 0, "GC_get_heap_size() == 0");
    CHECK(fb <= hs, "free bytes %zu > heap size %zu", fb, hs);
    size_t tb0 = GC_get_total_bytes();
    for (int i = 0; i < 1024; i++)
        CHECK(GC_malloc(1024) != NULL);
    size_t tb1 = GC_get_total_bytes();
    CHECK(tb1 >= tb0 + 1000 * 1024,
          "GC_get_total_bytes grew by %zu after allocating 1 MiB", tb1 - tb0);
    GC_word g0 = GC_get_gc_no();
    GC_gcollect();
    GC_word g1 = GC_get_gc_no();
    CHECK(g1 > g0, "GC_get_gc_no did not increase after GC_gcollect (%lu)",
          (unsigned long)g1);
    GC_gcollect();
    CHECK(GC_get_gc_no() > g1);
    CHECK(GC_get_free_bytes() <= GC_get_heap_size());
    CHECK(GC_get_total_bytes() >= tb1, "total bytes went backwards");

    /* GC_expand_hp */
    size_t before = GC_get_heap_size();
    CHECK(GC_expand_hp(64 << 20) == 1, "GC_expand_hp(64 MiB) failed");
    size_t after = GC_get_heap_size();
    CHECK(after >= before + (60 << 20),
          "heap grew from %zu to %zu KiB after GC_expand_hp(64 MiB)",
          before >> 10, after >> 10);
    CHECK(GC_get_free_bytes() >= (60 << 20),
          "free bytes %zu KiB after expanding the heap",
          GC_get_free_bytes() >> 10);
    t_note("heap %zu KiB -> %zu KiB after GC_expand_hp", before >> 10,
           after >> 10);
}

static void test_huge(void)
{
    oom_calls = 0;
    GC_oom_func old = GC_get_oom_fn();
    GC_set_oom_fn(counting_oom);
    CHECK(GC_get_oom_fn() == counting_oom);
    volatile size_t max = SIZE_MAX; /* hide the constant from gcc's checks */
    CHECK(GC_malloc(max) == NULL, "GC_malloc(SIZE_MAX) != NULL");
    CHECK(GC_malloc(max / 2) == NULL, "GC_malloc(SIZE_MAX/2) != NULL");
    CHECK(GC_malloc_atomic(max - 8) == NULL);
    CHECK(GC_malloc_atomic(max / 2 + 1) == NULL);
    CHECK(GC_malloc_uncollectable(max / 4) == NULL);
    CHECK(GC_malloc((size_t)1 << 46) == NULL, "GC_malloc(64 TiB) != NULL");
    CHECK(oom_calls >= 1, "the oom function was never called");
    GC_set_oom_fn(old);
    /* the collector still works */
    char *p = GC_malloc(1000);
    CHECK(p != NULL);
    GC_gcollect();
}

static void test_disable(void)
{
    CHECK(!GC_is_disabled());
    GC_disable();
    GC_disable(); /* nested */
    CHECK(GC_is_disabled());
    GC_word g = GC_get_gc_no();
    churn(64 << 20, 0);
    GC_gcollect(); /* also suppressed */
    CHECK(GC_get_gc_no() == g,
          "a collection happened while GC_disable()d (gc_no %lu -> %lu)",
          (unsigned long)g, (unsigned long)GC_get_gc_no());
    GC_enable();
    CHECK(GC_is_disabled(), "GC_disable is a counter: one enable left");
    GC_gcollect();
    CHECK(GC_get_gc_no() == g);
    GC_enable();
    CHECK(!GC_is_disabled());
    GC_gcollect();
    CHECK(GC_get_gc_no() > g, "no collection after GC_enable");

    /* the deprecated variable works the same way (old programs set it) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    g = GC_get_gc_no();
    GC_dont_gc = 1;
    churn(16 << 20, 0);
    GC_gcollect();
    CHECK(GC_get_gc_no() == g, "collection while GC_dont_gc = 1");
    GC_dont_gc = 0;
#pragma GCC diagnostic pop
    GC_gcollect();
    CHECK(GC_get_gc_no() > g);
}

T_NOINLINE static void make_rooted(void **range, int n)
{
    for (int i = 0; i < n; i++) {
        char *o = GC_malloc(64 + i % 200);
        CHECK(o != NULL);
        fill(o, 64, (uint64_t)i);
        /* half of them through interior pointers */
        range[i] = (i & 1) ? o + 17 : o;
        watch(i, o);
    }
}

static void check_rooted(void **range, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        char *o = (char *)range[i] - ((i & 1) ? 17 : 0);
        CHECK(links[i] == o, "%s: object %d collected while rooted", what, i);
        CHECK(intact(o, 64, (uint64_t)i), "%s: object %d corrupted", what, i);
    }
}

static void test_add_remove_roots(void)
{
    const int n = N;
    void **range = malloc((size_t)n * sizeof(void *) + 64);
    CHECK(range != NULL);
    GC_add_roots(range, range + n);
    make_rooted(range, n);
    collect_churn();
    check_rooted(range, n, "GC_add_roots");
    GC_remove_roots(range, range + n);
    collect_churn();
    int k = count_cleared(n);
    CHECK(k * 10 >= n * 9,
          "after GC_remove_roots only %d of %d objects were collected", k, n);
    unwatch_all(n);
    memset(range, 0, (size_t)n * sizeof(void *));

    /* GC_clear_roots drops the registered range too */
    GC_add_roots(range, range + n);
    make_rooted(range, n);
    collect_churn();
    check_rooted(range, n, "GC_add_roots (2)");
    GC_clear_roots();
    collect_churn();
    k = count_cleared(n);
    CHECK(k * 10 >= n * 9,
          "after GC_clear_roots only %d of %d objects were collected", k, n);
    unwatch_all(n);
    free(range);
}

T_NOINLINE static void make_static_rooted(void)
{
    char *a = GC_malloc(1000), *b = GC_malloc(3000), *c = GC_malloc(200000);
    CHECK(a && b && c);
    fill(a, 1000, 1);
    fill(b, 3000, 2);
    fill(c, 200000, 3);
    g_data_ptr = a;
    g_bss_ptr = b;
    g_data_interior = c + 150000; /* interior pointer only */
    watch(0, a);
    watch(1, b);
    watch(2, c);
}

static void test_static_roots(void)
{
    make_static_rooted();
    collect_churn();
    collect_churn();
    CHECK(links[0] == g_data_ptr, "object referenced from .data collected");
    CHECK(links[1] == g_bss_ptr, "object referenced from .bss collected");
    CHECK(links[2] == (char *)g_data_interior - 150000,
          "object referenced by an interior pointer from .data collected");
    CHECK(intact(g_data_ptr, 1000, 1) && intact(g_bss_ptr, 3000, 2) &&
              intact(links[2], 200000, 3),
          "statically referenced objects corrupted");
    unwatch_all(3);
}

/* Every word of an object is scanned, up to the last one: for each size,
 * a holder keeps a target alive from its first and from its last aligned
 * word, and another target by a pointer to the target's last byte.  Holders
 * are reachable from a .bss array; targets only from holders. */
#define NSIZES 160
static void **holders[NSIZES];
static size_t holder_size[NSIZES];

static size_t extent_size(int k)
{
    if (k < 128)
        return 16 + (size_t)k * 8; /* 16 .. 1032, every 8 bytes */
    return 1040 + (size_t)(k - 128) * (size_t)(k - 127) * 731; /* to ~740 KiB */
}

T_NOINLINE static void make_extent_holders(void)
{
    for (int k = 0; k < NSIZES; k++) {
        size_t sz = extent_size(k);
        int kind = k % 3; /* plain, uncollectable, realloc'd */
        void **h;
        if (kind == 1) {
            h = GC_malloc_uncollectable(sz);
        } else if (kind == 2) {
            h = GC_malloc(sz / 2 + 8);
            CHECK(h != NULL);
            h = GC_realloc(h, sz);
            CHECK(h != NULL);
            memset(h, 0, sz);
        } else {
            h = GC_malloc(sz);
        }
        CHECK(h != NULL);
        size_t last = sz / sizeof(void *) - 1;
        char *t0 = GC_malloc(40), *t1 = GC_malloc(40), *t2 = GC_malloc(24);
        CHECK(t0 && t1 && t2);
        fill(t0, 40, 3 * (uint64_t)k);
        fill(t1, 40, 3 * (uint64_t)k + 1);
        fill(t2, 24, 3 * (uint64_t)k + 2);
        h[0] = t0;
        h[last] = t1;
        if (last > 1)
            h[last - 1] = t2 + 23; /* pointer to the last byte of t2 */
        watch(3 * k, t0);
        watch(3 * k + 1, t1);
        watch(3 * k + 2, t2);
        holders[k] = h;
        holder_size[k] = sz;
    }
}

static void test_scan_extent(void)
{
    CHECK(3 * NSIZES <= N);
    make_extent_holders();
    collect_churn();
    collect_churn();
    for (int k = 0; k < NSIZES; k++) {
        size_t sz = holder_size[k], last = sz / sizeof(void *) - 1;
        void **h = holders[k];
        CHECK(links[3 * k] != NULL && h[0] == links[3 * k],
              "target of the first word of a %zu-byte holder collected", sz);
        CHECK(links[3 * k + 1] != NULL && h[last] == links[3 * k + 1],
              "target of the LAST word (offset %zu) of a %zu-byte holder "
              "(kind %d) was collected: the object is not scanned to its end",
              last * sizeof(void *), sz, k % 3);
        CHECK(intact(h[0], 40, 3 * (uint64_t)k) &&
                  intact(h[last], 40, 3 * (uint64_t)k + 1),
              "targets of a %zu-byte holder corrupted", sz);
        if (last > 1) {
            CHECK(links[3 * k + 2] != NULL,
                  "object referenced only by a pointer to its last byte "
                  "collected (holder %zu bytes)", sz);
            CHECK(intact(links[3 * k + 2], 24, 3 * (uint64_t)k + 2));
        }
    }
    unwatch_all(3 * NSIZES);
    for (int k = 0; k < NSIZES; k++) {
        if (k % 3 == 1)
            GC_free(holders[k]);
        holders[k] = NULL;
    }
}

static void test_misc(void)
{
    GC_warn_proc old = GC_get_warn_proc();
    CHECK(old != NULL);
    GC_set_warn_proc(my_warn);
    CHECK(GC_get_warn_proc() == my_warn, "warn proc round-trip failed");
    GC_set_warn_proc(old);
    CHECK(GC_get_warn_proc() == old);

    int ss = GC_get_suspend_signal(), rs = GC_get_thr_restart_signal();
    CHECK(ss > 0 && ss < NSIG, "GC_get_suspend_signal() = %d", ss);
    CHECK(rs > 0 && rs < NSIG, "GC_get_thr_restart_signal() = %d", rs);
    CHECK(ss != SIGSEGV && ss != SIGBUS && ss != SIGKILL && ss != SIGSTOP);
    t_note("suspend signal %d, restart signal %d", ss, rs);
}

struct chunk {
    struct chunk *next;
    char data[];
};

/* Fill the heap with 1 MiB chunks until GC_malloc returns NULL; the chain
 * dies when this returns (non-inlined so main's frame holds no pointer). */
T_NOINLINE static size_t fill_heap(int *nulls, size_t *heap_at_full)
{
    struct chunk *head = NULL;
    size_t got = 0;
    for (int i = 0; i < 4096; i++) {
        struct chunk *c = GC_malloc(1 << 20);
        if (!c) {
            (*nulls)++;
            break;
        }
        c->next = head;
        head = c;
        got += 1 << 20;
    }
    *heap_at_full = GC_get_heap_size();
    size_t cnt = 0;
    for (struct chunk *c = head; c; c = c->next)
        cnt++;
    CHECK(cnt == got >> 20, "chunk chain broken");
    return got;
}

/* GC_memalign and GC_posix_memalign: aligned, zeroed, kept while
 * referenced, and not wasteful: an object of at most twice the larger of
 * size and alignment, plus the alignment (bdwgc takes 672 bytes for 300
 * aligned to 256).  sgc served every alignment
 * above 16 bytes from a large object (2064 bytes for 100 aligned to 32)
 * before its small classes that are multiples of the alignment were
 * used. */
static void test_memalign(void)
{
    static const size_t sizes[] = {1, 17, 100, 300, 1030, 2047, 2049, 5000};
    enum { MEMALIGN_SIZES = sizeof sizes / sizeof *sizes, MEMALIGN_ALIGNS = 10 };
    static unsigned char *kept[MEMALIGN_ALIGNS][MEMALIGN_SIZES];
    for (int a = 0; a < MEMALIGN_ALIGNS; a++) {
        size_t align = (size_t)8 << a; /* 8 .. 4096 */
        for (int s = 0; s < MEMALIGN_SIZES; s++) {
            unsigned char *p = GC_memalign(align, sizes[s]);
            CHECK(p != NULL, "GC_memalign(%zu, %zu) failed", align, sizes[s]);
            CHECK(((uintptr_t)p & (align - 1)) == 0, "GC_memalign(%zu, %zu) = %p", align,
                  sizes[s], (void *)p);
            for (size_t i = 0; i < sizes[s]; i++)
                CHECK(p[i] == 0, "GC_memalign(%zu, %zu): byte %zu not zero", align, sizes[s], i);
            size_t room = GC_size(GC_base(p)) - (size_t)(p - (unsigned char *)GC_base(p));
            CHECK(room >= sizes[s], "GC_memalign(%zu, %zu): %zu bytes of room", align, sizes[s],
                  room);
            size_t larger = sizes[s] > align ? sizes[s] : align;
            CHECK(GC_size(GC_base(p)) <= 2 * larger + align, "GC_memalign(%zu, %zu) took a %zu-byte "
                  "object", align, sizes[s], GC_size(GC_base(p)));
            memset(p, (int)(a * MEMALIGN_SIZES + s + 1), sizes[s]);
            kept[a][s] = p;
        }
    }
    GC_gcollect();
    for (int a = 0; a < MEMALIGN_ALIGNS; a++)
        for (int s = 0; s < MEMALIGN_SIZES; s++)
            for (size_t i = 0; i < sizes[s]; i++)
                CHECK(kept[a][s][i] == (unsigned char)(a * MEMALIGN_SIZES + s + 1),
                      "GC_memalign(%zu, %zu): byte %zu changed after a collection",
                      (size_t)8 << a, sizes[s], i);
    void *q = NULL;
    CHECK(GC_posix_memalign(&q, 3, 10) == EINVAL, "GC_posix_memalign accepted alignment 3");
    CHECK(GC_posix_memalign(&q, 256, 10) == 0 && q && ((uintptr_t)q & 255) == 0);
    memset(kept, 0, sizeof kept);
}

static void test_max_heap(void)
{
    GC_gcollect();
    /* bdwgc's limit applies to the whole heap, including unmapped parts */
    size_t hs = GC_get_heap_size() + GC_get_unmapped_bytes();
    size_t limit = hs + (32 << 20);
    GC_set_max_heap_size(limit);
    oom_calls = 0;
    GC_oom_func old = GC_get_oom_fn();
    GC_set_oom_fn(counting_oom);
    int nulls = 0;
    size_t heap_full = 0;
    size_t got = fill_heap(&nulls, &heap_full);
    CHECK(nulls == 1, "allocating 4 GiB with a heap limit of %zu MiB never "
          "returned NULL", limit >> 20);
    CHECK(oom_calls >= 1, "GC_malloc returned NULL without calling the oom "
          "function");
    CHECK(got >= (8 << 20), "only %zu MiB allocated under a limit of %zu MiB "
          "(heap was %zu MiB)", got >> 20, limit >> 20, hs >> 20);
    CHECK(heap_full <= limit + (1 << 20),
          "heap %zu KiB exceeds the limit %zu KiB", heap_full >> 10,
          limit >> 10);
    /* once the chain is garbage, allocation succeeds again */
    t_clear_stack();
    GC_gcollect();
    int ok = 0;
    for (int i = 0; i < 8; i++)
        ok += GC_malloc(1 << 20) != NULL;
    CHECK(ok == 8, "allocation fails even after the memory was freed");
    GC_set_oom_fn(old);
    t_note("max heap: %zu MiB allocated under a %zu MiB limit; oom fn called "
           "%d times", got >> 20, limit >> 20, oom_calls);
}

int main(void)
{
    t_test_name = "api_basic";
    GC_INIT();
    links = calloc(N, sizeof *links);
    CHECK(links != NULL);

    test_malloc_clears();
    test_atomic();
    test_uncollectable();
    test_free_reuse();
    test_realloc();
    test_base_size();
    test_macros();
    test_strdup();
    test_stats();
    test_huge();
    test_disable();
    test_static_roots();
    test_scan_extent();
    test_misc();
    test_memalign();
    test_add_remove_roots();
    test_max_heap();
    t_note("PASS");
    return 0;
}
