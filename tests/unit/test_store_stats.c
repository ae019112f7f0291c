/* SGC_get_page_store_stats reports u_i and max u_i per thread (issue 5):
 * two threads fill different numbers of pages and keep the objects; each
 * one's store must show at least those pages under its thread id, the
 * per-store counts must add up to SGC_get_stats's totals, and a short
 * output array must still get the full count.  Collections are disabled
 * so that no sweep moves pages between the readings. */
#include <pthread.h>
#include <unistd.h>

#include "common.h"
#include "sgc.h"
#include "unit.h"

enum { OBJECT_BYTES = 32, PER_PAGE = 4096 / OBJECT_BYTES, BIG_PAGES = 240, SMALL_PAGES = 60 };

struct filler {
  int pages;
  int tid;
  void **keep;
};

static void *fill(void *arg) {
  struct filler *f = arg;
  f->tid = gettid();
  size_t n = (size_t)f->pages * PER_PAGE;
  f->keep = GC_malloc_uncollectable(n * sizeof(void *));
  for (size_t i = 0; i < n; i++) f->keep[i] = GC_malloc(OBJECT_BYTES);
  return NULL;
}

static const SGC_page_store_stats_t *find(const SGC_page_store_stats_t *s, size_t n, int tid) {
  for (size_t i = 0; i < n; i++)
    if (s[i].thread_id == tid) return &s[i];
  return NULL;
}

int main(void) {
  GC_init();
  GC_disable();
  struct filler big = {BIG_PAGES, 0, NULL}, small = {SMALL_PAGES, 0, NULL};
  pthread_t a, b;
  pthread_create(&a, NULL, fill, &big);
  pthread_create(&b, NULL, fill, &small);
  pthread_join(a, NULL);
  pthread_join(b, NULL);

  enum { MAX = 64 };
  SGC_page_store_stats_t stores[MAX];
  size_t n = SGC_get_page_store_stats(stores, MAX);
  CHECK(n >= 2 && n <= MAX, "%zu stores", n);
  const SGC_page_store_stats_t *sa = find(stores, n, big.tid), *sb = find(stores, n, small.tid);
  CHECK(sa && sb, "a filling thread's store is missing (tids %d, %d)", big.tid, small.tid);
  if (sa && sb) {
    CHECK(sa->pages_used >= BIG_PAGES, "u_i %llu < %d", (unsigned long long)sa->pages_used,
          BIG_PAGES);
    CHECK(sb->pages_used >= SMALL_PAGES, "u_i %llu < %d", (unsigned long long)sb->pages_used,
          SMALL_PAGES);
    CHECK(sa->pages_used > sb->pages_used, "the thread that filled 4x the pages holds fewer");
    CHECK(sa->max_pages_used >= sa->pages_used && sb->max_pages_used >= sb->pages_used,
          "max u_i below u_i");
    CHECK(!sa->alive && !sb->alive, "an exited thread's store says it runs");
  }
  SGC_stats_t total;
  SGC_get_stats(&total);
  uint64_t used = 0, max_used = 0, taken = 0, remote = 0, stolen = 0;
  for (size_t i = 0; i < n; i++) {
    used += stores[i].pages_used;
    max_used += stores[i].max_pages_used;
    taken += stores[i].pages_taken;
    remote += stores[i].remote_pages;
    stolen += stores[i].stolen_pages;
  }
  CHECK(used == total.pages_used, "sum of u_i %llu, u %llu", (unsigned long long)used,
        (unsigned long long)total.pages_used);
  /* No store was reused (both threads held their pages), so no max u_i
   * restarted: the per-store maxima add up to the total. */
  CHECK(max_used == total.sum_max_used, "sum of max u_i %llu, total %llu",
        (unsigned long long)max_used, (unsigned long long)total.sum_max_used);
  CHECK(taken == total.pages_taken && remote == total.remote_pages &&
            stolen == total.stolen_pages,
        "per-store taken/remote/stolen do not add up to the totals");

  SGC_page_store_stats_t one;
  CHECK(SGC_get_page_store_stats(&one, 1) == n, "a short array changed the count");
  CHECK(one.thread_id == stores[0].thread_id, "the first store copied differs");
  CHECK(SGC_get_page_store_stats(NULL, 0) == n, "counting alone differs");
  GC_enable();
  return unit_finish();
}
