/* uncollectable_roots: uncollectable objects allocated and freed while
 * collections run keep what they point to.
 *
 * Worker threads churn small uncollectable holders, the way a C++ program
 * on libsgccpp churns `new` and `delete`: each holder is allocated, given
 * the only reference to a fresh collectable object, and later checked and
 * freed.  The workers keep their holders only as hidden pointers, so a
 * holder is found by no root but its own status as an uncollectable
 * object; the program's allocations and frees of holders go on during the
 * collections that the main thread runs in a loop, at the moment a
 * collector decides which uncollectable objects are roots.  A referent
 * the collector missed is reclaimed and reused for other workers' objects,
 * whose patterns then fail the check.  Every holder is zeroed when
 * allocated.
 *
 *   bb_uncollectable_roots [SECONDS]   (default 3; UNCOLL_ROOTS_SECONDS too)
 *
 * Passes on bdwgc too (tests/run-against-bdwgc.sh).
 */
#define GC_THREADS
#include <gc.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { WORKERS = 2, RING = 256, PAYLOAD_WORDS = 6 };

/* A holder: its referent, then words that must stay zero until the
 * holder is freed (sizes vary so holders fall in several classes). */
struct holder {
  uintptr_t *referent;
  uintptr_t words[];
};

static _Atomic int stop;
static _Atomic int failed;
static _Atomic unsigned long long checked_total;

static void fail(const char *what, unsigned long long a, unsigned long long b) {
  if (atomic_fetch_add(&failed, 1) < 10)
    fprintf(stderr, "FAIL uncollectable_roots: %s (%llx, %llx)\n", what, a, b);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t next_random(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* The referent's pattern: its serial number and the words derived from it. */
static void fill(uintptr_t *o, uintptr_t serial) {
  o[0] = serial;
  for (int i = 1; i < PAYLOAD_WORDS; i++) o[i] = serial * 0x9e3779b97f4a7c15u + (uintptr_t)i;
}

static void check_and_free(GC_word hidden, size_t extra_words) {
  struct holder *h = GC_REVEAL_POINTER(hidden);
  for (size_t i = 0; i < extra_words; i++)
    if (h->words[i] != 0) fail("a holder's word changed", i, h->words[i]);
  uintptr_t *o = h->referent;
  if (!o) {
    fail("a holder lost its referent", (uintptr_t)h, 0);
  } else {
    uintptr_t serial = o[0];
    for (int i = 1; i < PAYLOAD_WORDS; i++)
      if (o[i] != serial * 0x9e3779b97f4a7c15u + (uintptr_t)i) {
        fail("a referent was reclaimed while its holder lived", serial, o[i]);
        break;
      }
  }
  GC_FREE(h);
}

static void *worker(void *arg) {
  uint64_t rng = 0x5eedu + (uintptr_t)arg * 7919u;
  GC_word ring[RING];
  size_t extra[RING];
  memset(ring, 0, sizeof ring);
  uintptr_t serial = (uintptr_t)arg << 48;
  unsigned long long checked = 0;
  for (size_t i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i = (i + 1) % RING) {
    if (ring[i]) {
      check_and_free(ring[i], extra[i]);
      checked++;
    }
    size_t words = next_random(&rng) % 6; /* holders of 16 to 56 bytes */
    struct holder *h = GC_MALLOC_UNCOLLECTABLE(sizeof(struct holder) + words * sizeof(uintptr_t));
    if (!h) {
      fail("GC_MALLOC_UNCOLLECTABLE returned NULL", words, 0);
      break;
    }
    for (size_t w = 0; w < words; w++)
      if (h->words[w] != 0) fail("a fresh holder was not zeroed", w, h->words[w]);
    if (h->referent) fail("a fresh holder was not zeroed", 0, (uintptr_t)h->referent);
    uintptr_t *o = GC_MALLOC(PAYLOAD_WORDS * sizeof(uintptr_t));
    if (!o) {
      fail("GC_MALLOC returned NULL", 0, 0);
      break;
    }
    fill(o, ++serial);
    h->referent = o;
    ring[i] = GC_HIDE_POINTER(h);
    extra[i] = words;
  }
  for (size_t i = 0; i < RING; i++)
    if (ring[i]) check_and_free(ring[i], extra[i]);
  atomic_fetch_add(&checked_total, checked);
  return NULL;
}

int main(int argc, char **argv) {
  double seconds = 3;
  const char *env = getenv("UNCOLL_ROOTS_SECONDS");
  if (argc > 1) seconds = atof(argv[1]);
  else if (env) seconds = atof(env);
  GC_INIT();
  pthread_t t[WORKERS];
  for (intptr_t i = 0; i < WORKERS; i++)
    if (GC_pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0) {
      fprintf(stderr, "FAIL uncollectable_roots: GC_pthread_create\n");
      return 1;
    }
  unsigned long collections = 0;
  for (double end = now_s() + seconds; now_s() < end; collections++) GC_gcollect();
  atomic_store(&stop, 1);
  for (int i = 0; i < WORKERS; i++) GC_pthread_join(t[i], NULL);
  unsigned long long checked = atomic_load(&checked_total);
  printf("%lu collections, %llu holders checked and freed\n", collections, checked);
  if (collections < 10 || checked < 10000) {
    fprintf(stderr, "FAIL uncollectable_roots: too little ran (%lu collections, %llu holders)\n",
            collections, checked);
    return 1;
  }
  if (atomic_load(&failed)) return 1;
  printf("PASS uncollectable_roots\n");
  return 0;
}
