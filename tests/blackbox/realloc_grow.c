/* realloc_grow: large objects that GC_realloc grows in place, or moves to
 * where they can, keep their contents, read zero in what they gained, and
 * are marked and looked up over their new length.
 *
 *  A. A buffer of each built-in kind grown by eighths from 16 bytes to
 *     GROW_MIB (4) MiB, filled as it grows: every byte kept at every step;
 *     a scanned buffer's gained bytes read zero before they are written;
 *     most steps past the first large ones keep the address (the growth
 *     in place happened; at least half of them is asked).
 *  B. The pages a buffer grows into held another object, full of 0xff,
 *     freed just before: the gained bytes still read zero.
 *  C. A grown buffer holds the only pointers to fresh objects in its
 *     last pages: they survive collections and garbage; GC_base of an
 *     address in those pages gives the buffer, GC_size its new length.
 *  D. Two threads grow buffers at once while a third collects.
 *  E. An uncollectable table grown in place, its address hidden, keeps
 *     the cells only its last slots reference: a root over its new
 *     length.
 *
 * What could fail: a lost or changed byte (a copy or a growth over the
 * wrong pages), stale bytes in a gained part (an uncleared page), an
 * object reclaimed (the marker scanned the old length), a wrong
 * GC_base/GC_size (tail pages not linked to the head), or no growth in
 * place at all.  Runs against bdwgc too, but for A's in-place count. */
#define GC_THREADS 1
#include "gc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "common.h"

#ifdef SGC_VERSION_STRING
static const bool is_sgc = true;
#else
static const bool is_sgc = false; /* bdwgc copies at every step */
#endif

static unsigned char pattern_byte(size_t i, unsigned seed) {
  return (unsigned char)((i * 2654435761u >> 13) ^ seed);
}

/* A: grows one buffer of KIND, returns how many large steps kept the address. */
static void grow_buffer(int kind, unsigned seed, size_t top, long *steps, long *in_place) {
  size_t n = 16;
  unsigned char *p = kind == 0   ? GC_MALLOC(n)
                     : kind == 1 ? GC_MALLOC_ATOMIC(n)
                     : kind == 2 ? GC_MALLOC_UNCOLLECTABLE(n)
                                 : GC_MALLOC_ATOMIC_UNCOLLECTABLE(n);
  CHECK(p != NULL);
  for (size_t i = 0; i < n; i++) p[i] = pattern_byte(i, seed);
  bool scanned = kind == 0 || kind == 2;
  while (n < top) {
    size_t m = n + n / 8 + 16;
    unsigned char *q = GC_REALLOC(p, m);
    CHECK(q != NULL, "GC_realloc to %zu bytes failed", m);
    if (n > 8192) {
      (*steps)++;
      if (q == p) (*in_place)++;
    }
    for (size_t i = 0; i < n; i += 61)
      CHECK(q[i] == pattern_byte(i, seed), "kind %d: byte %zu of %zu changed growing to %zu",
            kind, i, n, m);
    CHECK(q[n - 1] == pattern_byte(n - 1, seed));
    if (scanned)
      for (size_t i = n; i < m; i++)
        CHECK(q[i] == 0, "kind %d: gained byte %zu (of %zu -> %zu) reads %u", kind, i, n, m, q[i]);
    for (size_t i = n; i < m; i++) q[i] = pattern_byte(i, seed);
    p = q;
    n = m;
  }
  for (size_t i = 0; i < n; i++) CHECK(p[i] == pattern_byte(i, seed));
  if (kind >= 2) GC_FREE(p);
}

static void part_a(void) {
  size_t top = (size_t)t_env_long("GROW_MIB", 4) << 20;
  long steps = 0, in_place = 0;
  for (int kind = 0; kind < 4; kind++) grow_buffer(kind, 17u + (unsigned)kind, top, &steps, &in_place);
  t_note("A: 4 kinds grown to %zu MiB, %ld of %ld large steps in place", top >> 20, in_place, steps);
  if (is_sgc) CHECK(in_place * 2 >= steps, "only %ld of %ld steps grew in place", in_place, steps);
}

/* B: the neighbour's pages, dirty, then the growth over them. */
static void part_b(void) {
  int hits = 0;
  for (int attempt = 0; attempt < 200 && hits < 10; attempt++) {
    char *buffer = GC_MALLOC(20000);
    char *neighbour = GC_MALLOC(64 << 10);
    CHECK(buffer && neighbour);
    size_t have = GC_size(buffer);
    if (neighbour != buffer + ((have + 4095) & ~(size_t)4095)) continue;
    memset(neighbour, 0xff, 64 << 10);
    GC_FREE(neighbour);
    char *grown = GC_REALLOC(buffer, 60000);
    CHECK(grown != NULL);
    for (size_t i = 20000; i < 60000; i++)
      CHECK(grown[i] == 0, "B: gained byte %zu reads %d after a neighbour's 0xff", i, grown[i]);
    hits++;
  }
  t_note("B: %d buffers grew over a freed neighbour's pages", hits);
  if (is_sgc) CHECK(hits > 0, "no buffer lay right before a neighbour: the test set nothing up");
}

/* C: pointers in the gained pages keep their objects. */
struct cell {
  long id;
  long check;
};

static void part_c(void) {
  enum { POINTERS = 64 };
  struct cell **table = GC_MALLOC(4096 * sizeof(void *));
  CHECK(table != NULL);
  size_t slots = 4096;
  while (slots < (1u << 20)) {
    size_t more = slots + slots / 4;
    table = GC_REALLOC(table, more * sizeof(void *));
    CHECK(table != NULL);
    slots = more;
  }
  CHECK(GC_size(table) >= slots * sizeof(void *), "GC_size %zu < %zu", GC_size(table),
        slots * sizeof(void *));
  for (int i = 0; i < POINTERS; i++) {
    struct cell *c = GC_MALLOC(sizeof *c);
    CHECK(c != NULL);
    c->id = i;
    c->check = ~(long)i;
    table[slots - 1 - (size_t)i * 97] = c;
  }
  void *last = &table[slots - 1];
  CHECK(GC_base(last) == table, "GC_base of the last slot: %p, not %p", GC_base(last),
        (void *)table);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 200000; i++) CHECK(GC_MALLOC(sizeof(struct cell)) != NULL);
    GC_gcollect();
  }
  for (int i = 0; i < POINTERS; i++) {
    struct cell *c = table[slots - 1 - (size_t)i * 97];
    CHECK(c->id == i && c->check == ~(long)i, "C: the cell in slot %zu was reclaimed",
          slots - 1 - (size_t)i * 97);
  }
  t_note("C: %d cells held from the last pages of a %zu KiB table survived", POINTERS,
         slots * sizeof(void *) >> 10);
}

/* E: an uncollectable table grown in place is a root over its new
 * length: the cells only its last slots reference survive, with the
 * table's own address kept hidden. */
static void part_e(void) {
  size_t slots = 1024;
  void **table = GC_MALLOC_UNCOLLECTABLE(slots * sizeof(void *));
  CHECK(table != NULL);
  while (slots < (1u << 18)) {
    size_t more = slots + slots / 4;
    table = GC_REALLOC(table, more * sizeof(void *));
    CHECK(table != NULL);
    slots = more;
  }
  for (size_t i = slots - 1000; i < slots; i++) {
    struct cell *c = GC_MALLOC(sizeof *c);
    CHECK(c != NULL);
    c->id = (long)i;
    c->check = ~(long)i;
    table[i] = c;
  }
  volatile uintptr_t hidden = (uintptr_t)table ^ 0x5a5a5a5a5a5aul;
  table = NULL;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 200000; i++) CHECK(GC_MALLOC(sizeof(struct cell)) != NULL);
    GC_gcollect();
  }
  table = (void **)(hidden ^ 0x5a5a5a5a5a5aul);
  for (size_t i = slots - 1000; i < slots; i++) {
    const struct cell *c = table[i];
    CHECK(c->id == (long)i && c->check == ~(long)i,
          "E: the cell in slot %zu of a grown uncollectable table was reclaimed", i);
  }
  GC_FREE(table);
  t_note("E: an uncollectable table grown to %zu KiB kept its last 1000 cells",
         slots * sizeof(void *) >> 10);
}

/* D: growth beside growth and collections. */
static atomic_int growers_done;
static void *grower(void *arg) {
  long steps = 0, in_place = 0;
  for (int r = 0; r < 3; r++) grow_buffer(r & 1, (unsigned)(uintptr_t)arg + (unsigned)r, 2 << 20, &steps, &in_place);
  atomic_fetch_add(&growers_done, 1);
  return NULL;
}
static void *collector(void *arg) {
  (void)arg;
  while (atomic_load(&growers_done) < 2) GC_gcollect();
  return NULL;
}

static void part_d(void) {
  pthread_t t[3];
  CHECK(pthread_create(&t[0], NULL, grower, (void *)1) == 0);
  CHECK(pthread_create(&t[1], NULL, grower, (void *)2) == 0);
  CHECK(pthread_create(&t[2], NULL, collector, NULL) == 0);
  for (int i = 0; i < 3; i++) CHECK(pthread_join(t[i], NULL) == 0);
  t_note("D: two threads grew buffers beside collections");
}

int main(void) {
  t_test_name = "realloc_grow";
  GC_INIT();
  part_a();
  part_b();
  part_c();
  part_e();
  part_d();
  return 0;
}
