/* dso_unload: libraries unloaded while collections run.
 *
 * A library's writable segments are roots while it is loaded, and gone
 * once dlclose has unmapped them.  A collection that took its list of
 * segments and then read one that a dlclose unmapped meanwhile crashed
 * (SIGSEGV or SIGBUS in the marker): sgc read the list before stopping
 * the world, so a registered thread could unmap in between, and a thread
 * the collector does not stop could unmap at any time during marking.
 *
 * Three threads run for DSO_UNLOAD_SECONDS (default 2) while the main
 * thread collects in a loop:
 *  - a registered thread loads the library (argv[1], dso_lib.c), stores
 *    fresh objects in its .bss and .data (the only references, once the
 *    thread's own are dropped), lets collections pass, checks the objects
 *    are intact, and unloads it;
 *  - a thread created with the plain pthread_create, which the collector
 *    never stops, loads and unloads a second copy (argv[2]: a copy of
 *    its own, so every unload unmaps) without touching the collector;
 *  - a registered thread allocates garbage, so freed objects come back
 *    zeroed and a lost one shows.
 * Checks: no crash; every object kept only by the loaded library survived;
 * each loader and the collector made progress (so the check means
 * something).  Against bdwgc 8.2.2 the unregistered loader crashes its
 * markers too, so the test runs on sgc only.
 */
#define GC_THREADS 1
#include "gc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "common.h"

/* The plain calls for the thread the collector must not know of. */
#undef pthread_create
#undef pthread_join

typedef void (*store_fn)(int, void *);
typedef void *(*load_fn)(int);
typedef int (*slots_fn)(void);

enum { OBJECT_WORDS = 8 };

static const char *library_path, *second_library_path;
static atomic_int stop;
static atomic_long registered_cycles, unregistered_cycles, objects_checked;

static void *open_library(const char *path, store_fn *store, load_fn *load, int *slots) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(h != NULL, "dlopen %s: %s", path, dlerror());
  if (store) {
    *store = (store_fn)dlsym(h, "dso_store");
    *load = (load_fn)dlsym(h, "dso_load");
    *slots = ((slots_fn)dlsym(h, "dso_slots"))();
    CHECK(*store && *load && *slots > 0);
  }
  return h;
}

/* Fills the library's slots with fresh objects, each patterned with its
 * slot and cycle; separate frame, so no reference stays in the caller's. */
T_NOINLINE static void fill_slots(store_fn store, int slots, long cycle) {
  for (int i = 0; i < slots; i++) {
    uintptr_t *o = GC_malloc(OBJECT_WORDS * sizeof *o);
    CHECK(o != NULL);
    for (int w = 0; w < OBJECT_WORDS; w++) o[w] = ((uintptr_t)cycle << 16) ^ (uintptr_t)(i * 131 + w);
    store(i, o);
  }
}

T_NOINLINE static void check_slots(load_fn load, int slots, long cycle) {
  for (int i = 0; i < slots; i++) {
    const uintptr_t *o = load(i);
    for (int w = 0; w < OBJECT_WORDS; w++)
      CHECK(o[w] == (((uintptr_t)cycle << 16) ^ (uintptr_t)(i * 131 + w)),
            "cycle %ld: the object in the library's slot %d lost word %d (0x%lx): collected while "
            "the library held it",
            cycle, i, w, (unsigned long)o[w]);
  }
  atomic_fetch_add(&objects_checked, slots);
}

static void *registered_loader(void *arg) {
  (void)arg;
  for (long cycle = 1; !atomic_load(&stop); cycle++) {
    store_fn store;
    load_fn load;
    int slots;
    void *h = open_library(library_path, &store, &load, &slots);
    fill_slots(store, slots, cycle);
    /* Let a collection or two pass while only the library holds them. */
    GC_word seen = GC_get_gc_no();
    for (int spin = 0; spin < 2000 && GC_get_gc_no() < seen + 2 && !atomic_load(&stop); spin++) {
      struct timespec pause = {0, 50000};
      nanosleep(&pause, NULL);
    }
    check_slots(load, slots, cycle);
    CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
    atomic_fetch_add(&registered_cycles, 1);
  }
  return NULL;
}

static void *unregistered_loader(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    void *h = open_library(second_library_path, NULL, NULL, NULL);
    CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
    atomic_fetch_add(&unregistered_cycles, 1);
  }
  return NULL;
}

static void *garbage_maker(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    void **p = GC_malloc(OBJECT_WORDS * sizeof(void *));
    CHECK(p != NULL);
    p[0] = GC_malloc(48);
  }
  return NULL;
}

int main(int argc, char **argv) {
  t_test_name = "dso_unload";
  CHECK(argc > 2, "usage: %s LIBRARY SECOND_COPY", argv[0]);
  library_path = argv[1];
  second_library_path = argv[2];
  GC_INIT();
  double seconds = (double)t_env_long("DSO_UNLOAD_SECONDS", 2);

  pthread_t registered, unregistered, garbage;
  CHECK(GC_pthread_create(&registered, NULL, registered_loader, NULL) == 0);
  /* The plain call: the collector neither knows nor stops this thread. */
  CHECK(pthread_create(&unregistered, NULL, unregistered_loader, NULL) == 0);
  CHECK(GC_pthread_create(&garbage, NULL, garbage_maker, NULL) == 0);

  double start = t_now();
  long collections = 0;
  while (t_now() - start < seconds) {
    GC_gcollect();
    collections++;
    struct timespec pause = {0, 200000};
    nanosleep(&pause, NULL);
  }
  atomic_store(&stop, 1);
  CHECK(GC_pthread_join(registered, NULL) == 0);
  CHECK(pthread_join(unregistered, NULL) == 0);
  CHECK(GC_pthread_join(garbage, NULL) == 0);

  t_note("%ld collections; %ld registered and %ld unregistered load/unload cycles; %ld objects "
         "checked",
         collections, atomic_load(&registered_cycles), atomic_load(&unregistered_cycles),
         atomic_load(&objects_checked));
  CHECK(collections >= 50, "only %ld collections", collections);
  CHECK(atomic_load(&registered_cycles) >= 10, "the registered loader made %ld cycles",
        atomic_load(&registered_cycles));
  CHECK(atomic_load(&unregistered_cycles) >= 50, "the unregistered loader made %ld cycles",
        atomic_load(&unregistered_cycles));
  printf("dso_unload: ok\n");
  return 0;
}
