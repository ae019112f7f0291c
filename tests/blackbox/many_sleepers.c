/* many_sleepers: hundreds of threads, most asleep at any moment, each with
 * a small live set of its own (issue 53; bench/sleepers.c is the
 * benchmark).  Each thread wakes every 0.2-2 ms, allocates a burst of 200
 * objects of 16-192 bytes, keeps one in eight and its last 8 bursts.
 *
 * Checks: every kept object is intact when its burst is dropped and at
 * the end (the collector freed nothing reachable), and the heap follows
 * the live data: at most HEAP_PER_LIVE times the kept bytes plus 16 MiB.
 * Pages holding survivors of many threads once let LPS grow the heap
 * with their spread (152 MiB around 12 MB live at 500 threads; 28 after).
 *
 * Environment: SLEEPERS_THREADS (1,000, the count), SLEEPERS_SECONDS (1.5),
 * SLEEPERS_NO_BOUND=1 checks the objects only (AL keeps every emptied
 * page with the thread that emptied it, by design: thesis §2.2.2). */
#define GC_THREADS 1
#include <gc.h>
#include "common.h"

#include <stdatomic.h>
#include <unistd.h>

enum { BURST = 200, KEEP_EVERY = 8, KEPT_BURSTS = 8, HEAP_PER_LIVE = 4 };

struct obj {
  struct obj *next;
  uint32_t thread, burst, index, size;
};

static volatile int stop;
static _Atomic size_t kept_bytes; /* summed at the end from the rings */

static void check_burst(const struct obj *o, uint32_t thread, uint32_t burst) {
  for (uint32_t want = 0; o; o = o->next, want += KEEP_EVERY)
    CHECK(o->thread == thread && o->burst == burst && o->index == want,
          "thread %u burst %u: object %u reads thread %u burst %u index %u", thread, burst, want,
          o->thread, o->burst, o->index);
}

static void *sleeper(void *arg) {
  uint32_t id = (uint32_t)(uintptr_t)arg;
  struct obj **ring = GC_MALLOC(sizeof(struct obj *) * KEPT_BURSTS);
  CHECK(ring != NULL, "allocation");
  uint64_t rng = 0x9e3779b97f4a7c15ull * (id + 1);
  uint32_t b = 0;
  while (!stop) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    usleep(200 + (unsigned)(rng % 1800));
    uint32_t slot = b % KEPT_BURSTS;
    if (ring[slot]) check_burst(ring[slot], id, b - KEPT_BURSTS);
    struct obj *head = NULL, **tail = &head;
    for (uint32_t i = 0; i < BURST; i++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      uint32_t size = 24 + 8 * (uint32_t)(rng % 22); /* 24..192 */
      struct obj *o = GC_MALLOC(size);
      CHECK(o != NULL, "allocation of %u bytes", size);
      *o = (struct obj){NULL, id, b, i, size};
      if (i % KEEP_EVERY == 0) {
        *tail = o;
        tail = &o->next;
      }
    }
    ring[slot] = head;
    b++;
  }
  size_t kept = 0;
  for (uint32_t k = b > KEPT_BURSTS ? b - KEPT_BURSTS : 0; k < b; k++) {
    check_burst(ring[k % KEPT_BURSTS], id, k);
    for (const struct obj *o = ring[k % KEPT_BURSTS]; o; o = o->next) kept += o->size;
  }
  atomic_fetch_add(&kept_bytes, kept);
  return NULL;
}

int main(void) {
  t_test_name = "many_sleepers";
  GC_INIT();
  const char *e = getenv("SLEEPERS_THREADS");
  int threads = e ? atoi(e) : 1000;
  e = getenv("SLEEPERS_SECONDS");
  double seconds = e ? atof(e) : 1.5;
  pthread_t *tids = calloc((size_t)threads, sizeof *tids);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 << 10);
  for (int i = 0; i < threads; i++)
    CHECK(GC_pthread_create(&tids[i], &attr, sleeper, (void *)(uintptr_t)i) == 0, "thread %d", i);
  size_t peak = 0;
  for (int ms = 0; ms < seconds * 1000; ms += 5) {
    size_t h = GC_get_heap_size();
    if (h > peak) peak = h;
    usleep(5000);
  }
  stop = 1;
  for (int i = 0; i < threads; i++) GC_pthread_join(tids[i], NULL);
  /* What the threads keep at most: their last bursts' kept objects,
   * counted at the end, when every ring is full. */
  size_t kept = atomic_load(&kept_bytes);
  size_t bound = HEAP_PER_LIVE * kept + (16u << 20);
  t_note("%d threads: peak heap %zu KiB, kept %zu KiB, bound %zu KiB, %lu collections\n",
         threads, peak >> 10, kept >> 10, bound >> 10, (unsigned long)GC_get_gc_no());
  if (!getenv("SLEEPERS_NO_BOUND")) CHECK(peak <= bound, "heap %zu KiB for %zu KiB kept", peak >> 10, kept >> 10);
  free(tids);
  return 0;
}
