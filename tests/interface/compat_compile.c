/* compat_compile: "a bdwgc program compiles against sgc's gc.h unchanged".
 *
 * Written the way programs written for bdwgc are: GC_THREADS before
 * <gc.h> (so pthread_create & co. are redirected), GC_INIT() first, the
 * allocation macros, GC_CALLBACK/GC_CALL in callbacks, the public types
 * (GC_word, GC_PTR, GC_finalization_proc, GC_fn_type, GC_stack_base_func,
 * GC_warn_proc, GC_oom_func, GC_stop_func, struct GC_stack_base) and a few
 * deprecated public variables old programs still touch.
 *
 * Built with -DCOMPAT_GC_SUBDIR it includes <gc/gc.h> instead (Debian
 * installs both; sgc installs include/gc/gc.h).  compat_compile.sh builds
 * and runs both variants at test time, so a header incompatibility shows up
 * as a failing test, not a broken build.
 *
 * Beyond compiling, it runs a little Lisp-ish workload and checks results.
 */
#define GC_THREADS
/* Settings GC_INIT applies (bdwgc's GC_INIT_CONF_*). */
#define GC_INITIAL_HEAP_SIZE (24 << 20)
#define GC_FREE_SPACE_DIVISOR 4
#define GC_MARKERS 2
#ifdef COMPAT_GC_SUBDIR
#include <gc/gc.h>
#else
#include <gc.h>
#endif
#include <gc/gc_inline.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GC_H
#error "gc.h must define GC_H (programs test it)"
#endif
#if !defined(GC_VERSION_MAJOR) || GC_VERSION_MAJOR < 7
#error "GC_VERSION_MAJOR missing or too old"
#endif

#define FAIL(msg)                                                           \
    do {                                                                    \
        fprintf(stderr, "FAIL [compat_compile] %s:%d: %s\n", __FILE__,       \
                __LINE__, msg);                                             \
        exit(1);                                                            \
    } while (0)
#define EXPECT(c)                                                           \
    do {                                                                    \
        if (!(c))                                                           \
            FAIL(#c);                                                       \
    } while (0)

/* ---- a tiny Lisp heap -------------------------------------------------- */
typedef enum { T_INT, T_CONS, T_STR, T_PORT } tag_t;
typedef struct obj {
    tag_t tag;
    union {
        long i;
        struct {
            struct obj *car, *cdr;
        } c;
        struct {
            size_t len;
            char *chars; /* GC_MALLOC_ATOMIC */
        } s;
        struct {
            int fd;
        } p;
    } u;
} obj;

static obj *mk_int(long v)
{
    obj *o = GC_NEW(obj);
    EXPECT(o != NULL);
    o->tag = T_INT;
    o->u.i = v;
    return o;
}

static obj *cons(obj *a, obj *d)
{
    obj *o = (obj *)GC_MALLOC(sizeof(obj));
    EXPECT(o != NULL);
    o->tag = T_CONS;
    o->u.c.car = a;
    o->u.c.cdr = d;
    return o;
}

static obj *mk_str(const char *s)
{
    obj *o = GC_NEW(obj);
    size_t n = strlen(s);
    EXPECT(o != NULL);
    o->tag = T_STR;
    o->u.s.len = n;
    o->u.s.chars = (char *)GC_MALLOC_ATOMIC(n + 1);
    EXPECT(o->u.s.chars != NULL);
    memcpy(o->u.s.chars, s, n + 1);
    return o;
}

static int ports_closed;
static void GC_CALLBACK close_port(void *obj_, void *client_data)
{
    obj *o = (obj *)obj_;
    (void)client_data;
    if (o->tag == T_PORT)
        ports_closed++;
}

static obj *mk_port(int fd)
{
    obj *o = GC_NEW(obj);
    GC_finalization_proc ofn;
    GC_PTR ocd;
    EXPECT(o != NULL);
    o->tag = T_PORT;
    o->u.p.fd = fd;
    GC_REGISTER_FINALIZER(o, close_port, NULL, &ofn, &ocd);
    EXPECT(ofn == 0);
    return o;
}

static long sum_list(obj *l)
{
    long s = 0;
    for (; l; l = l->u.c.cdr)
        s += l->u.c.car->u.i;
    return s;
}

static obj *range(long n)
{
    obj *l = NULL;
    while (n > 0)
        l = cons(mk_int(n--), l);
    return l;
}

/* ---- callbacks of the various public function types --------------------- */
static void GC_CALLBACK quiet_warn(char *msg, GC_word arg)
{
    (void)msg;
    (void)arg;
}

static void *GC_CALLBACK on_oom(size_t n)
{
    (void)n;
    return NULL;
}

static int GC_CALLBACK never_stop(void)
{
    return 0;
}

static void *GC_CALLBACK with_lock(void *cd)
{
    return (void *)((GC_word)cd + 1);
}

static void *GC_CALLBACK with_base(struct GC_stack_base *sb, void *arg)
{
    return sb->mem_base != NULL ? arg : NULL;
}

static void *GC_CALLBACK blocking(void *cd)
{
    return cd;
}

static void *thread_main(void *arg)
{
    long n = (long)(GC_word)arg;
    obj *l = range(n);
    GC_gcollect();
    return (void *)(GC_word)sum_list(l);
}

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int main(void)
{
    GC_word w;
    struct GC_stack_base sb;
    GC_fn_type fn = with_lock;
    GC_stack_base_func sbf = with_base;
    GC_warn_proc old_warn;
    GC_oom_func old_oom;
    pthread_t th[4];
    obj *l, *s, *weak_target;
    void *weak_slot;
    long i;

    GC_set_all_interior_pointers(1);
    GC_INIT();
    EXPECT(GC_get_heap_size() >= (24 << 20)); /* GC_INITIAL_HEAP_SIZE */
    EXPECT(GC_get_free_space_divisor() == 4); /* GC_FREE_SPACE_DIVISOR */
    GC_set_free_space_divisor(3);
    EXPECT(GC_get_free_space_divisor() == 3);
    old_warn = GC_get_warn_proc();
    GC_set_warn_proc(quiet_warn);
    old_oom = GC_get_oom_fn();
    GC_set_oom_fn(on_oom);
    EXPECT((GC_get_version() >> 16) >= 7);
    EXPECT(GC_get_all_interior_pointers() == 1);

    /* deprecated public variables old programs use directly */
    w = GC_gc_no;
    GC_dont_gc = 0;
    EXPECT(GC_free_space_divisor == 3);
    (void)w;

    l = range(10000);
    EXPECT(sum_list(l) == 10000L * 10001 / 2);
    s = mk_str("hello, world");
    for (i = 0; i < 100; i++)
        (void)mk_port((int)i);

    {
        char *dup = GC_STRDUP(s->u.s.chars);
        EXPECT(dup != NULL && strcmp(dup, "hello, world") == 0);
        dup = (char *)GC_REALLOC(dup, 4000);
        EXPECT(dup != NULL && strcmp(dup, "hello, world") == 0);
        GC_FREE(dup);
    }
    {
        GC_PTR u = GC_MALLOC_UNCOLLECTABLE(100);
        GC_PTR au = GC_MALLOC_ATOMIC_UNCOLLECTABLE(100);
        GC_PTR big = GC_MALLOC_IGNORE_OFF_PAGE(1 << 20);
        GC_PTR abig = GC_malloc_atomic_ignore_off_page(1 << 20);
        EXPECT(u && au && big && abig);
        EXPECT(GC_base((char *)big + 1000) == big);
        EXPECT(GC_size(u) >= 100);
        GC_FREE(u);
        GC_FREE(au);
    }

    /* gc_inline.h's macros, pointer arithmetic, GC_reachable_here */
    {
        void *tiny_fl[GC_TINY_FREELISTS] = {0};
        void **words, **pair;
        char *chars, *p;
        struct GC_timeval_s tv = {5, 250};
        GC_hidden_pointer hidden;
        GC_MALLOC_WORDS(words, 3, tiny_fl);
        EXPECT(words != NULL && words[0] == NULL && words[2] == NULL);
        GC_MALLOC_ATOMIC_WORDS(chars, 2, tiny_fl);
        EXPECT(chars != NULL && GC_size(chars) >= 2 * sizeof(GC_word));
        GC_CONS(pair, words, chars, tiny_fl);
        EXPECT(pair != NULL && pair[0] == (void *)words && pair[1] == (void *)chars);
        GC_PTR_STORE_AND_DIRTY(&words[1], pair);
        EXPECT(words[1] == (void *)pair);
        p = GC_PTR_ADD(chars, 1);
        EXPECT(p == chars + 1);
        (void)GC_PRE_INCR(p, 2);
        (void)GC_POST_INCR(p);
        (void)GC_POST_DECR(p);
        EXPECT(p == chars + 3);
        hidden = GC_HIDE_POINTER(pair);
        EXPECT(GC_REVEAL_POINTER(hidden) == (void *)pair);
        GC_set_time_limit_tv(tv);
        tv = GC_get_time_limit_tv();
        EXPECT(tv.tv_ms == 5 && tv.tv_nsec == 250);
        GC_set_time_limit(GC_TIME_UNLIMITED);
        GC_reachable_here(pair);
    }

    /* weak pointer through the macro */
    weak_target = mk_int(5);
    weak_slot = weak_target;
    EXPECT(GC_GENERAL_REGISTER_DISAPPEARING_LINK(&weak_slot, weak_target) ==
           GC_SUCCESS);
    w = GC_HIDE_POINTER(weak_target);
    EXPECT(GC_REVEAL_POINTER(w) == weak_target);
    EXPECT(GC_unregister_disappearing_link(&weak_slot) == 1);

    for (i = 0; i < 4; i++)
        EXPECT(pthread_create(&th[i], NULL, thread_main,
                              (void *)(GC_word)(1000 * (i + 1))) == 0);
    for (i = 0; i < 4; i++) {
        void *r;
        EXPECT(pthread_join(th[i], &r) == 0);
        EXPECT((long)(GC_word)r == 1000 * (i + 1) * (1000 * (i + 1) + 1) / 2);
    }

    EXPECT(GC_call_with_alloc_lock(fn, (void *)41) == (void *)42);
    EXPECT(GC_call_with_stack_base(sbf, (void *)7) == (void *)7);
    EXPECT(GC_get_stack_base(&sb) == GC_SUCCESS);
    EXPECT(GC_do_blocking(blocking, (void *)9) == (void *)9);
    (void)GC_try_to_collect(never_stop);
    GC_gcollect();
    GC_gcollect_and_unmap();
    GC_invoke_finalizers();
    EXPECT(GC_get_heap_size() > 0);
    EXPECT(GC_get_free_bytes() <= GC_get_heap_size());
    EXPECT(GC_get_gc_no() > 0);
    EXPECT(GC_get_total_bytes() > 0);
    EXPECT(GC_get_bytes_since_gc() <= GC_get_total_bytes());
    GC_enable_incremental(); /* may be a no-op */
    l = cons(mk_int(1), l);
    EXPECT(sum_list(l) == 10000L * 10001 / 2 + 1);
    EXPECT(strcmp(s->u.s.chars, "hello, world") == 0);

    GC_set_warn_proc(old_warn);
    GC_set_oom_fn(old_oom);
    printf("[compat_compile] %s: PASS (%d of 100 ports finalized)\n",
#ifdef COMPAT_GC_SUBDIR
           "<gc/gc.h>",
#else
           "<gc.h>",
#endif
           ports_closed);
    return 0;
}
