/* GC_memalign and GC_posix_memalign with alignments above a page, up to
 * 2 MiB (bdwgc's gctest asks GC_memalign(8192, 17); sgc refused anything
 * above 4 KiB).  Each object is aligned, zeroed, starts at the aligned
 * pointer (GC_base gives it back, GC_free takes it), survives collections
 * while only that pointer is held, and dropped ones are reclaimed: a loop
 * of 1 MiB objects aligned to 1 MiB keeps the heap bounded.  GC_valloc
 * and GC_pvalloc give page-aligned objects (whole pages for pvalloc). */
#include <gc.h>

#include <errno.h>

#include "common.h"

enum { ALIGNS = 9, SIZES = 4 };
static unsigned char *kept[ALIGNS][SIZES]; /* the aligned pointers only */
static size_t kept_bytes[ALIGNS][SIZES];

static unsigned char pattern(int a, int s, size_t i) { return (unsigned char)(a * 31 + s * 7 + i % 251 + 1); }

static void churn(void)
{
    /* Garbage of every size, so freed pages would be reused (fewer in
     * torture mode, where each allocation is a collection). */
    int n = getenv("SGC_TORTURE") ? 200 : 2000;
    for (int i = 0; i < n; i++) {
        void *p = GC_malloc((size_t)(i % 50 + 1) * 1000);
        CHECK(p != NULL);
    }
}

int main(void)
{
    t_test_name = "memalign_large";
    GC_INIT();
    for (int a = 0; a < ALIGNS; a++) {
        size_t align = (size_t)8192 << a; /* 8 KiB .. 2 MiB */
        size_t sizes[SIZES] = {17, 5000, align, align + align / 2};
        for (int s = 0; s < SIZES; s++) {
            unsigned char *p = GC_memalign(align, sizes[s]);
            CHECK(p != NULL, "GC_memalign(%zu, %zu) failed", align, sizes[s]);
            CHECK(((uintptr_t)p & (align - 1)) == 0, "GC_memalign(%zu, %zu) = %p", align, sizes[s],
                  (void *)p);
            CHECK(GC_base(p) == p, "GC_memalign(%zu, %zu) = %p, whose base is %p", align, sizes[s],
                  (void *)p, GC_base(p));
            CHECK(GC_size(p) >= sizes[s], "GC_memalign(%zu, %zu): GC_size %zu", align, sizes[s],
                  GC_size(p));
            for (size_t i = 0; i < sizes[s]; i++) {
                CHECK(p[i] == 0, "GC_memalign(%zu, %zu): byte %zu not zero", align, sizes[s], i);
                p[i] = pattern(a, s, i);
            }
            kept[a][s] = p;
            kept_bytes[a][s] = sizes[s];
        }
    }
    for (int round = 0; round < 3; round++) {
        churn();
        GC_gcollect();
    }
    for (int a = 0; a < ALIGNS; a++)
        for (int s = 0; s < SIZES; s++)
            for (size_t i = 0; i < kept_bytes[a][s]; i++)
                CHECK(kept[a][s][i] == pattern(a, s, i),
                      "GC_memalign(%zu, %zu): byte %zu changed after collections", (size_t)8192 << a,
                      kept_bytes[a][s], i);
    /* GC_free takes the aligned pointer. */
    for (int a = 0; a < ALIGNS; a++)
        for (int s = 0; s < SIZES; s += 2) {
            GC_free(kept[a][s]);
            kept[a][s] = NULL;
        }
    void *q = NULL;
    CHECK(GC_posix_memalign(&q, (size_t)1 << 20, 100) == 0 && q != NULL);
    CHECK(((uintptr_t)q & (((size_t)1 << 20) - 1)) == 0, "GC_posix_memalign(1 MiB) = %p", q);
    CHECK(GC_posix_memalign(&q, 3 << 12, 100) == EINVAL, "alignment 12 KiB accepted");
    /* bdwgc's development branch's GC_valloc and GC_pvalloc. */
    q = GC_valloc(100);
    CHECK(q != NULL && ((uintptr_t)q & 4095) == 0 && GC_size(q) >= 100, "GC_valloc(100) = %p", q);
    q = GC_pvalloc(5000);
    CHECK(q != NULL && ((uintptr_t)q & 4095) == 0 && GC_size(q) >= 8192, "GC_pvalloc(5000) = %p", q);
    /* Dropped objects are reclaimed: 400 MiB allocated, far less kept
     * (100 MiB in torture mode, where each one is a collection). */
    int drops = getenv("SGC_TORTURE") ? 100 : 400;
    for (int i = 0; i < drops; i++) {
        unsigned char *p = GC_memalign((size_t)1 << 20, (size_t)1 << 20);
        CHECK(p != NULL && ((uintptr_t)p & (((size_t)1 << 20) - 1)) == 0);
        p[0] = p[((size_t)1 << 20) - 1] = 1;
    }
    size_t heap = GC_get_heap_size();
    t_note("heap after %d MiB of dropped 1 MiB-aligned objects: %zu MiB\n", drops, heap >> 20);
    CHECK(heap < ((size_t)200 << 20), "heap %zu MiB", heap >> 20);
    printf("[memalign_large] PASS\n");
    return 0;
}
