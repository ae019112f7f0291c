/* A sleeping thread's pages serve the others (issue 53;
 * alloc/page_store.h, page_store_idle).  A worker fills PAGES pages of
 * 32-byte objects keeping one in eight, empties GARBAGE pages more, and
 * sleeps.  Two collections later (the worker refilled nothing in the
 * interval before the second), its partly used pages are on the shared
 * lists to sweep and its free pages in the pool: the main thread's next
 * objects of the class come from the worker's partly used pages, and the
 * worker's store keeps no free page.  Before, under LPS and AL, the
 * free pages stayed with the worker, asleep (64 of 64 here). */
#include "alloc/page_store.h"
#include "collect/collect.h"
#include "common.h"
#include "unit.h"

enum { PAGES = 64, GARBAGE = 64, OBJECT_BYTES = 32, PER_PAGE = PAGE_BYTES / OBJECT_BYTES };

static void *kept[PAGES * PER_PAGE / 8 + 1];
/* One object of the worker's last garbage page, held until after the
 * first collection: its page empties at the second, in GC_gcollect's
 * sweep after the idle stores were drained. */
static void *volatile held;
static struct page_header *worker_pages[PAGES + 8];
static int worker_page_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int phase;
static int worker_tid;

static void note_page(struct page_header *p) {
  for (int i = 0; i < worker_page_count; i++)
    if (worker_pages[i] == p) return;
  if (worker_page_count < PAGES + 8) worker_pages[worker_page_count++] = p;
}

static bool on_worker_page(void *obj) {
  struct page_header *p = page_of_address((uintptr_t)obj);
  for (int i = 0; i < worker_page_count; i++)
    if (worker_pages[i] == p) return true;
  return false;
}

static void wait_phase(int want) {
  pthread_mutex_lock(&lock);
  while (phase < want) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
}

static void set_phase(int to) {
  pthread_mutex_lock(&lock);
  phase = to;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}

static void *worker(void *arg) {
  (void)arg;
  worker_tid = thread_alloc_tid(alloc_self());
  for (long i = 0; i < (long)PAGES * PER_PAGE; i++) {
    void *p = GC_malloc(OBJECT_BYTES);
    CHECK(p != NULL, "allocation");
    if (i % 8 == 0) {
      kept[i / 8] = p;
      note_page(page_of_address((uintptr_t)p));
    }
  }
  for (long i = 0; i < (long)GARBAGE * PER_PAGE; i++) {
    void *p = GC_malloc(OBJECT_BYTES);
    CHECK(p != NULL, "allocation");
    if (i == (long)GARBAGE * PER_PAGE - PER_PAGE / 2) held = p;
  }
  set_phase(1);
  wait_phase(2); /* asleep while the main thread collects and allocates */
  return NULL;
}

static void store_free(const struct page_store_counters *c, void *arg) {
  if (c->tid == worker_tid && c->alive) *(long *)arg += c->free;
}

int main(void) {
  GC_INIT();
  pthread_t th;
  CHECK(GC_pthread_create(&th, NULL, worker, NULL) == 0, "thread");
  wait_phase(1);
  GC_gcollect(); /* the worker refilled in the interval before this one */
  held = NULL;
  GC_gcollect(); /* ... and nothing before this one: its store is idle */
  long worker_free = 0;
  pthread_mutex_lock(&heap_lock);
  page_stores_visit(store_free, &worker_free);
  pthread_mutex_unlock(&heap_lock);
  long reused = 0, n = PAGES * PER_PAGE / 2;
  for (long i = 0; i < n; i++) {
    void *p = GC_malloc(OBJECT_BYTES);
    CHECK(p != NULL, "allocation");
    reused += on_worker_page(p);
  }
  printf("worker pages %d; main's %ld new objects on them: %ld; worker store free pages %ld\n",
         worker_page_count, n, reused, worker_free);
  if (page_policy != PAGE_POLICY_PS) CHECK(worker_free == 0, "the idle worker kept %ld free pages", worker_free);
  /* The worker's pages have 7 free slots in 8: the main thread's objects
   * fill them before any fresh page. */
  CHECK(reused >= n / 2, "only %ld of %ld new objects on the idle worker's pages", reused, n);
  for (long i = 0; i < (long)(sizeof kept / sizeof *kept); i++)
    if (kept[i]) CHECK(on_worker_page(kept[i]), "kept object moved");
  set_phase(2);
  CHECK(GC_pthread_join(th, NULL) == 0, "join");
  return unit_finish();
}
