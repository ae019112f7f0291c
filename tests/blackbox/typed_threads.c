/* typed_threads: typed objects (gc_typed.h) allocated and freed by several
 * threads while collections run, the heap they need, and where their
 * pages go when they die.  sgc hands such objects out from thread-local
 * caches (alloc/custom_alloc.c); bdwgc from one locked list.  Runs against
 * bdwgc too.
 *
 * What could fail:
 *  - an object is handed out twice (on a thread's cache and on a shared
 *    list after a collection, or given back twice): two owners write
 *    their tags into it, and a kept object's tag or its target changes;
 *  - an object is handed out dirty (a freed or dead one not cleared, a
 *    stale link or descriptor word left in it);
 *  - the word the descriptor names is not marked (its target is reused)
 *    with objects sitting on caches, or a thread's exit loses or corrupts
 *    what its cache held;
 *  - the heap grows with every collection under steady churn (what a
 *    collection frees must serve the next refills before fresh pages);
 *  - pages of a kind that stopped allocating never go back to serve other
 *    objects.
 *
 * TYPED_THREADS_ROUNDS scales the threaded part (default 60),
 * TYPED_THREADS_MB the others (default 24: the dying objects' megabytes,
 * and a 40th of the churn's). */
#define GC_THREADS
#include <gc.h>
#include <gc/gc_typed.h>
#include <pthread.h>

#include "common.h"

enum { THREADS = 4, PER_ROUND = 2000, KEEP = 4000 };

/* Word 0 a tag (never a pointer), word 1 a pointer to a pattern object,
 * word 2 a plain number.  The descriptor names word 1 only. */
struct entry {
  GC_word tag;
  GC_word *target;
  GC_word number;
};

static GC_descr entry_descr;
static int rounds = 60, megabytes = 24;

static GC_word tag_of(unsigned thread, unsigned round, unsigned i) {
  return ((GC_word)thread << 48 | (GC_word)round << 24 | i) * 2 + 1; /* odd */
}

/* A new entry tagged TAG, with a target unless BARE. */
static struct entry *new_entry_of(GC_word tag, int bare) {
  struct entry *e = GC_malloc_explicitly_typed(sizeof *e, entry_descr);
  CHECK(e != NULL);
  CHECK(e->tag == 0 && e->target == NULL && e->number == 0,
        "a typed object was handed out dirty (%#lx %p %#lx)", (unsigned long)e->tag,
        (void *)e->target, (unsigned long)e->number);
  e->tag = tag;
  e->number = ~tag;
  if (bare) return e;
  e->target = GC_malloc_atomic(2 * sizeof(GC_word));
  CHECK(e->target != NULL);
  e->target[0] = tag ^ 0x5a5a;
  e->target[1] = ~tag;
  return e;
}

static struct entry *new_entry(GC_word tag) { return new_entry_of(tag, 0); }

static void check_entry(const struct entry *e, GC_word tag, const char *when) {
  CHECK(e->tag == tag && e->number == ~tag, "%s: an object was handed out twice (tag %#lx, want %#lx)",
        when, (unsigned long)e->tag, (unsigned long)tag);
  CHECK(!e->target || (e->target[0] == (tag ^ 0x5a5a) && e->target[1] == ~tag),
        "%s: the target of the word the descriptor names was reclaimed", when);
}

struct slot {
  struct entry *e;
  GC_word tag;
};

/* Each round allocates PER_ROUND entries into random slots of KEEP, freeing
 * or dropping the entries they replace, and checks every kept entry.
 * Thread 0 collects now and then, so collections find the others' caches
 * full, half used, or just refilled. */
static void *worker(void *arg) {
  unsigned id = (unsigned)(uintptr_t)arg;
  struct slot *slots = GC_malloc(KEEP * sizeof *slots);
  CHECK(slots != NULL);
  unsigned seed = 12345u + id;
  for (int round = 0; round < rounds; round++) {
    for (unsigned i = 0; i < PER_ROUND; i++) {
      seed = seed * 1103515245u + 12345u;
      unsigned s = (seed >> 8) % KEEP;
      if (slots[s].e && (seed & 1)) GC_free(slots[s].e); /* else dropped */
      slots[s].tag = tag_of(id, (unsigned)round, i);
      slots[s].e = new_entry(slots[s].tag);
    }
    if (id == 0 && round % 4 == 0) GC_gcollect();
    for (unsigned s = 0; s < KEEP; s++)
      if (slots[s].e) check_entry(slots[s].e, slots[s].tag, "threads");
  }
  /* Half the kept entries freed on the way out: the cache the thread
   * leaves holds freed objects as well as unused ones. */
  for (unsigned s = 0; s < KEEP; s += 2)
    if (slots[s].e) GC_free(slots[s].e);
  return NULL;
}

static void test_threads(void) {
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++)
    CHECK(GC_pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)i) == 0);
  for (int i = 0; i < THREADS; i++) CHECK(GC_pthread_join(threads[i], NULL) == 0);
  /* What the exited threads' caches held serves this thread clean. */
  struct entry **mine = GC_malloc(KEEP * sizeof *mine);
  CHECK(mine != NULL);
  for (unsigned i = 0; i < KEEP; i++) mine[i] = new_entry(tag_of(9, 0, i));
  GC_gcollect();
  for (unsigned i = 0; i < KEEP; i++) check_entry(mine[i], tag_of(9, 0, i), "after exit");
  t_note("%d threads, %d rounds of %d typed objects with frees and collections", THREADS, rounds,
         PER_ROUND);
}

/* Steady churn of typed objects only (no target, so no other allocation
 * triggers the collections): about 1.3 MB live (KEEP * 8 entries and the
 * ring), 40 x megabytes (960 MB) allocated in all.  The heap must settle,
 * not grow with each collection. */
static T_NOINLINE void churn(struct entry **ring, unsigned n, long total) {
  for (long i = 0; i < total; i++) ring[i % n] = new_entry_of(tag_of(7, 0, (unsigned)(i % n)), 1);
}

static void test_churn_heap(void) {
  enum { RING = 8 * KEEP, LIMIT_MIB = 32 };
  struct entry **ring = GC_malloc(RING * sizeof *ring);
  CHECK(ring != NULL);
  long total = ((long)megabytes * 40 << 20) / 32; /* an entry takes 32 bytes */
  churn(ring, RING, total / 2);
  size_t mid = GC_get_heap_size();
  churn(ring, RING, total / 2);
  size_t end = GC_get_heap_size();
  t_note("steady churn: heap %zu KiB half-way, %zu KiB at the end", mid >> 10, end >> 10);
  CHECK(end <= (size_t)LIMIT_MIB << 20, "the heap grew to %zu MiB under steady churn", end >> 20);
  for (unsigned i = 0; i < RING; i++) check_entry(ring[i], tag_of(7, 0, i), "churn");
}

/* A kind that stopped allocating gives its pages up: twice megabytes of
 * typed objects die, and as many of ordinary objects kept live afterwards
 * fit in the heap they leave (a kind keeping its empty pages makes the
 * heap grow by about that much, less the headroom it had). */
static T_NOINLINE struct entry **fill_typed(unsigned n) {
  struct entry **all = GC_malloc(n * sizeof *all);
  CHECK(all != NULL);
  for (unsigned i = 0; i < n; i++) {
    all[i] = GC_malloc_explicitly_typed(sizeof(struct entry), entry_descr);
    CHECK(all[i] != NULL);
  }
  return all;
}

static void test_pages_go_back(void) {
  unsigned typed = ((unsigned)megabytes << 21) / 32; /* 24-byte entries take 32 bytes */
  /* Kept alive by a pointer from a normal object while filled. */
  void **holder = GC_malloc(sizeof(void *));
  CHECK(holder != NULL);
  *holder = fill_typed(typed);
  GC_gcollect();
  size_t after_typed = GC_get_heap_size();
  *holder = NULL;
  t_clear_stack();
  for (int i = 0; i < 3; i++) GC_gcollect();
  unsigned normal = ((unsigned)megabytes << 21) / 64;
  void **live = GC_malloc(normal * sizeof *live);
  CHECK(live != NULL);
  for (unsigned i = 0; i < normal; i++) {
    live[i] = GC_malloc(64);
    CHECK(live[i] != NULL);
  }
  size_t after_normal = GC_get_heap_size();
  t_note("heap %zu KiB with %d MB of typed objects live, %zu KiB after they died and %d MB of "
         "ordinary ones were allocated", after_typed >> 10, 2 * megabytes, after_normal >> 10,
         2 * megabytes);
  CHECK(after_normal <= after_typed + ((size_t)megabytes << 19),
        "the dead typed objects' pages did not serve other objects (heap %zu -> %zu MiB)",
        after_typed >> 20, after_normal >> 20);
  live[0] = NULL;
}

int main(void) {
  t_test_name = "typed_threads";
  const char *r = getenv("TYPED_THREADS_ROUNDS");
  if (r && atoi(r) > 0) rounds = atoi(r);
  const char *mb = getenv("TYPED_THREADS_MB");
  if (mb && atoi(mb) > 0) megabytes = atoi(mb);
  GC_INIT();
  GC_word bitmap[1] = {0};
  GC_set_bit(bitmap, 1);
  entry_descr = GC_make_descriptor(bitmap, 3);
  test_threads();
  test_churn_heap();
  test_pages_go_back();
  printf("[typed_threads] PASS\n");
  return 0;
}
