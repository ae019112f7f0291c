/*
 * cppnew: a C++ program's plain `new` and `delete` from several threads.
 *
 * Each thread churns a std::map of std::vectors (a tree node per key, a
 * vector's storage growing and freed): every allocation and free goes
 * through the global operator new and delete.  Built against sgc it links
 * libsgccpp, against bdwgc libgccpp, which make that memory uncollectable
 * and scanned (a C++ program's objects then keep the collected objects
 * they point to); the malloc build uses the C++ runtime's operator new
 * over malloc (glibc, or a peer by LD_PRELOAD).
 *
 *   bench-cppnew-{sgc,bdwgc,malloc} [-t THREADS] [-n OPS] [-k KEYS]
 *
 * Every thread runs the same operations on a map of its own. RESULT: mops
 * (operations per microsecond, all threads), hash (the maps' contents at
 * the end, the same for every build and thread count).
 */
#include <map>
#include <vector>

#include "bench_common.h"

struct worker {
  long ops;
  uint32_t keys;
  uint64_t seed;
  uint64_t hash;
};

static void *churn(void *arg) {
  worker *w = static_cast<worker *>(arg);
  bench_rng rng = {w->seed};
  std::map<uint32_t, std::vector<uint64_t>> table;
  for (long i = 0; i < w->ops; i++) {
    uint64_t r = bench_rng_next(&rng);
    uint32_t key = (uint32_t)(r % w->keys);
    std::vector<uint64_t> &values = table[key];
    values.push_back(r);
    /* Past 16 values the key goes: its vector's storage and its node are
     * deleted, and the next use allocates both again. */
    if (values.size() > 16) table.erase(key);
  }
  uint64_t h = 0;
  for (const auto &entry : table) {
    h = bench_mix(h, entry.first);
    for (uint64_t v : entry.second) h = bench_mix(h, v);
  }
  w->hash = h;
  return nullptr;
}

int main(int argc, char **argv) {
  int threads = 1;
  long ops = 2000000;
  long keys = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-t")) threads = (int)bench_arg_long("-t", argv[i + 1], 1, 4096);
    else if (!strcmp(argv[i], "-n")) ops = bench_arg_long("-n", argv[i + 1], 1, 1L << 40);
    else if (!strcmp(argv[i], "-k")) keys = bench_arg_long("-k", argv[i + 1], 1, 1L << 30);
    else BENCH_USAGE_EXIT("usage: bench-cppnew-IMPL [-t THREADS] [-n OPS] [-k KEYS]\n");
  }
  if (argc % 2 == 0) BENCH_USAGE_EXIT("usage: bench-cppnew-IMPL [-t THREADS] [-n OPS] [-k KEYS]\n");
  GC_INIT();
  std::vector<worker> workers((size_t)threads);
  for (int i = 0; i < threads; i++)
    workers[(size_t)i] = worker{ops, (uint32_t)keys, 0x5eed0000u, 0};
  double start = bench_now();
  bench_run_threads(threads, churn, workers.data(), sizeof(worker));
  double wall = bench_now() - start;
  /* Every thread does the same work, so the hash is one for every thread
   * count, and any thread whose maps ended up different fails the check. */
  uint64_t hash = workers[0].hash;
  for (const worker &w : workers)
    if (w.hash != hash) bench_fail("a thread's maps differ: %016llx, not %016llx",
                                   (unsigned long long)w.hash, (unsigned long long)hash);
  bench_result_begin("cppnew", threads, wall);
  bench_kv("mops", "%.3f", (double)ops * threads / wall / 1e6);
  bench_kv("hash", "%016llx", (unsigned long long)hash);
  return bench_result_end();
}
