/* The C++ tests' shared pieces (cpp_api.cc, cpp_new.cc): a scale for
 * their object counts, collection cycles from a cleared stack, and a
 * collected object with a checkable pattern and an optional counting
 * finalizer.  Include after gc_cpp.h or gc_allocator.h and common.h. */
#ifndef SGC_TESTS_CPP_COMMON_H
#define SGC_TESTS_CPP_COMMON_H

#include <atomic>
#include <chrono>
#include <new>
#include <thread>
#include <vector>

static long scale_percent = 100;
static long scaled(long n)
{
    long s = n * scale_percent / 100;
    return s < 10 ? 10 : s;
}

/* Collect and run finalizers N times after clearing the stack, so that
 * stale copies of dropped pointers below this frame do not keep them. */
T_NOINLINE static void cycles(int n)
{
    t_clear_stack();
    for (int i = 0; i < n; i++) {
        GC_gcollect();
        GC_invoke_finalizers();
    }
}

static uint64_t pattern(uint64_t idx, int k)
{
    return t_mix64(idx * 8 + (uint64_t)k);
}

/* A plain collected object (GC_MALLOC) that may carry a finalizer counting
 * into the counter its caller names. */
static const uint64_t OBJ_MAGIC = 0x4f424a4543544f4bULL;
struct Obj {
    uint64_t magic;
    uint64_t idx;
    uint64_t pat[4];
};

static void obj_finalizer(void *p, void *counter)
{
    Obj *o = static_cast<Obj *>(p);
    CHECK(o->magic == OBJ_MAGIC, "finalizer on a damaged object %p", p);
    o->magic = 0;
    static_cast<std::atomic<long> *>(counter)->fetch_add(1);
}

static Obj *make_obj(uint64_t idx, std::atomic<long> *finalized = 0)
{
    Obj *o = static_cast<Obj *>(GC_MALLOC(sizeof(Obj)));
    CHECK(o != 0);
    o->magic = OBJ_MAGIC;
    o->idx = idx;
    for (int k = 0; k < 4; k++)
        o->pat[k] = pattern(idx, k);
    if (finalized)
        GC_REGISTER_FINALIZER(o, obj_finalizer, finalized, 0, 0);
    return o;
}

static bool obj_ok(const Obj *o, uint64_t idx)
{
    if (!o || o->magic != OBJ_MAGIC || o->idx != idx)
        return false;
    for (int k = 0; k < 4; k++)
        if (o->pat[k] != pattern(idx, k))
            return false;
    return true;
}

/* For the out-of-memory parts: an oom function that only returns null,
 * where results go (an unused one lets the compiler drop the call), and
 * whether a call throws std::bad_alloc. */
static void *quiet_oom(size_t)
{
    return 0;
}

/* Results go here: an unused one lets the compiler drop the call. */
static void *volatile sink;

template <class F>
static bool throws_bad_alloc(F f)
{
    try {
        f();
    } catch (const std::bad_alloc &) {
        return true;
    }
    return false;
}

/* Runs WORKER(id) on THREADS std::threads while this thread collects and
 * runs finalizers, until DONE counts THREADS; returns the collections. */
static long collect_beside_workers(int threads, void (*worker)(int), std::atomic<int> &done)
{
    std::vector<std::thread> workers;
    for (int id = 0; id < threads; id++)
        workers.push_back(std::thread(worker, id));
    long collections = 0;
    while (done.load() < threads) {
        GC_gcollect();
        GC_invoke_finalizers();
        collections++;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (size_t w = 0; w < workers.size(); w++)
        workers[w].join();
    return collections;
}

#endif
