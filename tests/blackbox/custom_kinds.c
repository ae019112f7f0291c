/* custom_kinds: object kinds a program makes (GC_new_kind) with each kind
 * of mark descriptor -- a mark procedure (GC_new_proc, GC_MAKE_PROC), a
 * length, a bitmap, a whole-object length -- and GC_generic_malloc_many,
 * as language runtimes use them (Guile's threads and weak tables).  Runs
 * against bdwgc too.
 *
 * What could fail:
 *  - a field the descriptor names is not marked: its target is freed
 *    and reused, and the pattern written into it changes;
 *  - a field the descriptor leaves out is marked: its target never dies,
 *    and the disappearing link registered on it is never cleared;
 *  - a chain of objects marked only by mark procedures (each pushing the
 *    next) overflows the C stack or loses links past some depth;
 *  - mark procedures on several GC threads, or objects of custom kinds
 *    allocated by several threads while others collect, break either;
 *  - typed objects (gc_typed.h) keep what their descriptor leaves out
 *    (Guile's weak tables hold weak keys that way) or lose what it names;
 *  - GC_generic_malloc_many hands out overlapping or unzeroed objects. */
#define GC_THREADS
#include <gc.h>
#include <gc/gc_inline.h>
#include <gc/gc_mark.h>
#include <gc/gc_typed.h>
#include <pthread.h>
#include <stdatomic.h>

#include "common.h"

enum { ENV = 42, RECORDS = 400, THREADS = 4, PATTERN_BYTES = 48 };
/* The chain's length: CUSTOM_KINDS_CHAIN, default 200,000 (deep enough
 * that marking it recursively would overflow an 8 MiB C stack). */
static int chain_length = 200000;

/* A record of the procedure kind: its mark procedure marks STRONG and
 * NEXT, never WEAK. */
struct record {
  GC_word tag; /* nonzero once in use: a free object reads 0 */
  void *strong;
  void *weak;
  struct record *next;
};

static atomic_long proc_calls, bad_env;

static struct GC_ms_entry *mark_record(GC_word *addr, struct GC_ms_entry *msp,
                                       struct GC_ms_entry *limit, GC_word env) {
  struct record *r = (struct record *)addr;
  atomic_fetch_add_explicit(&proc_calls, 1, memory_order_relaxed);
  if (env != ENV) atomic_fetch_add_explicit(&bad_env, 1, memory_order_relaxed);
  if (!r->tag) return msp;
  msp = GC_MARK_AND_PUSH(r->strong, msp, limit, (void **)&r->strong);
  msp = GC_MARK_AND_PUSH(r->next, msp, limit, (void **)&r->next);
  return msp;
}

static unsigned record_kind, length_kind, bitmap_kind, whole_kind;

static void *pattern_object(unsigned seed) {
  unsigned char *p = GC_malloc_atomic(PATTERN_BYTES);
  CHECK(p != NULL);
  for (int i = 0; i < PATTERN_BYTES; i++) p[i] = (unsigned char)(seed * 31 + i);
  return p;
}

static int pattern_intact(const void *obj, unsigned seed) {
  const unsigned char *p = obj;
  for (int i = 0; i < PATTERN_BYTES; i++)
    if (p[i] != (unsigned char)(seed * 31 + i)) return 0;
  return 1;
}

/* Churn that reuses whatever was freed. */
static T_NOINLINE void churn(int rounds) {
  for (int i = 0; i < rounds; i++) {
    unsigned char *p = GC_malloc_atomic(PATTERN_BYTES);
    memset(p, 0xEE, PATTERN_BYTES);
  }
}

static void collect(void) {
  GC_gcollect();
  GC_gcollect();
}

/* Objects made by MAKE, held in an uncollectable array with the address
 * of a field their descriptor names (KEPT, pointing to a pattern object)
 * and of one it leaves out (WEAK, a disappearing link; NULL if none).
 * After collections and churn every kept target must be intact and most
 * weak links cleared. */
typedef void *(*make_fn)(unsigned seed, void ***kept, void ***weak);

static T_NOINLINE void fill_held(void **held, make_fn make) {
  for (int i = 0; i < RECORDS; i++)
    held[3 * i] = make((unsigned)i, (void ***)&held[3 * i + 1], (void ***)&held[3 * i + 2]);
}

static void check_held(const char *name, make_fn make) {
  void **held = GC_malloc_uncollectable(3 * RECORDS * sizeof *held);
  CHECK(held != NULL);
  fill_held(held, make);
  t_clear_stack();
  collect();
  churn(50000);
  collect();
  int cleared = 0, weak = 0;
  for (int i = 0; i < RECORDS; i++) {
    void **kept = held[3 * i + 1], **weak_field = held[3 * i + 2];
    CHECK(*kept && pattern_intact(*kept, (unsigned)i),
          "%s %d: the target of a field its descriptor names was reclaimed", name, i);
    if (weak_field) {
      weak++;
      if (!*weak_field) cleared++;
    }
  }
  CHECK(weak == 0 || cleared > weak / 2, "%s: only %d of %d targets of a field left out died", name, cleared,
        weak);
  t_note("%s: %d named targets intact, %d of %d left-out targets died", name, RECORDS, cleared,
         weak);
  GC_free(held);
}

/* A pattern object in *FIELD, and a disappearing link on it when WEAK. */
static void set_target(void **field, unsigned seed, int weak) {
  *field = pattern_object(seed);
  if (weak) GC_general_register_disappearing_link(field, *field);
}

/* Procedure kind: STRONG survives intact, WEAK dies. */
static void *make_record(unsigned seed, void ***kept, void ***weak) {
  struct record *r = GC_generic_malloc(sizeof *r, (int)record_kind);
  CHECK(r != NULL);
  CHECK(r->tag == 0 && r->strong == NULL && r->weak == NULL && r->next == NULL,
        "a new record is not zeroed");
  r->tag = 1; /* first: a collection inside the allocations below must mark its fields */
  set_target(&r->strong, seed, 0);
  set_target(&r->weak, seed + 1, 1);
  *kept = &r->strong;
  *weak = &r->weak;
  return r;
}

static void test_procedure_kind(void) {
  struct record *probe = GC_generic_malloc(sizeof *probe, (int)record_kind);
  size_t size = 0;
  CHECK(GC_get_kind_and_size(probe, &size) == (int)record_kind);
  CHECK(size >= sizeof(struct record));
  check_held("procedure kind", make_record);
  CHECK(atomic_load(&proc_calls) >= RECORDS, "the mark procedure ran %ld times",
        atomic_load(&proc_calls));
  CHECK(atomic_load(&bad_env) == 0, "the mark procedure got the wrong argument");
}

/* A chain held only through its head, each link marked by the previous
 * record's procedure. */
static struct record *chain_head;

static T_NOINLINE void build_chain(void) {
  struct record *head = NULL;
  for (int i = chain_length - 1; i >= 0; i--) {
    struct record *r = GC_generic_malloc(sizeof *r, (int)record_kind);
    CHECK(r != NULL);
    r->tag = 1;
    r->next = head;
    r->strong = pattern_object((unsigned)i);
    head = r;
  }
  chain_head = head;
}

static void check_chain(const char *when) {
  int n = 0;
  for (struct record *r = chain_head; r; r = r->next, n++) {
    CHECK(r->tag == 1, "%s: record %d of the chain was reclaimed", when, n);
    CHECK(pattern_intact(r->strong, (unsigned)n), "%s: record %d's object was reclaimed", when, n);
  }
  CHECK(n == chain_length, "%s: the chain has %d records, not %d", when, n, chain_length);
}

static void test_chain(void) {
  build_chain();
  t_clear_stack();
  collect();
  churn(200000);
  check_chain("after collections");
  t_note("a chain of %d records marked only by procedures survived", chain_length);
}

/* Length, bitmap and whole-object descriptors, and typed objects: each
 * object holds a target in a word its descriptor names and (but for the
 * whole-object kind) a disappearing link in one it does not. */
struct described {
  void *words[8];
};
static unsigned described_kind;
static int kept_word, dropped_word;

static void *make_described(unsigned seed, void ***kept, void ***weak) {
  struct described *d = GC_generic_malloc(sizeof *d, (int)described_kind);
  CHECK(d != NULL);
  set_target(&d->words[kept_word], seed, 0);
  *kept = &d->words[kept_word];
  *weak = NULL;
  if (dropped_word >= 0) {
    set_target(&d->words[dropped_word], seed + 7, 1);
    *weak = &d->words[dropped_word];
  }
  return d;
}

static void test_descriptor(const char *name, unsigned kind, int kept, int dropped) {
  described_kind = kind;
  kept_word = kept;
  dropped_word = dropped;
  check_held(name, make_described);
}

/* Typed objects: the descriptor names words 0 and 2 and leaves word 1
 * out, as Guile's weak-key table entries do. */
struct typed_entry {
  GC_word hash;
  void *weak_key;
  void *value;
};
static GC_descr typed_descriptor;

static void *make_typed(unsigned seed, void ***kept, void ***weak) {
  struct typed_entry *e = GC_malloc_explicitly_typed(sizeof *e, typed_descriptor);
  CHECK(e != NULL);
  CHECK(GC_size(e) >= sizeof *e);
  e->hash = seed;
  set_target(&e->weak_key, seed + 3, 1);
  set_target(&e->value, seed, 0);
  *kept = &e->value;
  *weak = &e->weak_key;
  return e;
}

static void test_typed(void) {
  GC_word bitmap[GC_BITMAP_SIZE(struct typed_entry)] = {0};
  GC_set_bit(bitmap, GC_WORD_OFFSET(struct typed_entry, hash));
  GC_set_bit(bitmap, GC_WORD_OFFSET(struct typed_entry, value));
  typed_descriptor = GC_make_descriptor(bitmap, GC_WORD_LEN(struct typed_entry));
  check_held("typed", make_typed);
}

/* A large object of the procedure kind. */
static void test_large(void) {
  enum { LARGE_BYTES = 64 << 10 };
  struct record *r = GC_generic_malloc(LARGE_BYTES, (int)record_kind);
  CHECK(r != NULL);
  size_t size = 0;
  CHECK(GC_get_kind_and_size(r, &size) == (int)record_kind && size >= LARGE_BYTES);
  r->tag = 1;
  r->strong = pattern_object(99);
  collect();
  churn(50000);
  collect();
  CHECK(pattern_intact(r->strong, 99), "a large record's marked object was reclaimed");
}

static void test_malloc_many(int kind, const char *name, int zeroed) {
  enum { BYTES = 48 };
  void *list = NULL;
  GC_generic_malloc_many(BYTES, kind, &list);
  CHECK(list != NULL, "%s: no objects", name);
  int n = 0;
  for (void *p = list; p; p = GC_NEXT(p), n++) {
    CHECK(GC_base(p) == p && GC_size(p) >= BYTES, "%s: object %d is not an object of %d bytes",
          name, n, BYTES);
    if (zeroed)
      for (size_t w = 1; w < BYTES / sizeof(void *); w++)
        CHECK(((void **)p)[w] == NULL, "%s: object %d is not zeroed", name, n);
    /* Each object's own number in its body: an overlap would show. */
    memset((char *)p + sizeof(void *), n + 1, BYTES - sizeof(void *));
  }
  CHECK(n > 1, "%s: %d objects", name, n);
  int i = 0;
  for (void *p = list; p; p = GC_NEXT(p), i++)
    for (size_t b = sizeof(void *); b < BYTES; b++)
      CHECK(((unsigned char *)p)[b] == (unsigned char)(i + 1), "%s: objects %d and another overlap",
            name, i);
  t_note("GC_generic_malloc_many(%d, %s): %d objects", BYTES, name, n);
}

/* Threads allocating records and short chains while collections run. */
static void *thread_main(void *arg) {
  unsigned id = (unsigned)(uintptr_t)arg;
  for (int round = 0; round < 40; round++) {
    struct record *head = NULL;
    for (int i = 0; i < 500; i++) {
      struct record *r = GC_generic_malloc(sizeof *r, (int)record_kind);
      CHECK(r != NULL);
      r->tag = 1;
      r->next = head;
      r->strong = pattern_object(id * 1000 + (unsigned)i);
      head = r;
    }
    if (id == 0 && round % 8 == 0) GC_gcollect();
    int n = 499;
    for (struct record *r = head; r; r = r->next, n--)
      CHECK(pattern_intact(r->strong, id * 1000 + (unsigned)n),
            "thread %u round %d: record %d's object was reclaimed", id, round, n);
  }
  return NULL;
}

static void test_threads(void) {
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++)
    CHECK(pthread_create(&threads[i], NULL, thread_main, (void *)(uintptr_t)i) == 0);
  for (int i = 0; i < THREADS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
  t_note("%d threads allocated records while collections ran", THREADS);
}

int main(void) {
  t_test_name = "custom_kinds";
  const char *chain = getenv("CUSTOM_KINDS_CHAIN");
  if (chain && atoi(chain) > 0) chain_length = atoi(chain);
  GC_INIT();
  GC_allow_register_threads();
  record_kind = GC_new_kind(GC_new_free_list(), GC_MAKE_PROC(GC_new_proc(mark_record), ENV), 0, 1);
  length_kind = GC_new_kind(GC_new_free_list(), 2 * sizeof(GC_word) | GC_DS_LENGTH, 0, 1);
  bitmap_kind = GC_new_kind(GC_new_free_list(),
                            ((GC_word)1 << 63) | ((GC_word)1 << 60) | GC_DS_BITMAP, 0, 1);
  whole_kind = GC_new_kind(GC_new_free_list(), 0 | GC_DS_LENGTH, 1, 1);
  CHECK(record_kind != length_kind && length_kind != bitmap_kind && bitmap_kind != whole_kind);
  CHECK(record_kind > GC_I_NORMAL && length_kind > GC_I_NORMAL);

  test_procedure_kind();
  test_descriptor("length 16", length_kind, 1, 5);
  test_descriptor("bitmap {0,3}", bitmap_kind, 3, 1);
  test_descriptor("whole object", whole_kind, 7, -1);
  test_typed();
  test_chain();
  test_large();
  test_malloc_many(GC_I_NORMAL, "NORMAL", 1);
  test_malloc_many(GC_I_PTRFREE, "PTRFREE", 0);
  test_malloc_many((int)record_kind, "procedure kind", 1);
  /* Free and reuse: a freed record comes back zeroed. */
  struct record *r = GC_generic_malloc(sizeof *r, (int)record_kind);
  r->tag = 7;
  GC_free(r);
  struct record *again = GC_generic_malloc(sizeof *again, (int)record_kind);
  CHECK(again->tag == 0, "a reused record is not zeroed");
  test_threads();
  check_chain("at the end");
  printf("[custom_kinds] PASS (mark procedure ran %ld times)\n", atomic_load(&proc_calls));
  return 0;
}
