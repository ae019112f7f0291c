/* heap_steps: the heap grows by less than a 4 MiB chunk (issue 53), each
 * case in a child process (spawn_case.h).
 *  - expand_step: GC_expand_hp(1 MiB) adds at most 2 MiB to the heap
 *    (before, a whole 4 MiB chunk).
 *  - small_live: 2.5 MB kept live while 96 MiB of garbage comes and goes
 *    in one thread: the heap stays under 8 MiB (before, it grew from the
 *    first 4 MiB chunk to two).
 *  - under_limit: with a maximum 1.5 MiB above the heap, GC_expand_hp of
 *    1 MiB succeeds, a second 1 MiB fails, 256 KiB then succeeds twice
 *    (near the limit a growth is what was asked, not a whole step), and
 *    the heap ends at most at the maximum (before, the first failed:
 *    growth came in whole chunks); GC_expand_hp(0) there fails, and
 *    allocation still works.
 *  - fragmented: 32 MiB of 64-byte objects, one in eight kept, leave
 *    survivors on every page; kept 256-byte objects then use the heap up
 *    while it holds far more than the threshold's room beyond live data.
 *    Its growth is a sixteenth of the heap (a step), not a quarter of it
 *    or the whole threshold (before: 10 MiB of a 39 MiB heap).
 *  - tail_pointers: pointers to every page around the end of an object
 *    of 1 GiB + 1.5 MiB, which reach past its chunk's end into the rest
 *    of the page map's 4 MiB slot (reserved, not usable): GC_base and a
 *    collection with them in a root read the slot's page headers, which
 *    must be there and say "free", and GC_is_heap_ptr says no (skipped,
 *    77, where the address space is too small). */
#include "gc.h"

#include <stdint.h>
#include <stdlib.h>

#include "common.h"
#include "spawn_case.h"

enum { MIB = 1 << 20, PAGE = 4096 };

static int expand_step(void) {
    size_t before = GC_get_heap_size();
    CHECK(GC_expand_hp(MIB) == 1, "GC_expand_hp(1 MiB) failed");
    size_t grown = GC_get_heap_size() - before;
    CHECK(grown >= MIB && grown <= 2 * MIB, "GC_expand_hp(1 MiB) grew the heap by %zu bytes",
          grown);
    return 0;
}

typedef struct Node {
    struct Node *next;
    uintptr_t value;
    char pad[48];
} Node;

static int small_live(void) {
    enum { KEPT = 2500 * 1024 / sizeof(Node), ALLOCATED = 96 * MIB / sizeof(Node) };
    Node **ring = GC_malloc(KEPT * sizeof *ring);
    CHECK(ring != NULL);
    size_t peak = 0;
    for (size_t i = 0; i < ALLOCATED; i++) {
        Node *n = GC_malloc(sizeof *n);
        CHECK(n != NULL);
        n->value = i;
        Node *old = ring[i % KEPT];
        if (old) CHECK(old->value == i - KEPT, "object %zu reads %zu", i - KEPT, (size_t)old->value);
        ring[i % KEPT] = n;
        if (i % 4096 == 0 && GC_get_heap_size() > peak) peak = GC_get_heap_size();
    }
    CHECK(GC_get_gc_no() > 10, "only %lu collections", (unsigned long)GC_get_gc_no());
    CHECK(peak < 8 * MIB, "heap reached %zu bytes for 2.5 MB live", peak);
    return 0;
}

static int under_limit(void) {
    size_t heap = GC_get_heap_size(), limit = heap + 3 * MIB / 2;
    GC_set_max_heap_size(limit);
    CHECK(GC_expand_hp(MIB) == 1, "GC_expand_hp(1 MiB) failed 1.5 MiB under the limit");
    CHECK(GC_expand_hp(MIB) == 0, "GC_expand_hp(1 MiB) passed the limit");
    CHECK(GC_expand_hp(MIB / 4) == 1, "GC_expand_hp(256 KiB) failed 512 KiB under the limit");
    CHECK(GC_expand_hp(MIB / 4) == 1, "GC_expand_hp(256 KiB) failed 256 KiB under the limit");
    CHECK(GC_expand_hp(0) == 0, "GC_expand_hp(0) passed at the limit");
    CHECK(GC_malloc(64) != NULL, "allocation at the limit");
    CHECK(GC_get_heap_size() <= limit, "heap %zu above the limit %zu", (size_t)GC_get_heap_size(),
          limit);
    return 0;
}

enum { SMALL_COUNT = 32 * MIB / 64, BIG_MOST = 12 * MIB / 256 };

static int fragmented(void) {
    /* Roots of this case alone: in the data segment they would raise
     * every case's threshold. */
    void **smalls = malloc(SMALL_COUNT * sizeof *smalls), **bigs = calloc(BIG_MOST, sizeof *bigs);
    CHECK(smalls && bigs);
    GC_add_roots(smalls, smalls + SMALL_COUNT);
    GC_add_roots(bigs, bigs + BIG_MOST);
    GC_disable(); /* every page filled in one go, none reused in between */
    for (size_t i = 0; i < SMALL_COUNT; i++) CHECK((smalls[i] = GC_malloc(64)) != NULL);
    GC_enable();
    for (size_t i = 0; i < SMALL_COUNT; i++)
        if (i % 8) smalls[i] = NULL;
    GC_gcollect();
    size_t heap = GC_get_heap_size();
    for (size_t i = 0; i < BIG_MOST; i++) {
        CHECK((bigs[i] = GC_malloc(256)) != NULL);
        size_t now = GC_get_heap_size();
        if (now == heap) continue;
        CHECK(now - heap <= heap / 16 + MIB, "a %zu-byte heap, fragmented, grew by %zu bytes after "
              "%zu objects of 256 bytes", heap, now - heap, i + 1);
        for (size_t j = 0; j < SMALL_COUNT; j += 8) CHECK(smalls[j] != NULL);
        for (size_t j = 0; j <= i; j++) CHECK(bigs[j] != NULL);
        return 0;
    }
    fprintf(stderr, "the heap of %zu bytes did not grow for 12 MiB of objects\n", heap);
    return 1;
}

static uintptr_t probes[3 * 1024]; /* a root: the collection reads each */

static int tail_pointers(void) {
    /* Over a chunk's 1 GiB of room: a chunk of its own, whose last 4 MiB
     * slot it fills only in part, lower in memory than the first chunk
     * (mmap works downwards), so the heap's highest address does not
     * filter pointers to the rest of that slot out. */
    size_t size = ((size_t)1 << 30) + 3 * MIB / 2;
    char *big = GC_malloc_atomic(size);
    if (!big) return 77; /* no such address space here */
    uintptr_t end = (uintptr_t)big + size;
    size_t n = 0;
    for (uintptr_t a = end - 8 * MIB; a < end + 4 * MIB; a += PAGE) probes[n++] = a + 8;
    for (size_t i = 0; i < n; i++) {
        void *base = GC_base((void *)probes[i]);
        if (probes[i] < end) {
            CHECK(base == big, "GC_base(%p) = %p, not the object", (void *)probes[i], base);
        } else {
            CHECK(base == NULL, "GC_base(%p) past the object = %p", (void *)probes[i], base);
            /* Past the 1 MiB the chunk may hold beyond the object, and
             * before the end of its reservation: not the heap. */
            if (probes[i] >= end + MIB && probes[i] < end + 2 * MIB)
                CHECK(!GC_is_heap_ptr((void *)probes[i]), "GC_is_heap_ptr(%p), %zu bytes past "
                      "the object's end", (void *)probes[i], (size_t)(probes[i] - end));
        }
    }
    GC_gcollect();
    CHECK(GC_base(big) == big);
    return 0;
}

static const struct {
    const char *name;
    int (*run)(void);
} cases[] = {
    {"expand_step", expand_step},
    {"small_live", small_live},
    {"under_limit", under_limit},
    {"fragmented", fragmented},
    {"tail_pointers", tail_pointers},
};

int main(int argc, char **argv) {
    t_test_name = "heap_steps";
    if (argc > 1) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (!strcmp(argv[1], cases[i].name)) {
                GC_INIT();
                return cases[i].run();
            }
        return 2;
    }
    static char buf[1 << 16];
    int failed = 0;
    /* The cases are written for 1 MiB steps (their children read it at
     * start-up); an explicit setting wins. */
    setenv("SGC_HEAP_STEP", "1m", 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = spawn_case(cases[i].name, buf, sizeof buf);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
            fprintf(stderr, "case %s: skipped\n", cases[i].name);
            continue;
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "case %s: %s %d\n%s", cases[i].name,
                    WIFEXITED(st) ? "exit status" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), buf);
            failed = 1;
        }
    }
    return failed;
}
