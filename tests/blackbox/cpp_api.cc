/* cpp_api: bdwgc's C++ interface (gc_cpp.h, gc_allocator.h) on sgc.
 *
 * Built without libsgccpp against sgc (plain `new` stays malloc's: the
 * headers alone must do), and with -lgccpp -lgc against bdwgc
 * (run-against-bdwgc.sh), whose gc_cpp.h needs GC_throw_bad_alloc.  Nothing
 * here depends on where plain `new` puts memory.
 *
 *  A. Objects of a class derived from gc, reachable only from other gc
 *     objects (a chain from one static head, arrays from gc's new[],
 *     PointerFreeGC payloads), keep their contents through collections
 *     amid garbage.
 *  B. Unreachable gc_cleanup objects get their destructors (the most
 *     derived one, which frees what it owns) after GC_gcollect and
 *     GC_invoke_finalizers: at least 90% of those dropped, none twice, none
 *     of those still referenced.  A gc_cleanup member at a nonzero offset
 *     of a gc object is destroyed at its own address.
 *  C. delete of a gc_cleanup object (single, array, NoGC) runs each
 *     destructor exactly once, and collections never run it again; one on
 *     the stack is destroyed once by its scope.
 *  D. ::new (UseGC, cleanup, data): the cleanup runs with the object and
 *     data for at least 90% of the dropped objects, never twice.
 *  E. NoGC objects with no reference left survive and keep alive what they
 *     point to; once deleted, what they pointed to is collected.
 *  F. PointerFreeGC memory is not scanned: objects only it points to are
 *     collected (at least 90%); UseGC memory in the same role keeps all.
 *  G. Containers (vector, map, list, deque, unordered_map, string, nested
 *     containers, a vector inside a gc object) on gc_allocator and
 *     gc_allocator_ignore_off_page keep the objects only their storage
 *     points to, intact through collections; storage for a pointer-free
 *     type (bdwgc's list, and a type declared with GC_DECLARE_PTRFREE)
 *     keeps nothing alive; traceable_allocator storage keeps its objects
 *     alive while the container itself lives where the collector cannot
 *     see it (malloc's heap), and lets them go once destroyed.
 *  H. The allocators' interface: rebind (also from the void
 *     specialisations through allocator_traits), ==, !=, allocate(0),
 *     max_size; out of memory is std::bad_alloc from gc's new, the global
 *     placement new and each allocator; a throwing constructor gets its
 *     memory back through the matching placement delete.
 *  I. std::thread workers (registered with GC_register_my_thread, as
 *     bdwgc needs) build gc object lists, gc_allocator maps and
 *     traceable_allocator vectors and drop gc_cleanup objects while the
 *     main thread collects and runs finalizers; every structure is checked
 *     in the workers and afterwards; no destructor runs twice.
 *
 * CPP_API_SCALE (percent, default 100) scales the object counts.
 */
#include <atomic>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc/gc_allocator.h"
#include "gc/gc_cpp.h"

#include "common.h"
#include "cpp_common.h"

/* Garbage of several sizes and kinds, so collections have work and freed
 * objects get reused. */
struct Junk : public gc {
    void *p[5];
};
T_NOINLINE static void churn(long n)
{
    for (long i = 0; i < n; i++) {
        switch (i % 4) {
        case 0: (void)new Junk; break;
        case 1: (void)GC_MALLOC(16 + (size_t)(i % 300)); break;
        case 2: (void)new (PointerFreeGC) char[100 + i % 1000]; break;
        default: (void)make_obj((uint64_t)i); break;
        }
    }
}

/* ---- A. gc objects reachable from gc objects ---------------------------- */

static const uint64_t NODE_MAGIC = 0x4e4f44454e4f4445ULL;

struct Leaf : public gc {
    uint64_t v[3];
    Leaf() { v[0] = v[1] = v[2] = 0; }
};

struct Node : public gc {
    uint64_t magic;
    Node *next;
    uint64_t idx;
    Leaf *leaves;      /* every 7th node: new Leaf[4] */
    uint32_t *payload; /* every 5th node: PointerFreeGC data */
    uint64_t pat[3];

    Node(uint64_t i, Node *n) : magic(NODE_MAGIC), next(n), idx(i), leaves(0), payload(0)
    {
        for (int k = 0; k < 3; k++)
            pat[k] = pattern(i, k);
    }
    bool ok(uint64_t i) const
    {
        if (magic != NODE_MAGIC || idx != i)
            return false;
        for (int k = 0; k < 3; k++)
            if (pat[k] != pattern(i, k))
                return false;
        return true;
    }
};

static Node *a_head; /* the only root of part A */

T_NOINLINE static void a_build(long n)
{
    Node *head = 0;
    for (long i = 0; i < n; i++) {
        head = new Node((uint64_t)i, head);
        if (i % 7 == 0) {
            head->leaves = new Leaf[4];
            for (int k = 0; k < 4; k++)
                for (int j = 0; j < 3; j++)
                    head->leaves[k].v[j] = pattern((uint64_t)i, 10 + k * 3 + j);
        }
        if (i % 5 == 0) {
            head->payload = new (PointerFreeGC) uint32_t[16];
            for (int k = 0; k < 16; k++)
                head->payload[k] = (uint32_t)pattern((uint64_t)i, 40 + k);
        }
    }
    a_head = head;
}

T_NOINLINE static void a_check(long n)
{
    long i = n - 1;
    for (Node *p = a_head; p; p = p->next, i--) {
        CHECK(i >= 0, "chain longer than built");
        CHECK(p->ok((uint64_t)i), "node %ld damaged", i);
        CHECK(GC_base(p) == p, "node %ld not at the start of a heap object", i);
        if (i % 7 == 0) {
            CHECK(p->leaves != 0);
            for (int k = 0; k < 4; k++)
                for (int j = 0; j < 3; j++)
                    CHECK(p->leaves[k].v[j] == pattern((uint64_t)i, 10 + k * 3 + j),
                          "leaf %d of node %ld damaged", k, i);
        }
        if (i % 5 == 0) {
            CHECK(p->payload != 0);
            for (int k = 0; k < 16; k++)
                CHECK(p->payload[k] == (uint32_t)pattern((uint64_t)i, 40 + k),
                      "payload of node %ld damaged", i);
        }
    }
    CHECK(i == -1, "chain ends %ld nodes short", i + 1);
}

static void part_a()
{
    long n = scaled(20000);
    a_build(n);
    for (int round = 0; round < 10; round++) {
        churn(scaled(100000));
        GC_gcollect();
        a_check(n);
    }
    a_head = 0;
}

/* ---- B, C. gc_cleanup ---------------------------------------------------- */

static const uint64_t TRACKED_MAGIC = 0x545241434b454421ULL;

/* Counts its destructions in a slot the creator names, so that late
 * finalization of an object from an earlier part counts there. */
struct Tracked : public gc_cleanup {
    uint64_t magic;
    std::atomic<int> *slot;
    uint64_t pad[2];
    explicit Tracked(std::atomic<int> *s) : magic(TRACKED_MAGIC), slot(s) { pad[0] = pad[1] = 0; }
    ~Tracked()
    {
        CHECK(magic == TRACKED_MAGIC, "destructor on a damaged or destroyed Tracked %p",
              (void *)this);
        magic = 0;
        slot->fetch_add(1);
    }
};

/* A derived destructor must run too: it owns memory it frees. */
static std::atomic<int> derived_destroyed;
struct DerivedTracked : public Tracked {
    std::string *owned;
    explicit DerivedTracked(std::atomic<int> *s)
        : Tracked(s), owned(new std::string(100, 'x')) {}
    ~DerivedTracked()
    {
        CHECK(owned->size() == 100 && (*owned)[99] == 'x');
        delete owned;
        derived_destroyed.fetch_add(1);
    }
};

/* A gc object holding a gc_cleanup member at a nonzero offset. */
struct WithMember : public gc {
    uint64_t before[3];
    Tracked member;
    explicit WithMember(std::atomic<int> *s) : member(s) { before[0] = before[1] = before[2] = 7; }
};

/* A gc_cleanup object with a gc_cleanup member: the collector must run
 * the outer destructor (which destroys the member too), not the member's
 * alone, whose constructor ran last. */
struct OuterTracked : public Tracked {
    Tracked inner;
    OuterTracked(std::atomic<int> *outer_slot, std::atomic<int> *inner_slot)
        : Tracked(outer_slot), inner(inner_slot) {}
};

enum { B_N = 1000, B_KEEP = 100, B_OUTER = 200 };
static std::atomic<int> b_count[B_N];
static std::atomic<int> b_member_count[B_N];
static std::atomic<int> b_outer_count[B_OUTER], b_inner_count[B_OUTER];
static Tracked *b_keep[B_KEEP];

T_NOINLINE static void b_allocate()
{
    for (int i = 0; i < B_N; i++) {
        Tracked *t = (i % 2) ? new DerivedTracked(&b_count[i]) : new Tracked(&b_count[i]);
        if (i < B_KEEP)
            b_keep[i] = t;
        (void)new WithMember(&b_member_count[i]);
        if (i < B_OUTER)
            (void)new OuterTracked(&b_outer_count[i], &b_inner_count[i]);
    }
}

static int sum(std::atomic<int> *a, int n, int *max)
{
    int s = 0;
    *max = 0;
    for (int i = 0; i < n; i++) {
        int v = a[i].load();
        s += v;
        if (v > *max)
            *max = v;
    }
    return s;
}

static void part_b()
{
    GC_set_finalize_on_demand(1);
    b_allocate();
    cycles(4);
    int max = 0;
    for (int i = 0; i < B_KEEP; i++)
        CHECK(b_count[i].load() == 0 && b_keep[i]->magic == TRACKED_MAGIC,
              "referenced gc_cleanup %d destroyed", i);
    int dropped = sum(b_count + B_KEEP, B_N - B_KEEP, &max);
    CHECK(max <= 1, "a gc_cleanup destroyed %d times", max);
    CHECK(dropped >= (B_N - B_KEEP) * 9 / 10, "only %d of %d dropped gc_cleanup objects destroyed",
          dropped, B_N - B_KEEP);
    int members = sum(b_member_count, B_N, &max);
    CHECK(max <= 1, "a gc_cleanup member destroyed %d times", max);
    CHECK(members >= B_N * 9 / 10, "only %d of %d gc_cleanup members destroyed", members, B_N);
    int outer = sum(b_outer_count, B_OUTER, &max);
    CHECK(max <= 1);
    CHECK(outer >= B_OUTER * 9 / 10, "only %d of %d gc_cleanup objects with a gc_cleanup member destroyed",
          outer, (int)B_OUTER);
    for (int i = 0; i < B_OUTER; i++)
        CHECK(b_inner_count[i].load() == b_outer_count[i].load(),
              "gc_cleanup %d destroyed %d times, its gc_cleanup member %d times", i, b_outer_count[i].load(),
              b_inner_count[i].load());

    for (int i = 0; i < B_KEEP; i++)
        b_keep[i] = 0;
    cycles(4);
    int all = sum(b_count, B_N, &max);
    CHECK(max <= 1, "a gc_cleanup destroyed %d times", max);
    CHECK(all >= B_N * 9 / 10, "only %d of %d gc_cleanup objects destroyed", all, B_N);
    int derived = derived_destroyed.load();
    CHECK(derived >= all / 2 - B_N / 20 && derived <= B_N / 2,
          "%d derived destructors for %d destructions", derived, all);
    t_note("B: %d of %d gc_cleanup objects and %d of %d members destroyed", all, B_N, members, B_N);
}

enum { C_N = 200 };
static std::atomic<int> c_count[C_N];
static std::atomic<int> c_array_count[5];
static int c_array_next;
struct ArrayTracked : public Tracked { /* new[] needs a default constructor */
    ArrayTracked() : Tracked(&c_array_count[c_array_next++]) {}
};
static std::atomic<int> c_nogc_count[C_N];
static uintptr_t c_hidden[C_N]; /* ~pointer: not a reference */
static std::atomic<int> c_on_stack;
static int on_stack_count() { return c_on_stack.load(); }

static void part_c()
{
    for (int i = 0; i < C_N; i++) {
        Tracked *t = (i % 2) ? new DerivedTracked(&c_count[i]) : new Tracked(&c_count[i]);
        delete t;
        CHECK(c_count[i].load() == 1, "delete ran %d destructors", c_count[i].load());
    }
    {
        Tracked local(&c_on_stack);
        CHECK(on_stack_count() == 0);
    }
    CHECK(on_stack_count() == 1, "a gc_cleanup on the stack destroyed %d times", on_stack_count());
    ArrayTracked *arr = new ArrayTracked[5];
    CHECK(c_array_next == 5);
    delete[] arr;
    for (int k = 0; k < 5; k++)
        CHECK(c_array_count[k].load() == 1, "delete[] destroyed element %d %d times", k,
              c_array_count[k].load());
    for (int i = 0; i < C_N; i++)
        c_hidden[i] = ~(uintptr_t) new (NoGC) Tracked(&c_nogc_count[i]);
    churn(scaled(20000));
    cycles(4);
    for (int i = 0; i < C_N; i++) {
        CHECK(c_count[i].load() == 1, "deleted gc_cleanup %d destroyed %d times", i, c_count[i].load());
        CHECK(c_nogc_count[i].load() == 0, "unreferenced NoGC gc_cleanup %d destroyed", i);
        delete reinterpret_cast<Tracked *>(~c_hidden[i]);
        CHECK(c_nogc_count[i].load() == 1);
    }
    cycles(3);
    for (int i = 0; i < C_N; i++)
        CHECK(c_count[i].load() == 1 && c_nogc_count[i].load() == 1,
              "deleted gc_cleanup %d destroyed again by the collector", i);
    for (int k = 0; k < 5; k++)
        CHECK(c_array_count[k].load() == 1, "deleted array element %d destroyed again", k);
    CHECK(on_stack_count() == 1);
}

/* ---- D. global placement new with a cleanup function --------------------- */

static const uint64_t PLAIN_MAGIC = 0x504c41494e4f424aULL;
enum { D_N = 1000, D_ARRAYS = 100 };
static std::atomic<int> d_count[D_N];
static std::atomic<int> d_array_count;
static int d_cookie; /* its address is the client data */

struct Plain { /* not derived from gc */
    uint64_t magic;
    int idx;
    uint64_t pat;
    explicit Plain(int i) : magic(PLAIN_MAGIC), idx(i), pat(pattern((uint64_t)i, 0)) {}
};

static void plain_cleanup(void *obj, void *data)
{
    CHECK(data == &d_cookie, "cleanup got client data %p", data);
    Plain *p = static_cast<Plain *>(obj);
    CHECK(p->magic == PLAIN_MAGIC && p->idx >= 0 && p->idx < D_N &&
              p->pat == pattern((uint64_t)p->idx, 0),
          "cleanup on a damaged object %p", obj);
    p->magic = 0;
    d_count[p->idx].fetch_add(1);
}

static void array_cleanup(void *obj, void *data)
{
    CHECK(data == &d_cookie);
    uint64_t *a = static_cast<uint64_t *>(obj);
    for (int k = 1; k < 8; k++)
        CHECK(a[k] == pattern(a[0] >> 32, k + 1), "cleanup on a damaged array");
    d_array_count.fetch_add(1);
}

T_NOINLINE static void d_allocate()
{
    for (int i = 0; i < D_N; i++)
        (void)::new (UseGC, plain_cleanup, &d_cookie) Plain(i);
    for (int i = 0; i < D_ARRAYS; i++) {
        uint64_t *a = ::new (UseGC, array_cleanup, &d_cookie) uint64_t[8];
        a[0] = (uint64_t)i << 32;
        for (int k = 1; k < 8; k++)
            a[k] = pattern((uint64_t)i, k + 1);
    }
}

static void part_d()
{
    d_allocate();
    cycles(4);
    int max = 0;
    int n = sum(d_count, D_N, &max);
    CHECK(max <= 1, "a cleanup function ran %d times for one object", max);
    CHECK(n >= D_N * 9 / 10, "cleanup ran for only %d of %d objects", n, D_N);
    CHECK(d_array_count.load() >= D_ARRAYS * 9 / 10 && d_array_count.load() <= D_ARRAYS,
          "cleanup ran for %d of %d arrays", d_array_count.load(), D_ARRAYS);
}

/* ---- E. NoGC ------------------------------------------------------------- */

static const uint64_t HOLDER_MAGIC = 0x484f4c4445524e47ULL;
struct NoGCHolder : public gc {
    uint64_t magic;
    uint64_t idx;
    Obj *target; /* the only reference to its target */
};

enum { E_N = 300 };
static uintptr_t e_hidden[E_N]; /* ~pointer: not a reference */
static uintptr_t e_hidden_array;
static std::atomic<long> e_finalized;

T_NOINLINE static void e_allocate()
{
    for (int i = 0; i < E_N; i++) {
        NoGCHolder *h = new (NoGC) NoGCHolder;
        h->magic = HOLDER_MAGIC;
        h->idx = (uint64_t)i;
        h->target = make_obj(5000000 + (uint64_t)i, &e_finalized);
        e_hidden[i] = ~(uintptr_t)h;
    }
    uint64_t *a = ::new (NoGC) uint64_t[64];
    for (int k = 0; k < 64; k++)
        a[k] = pattern(77, k);
    e_hidden_array = ~(uintptr_t)a;
}

T_NOINLINE static void e_check()
{
    for (int i = 0; i < E_N; i++) {
        NoGCHolder *h = reinterpret_cast<NoGCHolder *>(~e_hidden[i]);
        CHECK(h->magic == HOLDER_MAGIC && h->idx == (uint64_t)i, "NoGC object %d damaged", i);
        CHECK(GC_base(h) == h, "NoGC object %d is not a heap object", i);
        CHECK(obj_ok(h->target, 5000000 + (uint64_t)i), "target of NoGC object %d damaged", i);
    }
    const uint64_t *a = reinterpret_cast<const uint64_t *>(~e_hidden_array);
    for (int k = 0; k < 64; k++)
        CHECK(a[k] == pattern(77, k), "NoGC array damaged at %d", k);
}

T_NOINLINE static void e_delete()
{
    for (int i = 0; i < E_N; i++)
        delete reinterpret_cast<NoGCHolder *>(~e_hidden[i]);
    /* Without libgccpp a global placement's memory goes back by GC_FREE. */
    GC_FREE(reinterpret_cast<void *>(~e_hidden_array));
}

static void part_e()
{
    e_allocate();
    for (int round = 0; round < 4; round++) {
        churn(scaled(20000));
        cycles(1);
        e_check();
        CHECK(e_finalized.load() == 0, "%ld objects held by NoGC objects were collected",
              e_finalized.load());
    }
    e_delete();
    cycles(4);
    CHECK(e_finalized.load() >= E_N * 9 / 10,
          "only %ld of %d objects held by deleted NoGC objects collected", e_finalized.load(), E_N);
}

/* ---- F. PointerFreeGC is not scanned -------------------------------------- */

struct Slots : public gc {
    uint64_t magic;
    void *p[16];
};
enum { F_HOLDERS = 20, F_N = F_HOLDERS * 16 };
static Slots *f_pointer_free[F_HOLDERS];
static Slots *f_scanned[F_HOLDERS];
static std::atomic<long> f_pointer_free_finalized, f_scanned_finalized;

T_NOINLINE static void f_allocate()
{
    for (int h = 0; h < F_HOLDERS; h++) {
        f_pointer_free[h] = new (PointerFreeGC) Slots;
        f_scanned[h] = new (UseGC) Slots;
        f_pointer_free[h]->magic = f_scanned[h]->magic = HOLDER_MAGIC + (uint64_t)h;
        for (int k = 0; k < 16; k++) {
            f_pointer_free[h]->p[k] = make_obj(6000000 + (uint64_t)(h * 16 + k), &f_pointer_free_finalized);
            f_scanned[h]->p[k] = make_obj(7000000 + (uint64_t)(h * 16 + k), &f_scanned_finalized);
        }
    }
}

static void part_f()
{
    f_allocate();
    churn(scaled(20000));
    cycles(4);
    CHECK(f_scanned_finalized.load() == 0, "%ld objects held by UseGC memory collected",
          f_scanned_finalized.load());
    CHECK(f_pointer_free_finalized.load() >= F_N * 9 / 10,
          "only %ld of %d objects held only by PointerFreeGC memory collected",
          f_pointer_free_finalized.load(), (int)F_N);
    for (int h = 0; h < F_HOLDERS; h++) {
        CHECK(f_pointer_free[h]->magic == HOLDER_MAGIC + (uint64_t)h, "PointerFreeGC holder damaged");
        CHECK(f_scanned[h]->magic == HOLDER_MAGIC + (uint64_t)h);
        for (int k = 0; k < 16; k++)
            CHECK(obj_ok(static_cast<Obj *>(f_scanned[h]->p[k]), 7000000 + (uint64_t)(h * 16 + k)));
    }
    for (int h = 0; h < F_HOLDERS; h++)
        f_pointer_free[h] = f_scanned[h] = 0;
}

/* ---- G. containers ------------------------------------------------------- */

typedef std::vector<Obj *, gc_allocator<Obj *> > ObjVec;
typedef std::map<long, Obj *, std::less<long>, gc_allocator<std::pair<const long, Obj *> > > ObjMap;
typedef std::list<Obj *, gc_allocator<Obj *> > ObjList;
typedef std::deque<Obj *, gc_allocator<Obj *> > ObjDeque;
typedef std::unordered_map<long, Obj *, std::hash<long>, std::equal_to<long>,
                           gc_allocator<std::pair<const long, Obj *> > > ObjHash;
typedef std::basic_string<char, std::char_traits<char>, gc_allocator<char> > GcString;
typedef std::vector<ObjVec, gc_allocator<ObjVec> > ObjVecVec;
typedef std::vector<Obj *, gc_allocator_ignore_off_page<Obj *> > BigVec;
typedef std::vector<Obj *, traceable_allocator<Obj *> > TraceVec;
typedef std::map<long, Obj *, std::less<long>, traceable_allocator<std::pair<const long, Obj *> > >
    TraceMap;

struct Box : public gc { /* a container whose object is itself collected */
    ObjVec v;
};

/* A user type declared pointer-free, as bdwgc documents. */
struct PodPair {
    long a, b;
};
GC_DECLARE_PTRFREE(PodPair);

static ObjVec g_vec;
static ObjMap g_map;
static ObjList g_list;
static ObjDeque g_deque;
static ObjHash g_hash;
static GcString g_string;
static ObjVecVec g_nested;
static BigVec g_big;
static Box *g_box;
static std::vector<unsigned long, gc_allocator<unsigned long> > g_addresses;
static std::vector<PodPair, gc_allocator<PodPair> > g_pods;
static TraceVec *g_trace_vec; /* both in malloc's heap, never scanned */
static TraceMap *g_trace_map;
static void *g_trace_vec_mem, *g_trace_map_mem;

static long g_n;
static std::vector<long> g_map_expected; /* key -> object index (plain data) */
static std::atomic<long> g_kept_finalized, g_map_finalized, g_addresses_finalized, g_trace_finalized;

/* Object indices by structure. */
static const long VEC_BASE = 10000000, MAP_BASE = 20000000, LIST_BASE = 30000000,
                  DEQUE_BASE = 40000000, HASH_BASE = 50000000, NEST_BASE = 60000000,
                  BIG_BASE = 70000000, BOX_BASE = 80000000, ADDR_BASE = 90000000,
                  TRACE_BASE = 100000000, TMAP_BASE = 110000000, REMAP_BASE = 120000000;
enum { NEST = 40, BIG_DISTINCT = 1000, G_ADDR = 300 };
static long g_big_len; /* entries of the ignore_off_page vector, on BIG_DISTINCT objects */

static char string_char(long i)
{
    return (char)('a' + pattern((uint64_t)i, 3) % 26);
}

T_NOINLINE static void g_build()
{
    long n = g_n;
    for (long i = 0; i < n; i++) {
        g_vec.push_back(make_obj(VEC_BASE + i, &g_kept_finalized));
        g_map[i] = make_obj(MAP_BASE + i, &g_map_finalized);
        g_map_expected.push_back(MAP_BASE + i);
        g_list.push_back(make_obj(LIST_BASE + i, &g_kept_finalized));
        if (i % 2)
            g_deque.push_back(make_obj(DEQUE_BASE + i, &g_kept_finalized));
        else
            g_deque.push_front(make_obj(DEQUE_BASE + i, &g_kept_finalized));
        g_hash[i] = make_obj(HASH_BASE + i, &g_kept_finalized);
    }
    g_string.reserve((size_t)n * 20);
    for (long i = 0; i < n * 20; i++)
        g_string.push_back(string_char(i));
    g_nested.resize(NEST);
    for (int i = 0; i < NEST; i++)
        for (int j = 0; j < NEST; j++)
            g_nested[(size_t)i].push_back(make_obj(NEST_BASE + i * NEST + j, &g_kept_finalized));
    ObjVec distinct;
    for (long i = 0; i < BIG_DISTINCT; i++)
        distinct.push_back(make_obj(BIG_BASE + i, &g_kept_finalized));
    g_big.reserve((size_t)g_big_len);
    for (long i = 0; i < g_big_len; i++)
        g_big.push_back(distinct[(size_t)(i % BIG_DISTINCT)]);
    g_box = new Box;
    for (long i = 0; i < n; i++)
        g_box->v.push_back(make_obj(BOX_BASE + i, &g_kept_finalized));
    for (long i = 0; i < G_ADDR; i++) {
        g_addresses.push_back((unsigned long)make_obj(ADDR_BASE + i, &g_addresses_finalized));
        PodPair pp = {(long)make_obj(ADDR_BASE + G_ADDR + i, &g_addresses_finalized), i};
        g_pods.push_back(pp);
    }
    g_trace_vec_mem = malloc(sizeof(TraceVec));
    g_trace_map_mem = malloc(sizeof(TraceMap));
    g_trace_vec = new (g_trace_vec_mem) TraceVec;
    g_trace_map = new (g_trace_map_mem) TraceMap;
    for (long i = 0; i < n; i++) {
        g_trace_vec->push_back(make_obj(TRACE_BASE + i, &g_trace_finalized));
        (*g_trace_map)[i] = make_obj(TMAP_BASE + i, &g_trace_finalized);
    }
}

/* Replaces a fifth of the map's entries: erased nodes go back with
 * GC_FREE while the rest stay in use. */
T_NOINLINE static void g_remap(int round)
{
    for (long k = round % 5; k < g_n; k += 5) {
        Obj *old = g_map[k];
        GC_REGISTER_FINALIZER(old, 0, 0, 0, 0); /* dropped on purpose */
        g_map.erase(k);
        long idx = REMAP_BASE + round * g_n + k;
        g_map[k] = make_obj(idx, &g_map_finalized);
        g_map_expected[(size_t)k] = idx;
    }
}

T_NOINLINE static void g_check(bool with_traceable)
{
    long n = g_n;
    CHECK((long)g_vec.size() == n && (long)g_map.size() == n && (long)g_list.size() == n &&
          (long)g_deque.size() == n && (long)g_hash.size() == n);
    for (long i = 0; i < n; i++) {
        CHECK(obj_ok(g_vec[(size_t)i], VEC_BASE + i), "vector element %ld damaged", i);
        CHECK(obj_ok(g_map[i], g_map_expected[(size_t)i]), "map element %ld damaged", i);
        CHECK(obj_ok(g_hash[i], HASH_BASE + i), "unordered_map element %ld damaged", i);
        CHECK(obj_ok(g_box->v[(size_t)i], BOX_BASE + i), "vector in a gc object: element %ld damaged", i);
        if (!with_traceable)
            continue;
        CHECK(obj_ok((*g_trace_vec)[(size_t)i], TRACE_BASE + i), "traceable vector element %ld damaged", i);
        CHECK(obj_ok((*g_trace_map)[i], TMAP_BASE + i), "traceable map element %ld damaged", i);
    }
    long i = 0;
    for (ObjList::const_iterator it = g_list.begin(); it != g_list.end(); ++it, ++i)
        CHECK(obj_ok(*it, LIST_BASE + i), "list element %ld damaged", i);
    /* push_front for the even indices, push_back for the odd ones */
    long front_evens = (n + 1) / 2;
    for (long pos = 0; pos < n; pos++) {
        long idx = pos < front_evens ? 2 * (front_evens - 1 - pos) : 2 * (pos - front_evens) + 1;
        CHECK(obj_ok(g_deque[(size_t)pos], DEQUE_BASE + idx), "deque element %ld damaged", pos);
    }
    CHECK((long)g_string.size() == n * 20);
    for (long k = 0; k < n * 20; k++)
        CHECK(g_string[(size_t)k] == string_char(k), "string damaged at %ld", k);
    for (int a = 0; a < NEST; a++)
        for (int b = 0; b < NEST; b++)
            CHECK(obj_ok(g_nested[(size_t)a][(size_t)b], NEST_BASE + a * NEST + b),
                  "nested vector element %d,%d damaged", a, b);
    CHECK((long)g_big.size() == g_big_len);
    for (long k = 0; k < g_big_len; k++)
        CHECK(obj_ok(g_big[(size_t)k], BIG_BASE + k % BIG_DISTINCT), "ignore_off_page element %ld damaged", k);
    for (long k = 0; k < G_ADDR; k++)
        CHECK(g_pods[(size_t)k].b == k, "pointer-free vector damaged");
}

T_NOINLINE static void g_destroy_traceable()
{
    g_trace_vec->~TraceVec();
    g_trace_map->~TraceMap();
    free(g_trace_vec_mem);
    free(g_trace_map_mem);
    g_trace_vec = 0;
    g_trace_map = 0;
}

static void part_g()
{
    g_n = scaled(3000);
    g_big_len = scaled(150000);
    g_build();
    for (int round = 0; round < 10; round++) {
        churn(scaled(50000));
        g_remap(round);
        cycles(1);
        g_check(true);
        CHECK(g_kept_finalized.load() == 0 && g_map_finalized.load() == 0 && g_trace_finalized.load() == 0,
              "objects referenced from container storage collected: %ld, %ld in maps, %ld traceable",
              g_kept_finalized.load(), g_map_finalized.load(), g_trace_finalized.load());
    }
    cycles(3);
    CHECK(g_addresses_finalized.load() >= 2 * G_ADDR * 9 / 10,
          "only %ld of %d objects whose addresses only pointer-free storage holds collected",
          g_addresses_finalized.load(), 2 * G_ADDR);
    g_destroy_traceable();
    cycles(4);
    CHECK(g_trace_finalized.load() >= 2 * g_n * 9 / 10,
          "only %ld of %ld objects held by destroyed traceable containers collected",
          g_trace_finalized.load(), 2 * g_n);
    g_check(false);
    CHECK(g_kept_finalized.load() == 0 && g_map_finalized.load() == 0);
}

/* ---- H. the allocators' interface, out of memory, throwing constructors -- */


struct Thrower : public gc {
    uint64_t w[4];
    Thrower() { throw 42; }
};
struct PlainThrower {
    uint64_t w[4];
    PlainThrower() { throw 43; }
};

template <class A, class B>
static bool same_type()
{
    return std::is_same<A, B>::value;
}

static void part_h()
{
    CHECK(gc_allocator<int>() == gc_allocator<long>());
    CHECK(!(gc_allocator<int>() != gc_allocator<Obj *>()));
    CHECK(gc_allocator_ignore_off_page<int>() == gc_allocator_ignore_off_page<char>());
    CHECK(!(gc_allocator_ignore_off_page<int>() != gc_allocator_ignore_off_page<char>()));
    CHECK(traceable_allocator<int>() == traceable_allocator<double>());
    CHECK(!(traceable_allocator<int>() != traceable_allocator<double>()));
    CHECK((same_type<gc_allocator<int>::rebind<Obj>::other, gc_allocator<Obj> >()));
#ifdef SGC_VERSION_STRING
    /* bdwgc 8.2.2 declares the void specialisations' members private. */
    CHECK((same_type<std::allocator_traits<gc_allocator<void> >::rebind_alloc<int>, gc_allocator<int> >()));
    CHECK((same_type<std::allocator_traits<gc_allocator_ignore_off_page<void> >::rebind_alloc<int>,
                     gc_allocator_ignore_off_page<int> >()));
    CHECK((same_type<std::allocator_traits<traceable_allocator<void> >::rebind_alloc<int>,
                     traceable_allocator<int> >()));
    CHECK((same_type<gc_allocator<void>::rebind<Obj>::other, gc_allocator<Obj> >()));
    CHECK((same_type<gc_allocator<void>::value_type, void>()));
    CHECK((same_type<traceable_allocator<void>::pointer, void *>()));
#endif
    CHECK((same_type<std::allocator_traits<gc_allocator<int> >::rebind_alloc<Obj *>, gc_allocator<Obj *> >()));
    CHECK(gc_allocator<uint64_t>().max_size() == SIZE_MAX / sizeof(uint64_t));

    gc_allocator<int> ai;
    gc_allocator<long> al(ai); /* converting copy, as containers rebind */
    long *lp = al.allocate(10);
    CHECK(lp && GC_base(lp) == lp);
    for (int k = 0; k < 10; k++)
        lp[k] = k;
    CHECK(al.address(lp[3]) == lp + 3);
    al.deallocate(lp, 10);
    traceable_allocator<Obj *> at;
    Obj **tp = at.allocate(4);
    CHECK(tp && GC_base(tp) == tp);
    at.deallocate(tp, 4);
    int *z = ai.allocate(0); /* allowed; the result only goes back */
    ai.deallocate(z, 0);

    /* A placement into memory the program has: gc's new(size, void *). */
    void *buf = GC_MALLOC(sizeof(Leaf));
    Leaf *leaf = new (buf) Leaf;
    CHECK(static_cast<void *>(leaf) == buf && leaf->v[2] == 0);

    /* Constructors that throw: the matching placement delete frees. */
    int caught = 0;
    for (int i = 0; i < 300; i++) {
        try { (void)new Thrower; } catch (int e) { caught += e == 42; }
        try { (void)new (NoGC) Thrower; } catch (int e) { caught += e == 42; }
        try { (void)new (PointerFreeGC) Thrower[3]; } catch (int e) { caught += e == 42; }
        try { (void)::new (UseGC) PlainThrower; } catch (int e) { caught += e == 43; }
        try { (void)::new (NoGC) PlainThrower[2]; } catch (int e) { caught += e == 43; }
    }
    CHECK(caught == 300 * 5, "%d of %d exceptions from constructors arrived", caught, 300 * 5);

    /* Out of memory: std::bad_alloc from every path. */
    GC_oom_func old_oom = GC_get_oom_fn();
    GC_warn_proc old_warn = GC_get_warn_proc();
    GC_set_oom_fn(quiet_oom);
    GC_set_warn_proc(GC_ignore_warn_proc); /* bdwgc warns of each failed expansion */
    const size_t huge = (size_t)1 << 50;
    CHECK(throws_bad_alloc([&] { sink = gc::operator new(huge); }), "gc's new");
    CHECK(throws_bad_alloc([&] { sink = gc::operator new(huge, NoGC); }), "gc's new (NoGC)");
    CHECK(throws_bad_alloc([&] { sink = gc::operator new[](huge, PointerFreeGC); }), "gc's new[]");
    CHECK(throws_bad_alloc([&] { sink = ::operator new(huge, UseGC); }), "new (UseGC)");
    CHECK(throws_bad_alloc([&] { sink = ::operator new(huge, NoGC); }), "new (NoGC)");
    CHECK(throws_bad_alloc([&] { sink = ::operator new[](huge, PointerFreeGC); }), "new[] (PointerFreeGC)");
    CHECK(throws_bad_alloc([&] { sink = gc_allocator<Obj *>().allocate(huge / 8); }), "gc_allocator");
    CHECK(throws_bad_alloc([&] { sink = gc_allocator<char>().allocate(huge); }), "atomic gc_allocator");
    CHECK(throws_bad_alloc([&] { sink = gc_allocator_ignore_off_page<Obj *>().allocate(huge / 8); }),
          "gc_allocator_ignore_off_page");
    CHECK(throws_bad_alloc([&] { sink = traceable_allocator<Obj *>().allocate(huge / 8); }),
          "traceable_allocator");
    GC_set_oom_fn(old_oom);
    GC_set_warn_proc(old_warn);
    /* The collector still works afterwards. */
    Obj *after = make_obj(1);
    CHECK(obj_ok(after, 1));
}

/* ---- I. threads ------------------------------------------------------------ */

struct ThreadNode : public gc {
    ThreadNode *next;
    uint64_t idx;
    uint64_t pat;
    ThreadNode(uint64_t i, ThreadNode *n) : next(n), idx(i), pat(pattern(i, 9)) {}
};

enum { I_THREADS = 4 };
static long i_n, i_rounds, i_tracked_per_thread;
static std::atomic<int> *i_count; /* one slot per gc_cleanup object a worker drops */
static std::atomic<int> i_done;

T_NOINLINE static void i_worker_body(int id)
{
    long tracked = 0;
    for (long r = 0; r < i_rounds; r++) {
        uint64_t base = ((uint64_t)(id + 1) << 40) | ((uint64_t)r << 24);
        ThreadNode *head = 0;
        ObjMap map;
        TraceVec traced;
        ObjList list;
        for (long i = 0; i < i_n; i++) {
            head = new ThreadNode(base + (uint64_t)i, head);
            switch (i % 8) {
            case 0: map[i] = make_obj(base + (uint64_t)i); break;
            case 1: traced.push_back(make_obj(base + (uint64_t)i)); break;
            case 2: list.push_back(make_obj(base + (uint64_t)i)); break;
            case 3:
                CHECK(tracked < i_tracked_per_thread);
                (void)new Tracked(&i_count[id * i_tracked_per_thread + tracked++]);
                break;
            case 4: (void)new Junk; break;
            default: (void)GC_MALLOC(24 + (size_t)(i % 200)); break;
            }
        }
        long i = i_n - 1;
        for (ThreadNode *p = head; p; p = p->next, i--)
            CHECK(i >= 0 && p->idx == base + (uint64_t)i && p->pat == pattern(p->idx, 9),
                  "thread %d: node %ld damaged", id, i);
        CHECK(i == -1, "thread %d: list %ld nodes short", id, i + 1);
        for (ObjMap::const_iterator it = map.begin(); it != map.end(); ++it)
            CHECK(it->first % 8 == 0 && obj_ok(it->second, base + (uint64_t)it->first),
                  "thread %d: map entry %ld damaged", id, it->first);
        CHECK((long)map.size() == (i_n + 7) / 8);
        long k = 1;
        for (size_t j = 0; j < traced.size(); j++, k += 8)
            CHECK(obj_ok(traced[j], base + (uint64_t)k), "thread %d: traceable vector entry damaged", id);
        k = 2;
        for (ObjList::const_iterator it = list.begin(); it != list.end(); ++it, k += 8)
            CHECK(obj_ok(*it, base + (uint64_t)k), "thread %d: list entry damaged", id);
    }
}

static void i_worker(int id)
{
    /* bdwgc scans only threads it knows: one std::thread made cannot be
     * announced by GC_pthread_create, so it registers itself. */
    struct GC_stack_base sb;
    CHECK(GC_get_stack_base(&sb) == GC_SUCCESS);
    int r = GC_register_my_thread(&sb);
    CHECK(r == GC_SUCCESS || r == GC_DUPLICATE, "GC_register_my_thread: %d", r);
    i_worker_body(id);
    CHECK(GC_unregister_my_thread() == GC_SUCCESS);
    i_done.fetch_add(1);
}

static void part_i()
{
    i_n = scaled(40000);
    i_rounds = 12;
    i_tracked_per_thread = i_rounds * ((i_n + 7) / 8);
    i_count = new std::atomic<int>[(size_t)(I_THREADS * i_tracked_per_thread)];
    for (long k = 0; k < I_THREADS * i_tracked_per_thread; k++)
        i_count[k].store(0);
    long collections = collect_beside_workers(I_THREADS, i_worker, i_done);
    cycles(4);
    int max = 0, total = 0;
    for (long k = 0; k < I_THREADS * i_tracked_per_thread; k++) {
        int v = i_count[k].load();
        total += v;
        max = v > max ? v : max;
    }
    CHECK(max <= 1, "a gc_cleanup dropped by a thread destroyed %d times", max);
    long all = I_THREADS * i_tracked_per_thread;
    CHECK(total >= all * 8 / 10, "only %d of %ld gc_cleanup objects dropped by threads destroyed", total, all);
    t_note("I: %ld collections beside %d threads; %d of %ld dropped gc_cleanup objects destroyed",
           collections, I_THREADS, total, all);
    delete[] i_count;
}

int main()
{
    t_test_name = "cpp_api";
    GC_INIT();
    GC_allow_register_threads();
    GC_set_finalize_on_demand(1);
    scale_percent = t_env_long("CPP_API_SCALE", 100);
    if (scale_percent < 1)
        scale_percent = 1;

    struct Part {
        const char *name;
        void (*run)();
    } parts[] = {{"A gc objects", part_a},     {"B gc_cleanup", part_b},   {"C delete", part_c},
                 {"D placement cleanup", part_d}, {"E NoGC", part_e},      {"F PointerFreeGC", part_f},
                 {"G containers", part_g},   {"H interface", part_h},   {"I threads", part_i}};
    double start = t_now();
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        double t0 = t_now();
        parts[p].run();
        t_note("%-20s %.2f s", parts[p].name, t_now() - t0);
    }
    t_note("all parts passed in %.2f s", t_now() - start);
    return 0;
}
