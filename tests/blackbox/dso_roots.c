/* dso_roots: shared libraries' .data and .bss are roots.
 *
 * A library that knows nothing about the collector (dso_lib.c) keeps the
 * only references to GC objects in its globals.  Once as a library linked at
 * start-up (bb_dso / libbb_dso.so), once as a copy loaded later with
 * dlopen() (path in argv[1]).  Objects must survive collections; with the
 * references overwritten, most must be collected (statistical, >= 90%).
 * Interior pointers are used for half of them.
 */
#include "gc.h"

#include <dlfcn.h>

#include "common.h"

void dso_store(int i, void *p);
void *dso_load(int i);
int dso_slots(void);

typedef void (*store_fn)(int, void *);
typedef void *(*load_fn)(int);

#define MAXS 128
static void **links; /* malloc'd: invisible to the collector */

T_NOINLINE static void fill_lib(store_fn store, int n, int base, size_t big)
{
    for (int i = 0; i < n; i++) {
        size_t sz = (i % 16 == 0) ? big : 32 + (size_t)i * 8;
        unsigned char *o = GC_malloc(sz);
        CHECK(o != NULL);
        for (size_t k = 0; k < 32; k++)
            o[k] = (unsigned char)(base + i + k);
        links[base + i] = o;
        CHECK(GC_general_register_disappearing_link(&links[base + i], o) ==
              GC_SUCCESS);
        store(i, (i & 1) ? o + sz / 2 : (void *)o);
    }
}

static void collect(void)
{
    t_clear_stack();
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 20000; k++)
            CHECK(GC_malloc(16 + (size_t)(k % 500)) != NULL);
        GC_gcollect();
    }
}

static void check_kept(load_fn load, int n, int base, const char *what)
{
    for (int i = 0; i < n; i++) {
        unsigned char *o = links[base + i];
        CHECK(o != NULL, "%s: object %d, referenced from the library's %s, "
              "was collected", what, i, i < n / 2 ? ".bss" : ".data");
        unsigned char *p = load(i);
        CHECK(GC_base(p) == o, "%s: slot %d does not point into object", what,
              i);
        for (size_t k = 0; k < 32; k++)
            CHECK(o[k] == (unsigned char)(base + i + k),
                  "%s: object %d corrupted", what, i);
    }
}

int main(int argc, char **argv)
{
    t_test_name = "dso_roots";
    GC_INIT();
    links = calloc(2 * MAXS, sizeof *links);
    CHECK(links != NULL);
    int n = dso_slots();
    CHECK(n <= MAXS);

    /* 1. linked at start-up */
    fill_lib(dso_store, n, 0, 200000);
    collect();
    check_kept(dso_load, n, 0, "linked library");

    /* 2. loaded with dlopen */
    CHECK(argc > 1, "usage: dso_roots /path/to/dlopen-able/copy.so");
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen(%s): %s", argv[1], dlerror());
    store_fn store2 = (store_fn)dlsym(h, "dso_store");
    load_fn load2 = (load_fn)dlsym(h, "dso_load");
    CHECK(store2 && load2 && (void *)store2 != (void *)dso_store,
          "dlsym failed or found the start-up copy");
    fill_lib(store2, n, MAXS, 300000);
    collect();
    check_kept(load2, n, MAXS, "dlopen()ed library");
    check_kept(dso_load, n, 0, "linked library (again)");

    /* 3. references dropped: collectable */
    for (int i = 0; i < n; i++) {
        dso_store(i, NULL);
        store2(i, NULL);
    }
    collect();
    int gone = 0;
    for (int i = 0; i < n; i++)
        gone += (links[i] == NULL) + (links[MAXS + i] == NULL);
    CHECK(gone * 10 >= 2 * n * 9,
          "only %d of %d objects collected after the libraries dropped them",
          gone, 2 * n);
    t_note("PASS");
    return 0;
}
