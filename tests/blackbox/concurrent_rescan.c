/* concurrent_rescan: a program that writes pointers all over a table
 * while cycles run (docs/concurrent.md, "Rounds").
 *
 * Two threads serve requests as the latency program's do: read random
 * entries and check them, give one of eight a new value, allocate a
 * response.  Every write dirties a random page of the table, so a round's
 * rescan takes about as long as the program needs to write as many pages
 * again.  Rounds used to stop at the first that did not shrink by a
 * quarter, the program's threads found no rescan work to take (the GC
 * threads drain their own stacks first), and the finish's pause rescanned
 * a third to all of the table.  Now a round's rescans go on a queue the
 * program's threads take from first, at their allocation slow paths.
 *
 * Checks: every entry keeps its own value through the cycles (the queue
 * loses no range), and in most cycles with two rounds or more the
 * program's threads took rescans (a count: none before).  The finish's
 * share is printed, not checked: on a busy machine it follows the load.
 * GC_FREE_SPACE_DIVISOR=1 gives cycles the room a large heap gives them
 * (the latency program's): with this 32 MiB heap's default room, most
 * cycles on a busy machine run out of it before their rounds. */
#define GC_THREADS
#include "gc.h"
#include "sgc.h"

#include <stdatomic.h>

#include "common.h"

enum {
  ENTRIES = 1 << 19, /* 16 MiB of entries: 4,096 pages */
  TABLE_BYTES = ENTRIES * 32,
  THREADS = 2,
  WANT_CYCLES = 10,
  RECORDS = 128,
  RESPONSE = 1024,
};

struct value {
  uintptr_t key, sum, pad[2];
};

struct entry {
  struct entry *next;
  uintptr_t key;
  struct value *value;
  uintptr_t pad;
};

static struct entry **table;
static atomic_int stop;
static pthread_mutex_t locks[256];

static struct value *new_value(uintptr_t key) {
  struct value *v = GC_MALLOC(sizeof *v);
  CHECK(v != NULL);
  v->key = key;
  v->sum = key * 3 + 1;
  return v;
}

static void *writer(void *arg) {
  uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    /* A request: eight entries read and checked, half of them given a
     * new value, and a response that is garbage at once. */
    for (int k = 0; k < 8; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      size_t i = x % ENTRIES;
      pthread_mutex_t *lock = &locks[i % 256];
      pthread_mutex_lock(lock);
      struct entry *e = table[i];
      CHECK(e->key == i && e->value->key == i && e->value->sum == i * 3 + 1, "entry %zu lost", i);
      if (k == 0) e->value = new_value(i);
      pthread_mutex_unlock(lock);
    }
    char *response = GC_MALLOC_ATOMIC(RESPONSE);
    CHECK(response != NULL);
    memset(response, (int)x, RESPONSE);
  }
  return NULL;
}

int main(void) {
  t_test_name = "concurrent_rescan";
  GC_INIT();
  CHECK(GC_is_incremental_mode(), "run with SGC_MODE=concurrent");
  for (int i = 0; i < 256; i++) pthread_mutex_init(&locks[i], NULL);
  table = GC_MALLOC(ENTRIES * sizeof *table);
  CHECK(table != NULL);
  for (size_t i = 0; i < ENTRIES; i++) {
    struct entry *e = GC_MALLOC(sizeof *e);
    CHECK(e != NULL);
    e->key = i;
    e->value = new_value(i);
    table[i] = e;
  }
  size_t built = GC_get_gc_no();
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, writer, (void *)i) == 0);
  for (int waited = 0; waited < 900 && GC_get_gc_no() < built + WANT_CYCLES; waited++) {
    struct timespec tick = {0, 100000000};
    nanosleep(&tick, NULL);
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
  CHECK(GC_get_gc_no() >= built + WANT_CYCLES, "%zu cycles in 90 s", GC_get_gc_no() - built);

  /* Every entry still holds its own value after the cycles. */
  for (size_t i = 0; i < ENTRIES; i++)
    CHECK(table[i]->key == i && table[i]->value->key == i && table[i]->value->sum == i * 3 + 1,
          "entry %zu lost", i);

  static SGC_gc_record_t rec[RECORDS];
  size_t n = SGC_get_gc_records(rec, RECORDS), cycles = 0, with_rounds = 0, shared = 0;
  uint64_t finish_bytes = 0;
  for (size_t i = 0; i < n; i++) {
    if (!rec[i].concurrent || rec[i].gc_no <= built) continue;
    cycles++;
    finish_bytes += rec[i].finish_rescan_bytes;
    /* A second round follows a first that queued rescans for the
     * program's threads too. */
    if (rec[i].rounds >= 2) {
      with_rounds++;
      shared += rec[i].assist_rescan_steals > 0;
    }
    printf("cycle %llu: %llu rounds, %llu pages rescanned, %llu in the finish (%llu KiB of marked "
           "objects), %llu steals by assists from the rescans%s\n",
           (unsigned long long)rec[i].gc_no, (unsigned long long)rec[i].rounds,
           (unsigned long long)rec[i].rescanned_pages, (unsigned long long)rec[i].finish_rescan_pages,
           (unsigned long long)rec[i].finish_rescan_bytes >> 10,
           (unsigned long long)rec[i].assist_rescan_steals, rec[i].fallback ? " (fallback)" : "");
  }
  CHECK(cycles >= WANT_CYCLES / 2, "%zu cycles recorded", cycles);
  CHECK(with_rounds >= 2, "%zu of %zu cycles had two rounds or more", with_rounds, cycles);
  CHECK(2 * shared >= with_rounds,
        "the program's threads took rescans in %zu of the %zu cycles with two rounds or more",
        shared, with_rounds);
  printf("concurrent_rescan: ok (assists rescanned in %zu of %zu cycles with rounds; the finish "
         "rescanned %llu KiB on average, of the table's %d)\n",
         shared, with_rounds, (unsigned long long)(finish_bytes / cycles) >> 10, TABLE_BYTES >> 10);
  return 0;
}
