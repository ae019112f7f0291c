/* dlopen_tls: objects referenced only from __thread variables of a
 * library loaded with dlopen survive.
 *
 * Such a library's thread-local storage is dynamic: each thread's block is
 * allocated by glibc with malloc when the thread first touches it, found
 * through the thread's dynamic thread vector (DTV), and is neither in the
 * thread's static TLS nor on its stack.  bdwgc scans no thread-local
 * storage at all, and before sgc read the DTVs these objects were
 * collected on it too.
 *
 * Part A: the main thread and DLTLS_THREADS (3) threads each store fresh
 * patterned objects in the library's __thread slots only (argv[1],
 * dlopen_tls_lib.c), in frames that return before the collections, then
 * make garbage and collect (the main thread) DLTLS_ROUNDS (5) times, and
 * check every pattern: a collected object would be reused, zeroed or
 * overwritten.
 * Part B: a thread keeps its slots in the first library and waits without
 * touching them while the main thread closes that library and opens a
 * second one (argv[2], the same source with a 256 KiB block, so its block
 * is mmap'd) under what is usually the same module id: the waiting
 * thread's DTV still describes the closed library's block, which the
 * collector must pass over.  The main thread fills and checks the second
 * library's slots across collections; then the waiting thread does.
 * Part D: two threads open a library (each its own copy), fill and check
 * its slots across allocation and close it, in a loop, while the main
 * thread collects, for DLTLS_CHURN_MS (1500) milliseconds; a third
 * thread opens them, reads its slot and closes them inside
 * GC_do_blocking, where collections do not stop it, so its DTV changes
 * while the collector may be reading it.
 * sgc only: bdwgc fails part A.
 */
#define _GNU_SOURCE 1 /* dlinfo */
#define GC_THREADS 1
#include "gc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common.h"

typedef void (*store_fn)(int, void *);
typedef void *(*load_fn)(int);
typedef int (*slots_fn)(void);
typedef void *(*address_fn)(void);

struct library {
  void *handle;
  store_fn store;
  load_fn load;
  address_fn address;
  int slots;
  size_t modid;    /* its TLS module id */
  bool static_tls; /* built for the initial-exec model: dlopen gives it static TLS */
};

enum { OBJECT_WORDS = 8 };

static struct library open_library(const char *path, bool static_tls) {
  struct library l;
  l.static_tls = static_tls;
  l.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(l.handle != NULL, "dlopen %s: %s", path, dlerror());
  l.store = (store_fn)dlsym(l.handle, "tls_store");
  l.load = (load_fn)dlsym(l.handle, "tls_load");
  l.address = (address_fn)dlsym(l.handle, "tls_block_address");
  slots_fn slots = (slots_fn)dlsym(l.handle, "tls_slots");
  CHECK(l.store && l.load && l.address && slots);
  l.slots = slots();
  CHECK(dlinfo(l.handle, RTLD_DI_TLS_MODID, &l.modid) == 0 && l.modid != 0);
  return l;
}

static uintptr_t pattern(int who, int slot, int w) {
  return ((uintptr_t)who << 40) ^ ((uintptr_t)slot << 20) ^ (uintptr_t)(w * 2654435761u) ^ 0x5a5a;
}

T_NOINLINE static void fill(const struct library *l, int who) {
  for (int s = 0; s < l->slots; s++) {
    uintptr_t *o = GC_malloc(OBJECT_WORDS * sizeof *o);
    CHECK(o != NULL);
    for (int w = 0; w < OBJECT_WORDS; w++) o[w] = pattern(who, s, w);
    l->store(s, o);
  }
}

/* The block must be dynamic TLS, or the test tests nothing new: static
 * TLS ends at the thread pointer and is a few KiB long, where glibc
 * allocates a dynamic block with malloc, far from it. */
static void check_dynamic(const struct library *l) {
  uintptr_t block = (uintptr_t)l->address();
  uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
  CHECK(block > tp || tp - block > ((uintptr_t)1 << 20),
        "the library's thread-local block (%p) lies in static TLS (thread pointer %p)",
        (void *)block, (void *)tp);
}

T_NOINLINE static void make_garbage_n(int objects) {
  for (int i = 0; i < objects; i++) {
    uintptr_t *p = GC_malloc(OBJECT_WORDS * sizeof *p);
    CHECK(p != NULL);
    p[0] = ~(uintptr_t)0; /* a reused object shows this */
  }
}

static void make_garbage(void) { make_garbage_n(100000); }

T_NOINLINE static void check(const struct library *l, int who, const char *part) {
  for (int s = 0; s < l->slots; s++) {
    const uintptr_t *o = l->load(s);
    for (int w = 0; w < OBJECT_WORDS; w++)
      CHECK(o[w] == pattern(who, s, w),
            "part %s: %s: the object in the library's thread-local slot %d lost word %d "
            "(0x%lx): collected while the library's __thread variable held it",
            part, who ? "a thread" : "the main thread", s, w, (unsigned long)o[w]);
  }
}

static int rounds;
static struct library first, second;
static pthread_barrier_t together;

static void run(const struct library *l, int who, bool collect, const char *part) {
  fill(l, who);
  if (!l->static_tls) check_dynamic(l);
  t_clear_stack();
  for (int r = 0; r < rounds; r++) {
    make_garbage();
    if (collect) GC_gcollect();
    check(l, who, part);
  }
}

static void *part_a_thread(void *arg) {
  int who = (int)(intptr_t)arg;
  pthread_barrier_wait(&together);
  run(&first, who, false, "A"); /* the main thread collects meanwhile */
  pthread_barrier_wait(&together);
  return NULL;
}

static pthread_barrier_t filled, reopened, done;

static void *part_b_thread(void *arg) {
  (void)arg;
  fill(&first, 7);
  t_clear_stack();
  pthread_barrier_wait(&filled);
  /* Untouched while the main thread closes and reopens: this thread's
   * DTV still names the closed library's block. */
  pthread_barrier_wait(&reopened);
  run(&second, 8, false, "B");
  pthread_barrier_wait(&done);
  return NULL;
}

/* Part D: libraries opened and closed in a loop beside collections. */
static atomic_int churn_stop;
static atomic_long churn_cycles[2];
static const char *churn_paths[2];

/* Touches a library's TLS inside GC_do_blocking, where collections do
 * not stop it: each touch after the others' dlopen or dlclose brings its
 * DTV up to date (freeing stale blocks, growing the vector) while the
 * collector may be reading it. */
static atomic_long blocking_touches;

static void *touch_library(void *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(h != NULL, "dlopen %s: %s", (const char *)path, dlerror());
  load_fn load = (load_fn)dlsym(h, "tls_load");
  CHECK(load != NULL);
  CHECK(load(0) == NULL); /* this thread stored nothing */
  CHECK(dlclose(h) == 0);
  return NULL;
}

static void *part_d_blocking_thread(void *arg) {
  (void)arg;
  while (!atomic_load(&churn_stop)) {
    GC_do_blocking(touch_library, (void *)churn_paths[atomic_load(&blocking_touches) & 1]);
    atomic_fetch_add(&blocking_touches, 1);
  }
  return NULL;
}

static void *part_d_thread(void *arg) {
  int i = (int)(intptr_t)arg;
  while (!atomic_load(&churn_stop)) {
    struct library l = open_library(churn_paths[i], false);
    fill(&l, 10 + i);
    t_clear_stack();
    make_garbage_n(20000);
    check(&l, 10 + i, "D");
    CHECK(dlclose(l.handle) == 0);
    atomic_fetch_add(&churn_cycles[i], 1);
  }
  return NULL;
}

int main(int argc, char **argv) {
  t_test_name = "dlopen_tls";
  CHECK(argc == 4, "usage: dlopen_tls LIBRARY PADDED-LIBRARY INITIAL-EXEC-LIBRARY");
  GC_INIT();
  rounds = (int)t_env_long("DLTLS_ROUNDS", 5);
  int threads = (int)t_env_long("DLTLS_THREADS", 3);

  first = open_library(argv[1], false);
  run(&first, 0, true, "A");
  t_note("A: main thread: %d objects in dynamic TLS intact through %d collections", first.slots,
         rounds);
  t_collect_beside_threads(threads, part_a_thread, &together, rounds * 4, make_garbage);
  t_note("A: %d threads: objects in dynamic TLS intact beside %d collections", threads,
         rounds * 4);

  CHECK(pthread_barrier_init(&filled, NULL, 2) == 0);
  CHECK(pthread_barrier_init(&reopened, NULL, 2) == 0);
  CHECK(pthread_barrier_init(&done, NULL, 2) == 0);
  pthread_t waiter;
  CHECK(pthread_create(&waiter, NULL, part_b_thread, NULL) == 0);
  pthread_barrier_wait(&filled);
  CHECK(dlclose(first.handle) == 0);
  second = open_library(argv[2], false);
  t_note("B: the second library's module id is %zu (the first's was %zu)", second.modid,
         first.modid);
  run(&second, 0, true, "B");
  pthread_barrier_wait(&reopened);
  for (int r = 0; r < rounds * 4; r++) {
    make_garbage();
    GC_gcollect();
  }
  pthread_barrier_wait(&done);
  CHECK(pthread_join(waiter, NULL) == 0);
  check(&second, 0, "B");
  t_note("B: a library closed under a waiting thread and another opened: objects intact");
  CHECK(dlclose(second.handle) == 0);

  struct library third = open_library(argv[3], true);
  run(&third, 0, true, "C");
  t_note("C: a library given static TLS by dlopen: the main thread's objects intact");
  CHECK(dlclose(third.handle) == 0);

  churn_paths[0] = argv[1];
  churn_paths[1] = argv[2];
  pthread_t churners[3];
  for (int i = 0; i < 2; i++)
    CHECK(pthread_create(&churners[i], NULL, part_d_thread, (void *)(intptr_t)i) == 0);
  CHECK(pthread_create(&churners[2], NULL, part_d_blocking_thread, NULL) == 0);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  double seconds = (double)t_env_long("DLTLS_CHURN_MS", 1500) / 1000;
  long collections = 0;
  do {
    make_garbage_n(20000);
    GC_gcollect();
    collections++;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
               seconds ||
           !atomic_load(&churn_cycles[0]) || !atomic_load(&churn_cycles[1]) ||
           !atomic_load(&blocking_touches));
  atomic_store(&churn_stop, 1);
  for (int i = 0; i < 3; i++) CHECK(pthread_join(churners[i], NULL) == 0);
  t_note("D: two threads opened, filled, checked and closed libraries %ld and %ld times, and a "
         "third touched them %ld times in GC_do_blocking, beside %ld collections",
         atomic_load(&churn_cycles[0]), atomic_load(&churn_cycles[1]),
         atomic_load(&blocking_touches), collections);
  printf("dlopen_tls: ok\n");
  return 0;
}
