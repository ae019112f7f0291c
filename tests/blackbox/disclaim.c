/* disclaim: bdwgc's gc_disclaim.h -- GC_finalized_malloc and disclaim
 * procedures on kinds a program makes and on GC_I_NORMAL.  Runs against
 * bdwgc too (run-against-bdwgc.sh).
 *
 * Counting is per object: every object carries an id, and a byte per id
 * counts the calls its closure or procedure got.  Retention is
 * conservative, so "most dropped objects were disclaimed" is statistical
 * (at least 90%); everything else is exact: no object is finalized twice,
 * none while the program still references it, and whatever a procedure
 * looks at is intact when it runs.
 *
 * What could fail:
 *  - a closure runs twice, or on an object still referenced (the 1000
 *    kept in a static array, a thread's window of recent objects), or not
 *    at all for most dropped objects after a few collections;
 *  - the proc gets the object's base rather than the user pointer, or
 *    GC_base / GC_size do not count the hidden closure word;
 *  - what only a dying finalized object references -- its fields, a
 *    heap-allocated closure and the closure's data, another finalized
 *    object -- is reclaimed before (or, for the other object, finalized
 *    before) the dying object's closure runs;
 *  - a procedure's non-zero return does not keep an unreachable object
 *    (its contents change), zero does not let it go, or an object is
 *    shown to its procedure again after it was let go;
 *  - the same on GC_I_NORMAL, small and large objects, and on a kind
 *    marked from all, whose referents must stay intact;
 *  - four threads allocating finalized objects while the main thread
 *    collects break any of the above.
 *
 * Sizes: DISCLAIM_OBJECTS (default 10000) dropped finalized objects,
 * DISCLAIM_THREAD_OBJECTS (default 5000) per thread. */
#define GC_THREADS
#include <gc.h>
#include <gc/gc_disclaim.h>
#include <gc/gc_inline.h> /* GC_I_NORMAL */
#include <gc/gc_mark.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "common.h"

#define MAGIC 0x444953434c41494dULL /* "DISCLAIM" */

enum {
    KEPT = 1000,    /* finalized objects the program keeps */
    THREADS = 4,
    WINDOW = 32,    /* each thread's recent objects, checked before dropping */
    CHILD_BYTES = 48,
    CD_BYTES = 64,
    RECORDS = 2000, /* per custom kind, and on GC_I_NORMAL */
    LARGE_FILL = 6000,
};

/* ---- ids and counts ---- */

static long n_dropped = 10000, n_thread = 5000;
/* Id ranges, in order: kept, dropped, partners (one per tenth dropped),
 * threads, plain-kind records, from-all-kind records, normal records. */
static long first_dropped, first_partner, first_thread, first_plain, first_from_all,
    first_normal, id_limit;
static _Atomic unsigned char *counts;
static atomic_int kept_released, records_released;
static atomic_uint bad_object, bad_pointer, bad_base, bad_fill, bad_child, bad_partner, bad_cd,
    early_kept;

static unsigned char pattern_byte(long id, size_t i) { return (unsigned char)(id * 131 + i * 7 + 1); }

static void fill(unsigned char *p, size_t n, long id) {
    for (size_t i = 0; i < n; i++) p[i] = pattern_byte(id, i);
}

static int filled(const unsigned char *p, size_t n, long id) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern_byte(id, i)) return 0;
    return 1;
}

static void *child_for(long id) {
    unsigned char *c = GC_MALLOC_ATOMIC(CHILD_BYTES);
    CHECK(c != NULL);
    fill(c, CHILD_BYTES, id ^ 0x5555);
    return c;
}

static int child_intact(const void *c, long id) { return c && filled(c, CHILD_BYTES, id ^ 0x5555); }

/* ---- finalized objects ---- */

struct fin {
    GC_word id;
    GC_word check;      /* MAGIC ^ id */
    GC_word self;       /* the user pointer, hidden: a plain one would keep it */
    void *child;        /* referenced only from here */
    struct fin *partner; /* another finalized object, only from here, or NULL */
    size_t fill_bytes;
    unsigned char fill[];
};

static int static_cd;

static int fin_valid(const struct fin *f) {
    return f->id > 0 && (long)f->id < id_limit && f->check == (MAGIC ^ f->id);
}

static void fin_proc(void *obj, void *cd) {
    struct fin *f = obj;
    if (!fin_valid(f)) {
        atomic_fetch_add(&bad_object, 1);
        return;
    }
    long id = (long)f->id;
    if (GC_REVEAL_POINTER(f->self) != obj) atomic_fetch_add(&bad_pointer, 1);
    if (GC_base(obj) != (char *)obj - sizeof(GC_word)) atomic_fetch_add(&bad_base, 1);
    if (counts[id] < 200) atomic_fetch_add(&counts[id], 1);
    if (id < first_dropped && !atomic_load(&kept_released)) atomic_fetch_add(&early_kept, 1);
    if (!filled(f->fill, f->fill_bytes, id)) atomic_fetch_add(&bad_fill, 1);
    if (!child_intact(f->child, id)) atomic_fetch_add(&bad_child, 1);
    if (f->partner) {
        const struct fin *p = f->partner;
        if (!fin_valid(p) || atomic_load(&counts[p->id]) != 0) atomic_fetch_add(&bad_partner, 1);
    }
    if (cd != &static_cd) {
        const unsigned char *d = cd;
        for (int i = 0; i < CD_BYTES; i++)
            if (d[i] != 0xcd) {
                atomic_fetch_add(&bad_cd, 1);
                break;
            }
    }
}

static const struct GC_finalizer_closure static_closure = {fin_proc, &static_cd};

/* A closure in the collected heap, its data too: only the object's
 * hidden word keeps them. */
static const struct GC_finalizer_closure *heap_closure(void) {
    struct GC_finalizer_closure *c = GC_MALLOC(sizeof *c);
    unsigned char *cd = GC_MALLOC_ATOMIC(CD_BYTES);
    CHECK(c != NULL && cd != NULL);
    memset(cd, 0xcd, CD_BYTES);
    c->proc = fin_proc;
    c->cd = cd;
    return c;
}

static size_t fill_bytes_for(long id) {
    if (id % 97 == 0) return LARGE_FILL; /* a large object */
    return (size_t)(id % 7) * 16 + 8;
}

static struct fin *make_fin(long id, struct fin *partner) {
    size_t n = fill_bytes_for(id);
    const struct GC_finalizer_closure *fc = id % 3 == 0 ? heap_closure() : &static_closure;
    struct fin *f = GC_finalized_malloc(sizeof *f + n, fc);
    CHECK(f != NULL);
    CHECK(GC_base(f) == (char *)f - sizeof(GC_word), "GC_base of a finalized object");
    CHECK(GC_size(GC_base(f)) >= sizeof *f + n + sizeof(GC_word));
    f->id = (GC_word)id;
    f->check = MAGIC ^ (GC_word)id;
    f->self = (GC_word)GC_HIDE_POINTER(f);
    f->child = child_for(id);
    f->partner = partner;
    f->fill_bytes = n;
    fill(f->fill, n, id);
    return f;
}

static void check_fin_intact(const struct fin *f, long id) {
    CHECK(f->id == (GC_word)id && f->check == (MAGIC ^ (GC_word)id), "id %ld", id);
    CHECK(GC_REVEAL_POINTER(f->self) == f);
    CHECK(filled(f->fill, f->fill_bytes, id), "fill of %ld", id);
    CHECK(child_intact(f->child, id), "child of %ld", id);
    CHECK(atomic_load(&counts[id]) == 0, "object %ld finalized while referenced", id);
}

static struct fin *kept[KEPT];

T_NOINLINE static void make_kept(void) {
    for (long i = 0; i < KEPT; i++) kept[i] = make_fin(1 + i, NULL);
}

T_NOINLINE static void make_dropped(void) {
    for (long i = 0; i < n_dropped; i++) {
        long id = first_dropped + i;
        struct fin *partner = i % 10 == 0 ? make_fin(first_partner + i / 10, NULL) : NULL;
        make_fin(id, partner);
    }
}

T_NOINLINE static void release_kept(void) {
    atomic_store(&kept_released, 1);
    memset(kept, 0, sizeof kept);
}

/* Ids FROM..FROM+N-1: none called twice, at least 90% once, and of the
 * large objects among them too. */
static void check_called_once(const char *what, long from, long n) {
    long once = 0, large = 0, large_once = 0;
    for (long id = from; id < from + n; id++) {
        unsigned c = atomic_load(&counts[id]);
        CHECK(c <= 1, "%s %ld disclaimed %u times", what, id, c);
        once += c;
        if (fill_bytes_for(id) == LARGE_FILL) {
            large++;
            large_once += c;
        }
    }
    t_note("%s: %ld of %ld disclaimed (large: %ld of %ld)", what, once, n, large_once, large);
    CHECK(once * 10 >= n * 9, "%s: only %ld of %ld disclaimed", what, once, n);
    CHECK(large_once * 10 >= large * 9, "%s: only %ld of %ld large ones disclaimed", what,
          large_once, large);
}

static void check_no_bad(void) {
    CHECK(atomic_load(&bad_object) == 0, "a closure got an object that is not its own");
    CHECK(atomic_load(&bad_pointer) == 0, "a closure got another pointer than the user's");
    CHECK(atomic_load(&bad_base) == 0, "GC_base inside a closure");
    CHECK(atomic_load(&bad_fill) == 0, "an object's contents changed before its closure ran");
    CHECK(atomic_load(&bad_child) == 0, "a dying object's referent was reclaimed first");
    CHECK(atomic_load(&bad_partner) == 0, "a finalized referent was finalized first");
    CHECK(atomic_load(&bad_cd) == 0, "a heap closure's data was reclaimed first");
    CHECK(atomic_load(&early_kept) == 0, "a referenced object was finalized");
}

/* Collections with a little allocation between them, which drives a lazy
 * sweep where a collector has one. */
static void collect_rounds(int n) {
    for (int i = 0; i < n; i++) {
        t_clear_stack();
        GC_gcollect();
        for (int j = 0; j < 100; j++) GC_MALLOC(32);
    }
}

static void test_finalized(void) {
    make_kept();
    make_dropped();
    collect_rounds(4);
    check_no_bad();
    for (long i = 0; i < KEPT; i++) check_fin_intact(kept[i], 1 + i);
    check_called_once("dropped finalized objects", first_dropped, n_dropped);
    check_called_once("finalized objects held by one", first_partner, (n_dropped + 9) / 10);
    release_kept();
    collect_rounds(3);
    check_no_bad();
    check_called_once("released finalized objects", 1, KEPT);
}

/* ---- threads ---- */

static atomic_int threads_running;
static atomic_long collections_done;
enum { OVERLAP_COLLECTIONS = 5 };

static void *thread_main(void *arg) {
    long first = first_thread + (long)(intptr_t)arg * n_thread;
    struct fin *window[WINDOW] = {0};
    for (long i = 0; i < n_thread; i++) {
        long slot = i % WINDOW;
        if (window[slot]) check_fin_intact(window[slot], (long)window[slot]->id);
        window[slot] = make_fin(first + i, NULL);
        /* Half way, a few collections meet the window for certain. */
        if (i == n_thread / 2)
            while (atomic_load(&collections_done) < OVERLAP_COLLECTIONS) sched_yield();
    }
    for (int s = 0; s < WINDOW; s++)
        if (window[s]) check_fin_intact(window[s], (long)window[s]->id);
    atomic_fetch_sub(&threads_running, 1);
    return NULL;
}

static void test_threads(void) {
    pthread_t t[THREADS];
    atomic_store(&threads_running, THREADS);
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, thread_main, (void *)i) == 0);
    long collections = 0;
    while (atomic_load(&threads_running) > 0) {
        GC_gcollect();
        atomic_store(&collections_done, ++collections);
    }
    for (int i = 0; i < THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    collect_rounds(3);
    t_note("%ld collections while %d threads allocated", collections, THREADS);
    check_no_bad();
    check_called_once("threads' finalized objects", first_thread, THREADS * n_thread);
}

/* ---- disclaim procedures ---- */

/* A record of a custom kind or of GC_I_NORMAL.  Word 0 says "in use" to
 * a kind marked from all (bdwgc's rule: a low bit set); words 0 and 1 may
 * hold free-list links in free objects, so the id is further in. */
struct record {
    GC_word in_use;
    GC_word spare;
    GC_word id;
    GC_word check;
    GC_word keep;
    void *child; /* the from-all kind's records: referenced only here */
    size_t fill_bytes;
    unsigned char fill[];
};

static atomic_uint rec_bad_fill, rec_bad_child;
/* Calls after the procedure stopped keeping records, apart: a kept
 * record is asked at every collection, which in torture mode would
 * saturate its byte in counts. */
static _Atomic unsigned char *released_counts;

static int record_proc(void *obj) {
    /* GC_I_NORMAL passes every object: small ones cannot be records. */
    if (GC_size(obj) < sizeof(struct record)) return 0;
    struct record *r = obj;
    if (r->id < (GC_word)first_plain || r->id >= (GC_word)id_limit || r->check != (MAGIC ^ r->id))
        return 0; /* a free object, or another program object */
    long id = (long)r->id;
    int released = atomic_load(&records_released);
    _Atomic unsigned char *count = released ? &released_counts[id] : &counts[id];
    if (*count < 200) atomic_fetch_add(count, 1);
    if (!filled(r->fill, r->fill_bytes, id)) atomic_fetch_add(&rec_bad_fill, 1);
    if (id >= first_from_all && id < first_normal && !child_intact(r->child, id))
        atomic_fetch_add(&rec_bad_child, 1);
    return r->keep && !released;
}

static int record_is_large(long id) { return id >= first_normal && id % 50 == 0; }

static struct record *make_record(long id, int kind, int from_all) {
    size_t n = kind == GC_I_NORMAL ? (record_is_large(id) ? LARGE_FILL : 1000) : 16;
    struct record *r = GC_generic_malloc(sizeof *r + n, kind);
    CHECK(r != NULL);
    r->in_use = from_all ? 1 : 0;
    r->id = (GC_word)id;
    r->check = MAGIC ^ (GC_word)id;
    r->keep = id % 4 == 0;
    r->child = from_all ? child_for(id) : NULL;
    r->fill_bytes = n;
    fill(r->fill, n, id);
    return r;
}

/* Hidden pointers to the records kept, in memory the collector does not
 * scan (malloc), so only their procedure keeps them. */
static GC_word *hidden_kept;

T_NOINLINE static void make_records(long first, int kind, int from_all) {
    for (long i = 0; i < RECORDS; i++) {
        struct record *r = make_record(first + i, kind, from_all);
        hidden_kept[i] = r->keep ? (GC_word)GC_HIDE_POINTER(r) : 0;
    }
}

static void check_records(const char *what, long first, int from_all) {
    long kept_seen = 0, keep_count = 0, once = 0, let_go = 0, large = 0, large_once = 0;
    for (long i = 0; i < RECORDS; i++) {
        long id = first + i;
        unsigned c = atomic_load(&counts[id]);
        if (!hidden_kept[i]) {
            CHECK(c <= 1, "%s: record %ld shown to its procedure %u times after it let it go",
                  what, id, c);
            once += c;
            let_go++;
            if (record_is_large(id)) {
                large++;
                large_once += c;
            }
            continue;
        }
        keep_count++;
        kept_seen += c >= 1;
        /* Kept while unreachable: intact. */
        const struct record *r = GC_REVEAL_POINTER(hidden_kept[i]);
        CHECK(r->id == (GC_word)id && r->check == (MAGIC ^ (GC_word)id) && r->keep,
              "%s: kept record %ld was reclaimed", what, id);
        CHECK(filled(r->fill, r->fill_bytes, id), "%s: kept record %ld changed", what, id);
        if (from_all) CHECK(child_intact(r->child, id), "%s: kept record %ld lost its child", what, id);
    }
    t_note("%s: %ld of %ld let go, %ld of %ld kept were asked", what, once, let_go, kept_seen,
           keep_count);
    CHECK(once * 10 >= let_go * 9, "%s: only %ld of %ld disclaimed", what, once, let_go);
    CHECK(large_once * 10 >= large * 9, "%s: only %ld of %ld large records disclaimed", what,
          large_once, large);
    CHECK(kept_seen * 10 >= keep_count * 9, "%s: only %ld of %ld kept were asked", what,
          kept_seen, keep_count);
}

/* After the procedure lets the kept records go: each asked once more at
 * most (then reclaimed and cleared), most of them exactly once, and the
 * records let go before never again. */
static void check_released(const char *what, long first) {
    long asked = 0, kept_total = 0;
    for (long i = 0; i < RECORDS; i++) {
        long id = first + i;
        unsigned c = atomic_load(&released_counts[id]);
        if (!hidden_kept[i]) {
            CHECK(c + atomic_load(&counts[id]) <= 1, "%s: record %ld asked again after it was let go",
                  what, id);
            continue;
        }
        CHECK(c <= 1, "%s: released record %ld asked %u times", what, id, c);
        asked += c;
        kept_total++;
    }
    t_note("%s: %ld of %ld released records let go", what, asked, kept_total);
    CHECK(asked * 10 >= kept_total * 9, "%s: only %ld of %ld released", what, asked, kept_total);
}

static void test_records(const char *what, long first, int kind, int from_all) {
    atomic_store(&records_released, 0);
    make_records(first, kind, from_all);
    collect_rounds(3);
    CHECK(atomic_load(&rec_bad_fill) == 0, "%s: a record changed before its procedure ran", what);
    CHECK(atomic_load(&rec_bad_child) == 0, "%s: a record's referent was reclaimed first", what);
    check_records(what, first, from_all);
    atomic_store(&records_released, 1);
    collect_rounds(3);
    check_released(what, first);
    CHECK(atomic_load(&rec_bad_fill) == 0, "%s: a record changed before its procedure ran", what);
    CHECK(atomic_load(&rec_bad_child) == 0, "%s: a record's referent was reclaimed first", what);
}

static int new_record_kind(int from_all) {
    /* Scanned whole: a length of 0 plus the object's size. */
    int kind = (int)GC_new_kind(GC_new_free_list(), 0 | GC_DS_LENGTH, 1, 1);
    GC_register_disclaim_proc(kind, record_proc, from_all);
    return kind;
}

int main(void) {
    t_test_name = "disclaim";
    GC_INIT();
    GC_init_finalized_malloc();
    n_dropped = t_env_long("DISCLAIM_OBJECTS", n_dropped);
    n_thread = t_env_long("DISCLAIM_THREAD_OBJECTS", n_thread);
    first_dropped = 1 + KEPT;
    first_partner = first_dropped + n_dropped;
    first_thread = first_partner + (n_dropped + 9) / 10;
    first_plain = first_thread + THREADS * n_thread;
    first_from_all = first_plain + RECORDS;
    first_normal = first_from_all + RECORDS;
    id_limit = first_normal + RECORDS;
    counts = calloc((size_t)id_limit, 1);
    released_counts = calloc((size_t)id_limit, 1);
    hidden_kept = calloc(RECORDS, sizeof *hidden_kept);
    CHECK(counts != NULL && released_counts != NULL && hidden_kept != NULL);

    test_finalized();
    test_threads();
    test_records("custom kind", first_plain, new_record_kind(0), 0);
    test_records("custom kind marked from all", first_from_all, new_record_kind(1), 1);
    /* Last: from here on every dead GC_I_NORMAL object meets the procedure. */
    GC_register_disclaim_proc(GC_I_NORMAL, record_proc, 0);
    test_records("GC_I_NORMAL", first_normal, GC_I_NORMAL, 0);
    t_note("ok");
    return 0;
}
