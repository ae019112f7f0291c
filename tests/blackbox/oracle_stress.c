/* oracle_stress: the reachability oracle.
 *
 * Several threads build and mutate random object graphs while collections
 * happen (explicit GC_gcollect from random threads plus allocation
 * pressure).  Every object carries a header (magic, unique id, size) and a
 * payload whose contents are a pure function of (id, generation), plus a
 * stored checksum.  Every reference records the id of the object it must
 * reach and the offset of the pointer inside that object, so a reference to
 * an object that was wrongly reclaimed (and perhaps reallocated to somebody
 * else) is detected: wrong magic, wrong id, wrong size, wrong payload.
 *
 * Where references live:
 *   - local variables of the worker loop (registers / stack slots),
 *   - an array on the worker's stack,
 *   - global arrays in .bss and in .data,
 *   - heap objects (a per-thread "root node" and every graph node's slots),
 *   - an uncollectable object (GC_malloc_uncollectable) reachable only
 *     through a hidden pointer,
 *   - a shared global mailbox (sub-graphs handed from thread to thread) and
 *     a shared pool of immutable leaves referenced by several threads,
 *   - uncollectable holders in transit: a second mailbox keeps only hidden
 *     pointers to GC_malloc_uncollectable'd objects, each holding one
 *     sub-graph; the receiving thread takes the sub-graph and GC_frees the
 *     holder, which another thread allocated,
 *   - some only as interior pointers (pointer into the middle of an object).
 *
 * Object kinds: graph nodes (GC_malloc, mutable, owned by one thread at a
 * time; a quarter of those with at most TYPED_REFS_MAX slots are typed
 * objects, GC_malloc_explicitly_typed with a descriptor naming exactly
 * their slots' pointer words, so a marker that skipped a slot or a typed
 * object's allocation that handed out memory in use would lose a node),
 * immutable leaves (GC_malloc_atomic or GC_malloc, payload pattern
 * only).  Sizes 16..2000 bytes mostly, some 4..64 KiB, a few 100..300 KiB.
 *
 * One node in 16 has a finalizer (GC_register_finalizer_no_order), which
 * checks the object is intact and records its id: an object the oracle
 * reaches later must not be among them.
 *
 * Each thread also keeps a weak-key table built as Guile builds its own
 * (oracle_weak.h: typed entries chained in buckets, keys behind
 * disappearing links, read under GC_call_with_alloc_lock): keys not cleared
 * must be intact, keys also kept strongly never cleared, and no chain may
 * loop.
 *
 * Also: private temporaries that are GC_realloc'ed (contents checked),
 * grown by GC_realloc in small steps (kept bytes intact, a scanned one's
 * gained bytes zero: sgc grows large objects in place), and GC_free'd
 * while the other threads allocate and collect; the thread's
 * uncollectable table is now and then copied into a fresh uncollectable
 * object and the old one GC_free'd.  So uncollectable objects are freed
 * and allocated again all the time, by their own thread and by others
 * (sgc keeps small ones in per-thread caches: alloc/uncollectable.c), and
 * must stay roots while they live and be zeroed when handed out again.
 *
 * Checks: after every round and at random moments while the other threads
 * keep mutating, each thread traverses everything reachable from its roots
 * and verifies every object; GC_base/GC_size agree with the headers; fresh
 * GC_malloc memory is zeroed; the heap stays bounded over the run
 * (heap after the run <= 4 x heap at 10% of the run + 64 MiB).
 *
 * Knobs (argv beats env):  -t THREADS (ORACLE_THREADS, default 4)
 *                          -r ROUNDS  (ORACLE_ROUNDS, default 100)
 *                          -o OPS     (ORACLE_OPS, ops per round, default 2500)
 *                          -s SEED    (ORACLE_SEED, default from time)
 *                          -l LIVES   (ORACLE_LIVES, default 16): threads
 *                          each slot's rounds are split among, one after
 *                          another (each hands its roots to the next)
 *                          ORACLE_LIVE: target reachable objects per thread
 *                          (default 4000)
 *                          ORACLE_API_MIX=1: each explicit collection is one
 *                          of bdwgc's ways to ask for one (GC_gcollect,
 *                          GC_start_incremental_collection, GC_collect_a_little
 *                          until done, GC_gcollect_and_unmap, GC_try_to_collect,
 *                          GC_disable around some work), and one thread, once,
 *                          switches the run to incremental mode
 *                          (GC_enable_incremental) while the others mutate
 *                          ORACLE_SELFTEST_FREE=1: GC_free objects that are
 *                          still referenced; the oracle must catch it.
 *                          ORACLE_SELFTEST_HIDDEN=1: keep some references
 *                          where the collector cannot see them (malloc);
 *                          the oracle must catch the collected objects.
 *                          ORACLE_SELFTEST_TYPED=1: typed nodes' descriptors
 *                          leave out their last slot; the oracle must
 *                          catch what only such slots held.
 */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"
#include "gc/gc_typed.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"
#include "oracle_weak.h"

#define MAXT 64
#define STK_N 32  /* stack-array root slots per thread */
#define GLB_N 32  /* .bss and .data root slots per thread */
#define ROOTNODE_N 64
#define POOL_N 64
#define MAIL_N 16

#define MAGIC_NODE 0x4e4f4445u   /* "NODE" */
#define MAGIC_LEAF_A 0x4c464154u /* atomic leaf */
#define MAGIC_LEAF_P 0x4c465054u /* pointer-kind (scanned) leaf */
#define MAGIC_HOLDER 0x484f4c44u /* "HOLD": uncollectable holder */

/* All objects start with this 16-byte header. */
typedef struct hdr {
    uint32_t magic;
    uint32_t size; /* bytes requested from the allocator */
    uint64_t id;   /* unique, never reused */
} hdr;

/* A reference: pointer (possibly interior: base + off), plus what it must
 * reach.  id/off are small integers, they never look like heap pointers. */
typedef struct ref {
    void *p;
    uint64_t id;
    uint64_t off;
} ref;

typedef struct node {
    hdr h;
    uint32_t gen;   /* payload generation, bumped by mutations */
    uint32_t nrefs;
    uint64_t visit; /* traversal mark: (tid+1) << 40 | epoch */
    uint64_t checksum;
    uint64_t pad;
    ref refs[];     /* then the payload up to h.size */
} node;

#define NODE_HDR ((uint32_t)sizeof(node)) /* 48 */

/* Typed nodes: the descriptor for N slots names word NODE_HDR/8 + 3i (each
 * slot's p) for i < N; a bitmap descriptor reaches word 61 at most. */
#define TYPED_REFS_MAX 18
static GC_descr g_typed_descr[TYPED_REFS_MAX + 1];
static int g_selftest_typed; /* ORACLE_SELFTEST_TYPED=1 */
static _Atomic uint64_t g_typed_nodes;

static void make_typed_descriptors(void)
{
    for (int n = 1; n <= TYPED_REFS_MAX; n++) {
        GC_word bitmap[(NODE_HDR / sizeof(GC_word) + 3 * TYPED_REFS_MAX +
                        GC_WORDSZ - 1) / GC_WORDSZ] = {0};
        for (int i = 0; i < n - (g_selftest_typed && n > 1); i++)
            GC_set_bit(bitmap, NODE_HDR / sizeof(GC_word) + 3 * i);
        g_typed_descr[n] = GC_make_descriptor(
            bitmap, NODE_HDR / sizeof(GC_word) + 3 * (size_t)n);
    }
}

/* Finalized objects' ids, one bit each: calloc'd, so the collector does
 * not scan it (FINALIZED_IDS of them; later ids are not recorded). */
#define FINALIZED_IDS (1ull << 26)
static _Atomic uint64_t *g_finalized;
static _Atomic uint64_t g_finalizers_set, g_finalizers_run;

static int was_finalized(uint64_t id)
{
    return id < FINALIZED_IDS &&
           (atomic_load_explicit(&g_finalized[id / 64], memory_order_relaxed) >> (id % 64)) & 1;
}

/* ---- global roots ------------------------------------------------------ */
static ref g_bss_roots[MAXT][GLB_N];            /* .bss */
static struct {
    long marker;                                 /* nonzero: forces .data */
    ref r[MAXT][GLB_N];
} g_data_roots = {1, {{{0, 0, 0}}}};

static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static ref g_pool[POOL_N]; /* immutable leaves, shared by all threads */

static pthread_mutex_t g_mail_lock = PTHREAD_MUTEX_INITIALIZER;
static ref g_mail[MAIL_N]; /* sub-graphs in transit between threads */
/* Hidden pointers to uncollectable holders in transit (under g_mail_lock):
 * nothing the collector scans points to a holder, only its being
 * uncollectable keeps it, and its contents are roots. */
static GC_word g_holder_mail[MAIL_N];

static _Atomic uint64_t g_next_id = 1;
static _Atomic uint64_t g_allocs, g_alloc_bytes, g_verified, g_sent, g_recv,
    g_explicit_gcs, g_partial_verifies, g_holders_passed, g_table_swaps;
static _Atomic size_t g_heap_at_10pct, g_heap_max_after_10pct;
static _Atomic int g_failed;

static int n_threads = 4, n_rounds = 100, n_ops = 2500, n_live = 4000;
static uint64_t g_seed;
static int g_selftest_free;   /* ORACLE_SELFTEST_FREE=1 */
static int g_selftest_hidden; /* ORACLE_SELFTEST_HIDDEN=1 */
#define HIDDEN_N 32

/* ---- failure reporting ------------------------------------------------- */
static void ofail(int tid, const char *what, const void *p, const ref *r,
                  const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr,
            "FAIL [oracle_stress] thread %d: %s: %s (object %p, ref p=%p "
            "expected id=%llu off=%llu) gc_no=%lu seed=%llu\n",
            tid, what, buf, p, r ? r->p : NULL,
            r ? (unsigned long long)r->id : 0ULL,
            r ? (unsigned long long)r->off : 0ULL,
            (unsigned long)GC_get_gc_no(), (unsigned long long)g_seed);
    fflush(stderr);
    atomic_store(&g_failed, 1);
    _exit(1);
}

/* ---- payload patterns -------------------------------------------------- */
static inline uint64_t pat(uint64_t id, uint64_t gen, uint64_t i)
{
    return t_mix64((id << 20) ^ (gen << 52) ^ i);
}

/* fill [from, size) of object o with the pattern; return checksum */
static uint64_t fill_payload(char *o, size_t from, size_t size, uint64_t id,
                             uint64_t gen)
{
    uint64_t sum = 0x1234567;
    size_t i = from, w = 0;
    for (; i + 8 <= size; i += 8, w++) {
        uint64_t v = pat(id, gen, w);
        memcpy(o + i, &v, 8);
        sum = t_mix64(sum ^ v);
    }
    if (i < size) {
        uint64_t v = pat(id, gen, w);
        memcpy(o + i, &v, size - i);
        sum = t_mix64(sum ^ (v & ((1ULL << (8 * (size - i))) - 1)));
    }
    return sum;
}

/* returns byte offset of first mismatch, or (size_t)-1 if intact; *sum out */
static size_t check_payload(const char *o, size_t from, size_t size,
                            uint64_t id, uint64_t gen, uint64_t *sum_out)
{
    uint64_t sum = 0x1234567;
    size_t i = from, w = 0;
    for (; i + 8 <= size; i += 8, w++) {
        uint64_t v = pat(id, gen, w), got;
        memcpy(&got, o + i, 8);
        if (got != v)
            return i;
        sum = t_mix64(sum ^ v);
    }
    if (i < size) {
        uint64_t v = pat(id, gen, w), got = 0;
        memcpy(&got, o + i, size - i);
        uint64_t mask = (1ULL << (8 * (size - i))) - 1;
        if ((got & mask) != (v & mask))
            return i;
        sum = t_mix64(sum ^ (v & mask));
    }
    *sum_out = sum;
    return (size_t)-1;
}

/* ---- per-thread context ------------------------------------------------ */
typedef struct worklist {
    node **items; /* GC_malloc'd: visible to the collector */
    size_t n, cap;
} worklist;

typedef struct ctx {
    int tid;
    t_rng rng;
    uint64_t epoch;
    ref *stk;      /* the worker's stack array */
    ref *hidden;   /* self-test only: malloc'd, invisible to the collector */
    node *rootnode; /* GC_malloc'd table of ROOTNODE_N refs */
    GC_word uncoll_hidden; /* GC_malloc_uncollectable'd ref table, hidden */
    worklist wl;
    weak_table weak; /* oracle_weak.h: a Guile-style weak-key table */
    uint64_t last_count, last_bytes; /* result of the last full verify */
    uint64_t verify_calls;
} ctx;

#define UNCOLL_N 32
static ref *uncoll_table(ctx *c)
{
    return (ref *)GC_REVEAL_POINTER(c->uncoll_hidden);
}

static void wl_push(ctx *c, node *n)
{
    worklist *w = &c->wl;
    if (w->n == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 1024;
        node **ni = GC_malloc(ncap * sizeof *ni);
        if (!ni)
            ofail(c->tid, "worklist", NULL, NULL, "GC_malloc(%zu) = NULL",
                  ncap * sizeof *ni);
        if (w->n)
            memcpy(ni, w->items, w->n * sizeof *ni);
        w->items = ni;
        w->cap = ncap;
    }
    w->items[w->n++] = n;
}

/* ---- object checking ---------------------------------------------------- */
typedef struct vstats {
    uint64_t objects, bytes;
} vstats;

/* Check the object a reference designates; push unvisited nodes. */
static void check_ref(ctx *c, const ref *r, const char *where, vstats *vs)
{
    if (!r->p) {
        if (r->id || r->off)
            ofail(c->tid, where, NULL, r, "null pointer with nonzero id");
        return;
    }
    const char *base = (const char *)r->p - r->off;
    const hdr *h = (const hdr *)base;
    if (h->magic != MAGIC_NODE && h->magic != MAGIC_LEAF_A &&
        h->magic != MAGIC_LEAF_P)
        ofail(c->tid, where, base, r,
              "bad magic 0x%08x (object reclaimed or overwritten)", h->magic);
    if (h->id != r->id)
        ofail(c->tid, where, base, r,
              "object id is %llu (object reclaimed and reused?)",
              (unsigned long long)h->id);
    if (r->off >= h->size || h->size < 16)
        ofail(c->tid, where, base, r, "bad size %u", h->size);
    if (was_finalized(h->id))
        ofail(c->tid, where, base, r,
              "object %llu reachable, but its finalizer ran (it was found "
              "unreachable while it was not)",
              (unsigned long long)h->id);

    /* Sometimes cross-check GC_base / GC_size on the (interior) pointer. */
    if ((t_rng_next(&c->rng) & 15) == 0) {
        void *b = GC_base(r->p);
        if (b != base)
            ofail(c->tid, where, base, r, "GC_base(%p) = %p, expected %p",
                  r->p, b, base);
        size_t gs = GC_size(b);
        if (gs < h->size)
            ofail(c->tid, where, base, r, "GC_size = %zu < requested %u", gs,
                  h->size);
    }

    if (h->magic == MAGIC_NODE) {
        node *n = (node *)base;
        uint64_t tag = ((uint64_t)(c->tid + 1) << 40) | c->epoch;
        if (n->visit == tag)
            return;
        n->visit = tag;
        wl_push(c, n);
    } else {
        uint64_t sum;
        size_t bad = check_payload(base, sizeof(hdr), h->size, h->id, 0, &sum);
        if (bad != (size_t)-1)
            ofail(c->tid, where, base, r,
                  "leaf payload corrupted at byte %zu of %u", bad, h->size);
        vs->objects++;
        vs->bytes += h->size;
    }
}

static void check_node_body(ctx *c, node *n, vstats *vs)
{
    size_t need = NODE_HDR + (size_t)n->nrefs * sizeof(ref);
    if (n->nrefs == 0 || need > n->h.size)
        ofail(c->tid, "node", n, NULL, "nrefs %u does not fit size %u",
              n->nrefs, n->h.size);
    uint64_t sum;
    size_t bad = check_payload((char *)n, need, n->h.size, n->h.id, n->gen, &sum);
    if (bad != (size_t)-1)
        ofail(c->tid, "node", n, NULL,
              "payload corrupted at byte %zu of %u (id %llu gen %u)", bad,
              n->h.size, (unsigned long long)n->h.id, n->gen);
    if (sum != n->checksum)
        ofail(c->tid, "node", n, NULL, "checksum mismatch");
    vs->objects++;
    vs->bytes += n->h.size;
    for (uint32_t i = 0; i < n->nrefs; i++)
        check_ref(c, &n->refs[i], "node slot", vs);
}

static void drain(ctx *c, vstats *vs)
{
    while (c->wl.n) {
        node *n = c->wl.items[--c->wl.n];
        c->wl.items[c->wl.n] = NULL;
        check_node_body(c, n, vs);
    }
}

/* Verify everything reachable from one reference (used on mailbox intake). */
static vstats verify_from(ctx *c, const ref *r, const char *where)
{
    vstats vs = {0, 0};
    c->epoch++;
    check_ref(c, r, where, &vs);
    drain(c, &vs);
    return vs;
}

/* Whether the object at BASE has the header object ID was made with. */
static int key_intact(const void *base, uint64_t id)
{
    const hdr *h = base;
    return (h->magic == MAGIC_NODE || h->magic == MAGIC_LEAF_A ||
            h->magic == MAGIC_LEAF_P) && h->id == id;
}

/* Verify everything reachable from all of this thread's roots. */
T_NOINLINE static vstats verify_all(ctx *c, ref l0, ref l1, ref l2)
{
    vstats vs = {0, 0};
    c->epoch++;
    c->verify_calls++;
    check_ref(c, &l0, "local var 0", &vs);
    check_ref(c, &l1, "local var 1", &vs);
    check_ref(c, &l2, "local var 2", &vs);
    for (int i = 0; i < STK_N; i++)
        check_ref(c, &c->stk[i], "stack array", &vs);
    for (int i = 0; i < GLB_N; i++) {
        check_ref(c, &g_bss_roots[c->tid][i], ".bss array", &vs);
        check_ref(c, &g_data_roots.r[c->tid][i], ".data array", &vs);
    }
    if (c->hidden)
        for (int i = 0; i < HIDDEN_N; i++)
            check_ref(c, &c->hidden[i], "hidden (self-test) root", &vs);
    for (int i = 0; i < UNCOLL_N; i++)
        check_ref(c, &uncoll_table(c)[i], "uncollectable table", &vs);
    ref rn = {c->rootnode, c->rootnode->h.id, 0};
    check_ref(c, &rn, "root node", &vs);
    drain(c, &vs);
    weak_table_verify(&c->weak, key_intact, c->tid, t_rng_next(&c->rng),
                      (int)(t_rng_next(&c->rng) & 1));
    atomic_fetch_add(&g_verified, vs.objects);
    return vs;
}

/* ---- allocation ---------------------------------------------------------- */
static size_t pick_size(ctx *c)
{
    uint64_t r = t_rng_below(&c->rng, 1000);
    if (r < 600)
        return (size_t)t_rng_range(&c->rng, 16, 128);
    if (r < 975)
        return (size_t)t_rng_range(&c->rng, 129, 2000);
    if (r < 997)
        return (size_t)t_rng_range(&c->rng, 4097, 64 * 1024);
    return (size_t)t_rng_range(&c->rng, 100 * 1024, 300 * 1024);
}

static void check_zeroed(ctx *c, const char *what, const char *o, size_t size)
{
    /* Fresh GC_malloc memory must be all zero.  Check it all for small
     * objects, a sample of words for big ones. */
    size_t step = size <= 4096 ? 8 : 8 * 61;
    for (size_t i = 0; i + 8 <= size; i += step) {
        uint64_t v;
        memcpy(&v, o + i, 8);
        if (v)
            ofail(c->tid, what, o, NULL,
                  "fresh object of %zu bytes not zeroed at byte %zu "
                  "(0x%llx): memory still in use handed out again?",
                  size, i, (unsigned long long)v);
    }
}

static void *xalloc(ctx *c, size_t size, int atomic)
{
    void *p = atomic ? GC_malloc_atomic(size) : GC_malloc(size);
    if (!p)
        ofail(c->tid, atomic ? "GC_malloc_atomic" : "GC_malloc", NULL, NULL,
              "returned NULL for %zu bytes", size);
    if (((uintptr_t)p & 7) != 0)
        ofail(c->tid, "alloc", p, NULL, "misaligned result");
    if (!atomic)
        check_zeroed(c, "GC_malloc", p, size);
    atomic_fetch_add(&g_allocs, 1);
    atomic_fetch_add(&g_alloc_bytes, size);
    return p;
}

static ref mkref(ctx *c, void *base, int allow_interior)
{
    ref r = {base, ((hdr *)base)->id, 0};
    if (allow_interior && (t_rng_next(&c->rng) & 3) == 0) {
        uint32_t sz = ((hdr *)base)->size;
        r.off = 1 + t_rng_below(&c->rng, sz - 1);
        r.p = (char *)base + r.off;
    }
    return r;
}

static ref new_leaf(ctx *c, size_t size)
{
    int atomic = (t_rng_next(&c->rng) % 3) != 0;
    hdr *h = xalloc(c, size, atomic);
    h->magic = atomic ? MAGIC_LEAF_A : MAGIC_LEAF_P;
    h->size = (uint32_t)size;
    h->id = atomic_fetch_add(&g_next_id, 1);
    fill_payload((char *)h, sizeof(hdr), size, h->id, 0);
    return mkref(c, h, 1);
}

static void on_finalize(void *obj, void *client_data)
{
    const node *n = obj;
    uint64_t id = (uint64_t)(uintptr_t)client_data;
    if (n->h.magic != MAGIC_NODE || n->h.id != id)
        ofail(-1, "finalizer", obj, NULL,
              "object %llu reached its finalizer with magic 0x%08x, id %llu "
              "(reclaimed before its finalizer ran?)",
              (unsigned long long)id, n->h.magic, (unsigned long long)n->h.id);
    if (id < FINALIZED_IDS)
        atomic_fetch_or_explicit(&g_finalized[id / 64], 1ull << (id % 64),
                                 memory_order_relaxed);
    atomic_fetch_add(&g_finalizers_run, 1);
}

static node *new_node_raw(ctx *c, size_t size, uint32_t nrefs)
{
    node *n;
    if (nrefs <= TYPED_REFS_MAX && (t_rng_next(&c->rng) & 3) == 0) {
        n = GC_malloc_explicitly_typed(size, g_typed_descr[nrefs]);
        if (!n)
            ofail(c->tid, "GC_malloc_explicitly_typed", NULL, NULL,
                  "returned NULL for %zu bytes", size);
        check_zeroed(c, "GC_malloc_explicitly_typed", (const char *)n, size);
        atomic_fetch_add(&g_allocs, 1);
        atomic_fetch_add(&g_alloc_bytes, size);
        atomic_fetch_add(&g_typed_nodes, 1);
    } else {
        n = xalloc(c, size, 0);
    }
    n->h.magic = MAGIC_NODE;
    n->h.size = (uint32_t)size;
    n->h.id = atomic_fetch_add(&g_next_id, 1);
    n->nrefs = nrefs;
    n->gen = 0;
    n->checksum = fill_payload((char *)n, NODE_HDR + nrefs * sizeof(ref),
                               size, n->h.id, 0);
    if ((t_rng_next(&c->rng) & 15) == 0) {
        GC_register_finalizer_no_order(n, on_finalize, (void *)(uintptr_t)n->h.id,
                                       NULL, NULL);
        atomic_fetch_add(&g_finalizers_set, 1);
    }
    return n;
}

static ref *random_root_slot(ctx *c)
{
    uint64_t k = t_rng_below(&c->rng, 5);
    if (c->hidden && t_rng_below(&c->rng, 4) == 0)
        return &c->hidden[t_rng_below(&c->rng, HIDDEN_N)];
    switch (k) {
    case 0:
        return &c->stk[t_rng_below(&c->rng, STK_N)];
    case 1:
        return &g_bss_roots[c->tid][t_rng_below(&c->rng, GLB_N)];
    case 2:
        return &g_data_roots.r[c->tid][t_rng_below(&c->rng, GLB_N)];
    case 3:
        return &uncoll_table(c)[t_rng_below(&c->rng, UNCOLL_N)];
    default:
        return &c->rootnode->refs[t_rng_below(&c->rng, ROOTNODE_N)];
    }
}

static node *ref_node(const ref *r)
{
    if (!r->p)
        return NULL;
    hdr *h = (hdr *)((char *)r->p - r->off);
    return h->magic == MAGIC_NODE ? (node *)h : NULL;
}

/* A random node reachable from this thread's roots (or NULL). */
static node *random_node(ctx *c)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        node *n = ref_node(random_root_slot(c));
        if (!n)
            continue;
        int depth = (int)t_rng_below(&c->rng, 8);
        for (int d = 0; d < depth; d++) {
            node *m = ref_node(&n->refs[t_rng_below(&c->rng, n->nrefs)]);
            if (!m)
                break;
            n = m;
        }
        if (n != c->rootnode)
            return n;
    }
    return NULL;
}

/* A random slot of this thread's graph: a root slot or a node's slot. */
static ref *random_slot(ctx *c)
{
    if (t_rng_below(&c->rng, 3) == 0)
        return random_root_slot(c);
    node *n = random_node(c);
    if (!n)
        return random_root_slot(c);
    return &n->refs[t_rng_below(&c->rng, n->nrefs)];
}

/* A reference to something existing (own graph or shared pool), or null. */
static ref existing_ref(ctx *c)
{
    ref r = {0, 0, 0};
    uint64_t k = t_rng_below(&c->rng, 10);
    if (k == 0) {
        pthread_mutex_lock(&g_pool_lock);
        r = g_pool[t_rng_below(&c->rng, POOL_N)];
        pthread_mutex_unlock(&g_pool_lock);
        return r;
    }
    ref *s = random_slot(c);
    if (s->p) {
        void *base = (char *)s->p - s->off;
        r = mkref(c, base, 1);
    }
    return r;
}

/* New object (node or leaf) linked to some existing objects. */
static ref new_object(ctx *c, int link_existing)
{
    size_t size = pick_size(c);
    size_t max_refs = (size - NODE_HDR) / sizeof(ref);
    if (size < NODE_HDR + sizeof(ref) || t_rng_below(&c->rng, 100) < 45)
        return new_leaf(c, size);
    uint32_t nrefs = (uint32_t)t_rng_range(&c->rng, 1, size > 4096 ? 32 : 8);
    if (nrefs > max_refs)
        nrefs = (uint32_t)max_refs;
    node *n = new_node_raw(c, size, nrefs);
    if (link_existing) {
        uint32_t k = (uint32_t)t_rng_below(&c->rng, 3);
        for (uint32_t i = 0; i < k && i < nrefs; i++)
            n->refs[t_rng_below(&c->rng, nrefs)] = existing_ref(c);
    }
    return mkref(c, n, 1);
}

/* A fresh private sub-graph (no references into this thread's graph, only
 * to itself and to immutable shared leaves), for the mailbox. */
static ref new_subgraph(ctx *c)
{
    int k = (int)t_rng_range(&c->rng, 2, 24);
    ref *tmp = GC_malloc(k * sizeof(ref)); /* visible to the collector */
    if (!tmp)
        ofail(c->tid, "GC_malloc", NULL, NULL, "NULL");
    for (int i = 0; i < k; i++) {
        ref r = new_object(c, 0);
        node *n = ref_node(&r);
        if (n) {
            for (uint32_t j = 0; j < n->nrefs; j++) {
                uint64_t w = t_rng_below(&c->rng, 4);
                if (w == 0 && i > 0) {
                    ref t = tmp[t_rng_below(&c->rng, i)];
                    n->refs[j] = mkref(c, (char *)t.p - t.off, 1);
                } else if (w == 1) {
                    pthread_mutex_lock(&g_pool_lock);
                    n->refs[j] = g_pool[t_rng_below(&c->rng, POOL_N)];
                    pthread_mutex_unlock(&g_pool_lock);
                }
            }
        }
        tmp[i] = r;
    }
    /* Root: a node with a slot for each object, so all are reachable. */
    size_t size = NODE_HDR + k * sizeof(ref) + t_rng_below(&c->rng, 64);
    node *root = new_node_raw(c, size, (uint32_t)k);
    for (int i = 0; i < k; i++)
        root->refs[i] = tmp[i];
    return mkref(c, root, 1);
}

/* ---- operations ----------------------------------------------------------- */
static void op_mutate_payload(ctx *c)
{
    node *n = random_node(c);
    if (!n)
        return;
    n->gen++;
    n->checksum = fill_payload((char *)n, NODE_HDR + n->nrefs * sizeof(ref),
                               n->h.size, n->h.id, n->gen);
}

static void op_send(ctx *c)
{
    ref r = new_subgraph(c);
    vstats vs = verify_from(c, &r, "outgoing subgraph");
    (void)vs;
    pthread_mutex_lock(&g_mail_lock);
    int slot = (int)t_rng_below(&c->rng, MAIL_N);
    if (!g_mail[slot].p) {
        g_mail[slot] = r;
        atomic_fetch_add(&g_sent, 1);
    }
    pthread_mutex_unlock(&g_mail_lock);
    memset(&r, 0, sizeof r);
}

static void op_receive(ctx *c)
{
    ref r = {0, 0, 0};
    pthread_mutex_lock(&g_mail_lock);
    int slot = (int)t_rng_below(&c->rng, MAIL_N);
    if (g_mail[slot].p) {
        r = g_mail[slot];
        memset(&g_mail[slot], 0, sizeof g_mail[slot]);
    }
    pthread_mutex_unlock(&g_mail_lock);
    if (!r.p)
        return;
    /* It was reachable only from the mailbox global while in transit. */
    verify_from(c, &r, "mailbox intake");
    *random_slot(c) = r;
    atomic_fetch_add(&g_recv, 1);
}

static void op_publish_leaf(ctx *c)
{
    ref r = new_leaf(c, pick_size(c) % 3000 + 16);
    pthread_mutex_lock(&g_pool_lock);
    g_pool[t_rng_below(&c->rng, POOL_N)] = r;
    pthread_mutex_unlock(&g_pool_lock);
}

/* An uncollectable holder: a header, one reference, then a payload. */
typedef struct holder {
    hdr h;
    ref r;
} holder;

static size_t pick_holder_size(ctx *c)
{
    /* mostly small (the per-thread caches' sizes), some a page or more */
    if (t_rng_below(&c->rng, 20) == 0)
        return (size_t)t_rng_range(&c->rng, 4097, 40 * 1024);
    return (size_t)t_rng_range(&c->rng, sizeof(holder), 1500);
}

static void *xalloc_uncollectable(ctx *c, size_t size)
{
    void *p = GC_malloc_uncollectable(size);
    if (!p)
        ofail(c->tid, "GC_malloc_uncollectable", NULL, NULL,
              "returned NULL for %zu bytes", size);
    check_zeroed(c, "GC_malloc_uncollectable", p, size);
    atomic_fetch_add(&g_allocs, 1);
    atomic_fetch_add(&g_alloc_bytes, size);
    return p;
}

static void check_holder(ctx *c, const holder *hd, const char *where)
{
    uint64_t sum;
    if (hd->h.magic != MAGIC_HOLDER || hd->h.size < sizeof(holder))
        ofail(c->tid, where, hd, NULL,
              "bad holder magic 0x%08x / size %u (uncollectable object "
              "reclaimed or reused?)",
              hd->h.magic, hd->h.size);
    size_t bad = check_payload((const char *)hd, sizeof(holder), hd->h.size,
                               hd->h.id, 3, &sum);
    if (bad != (size_t)-1)
        ofail(c->tid, where, hd, NULL,
              "holder payload corrupted at byte %zu of %u", bad, hd->h.size);
}

/* Wrap a fresh sub-graph in an uncollectable holder and post it hidden. */
static void op_send_holder(ctx *c)
{
    size_t size = pick_holder_size(c);
    holder *hd = xalloc_uncollectable(c, size);
    hd->h.magic = MAGIC_HOLDER;
    hd->h.size = (uint32_t)size;
    hd->h.id = atomic_fetch_add(&g_next_id, 1);
    fill_payload((char *)hd, sizeof(holder), size, hd->h.id, 3);
    hd->r = new_subgraph(c);
    verify_from(c, &hd->r, "outgoing holder");
    GC_word hidden = GC_HIDE_POINTER(hd);
    int posted = 0;
    pthread_mutex_lock(&g_mail_lock);
    int slot = (int)t_rng_below(&c->rng, MAIL_N);
    if (!g_holder_mail[slot]) {
        g_holder_mail[slot] = hidden;
        posted = 1;
    }
    pthread_mutex_unlock(&g_mail_lock);
    if (!posted)
        GC_free(hd); /* freed by the thread that allocated it */
    hd = NULL;
}

/* Take a holder another thread posted: its sub-graph joins this thread's
 * graph, and this thread frees the holder. */
static void op_receive_holder(ctx *c)
{
    GC_word hidden = 0;
    pthread_mutex_lock(&g_mail_lock);
    int slot = (int)t_rng_below(&c->rng, MAIL_N);
    hidden = g_holder_mail[slot];
    g_holder_mail[slot] = 0;
    pthread_mutex_unlock(&g_mail_lock);
    if (!hidden)
        return;
    holder *hd = (holder *)GC_REVEAL_POINTER(hidden);
    check_holder(c, hd, "holder intake");
    verify_from(c, &hd->r, "holder's sub-graph");
    *random_slot(c) = hd->r;
    GC_free(hd);
    atomic_fetch_add(&g_holders_passed, 1);
}

/* Move this thread's uncollectable table into a fresh uncollectable
 * object and free the old one. */
static void op_swap_uncollectable_table(ctx *c)
{
    ref *old = uncoll_table(c);
    ref *fresh = xalloc_uncollectable(c, UNCOLL_N * sizeof(ref));
    memcpy(fresh, old, UNCOLL_N * sizeof(ref));
    c->uncoll_hidden = GC_HIDE_POINTER(fresh);
    GC_free(old);
    atomic_fetch_add(&g_table_swaps, 1);
}

/* A slot to store a new reference in; while the graph is below its target
 * size prefer empty slots so that it grows instead of churning. */
static ref *store_slot(ctx *c, int under)
{
    ref *s = random_slot(c);
    for (int i = 0; under && s->p && i < 12; i++)
        s = random_slot(c);
    return s;
}

/* A private temporary: allocated, filled, maybe GC_realloc'ed (contents
 * checked), then usually GC_free'd -- explicit deallocation racing with
 * other threads' allocation and collections. */
static void op_temporary(ctx *c)
{
    size_t sz = pick_size(c);
    int atomic = (int)(t_rng_next(&c->rng) & 1);
    uint64_t id = atomic_fetch_add(&g_next_id, 1);
    char *t = xalloc(c, sz, atomic);
    fill_payload(t, 0, sz, id, 7);
    if (t_rng_below(&c->rng, 3) == 0) {
        size_t nsz = pick_size(c);
        char *u = GC_realloc(t, nsz);
        if (!u)
            ofail(c->tid, "GC_realloc", t, NULL, "NULL for %zu bytes", nsz);
        uint64_t sum;
        size_t keep = nsz < sz ? nsz : sz;
        size_t bad = check_payload(u, 0, keep & ~(size_t)7, id, 7, &sum);
        if (bad != (size_t)-1)
            ofail(c->tid, "GC_realloc", u, NULL,
                  "%zu -> %zu bytes: contents lost at byte %zu", sz, nsz, bad);
        t = u;
        sz = nsz;
    }
    /* Growth by GC_realloc in small steps, as a buffer grows: sgc takes
     * the free pages after a large object in place.  The kept bytes must
     * stand and, for a scanned object, the gained ones read zero (they
     * may be pages another object left). */
    int steps = (int)t_rng_below(&c->rng, 4);
    if (steps)
        fill_payload(t, 0, sz, id, 7); /* a realloc above left its gain zero */
    for (; steps > 0 && sz < (1 << 20); steps--) {
        size_t nsz = sz + sz / 8 + (size_t)t_rng_below(&c->rng, sz / 2 + 1);
        char *u = GC_realloc(t, nsz);
        if (!u)
            ofail(c->tid, "GC_realloc", t, NULL, "NULL growing to %zu bytes", nsz);
        uint64_t sum;
        size_t bad = check_payload(u, 0, sz & ~(size_t)7, id, 7, &sum);
        if (bad != (size_t)-1)
            ofail(c->tid, "GC_realloc", u, NULL,
                  "growing %zu -> %zu bytes: contents lost at byte %zu", sz, nsz, bad);
        size_t gained = (sz + 7) / 8 * 8; /* past the old last word */
        if (!atomic && nsz > gained)
            check_zeroed(c, "GC_realloc (gained part)", u + gained, nsz - gained);
        fill_payload(u, 0, nsz, id, 7);
        t = u;
        sz = nsz;
    }
    if (t_rng_below(&c->rng, 5) != 0)
        GC_free(t);
}

/* Before a thread exits: 48 KiB of one size allocated, patterned and
 * GC_free'd, so the thread leaves with freed objects sgc keeps for it (in
 * sgc, a batch of its own past 32 KiB of one class, handed to the other
 * threads at exit) while the others allocate.  Held in a GC_MALLOC'd
 * array meanwhile: a collection must not take them before the frees. */
static _Atomic uint64_t g_exit_frees;
static void free_before_exit(ctx *c)
{
    size_t sz = (size_t)t_rng_range(&c->rng, 2, 32) * 16;
    size_t n = (48 << 10) / sz;
    void **held = GC_MALLOC(n * sizeof *held);
    if (!held)
        ofail(c->tid, "free_before_exit", NULL, NULL, "GC_MALLOC = NULL");
    for (size_t i = 0; i < n; i++) {
        held[i] = xalloc(c, sz, 0);
        fill_payload(held[i], 0, sz, atomic_fetch_add(&g_next_id, 1), 9);
    }
    for (size_t i = 0; i < n; i++) {
        GC_free(held[i]);
        held[i] = NULL;
    }
    atomic_fetch_add(&g_exit_frees, n);
}

/* One random mutation of this thread's graph. */
static void do_op(ctx *c)
{
    /* The graph grows when new slots outnumber dropped ones; steer it
     * towards a target size using the last verification's count. */
    int over = c->last_count > (uint64_t)n_live;
    int under = c->last_count < (uint64_t)n_live * 3 / 4;
    uint64_t k = t_rng_below(&c->rng, 100);
    if (k < 45) { /* allocate and store */
        ref r = new_object(c, 1);
        *store_slot(c, under) = r;
    } else if (k < 60) { /* drop a reference (or two, if too big) */
        if (!under)
            memset(random_slot(c), 0, sizeof(ref));
        if (over)
            memset(random_slot(c), 0, sizeof(ref));
    } else if (k < 75) { /* copy a reference (sharing, cycles) */
        ref r = existing_ref(c);
        *store_slot(c, under) = r;
    } else if (k < 88) {
        op_mutate_payload(c);
    } else if (k < 93) {
        op_publish_leaf(c);
    } else if (k < 96) {
        if (!over)
            op_send(c);
    } else if (k < 98) {
        op_receive(c);
    } else {
        op_temporary(c);
    }
    uint64_t u = t_rng_below(&c->rng, 400);
    if (u == 0)
        op_swap_uncollectable_table(c);
    else if (u < 3)
        op_send_holder(c);
    else if (u < 5)
        op_receive_holder(c);
    else if (u < 13) { /* a weak-table entry for some object */
        ref r = existing_ref(c);
        if (r.p)
            weak_table_put(&c->weak, (char *)r.p - r.off, r.id,
                           t_rng_below(&c->rng, 4) == 0);
    }
    if (g_selftest_free && t_rng_below(&c->rng, 500) == 0) {
        /* Self-test of the oracle: free an object that is still referenced.
         * The run must then fail (ctest registers this WILL_FAIL). */
        ref *s = random_slot(c);
        if (s->p)
            GC_free((char *)s->p - s->off);
    }
}

static int g_api_mix; /* ORACLE_API_MIX=1 */
static _Atomic int g_switched_to_incremental;
static _Atomic uint64_t g_api_calls[7];
static int never_stop(void) { return 0; }

/* An explicit collection: GC_gcollect, or with ORACLE_API_MIX one of
 * bdwgc's other ways to ask for one, some of which only start or step a
 * concurrent cycle and leave it running beside the other threads. */
static void explicit_collection(ctx *c)
{
    atomic_fetch_add(&g_explicit_gcs, 1);
    unsigned way = g_api_mix ? (unsigned)t_rng_below(&c->rng, 7) : 0;
    atomic_fetch_add(&g_api_calls[way], 1);
    switch (way) {
    case 0: GC_gcollect(); break;
    case 1: GC_start_incremental_collection(); break;
    case 2:
        for (int i = 0; i < 100000 && GC_collect_a_little(); i++) {}
        break;
    case 3: GC_gcollect_and_unmap(); break;
    case 4: /* 0 while another thread's GC_disable holds */
        GC_try_to_collect(never_stop);
        break;
    case 5:
        /* Allocation with collections off (the heap grows instead). */
        GC_disable();
        for (int i = 0; i < 50; i++) do_op(c);
        GC_enable();
        break;
    case 6:
        if (atomic_exchange(&g_switched_to_incremental, 1) == 0) {
            GC_enable_incremental();
            CHECK(GC_is_incremental_mode() || getenv("SGC_MODE"),
                  "GC_enable_incremental left the collector in stop mode");
        } else {
            GC_collect_a_little();
        }
        break;
    }
}

static void note_heap(ctx *c, int round)
{
    size_t hs = GC_get_heap_size();
    if (round == n_rounds / 10 && c->tid == 0)
        atomic_store(&g_heap_at_10pct, hs);
    if (round > n_rounds / 10) {
        size_t m = atomic_load(&g_heap_max_after_10pct);
        while (hs > m &&
               !atomic_compare_exchange_weak(&g_heap_max_after_10pct, &m, hs))
            ;
    }
}

#define LOCAL_STEP(L)                                                        \
    do {                                                                     \
        uint64_t _k = t_rng_below(&c.rng, 3);                                \
        if (_k == 0)                                                         \
            L = new_object(&c, 1);                                           \
        else if (_k == 1)                                                    \
            L = existing_ref(&c);                                            \
        else                                                                 \
            memset(&L, 0, sizeof L);                                         \
    } while (0)

/* Thread lives.  Each thread slot's rounds are split among ORACLE_LIVES
 * threads run one after another, each created by the one before, which
 * then exits while the other slots keep allocating and collecting.  So a
 * run covers threads leaving with objects in their allocation buffers
 * and uncollectable caches (handed back at exit) during collections, and
 * a new thread taking over the graph.  The graph's roots travel the way
 * a program's would, where only the collector's bookkeeping keeps them:
 *  - the context and the stack array in a parcel that is the new
 *    thread's start argument and referenced nowhere else (a root while
 *    the thread is pending),
 *  - the three locals in a farewell object that is the old thread's
 *    result, which the new thread takes with pthread_join after a
 *    verification and maybe a collection (a root while the old thread
 *    is exited and not joined).
 * The last life of a slot is detached and says it is done by a
 * semaphore. */
#define MAX_LIVES 64
static int n_lives = 16;
typedef struct parcel {
    ctx c;
    ref stk[STK_N];
    int life;
    pthread_t predecessor;
} parcel;
typedef struct farewell {
    ref locals[3];
} farewell;
static sem_t g_slots_done;
static _Atomic uint64_t g_lives_started, g_farewells_taken;

static void *worker(void *arg);

/* P is the only reference to the parcel once this returns. */
static void start_life(parcel *p)
{
    pthread_t th;
    pthread_attr_t attr;
    CHECK(pthread_attr_init(&attr) == 0);
    if (p->life + 1 == n_lives)
        CHECK(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0);
    int rc = pthread_create(&th, &attr, worker, p);
    CHECK(rc == 0, "pthread_create: %d", rc);
    pthread_attr_destroy(&attr);
    atomic_fetch_add(&g_lives_started, 1);
}

static parcel *new_parcel(void)
{
    parcel *p = GC_MALLOC(sizeof *p);
    CHECK(p != NULL);
    return p;
}

static void first_life_init(ctx *c)
{
    t_rng_seed(&c->rng, g_seed * 1000003u + (uint64_t)c->tid);
    if (g_selftest_hidden) {
        /* Self-test of the oracle: roots the collector cannot see.  Objects
         * reachable only from them get collected, and the run must fail. */
        c->hidden = calloc(HIDDEN_N, sizeof(ref));
        CHECK(c->hidden != NULL);
    }
    {
        /* referenced only through a hidden pointer: kept by being
         * uncollectable, and its contents are roots */
        ref *u = GC_malloc_uncollectable(UNCOLL_N * sizeof(ref));
        CHECK(u != NULL);
        memset(u, 0, UNCOLL_N * sizeof(ref));
        c->uncoll_hidden = GC_HIDE_POINTER(u);
    }
    c->rootnode = new_node_raw(c, NODE_HDR + ROOTNODE_N * sizeof(ref) + 8,
                               ROOTNODE_N);
    weak_table_init(&c->weak);
}

static void *worker(void *arg)
{
    parcel *p = arg;
    int life = p->life;
    ctx c;
    ref stk[STK_N];
    /* Local-variable roots: only ever live in this frame / registers. */
    ref l0 = {0, 0, 0}, l1 = {0, 0, 0}, l2 = {0, 0, 0};
    memcpy(&c, &p->c, sizeof c);
    memcpy(stk, p->stk, sizeof stk);
    c.stk = stk;
    if (life == 0) {
        first_life_init(&c);
    } else {
        /* Everything but the locals first, while the thread before is
         * most likely gone already and its farewell kept only as its
         * result; then perhaps a collection with it kept that way. */
        pthread_t predecessor = p->predecessor;
        verify_all(&c, l0, l1, l2);
        if (t_rng_below(&c.rng, 2) == 0) explicit_collection(&c);
        void *result = NULL;
        CHECK(pthread_join(predecessor, &result) == 0);
        farewell *f = result;
        CHECK(f != NULL);
        l0 = f->locals[0];
        l1 = f->locals[1];
        l2 = f->locals[2];
        atomic_fetch_add(&g_farewells_taken, 1);
        verify_all(&c, l0, l1, l2);
    }
    memset(p, 0, sizeof *p); /* no longer a root */
    p = NULL;
    int first = (int)((int64_t)n_rounds * life / n_lives);
    int last = (int)((int64_t)n_rounds * (life + 1) / n_lives);

    for (int round = first; round < last; round++) {
        for (int op = 0; op < n_ops; op++) {
            do_op(&c);
            uint64_t k = t_rng_below(&c.rng, 1000);
            if (k < 6) {
                if (k == 0)
                    LOCAL_STEP(l0);
                else if (k == 1)
                    LOCAL_STEP(l1);
                else if (k == 2)
                    LOCAL_STEP(l2);
            }
            if (t_rng_below(&c.rng, (uint64_t)n_ops) == 0) {
                /* a verification in the middle of the round, while the
                 * other threads keep mutating and collecting */
                vstats vs = verify_all(&c, l0, l1, l2);
                c.last_count = vs.objects;
                atomic_fetch_add(&g_partial_verifies, 1);
            }
            if (t_rng_below(&c.rng, (uint64_t)n_ops * 3) == 0) explicit_collection(&c);
        }
        vstats vs = verify_all(&c, l0, l1, l2);
        c.last_count = vs.objects;
        c.last_bytes = vs.bytes;
        note_heap(&c, round);
        if (c.tid == 0 && (round % 10 == 0 || round == n_rounds - 1))
            t_note("round %d: thread 0 reaches %llu objects / %llu KiB; heap "
                   "%zu KiB, gc_no %lu",
                   round, (unsigned long long)vs.objects,
                   (unsigned long long)(vs.bytes >> 10),
                   GC_get_heap_size() >> 10, (unsigned long)GC_get_gc_no());
    }
    if (life + 1 < n_lives) {
        free_before_exit(&c);
        /* Hand over: the parcel as the next thread's argument, the locals
         * as this thread's result. */
        parcel *next = new_parcel();
        memcpy(&next->c, &c, sizeof c);
        memcpy(next->stk, stk, sizeof stk);
        next->life = life + 1;
        next->predecessor = pthread_self();
        farewell *f = GC_MALLOC(sizeof *f);
        CHECK(f != NULL);
        f->locals[0] = l0;
        f->locals[1] = l1;
        f->locals[2] = l2;
        start_life(next);
        return f;
    }
    /* Final check, then drop everything from the global roots. */
    verify_all(&c, l0, l1, l2);
    GC_free(uncoll_table(&c));
    memset(g_bss_roots[c.tid], 0, sizeof g_bss_roots[c.tid]);
    memset(g_data_roots.r[c.tid], 0, sizeof g_data_roots.r[c.tid]);
    CHECK(sem_post(&g_slots_done) == 0);
    return NULL;
}

static unsigned long long count(_Atomic uint64_t *counter)
{
    return (unsigned long long)atomic_load(counter);
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [-t threads] [-r rounds] [-o ops] [-l lives] [-s seed]\n",
            argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    t_test_name = "oracle_stress";
    GC_INIT();
    n_threads = (int)t_env_long("ORACLE_THREADS", 4);
    n_rounds = (int)t_env_long("ORACLE_ROUNDS", 100);
    n_ops = (int)t_env_long("ORACLE_OPS", 2500);
    g_seed = (uint64_t)t_env_long("ORACLE_SEED", 0);
    n_live = (int)t_env_long("ORACLE_LIVE", 4000);
    g_selftest_free = (int)t_env_long("ORACLE_SELFTEST_FREE", 0);
    g_selftest_hidden = (int)t_env_long("ORACLE_SELFTEST_HIDDEN", 0);
    g_selftest_typed = (int)t_env_long("ORACLE_SELFTEST_TYPED", 0);
    g_api_mix = (int)t_env_long("ORACLE_API_MIX", 0);
    n_lives = (int)t_env_long("ORACLE_LIVES", 16);
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage(argv[0]);
        long v = strtol(argv[i + 1], NULL, 0);
        if (!strcmp(argv[i], "-t"))
            n_threads = (int)v;
        else if (!strcmp(argv[i], "-r"))
            n_rounds = (int)v;
        else if (!strcmp(argv[i], "-o"))
            n_ops = (int)v;
        else if (!strcmp(argv[i], "-s"))
            g_seed = (uint64_t)v;
        else if (!strcmp(argv[i], "-l"))
            n_lives = (int)v;
        else
            usage(argv[0]);
        i++;
    }
    if (!g_seed)
        g_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    CHECK(n_threads >= 1 && n_threads <= MAXT, "threads must be 1..%d", MAXT);
    CHECK(n_rounds >= 1 && n_ops >= 1);
    CHECK(n_lives >= 1 && n_lives <= MAX_LIVES, "lives must be 1..%d",
          MAX_LIVES);
    if (n_lives > n_rounds)
        n_lives = n_rounds; /* a life runs at least one round */
    t_note("threads=%d rounds=%d ops=%d lives=%d seed=%llu", n_threads,
           n_rounds, n_ops, n_lives, (unsigned long long)g_seed);

    make_typed_descriptors();
    weak_tables_init();
    g_finalized = calloc(FINALIZED_IDS / 64, sizeof *g_finalized);
    CHECK(g_finalized != NULL);
    double t0 = t_now();
    /* seed the shared pool */
    {
        ctx c0;
        memset(&c0, 0, sizeof c0);
        t_rng_seed(&c0.rng, g_seed);
        for (int i = 0; i < POOL_N; i++)
            g_pool[i] = new_leaf(&c0, (size_t)t_rng_range(&c0.rng, 16, 512));
    }
    unsigned long gc0 = (unsigned long)GC_get_gc_no();

    CHECK(sem_init(&g_slots_done, 0, 0) == 0);
    for (int i = 0; i < n_threads; i++) {
        parcel *p = new_parcel();
        p->c.tid = i;
        start_life(p);
    }
    for (int i = 0; i < n_threads; i++)
        while (sem_wait(&g_slots_done) != 0)
            CHECK(errno == EINTR, "sem_wait: %d", errno);

    /* What is left in the mailbox and the pool must still be intact. */
    {
        ctx c0;
        memset(&c0, 0, sizeof c0);
        c0.tid = MAXT - 1;
        t_rng_seed(&c0.rng, g_seed + 7);
        GC_gcollect();
        for (int i = 0; i < MAIL_N; i++)
            verify_from(&c0, &g_mail[i], "mailbox at exit");
        for (int i = 0; i < MAIL_N; i++)
            if (g_holder_mail[i]) {
                holder *hd = (holder *)GC_REVEAL_POINTER(g_holder_mail[i]);
                check_holder(&c0, hd, "holder mailbox at exit");
                verify_from(&c0, &hd->r, "holder's sub-graph at exit");
                g_holder_mail[i] = 0;
                GC_free(hd);
            }
        for (int i = 0; i < POOL_N; i++)
            verify_from(&c0, &g_pool[i], "pool at exit");
    }

    double dt = t_now() - t0;
    size_t h10 = atomic_load(&g_heap_at_10pct);
    size_t hmax = atomic_load(&g_heap_max_after_10pct);
    size_t hend = GC_get_heap_size();
    if (hend > hmax)
        hmax = hend;
    unsigned long ngc = (unsigned long)GC_get_gc_no() - gc0;
    uint64_t abytes = atomic_load(&g_alloc_bytes);
    t_note("%.1f s: %llu allocations, %llu MiB allocated; %llu objects "
           "verified (%llu mid-round verifications); %lu collections (%llu "
           "explicit); heap at 10%%: %zu KiB, max later: %zu KiB",
           dt, count(&g_allocs), (unsigned long long)(abytes >> 20), count(&g_verified),
           count(&g_partial_verifies), ngc, count(&g_explicit_gcs), h10 >> 10, hmax >> 10);
    t_note("%llu threads ran in turn in %d slots, %llu results taken over, "
           "%llu objects freed just before an exit",
           count(&g_lives_started), n_threads, count(&g_farewells_taken),
           count(&g_exit_frees));
    t_note("%llu subgraphs sent, %llu received; %llu typed nodes; %llu "
           "uncollectable holders passed, %llu uncollectable tables moved; weak "
           "tables: %llu entries put, %llu keys found cleared, %llu found intact, "
           "%llu moved; %llu finalizers registered, %llu run",
           count(&g_sent), count(&g_recv), count(&g_typed_nodes), count(&g_holders_passed),
           count(&g_table_swaps), count(&g_weak_put), count(&g_weak_pruned),
           count(&g_weak_checked), count(&g_weak_moved), count(&g_finalizers_set),
           count(&g_finalizers_run));

    if (g_api_mix)
        t_note("explicit collections: %llu GC_gcollect, %llu started, %llu stepped, "
               "%llu unmapping, %llu tried, %llu with collections off, %llu switch or step; "
               "%s at exit",
               count(&g_api_calls[0]), count(&g_api_calls[1]), count(&g_api_calls[2]),
               count(&g_api_calls[3]), count(&g_api_calls[4]), count(&g_api_calls[5]),
               count(&g_api_calls[6]), GC_is_incremental_mode() ? "incremental" : "stop mode");
    if (g_api_mix && count(&g_explicit_gcs) >= 70) {
        /* Each way taken (1 in 7 each: one missing after 70 calls is
         * 7 x (6/7)^70, 1 run in 6,800), and the switch held. */
        for (int way = 0; way < 7; way++)
            CHECK(count(&g_api_calls[way]) > 0, "explicit collection way %d never taken", way);
        CHECK(GC_is_incremental_mode() || getenv("SGC_MODE"), "the switch to incremental mode did not hold");
    }
    CHECK(!atomic_load(&g_failed));
    CHECK(ngc >= 1, "no collection happened at all (gc_no did not advance)");
    CHECK(atomic_load(&g_lives_started) == (uint64_t)n_threads * n_lives);
    CHECK(atomic_load(&g_farewells_taken) == (uint64_t)n_threads * (n_lives - 1));
    if ((uint64_t)n_threads * n_rounds * n_ops >= 100000)
        CHECK(atomic_load(&g_holders_passed) > 0 && atomic_load(&g_table_swaps) > 0,
              "no uncollectable holder passed between threads, or no table moved");
    if (n_rounds >= 10 && (uint64_t)n_threads * n_rounds * n_ops >= 100000)
        CHECK(atomic_load(&g_weak_pruned) > 0 && atomic_load(&g_weak_checked) > 0,
              "the weak tables saw no key cleared, or none intact: nothing tested");
    if (n_rounds >= 10) {
        CHECK(h10 > 0);
        CHECK(hmax <= 4 * h10 + ((size_t)64 << 20),
              "heap grew from %zu KiB (10%% of the run) to %zu KiB: garbage "
              "is not reclaimed",
              h10 >> 10, hmax >> 10);
        /* Only meaningful if far more was allocated than the heap holds. */
        CHECK(abytes > 2 * (uint64_t)hmax,
              "allocated %llu MiB but heap is %zu MiB: test too small to "
              "show reclamation",
              (unsigned long long)(abytes >> 20), hmax >> 20);
    }
    t_note("PASS");
    return 0;
}
