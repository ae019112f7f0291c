/* interior_end: a pointer just past the end of an object keeps it alive.
 *
 * bdwgc (with interior pointers recognised, its default) pads every object
 * by at least one byte, so that p + n, for an object of n bytes at p, still
 * points into the object.  C code produces such pointers all the time
 * (end pointers of loops over arrays, `buf + len`), and after the last use
 * of p the end pointer may be the only reference left in a register.
 *
 * For sizes on and around size-class boundaries and large sizes, objects
 * referenced only by their one-past-the-end pointer (from a .bss array) must
 * survive collections (disappearing links must not be cleared, contents
 * intact).  Kept in its own test because it checks a layout choice
 * (bdwgc's "extra byte") rather than the marking itself.
 */
#include "gc.h"

#include "common.h"

#define MAXN 400
static char *ends[MAXN]; /* .bss: one-past-the-end pointers only */
static size_t sizes[MAXN];
static void **links;
static int nobj;

T_NOINLINE static void make_objects(void)
{
    size_t s = 1;
    nobj = 0;
    /* every size up to 1 KiB around each multiple of 16, then growing */
    while (nobj < MAXN && s <= (4u << 20)) {
        sizes[nobj++] = s;
        if (s < 1024)
            s += (s % 16 == 15 || s % 16 == 0 || s % 16 == 1) ? 1 : 7;
        else
            s = s * 9 / 8;
    }
    for (int i = 0; i < nobj; i++) {
        char *p = (i & 1) ? GC_malloc(sizes[i]) : GC_malloc_atomic(sizes[i]);
        CHECK(p != NULL);
        for (size_t k = 0; k < sizes[i]; k++)
            p[k] = (char)(i + k);
        links[i] = p;
        CHECK(GC_general_register_disappearing_link(&links[i], p) ==
              GC_SUCCESS);
        ends[i] = p + sizes[i];
    }
}

int main(void)
{
    t_test_name = "interior_end";
    GC_INIT();
    links = calloc(MAXN, sizeof *links);
    CHECK(links != NULL);
    make_objects();
    t_clear_stack();
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 20000; k++)
            CHECK(GC_malloc(16 + (size_t)(k % 300)) != NULL);
        GC_gcollect();
    }
    int lost = 0;
    for (int i = 0; i < nobj; i++) {
        char *p = ends[i] - sizes[i];
        if (links[i] != p) {
            if (lost++ < 10)
                fprintf(stderr, "object of %zu bytes referenced only by its "
                        "end pointer was collected\n", sizes[i]);
            continue;
        }
        for (size_t k = 0; k < sizes[i]; k++)
            CHECK(p[k] == (char)(i + k), "object of %zu bytes corrupted",
                  sizes[i]);
    }
    CHECK(lost == 0,
          "%d of %d objects referenced only by a one-past-the-end pointer "
          "were collected (bdwgc pads objects so that such pointers count)",
          lost, nobj);
    t_note("%d objects of 1 B .. %zu KiB kept alive by end pointers", nobj,
           sizes[nobj - 1] >> 10);
    t_note("PASS");
    return 0;
}
