/* A bdwgc client that relies on bdwgc's one byte of padding, as goo does
 * (tests/preload/padding_preload.sh builds it against bdwgc's gc.h and -lgc).
 *
 *   past_end poke   fills objects of many sizes, writes one byte past the
 *                   end of each, and checks that every object's own bytes
 *                   are intact, before and after a collection; exit 1 and
 *                   a line naming the first damaged object otherwise.
 *   past_end sizes  prints GC_size of the objects the allocation calls
 *                   give and whether GC_realloc moved an object, for the
 *                   test to compare with bdwgc's answers.
 *   past_end sizes-no-interior  the same with interior pointers off. */
#include <gc/gc.h>
#include <gc/gc_inline.h>
#include <gc/gc_mark.h>
#include <gc/gc_typed.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { COUNT = 96 };
/* sgc's size classes and bdwgc's granule multiples meet at these: each is
 * the largest request of some class when nothing is padded. */
static const size_t sizes[] = {16,  32,  48,  64,  80,  96,   112,  128,  144,  160,  176,
                               192, 208, 224, 240, 256, 272,  288,  304,  336,  368,  400,
                               448, 512, 576, 672, 816, 1024, 1360, 2048, 4096, 8192};
enum { SIZE_COUNT = sizeof sizes / sizeof sizes[0] };

static unsigned char *objects[SIZE_COUNT][2][COUNT];

static unsigned char fill_byte(unsigned s, unsigned atomic, unsigned i) {
  return (unsigned char)(0x41 + (s * 7 + atomic * 3 + i) % 61);
}

/* The first object whose bytes changed, or 0 when none did. */
static int check_all(const char *when) {
  for (unsigned s = 0; s < SIZE_COUNT; s++)
    for (unsigned a = 0; a < 2; a++)
      for (unsigned i = 0; i < COUNT; i++)
        for (size_t b = 0; b < sizes[s]; b++)
          if (objects[s][a][i][b] != fill_byte(s, a, i)) {
            printf("%s: %s object %u of %zu bytes: byte %zu is %#x, not %#x\n", when,
                   a ? "atomic" : "normal", i, sizes[s], b, objects[s][a][i][b],
                   fill_byte(s, a, i));
            return 1;
          }
  return 0;
}

static int poke(void) {
  for (unsigned s = 0; s < SIZE_COUNT; s++)
    for (unsigned a = 0; a < 2; a++)
      for (unsigned i = 0; i < COUNT; i++) {
        unsigned char *p = a ? GC_MALLOC_ATOMIC(sizes[s]) : GC_MALLOC(sizes[s]);
        if (!p) return printf("out of memory\n"), 1;
        memset(p, fill_byte(s, a, i), sizes[s]);
        objects[s][a][i] = p;
      }
  /* All filled first, so a write past one object's end lands on a
   * neighbour already filled. */
  for (unsigned s = 0; s < SIZE_COUNT; s++)
    for (unsigned a = 0; a < 2; a++)
      for (unsigned i = 0; i < COUNT; i++) objects[s][a][i][sizes[s]] = 0;
  if (check_all("after the writes")) return 1;
  GC_gcollect();
  for (int round = 0; round < 2000; round++) (void)GC_MALLOC(16 + round % 200);
  if (check_all("after a collection")) return 1;
  printf("poke: %u objects intact\n", SIZE_COUNT * 2 * COUNT);
  return 0;
}

static const char *moved(void *old, size_t bytes) {
  return GC_REALLOC(old, bytes) == old ? "in place" : "moved";
}

static int print_sizes(void) {
  static const size_t asked[] = {0, 1, 15, 16, 17, 31, 32, 33, 48, 64, 100};
  for (unsigned i = 0; i < sizeof asked / sizeof asked[0]; i++)
    printf("GC_malloc(%zu): %zu\n", asked[i], GC_size(GC_MALLOC(asked[i])));
  printf("GC_malloc_atomic(16): %zu\n", GC_size(GC_MALLOC_ATOMIC(16)));
  printf("GC_malloc_uncollectable(16): %zu\n", GC_size(GC_MALLOC_UNCOLLECTABLE(16)));
  printf("GC_malloc_atomic_uncollectable(32): %zu\n",
         GC_size(GC_malloc_atomic_uncollectable(32)));
  void *list;
  GC_generic_malloc_many(16, GC_I_NORMAL, &list);
  printf("GC_generic_malloc_many(16): %zu\n", GC_size(list));
  GC_generic_malloc_many(32, GC_I_PTRFREE, &list);
  printf("GC_generic_malloc_many(32, pointer-free): %zu\n", GC_size(list));
  printf("GC_malloc_many(16): %zu\n", GC_size(GC_malloc_many(16)));
  GC_word bitmap[1] = {0};
  GC_set_bit(bitmap, 0);
  GC_descr d = GC_make_descriptor(bitmap, 3);
  printf("GC_malloc_explicitly_typed(24): %zu\n", GC_size(GC_malloc_explicitly_typed(24, d)));
  printf("GC_realloc(16 to 31): %s\n", moved(GC_MALLOC(16), 31));
  printf("GC_realloc(16 to 32): %s\n", moved(GC_MALLOC(16), 32));
  return 0;
}

int main(int argc, char **argv) {
  /* Without interior pointers bdwgc does not pad (ECL's setting). */
  bool exact = argc == 2 && strcmp(argv[1], "sizes-no-interior") == 0;
  if (exact) GC_set_all_interior_pointers(0);
  GC_INIT();
  if (argc == 2 && strcmp(argv[1], "poke") == 0) return poke();
  if (exact || (argc == 2 && strcmp(argv[1], "sizes") == 0)) return print_sizes();
  fprintf(stderr, "usage: past_end poke|sizes|sizes-no-interior\n");
  return 2;
}
