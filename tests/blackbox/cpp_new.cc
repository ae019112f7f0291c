/* cpp_new: the global operator new and delete of libsgccpp (bdwgc:
 * libgccpp), under which memory from plain `new` is uncollectable and
 * scanned.  Linked with -lsgccpp -lsgc, or -lgccpp -lgc.
 *
 *  A. Plain new, new[], new of size 0 and the allocations of static
 *     constructors that run before main come from the collector's heap.
 *  B. Objects from plain `new`, and the storage of standard containers
 *     on std::allocator (vector, map, unordered_map, list, deque,
 *     shared_ptr, std::function's closure, strings), hold the only
 *     references to collected objects: those keep their contents through
 *     collections amid garbage, none is finalized; once the holders are
 *     deleted and the containers emptied, at least 90% are finalized.
 *  C. Out of memory: std::bad_alloc from new and new[] (aligned too);
 *     the nothrow forms return null; on sgc the new-handler is called
 *     until it gives up (bdwgc's libgccpp does not call it).
 *  D. Over-aligned types: new, new[] and their deletes (sized, nothrow)
 *     honour alignments of 64 and 4096; on sgc that memory is scanned
 *     too (bdwgc leaves it to libstdc++'s aligned_alloc).
 *  E. std::thread workers (registered as bdwgc needs) build vectors,
 *     maps and lists on std::allocator, pointing to collected objects,
 *     and hand holders to the main thread, which collects meanwhile and
 *     deletes what they made.
 *  F. Plain new[] and delete[] in rounds of growing sizes (16 bytes to
 *     8 MiB, 8 MiB a round at scale 100, nothing kept): the heap grows by
 *     less than two of the largest and 16 MiB (on sgc; bdwgc's grows).  Freed uncollectable pages once served only
 *     their own size again, and this grew the heap from 20 to 240 MiB.
 *
 * CPP_NEW_SCALE (percent, default 100) scales the object counts.
 */
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc/gc_cpp.h"

#include "common.h"
#include "cpp_common.h"

/* Garbage: collected objects, and plain new memory deleted at once. */
T_NOINLINE static void churn(long n)
{
    for (long i = 0; i < n; i++) {
        if (i % 3 == 0)
            delete new std::string(20 + (size_t)(i % 100), 'g');
        else
            (void)GC_MALLOC(16 + (size_t)(i % 300));
    }
}

/* ---- A. plain new is the collector's -------------------------------------- */

static std::vector<int> g_early(1000, 7); /* constructed before main */

static void part_a()
{
    CHECK(GC_base(g_early.data()) == g_early.data(), "a static constructor's new is not the collector's");
    for (size_t i = 0; i < g_early.size(); i++)
        CHECK(g_early[i] == 7);
    int *p = new int(5);
    CHECK(GC_base(p) == p, "plain new is not the collector's");
    delete p;
    char *a = new char[100];
    CHECK(GC_base(a) == a);
    delete[] a;
    void *z1 = ::operator new(0), *z2 = ::operator new(0);
    CHECK(z1 && z2 && z1 != z2, "new of 0 bytes: %p, %p", z1, z2);
    ::operator delete(z1);
    ::operator delete(z2);
    void *s = ::operator new(48);
    ::operator delete(s, 48); /* the sized form */
    delete static_cast<int *>(0);
}

/* ---- B. plain new memory is scanned ---------------------------------------- */

struct Holder { /* a plain struct, from plain new */
    uint64_t idx;
    Obj *target; /* the only reference to it */
};

enum { B_ARRAYS = 20, B_ARRAY_LEN = 100 };
static std::vector<Holder *> b_holders;
static std::map<long, Obj *> b_map;
static std::unordered_map<std::string, Obj *> b_hash;
static std::list<Obj *> b_list;
static std::deque<Obj *> b_deque;
static std::vector<std::shared_ptr<Holder> > b_shared;
static std::vector<std::function<bool()> > b_closures;
static uintptr_t b_hidden_arrays[B_ARRAYS]; /* ~pointer: not a reference */
static long b_n;
static std::atomic<long> b_finalized;

enum { HOLDER_BASE = 1000000, MAP_BASE = 2000000, HASH_BASE = 3000000, LIST_BASE = 4000000,
       DEQUE_BASE = 5000000, SHARED_BASE = 6000000, CLOSURE_BASE = 7000000, ARRAY_BASE = 8000000 };

static std::string key(long i)
{
    return "key number " + std::to_string(i) + " long enough to live on the heap";
}

T_NOINLINE static void b_build()
{
    for (long i = 0; i < b_n; i++) {
        Holder *h = new Holder;
        h->idx = (uint64_t)i;
        h->target = make_obj(HOLDER_BASE + i, &b_finalized);
        b_holders.push_back(h);
        b_map[i] = make_obj(MAP_BASE + i, &b_finalized);
        b_hash[key(i)] = make_obj(HASH_BASE + i, &b_finalized);
        b_list.push_back(make_obj(LIST_BASE + i, &b_finalized));
        b_deque.push_back(make_obj(DEQUE_BASE + i, &b_finalized));
        if (i % 4 == 0) {
            std::shared_ptr<Holder> sh = std::make_shared<Holder>();
            sh->idx = (uint64_t)i;
            sh->target = make_obj(SHARED_BASE + i, &b_finalized);
            b_shared.push_back(sh);
            /* Captures too large for std::function's inline buffer. */
            Obj *c1 = make_obj(CLOSURE_BASE + 2 * i, &b_finalized);
            Obj *c2 = make_obj(CLOSURE_BASE + 2 * i + 1, &b_finalized);
            uint64_t i1 = CLOSURE_BASE + 2 * i, i2 = i1 + 1;
            b_closures.push_back([c1, c2, i1, i2] { return obj_ok(c1, i1) && obj_ok(c2, i2); });
        }
    }
    for (int a = 0; a < B_ARRAYS; a++) {
        Obj **arr = new Obj *[B_ARRAY_LEN];
        for (int k = 0; k < B_ARRAY_LEN; k++)
            arr[k] = make_obj(ARRAY_BASE + a * B_ARRAY_LEN + k, &b_finalized);
        b_hidden_arrays[a] = ~(uintptr_t)arr;
    }
}

T_NOINLINE static void b_check()
{
    CHECK((long)b_holders.size() == b_n && (long)b_map.size() == b_n && (long)b_hash.size() == b_n);
    for (long i = 0; i < b_n; i++) {
        CHECK(b_holders[(size_t)i]->idx == (uint64_t)i && obj_ok(b_holders[(size_t)i]->target, HOLDER_BASE + i),
              "object held by plain new struct %ld damaged", i);
        CHECK(obj_ok(b_map[i], MAP_BASE + i), "std::map entry %ld damaged", i);
        CHECK(obj_ok(b_hash[key(i)], HASH_BASE + i), "std::unordered_map entry %ld damaged", i);
        CHECK(obj_ok(b_deque[(size_t)i], DEQUE_BASE + i), "std::deque entry %ld damaged", i);
    }
    long i = 0;
    for (std::list<Obj *>::const_iterator it = b_list.begin(); it != b_list.end(); ++it, ++i)
        CHECK(obj_ok(*it, LIST_BASE + i), "std::list entry %ld damaged", i);
    CHECK(i == b_n);
    for (size_t k = 0; k < b_shared.size(); k++)
        CHECK(obj_ok(b_shared[k]->target, SHARED_BASE + b_shared[k]->idx), "shared_ptr's object damaged");
    for (size_t k = 0; k < b_closures.size(); k++)
        CHECK(b_closures[k](), "std::function's captures damaged");
    for (int a = 0; a < B_ARRAYS; a++) {
        Obj **arr = reinterpret_cast<Obj **>(~b_hidden_arrays[a]);
        for (int k = 0; k < B_ARRAY_LEN; k++)
            CHECK(obj_ok(arr[k], ARRAY_BASE + a * B_ARRAY_LEN + k), "new[] array %d damaged at %d", a, k);
    }
}

T_NOINLINE static void b_release()
{
    for (size_t i = 0; i < b_holders.size(); i++)
        delete b_holders[i];
    std::vector<Holder *>().swap(b_holders);
    b_map.clear();
    b_hash.clear();
    b_list.clear();
    std::deque<Obj *>().swap(b_deque);
    std::vector<std::shared_ptr<Holder> >().swap(b_shared);
    std::vector<std::function<bool()> >().swap(b_closures);
    for (int a = 0; a < B_ARRAYS; a++)
        delete[] reinterpret_cast<Obj **>(~b_hidden_arrays[a]);
}

static void part_b()
{
    b_n = scaled(3000);
    b_build();
    long total = 5 * b_n + 3 * ((b_n + 3) / 4) + B_ARRAYS * B_ARRAY_LEN;
    for (int round = 0; round < 10; round++) {
        churn(scaled(60000));
        cycles(1);
        b_check();
        CHECK(b_finalized.load() == 0, "%ld objects held by plain new memory collected", b_finalized.load());
    }
    b_release();
    cycles(4);
    CHECK(b_finalized.load() >= total * 9 / 10,
          "only %ld of %ld objects collected once their holders were deleted", b_finalized.load(), total);
    t_note("B: %ld of %ld objects collected after delete", b_finalized.load(), total);
}

/* ---- C. out of memory ---------------------------------------------------------- */


static int handler_calls;
static void giving_up_handler()
{
    /* A handler may free memory and return; this one gives up the second
     * time, and the next failure throws. */
    if (++handler_calls == 2)
        std::set_new_handler(0);
}

struct alignas(64) Line {
    Obj *target;
    uint64_t idx;
};
struct alignas(4096) PageSized {
    uint64_t words[3];
};

static void part_c()
{
    GC_oom_func old_oom = GC_get_oom_fn();
    GC_warn_proc old_warn = GC_get_warn_proc();
    GC_set_oom_fn(quiet_oom);
    GC_set_warn_proc(GC_ignore_warn_proc); /* bdwgc warns of each failed expansion */
    const size_t huge = (size_t)1 << 50;
    CHECK(throws_bad_alloc([&] { sink = ::operator new(huge); }), "new");
    CHECK(throws_bad_alloc([&] { sink = ::operator new[](huge); }), "new[]");
    CHECK(::operator new(huge, std::nothrow) == 0, "nothrow new");
    CHECK(::operator new[](huge, std::nothrow) == 0, "nothrow new[]");
    volatile size_t n = huge / sizeof(Line);
    CHECK(throws_bad_alloc([&] { sink = new Line[n]; }), "aligned new[]");
    CHECK(new (std::nothrow) Line[n] == 0, "aligned nothrow new[]");
#ifdef SGC_VERSION_STRING
    /* bdwgc's libgccpp throws without calling the new-handler. */
    std::set_new_handler(giving_up_handler);
    CHECK(throws_bad_alloc([&] { sink = ::operator new(huge); }));
    CHECK(handler_calls == 2, "the new-handler was called %d times", handler_calls);
#else
    (void)giving_up_handler;
#endif
    GC_set_oom_fn(old_oom);
    GC_set_warn_proc(old_warn);
}

/* ---- D. over-aligned types ------------------------------------------------------- */

enum { D_N = 500 };
static uintptr_t d_hidden[D_N]; /* ~pointer: not a reference */
static std::atomic<long> d_finalized;

T_NOINLINE static void d_build()
{
    for (int i = 0; i < D_N; i++) {
        Line *l = new Line;
        l->idx = (uint64_t)i;
        l->target = make_obj(9000000 + (uint64_t)i, &d_finalized);
        d_hidden[i] = ~(uintptr_t)l;
    }
}

T_NOINLINE static void d_delete()
{
    for (int i = 0; i < D_N; i++)
        delete reinterpret_cast<Line *>(~d_hidden[i]);
}

/* Each kind 100 times, all alive at once: an allocator that ignored the
 * alignment could not land every one of them on it by chance. */
enum { D_ALIVE = 100 };
static Line *d_lines[D_ALIVE], *d_line_arrays[D_ALIVE];
static PageSized *d_pages[D_ALIVE], *d_page_arrays[D_ALIVE];
static void *d_raw[D_ALIVE], *d_raw_nothrow[D_ALIVE];

static void part_d()
{
    for (int i = 0; i < D_ALIVE; i++) {
        d_lines[i] = new Line;
        d_line_arrays[i] = new Line[1 + i % 9];
        d_pages[i] = new PageSized;
        d_page_arrays[i] = new (std::nothrow) PageSized[1 + i % 3];
        d_raw[i] = ::operator new(100 + (size_t)i, std::align_val_t(256));
        d_raw_nothrow[i] = ::operator new((size_t)i % 2, std::align_val_t(128), std::nothrow);
    }
    for (int i = 0; i < D_ALIVE; i++) {
        CHECK((uintptr_t)d_lines[i] % 64 == 0, "new of an alignas(64) type: %p", (void *)d_lines[i]);
        CHECK((uintptr_t)d_line_arrays[i] % 64 == 0, "new[] of an alignas(64) type: %p",
              (void *)d_line_arrays[i]);
        CHECK((uintptr_t)d_pages[i] % 4096 == 0, "new of an alignas(4096) type: %p", (void *)d_pages[i]);
        CHECK(d_page_arrays[i] && (uintptr_t)d_page_arrays[i] % 4096 == 0, "nothrow new[] of an alignas(4096) type");
        CHECK((uintptr_t)d_raw[i] % 256 == 0, "new(size, align_val_t(256)): %p", d_raw[i]);
        CHECK(d_raw_nothrow[i] && (uintptr_t)d_raw_nothrow[i] % 128 == 0, "nothrow new(size, align_val_t(128))");
        memset(d_raw[i], 0x55, 100 + (size_t)i);
        d_pages[i]->words[2] = 1;
    }
    for (int i = 0; i < D_ALIVE; i++) {
        delete d_lines[i];
        delete[] d_line_arrays[i];
        delete d_pages[i];
        delete[] d_page_arrays[i];
        ::operator delete(d_raw[i], 100 + (size_t)i, std::align_val_t(256));
        ::operator delete(d_raw_nothrow[i], std::align_val_t(128), std::nothrow);
    }
#ifdef SGC_VERSION_STRING
    /* Scanned like the rest of plain new's memory. */
    Line *probe = new Line;
    CHECK(GC_base(probe) != 0, "aligned new is not the collector's");
    delete probe;
    d_build();
    for (int round = 0; round < 4; round++) {
        churn(scaled(20000));
        cycles(1);
        for (int i = 0; i < D_N; i++) {
            Line *l = reinterpret_cast<Line *>(~d_hidden[i]);
            CHECK(l->idx == (uint64_t)i && obj_ok(l->target, 9000000 + (uint64_t)i),
                  "object held by an aligned new object %d damaged", i);
        }
        CHECK(d_finalized.load() == 0, "%ld objects held by aligned new memory collected", d_finalized.load());
    }
    d_delete();
    cycles(4);
    CHECK(d_finalized.load() >= D_N * 9 / 10, "only %ld of %d collected after delete", d_finalized.load(),
          (int)D_N);
#else
    (void)d_build;
    (void)d_delete;
#endif
}

/* ---- E. threads -------------------------------------------------------------------- */

enum { E_THREADS = 3 };
static long e_n, e_rounds;
static std::mutex e_lock;
static std::vector<Holder *> e_handed; /* holders the workers made; main deletes them */
static std::atomic<int> e_done;
static std::atomic<long> e_finalized;

T_NOINLINE static void e_worker_body(int id)
{
    for (long r = 0; r < e_rounds; r++) {
        uint64_t base = ((uint64_t)(id + 1) << 40) | ((uint64_t)r << 24);
        std::vector<Obj *> vec;
        std::map<long, Obj *> map;
        std::list<Obj *> list;
        for (long i = 0; i < e_n; i++) {
            switch (i % 4) {
            case 0: vec.push_back(make_obj(base + (uint64_t)i)); break;
            case 1: map[i] = make_obj(base + (uint64_t)i); break;
            case 2: list.push_back(make_obj(base + (uint64_t)i)); break;
            default:
                if (i % 64 == 3) {
                    Holder *h = new Holder;
                    h->idx = base + (uint64_t)i;
                    h->target = make_obj(base + (uint64_t)i, &e_finalized);
                    std::lock_guard<std::mutex> hold(e_lock);
                    e_handed.push_back(h);
                } else {
                    delete new std::string(40, 'w');
                }
            }
        }
        for (size_t k = 0; k < vec.size(); k++)
            CHECK(obj_ok(vec[k], base + 4 * k), "thread %d: vector entry damaged", id);
        for (std::map<long, Obj *>::const_iterator it = map.begin(); it != map.end(); ++it)
            CHECK(obj_ok(it->second, base + (uint64_t)it->first), "thread %d: map entry damaged", id);
        uint64_t k = 2;
        for (std::list<Obj *>::const_iterator it = list.begin(); it != list.end(); ++it, k += 4)
            CHECK(obj_ok(*it, base + k), "thread %d: list entry damaged", id);
    }
}

static void e_worker(int id)
{
    struct GC_stack_base sb;
    CHECK(GC_get_stack_base(&sb) == GC_SUCCESS);
    int r = GC_register_my_thread(&sb);
    CHECK(r == GC_SUCCESS || r == GC_DUPLICATE, "GC_register_my_thread: %d", r);
    e_worker_body(id);
    CHECK(GC_unregister_my_thread() == GC_SUCCESS);
    e_done.fetch_add(1);
}

T_NOINLINE static long e_check_and_delete()
{
    std::lock_guard<std::mutex> hold(e_lock);
    for (size_t k = 0; k < e_handed.size(); k++) {
        CHECK(obj_ok(e_handed[k]->target, e_handed[k]->idx), "object handed over by a thread damaged");
        delete e_handed[k];
    }
    long n = (long)e_handed.size();
    std::vector<Holder *>().swap(e_handed);
    return n;
}

static void part_e()
{
    e_n = scaled(30000);
    e_rounds = 10;
    long collections = collect_beside_workers(E_THREADS, e_worker, e_done);
    cycles(2);
    CHECK(e_finalized.load() == 0, "%ld objects held by holders the threads made collected", e_finalized.load());
    long handed = e_check_and_delete();
    cycles(4);
    CHECK(e_finalized.load() >= handed * 9 / 10, "only %ld of %ld collected after delete", e_finalized.load(),
          handed);
    t_note("E: %ld collections beside %d threads; %ld holders handed over", collections, E_THREADS, handed);
}

static void part_f()
{
    const size_t largest = 8u << 20, round_bytes = (size_t)scaled(8 << 10) << 10;
    GC_gcollect();
    size_t before = GC_get_heap_size(), most = before;
    std::vector<char *> live;
    live.reserve(round_bytes / 16);
    long rounds = 0;
    for (size_t n = 16; n <= largest; n = n * 5 / 4 + 16, rounds++) {
        for (size_t got = 0; got < round_bytes; got += n) {
            char *p = new char[n];
            p[0] = p[n - 1] = 1;
            live.push_back(p);
        }
        for (char *p : live)
            delete[] p;
        live.clear();
        if (GC_get_heap_size() > most)
            most = GC_get_heap_size();
    }
    size_t bound = before + 2 * largest + (16u << 20);
#ifdef SGC_VERSION_STRING
    /* bdwgc 8.2.2 grows its heap from 8 to 147 MiB here: sgc only. */
    CHECK(most <= bound, "the heap grew from %zu to %zu MiB (bound %zu MiB) over %ld rounds of new[]/delete[]",
          before >> 20, most >> 20, bound >> 20, rounds);
#endif
    t_note("F: %ld rounds of growing sizes; heap %zu MiB before, at most %zu MiB", rounds, before >> 20, most >> 20);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CPP_NEW_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CPP_NEW_SANITIZER 1
#endif
#endif

int main()
{
    t_test_name = "cpp_new";
    GC_INIT();
#ifdef CPP_NEW_SANITIZER
    /* ASan's and TSan's runtimes define operator new too, and come first
     * in the symbol search order: there is nothing of libsgccpp's to test. */
    int *probe = new int;
    bool replaced = GC_base(probe) != 0;
    delete probe;
    if (!replaced) {
        t_note("skipped: a sanitizer's operator new is in use");
        return 77;
    }
#endif
    GC_allow_register_threads();
    GC_set_finalize_on_demand(1);
    scale_percent = t_env_long("CPP_NEW_SCALE", 100);
    if (scale_percent < 1)
        scale_percent = 1;

    struct Part {
        const char *name;
        void (*run)();
    } parts[] = {{"A plain new", part_a}, {"B traced", part_b},  {"C out of memory", part_c},
                 {"D aligned", part_d},   {"E threads", part_e}, {"F growing sizes", part_f}};
    double start = t_now();
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        double t0 = t_now();
        parts[p].run();
        t_note("%-16s %.2f s", parts[p].name, t_now() - t0);
    }
    t_note("all parts passed in %.2f s", t_now() - start);
    return 0;
}
