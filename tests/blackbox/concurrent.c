/* concurrent: what a concurrent cycle (SGC_MODE=concurrent) must survive
 * while the program runs beside its marking.  One case per run:
 *
 *   hazard    the incremental-update hazard on purpose: objects allocated
 *             during the cycle (white) have their only reference moved
 *             into objects the cycle has already scanned (black) and
 *             removed from where it was; they must survive the cycle
 *   read      read(2) writes into a GC_malloc_atomic buffer and writes the
 *             only pointer to a white object into a black GC_malloc buffer
 *   fork      fork() while a cycle runs: the child collects and runs
 *             cycles of its own, the parent finishes its cycle
 *   threads   threads created, allocating and exiting while cycles run
 *   finalize  finalizers and disappearing links across cycles
 *   setmark   GC_set_mark_bit on a white object during the cycle (a weak
 *             map resurrecting an entry, bdwgc's disclaim_weakmap_test):
 *             its children, written before the cycle, must survive
 *   suspend   GC_suspend_thread of a thread that allocates, so marks for
 *             the cycle at its slow paths, then a collection that finishes
 *             the cycle while the thread is suspended: the finish waits
 *             for threads marking, and must not wait for this one
 *   restart   threads allocating while cycles converge: no cycle starts
 *             with next to nothing allocated since the last one finished
 *             (a second thread that came for a converged cycle another
 *             had just finished started the next at once)
 *   finalizer_gc  finalizers that run a cycle: cycles finished at
 *             allocation slow paths (many by the poll in the small-object
 *             path) run finalizers that build a list held only in their
 *             own frames, start and finish a cycle, and check the list;
 *             one run under that path's stack cut lost it
 *   prompt    a converged cycle is finished by the next allocation slow
 *             path: a thread refilling slowly from its own free pages
 *             (the garbage of before the cycle, no heap_lock) finishes
 *             each of 5 cycles within 10 s and without a fallback (about
 *             25 ms and 8 KiB; with neither the refill's check nor its
 *             poll, the first ran on past 3 s and 1.2 MiB)
 *   oom_finish  a large allocation past the heap limit, the first slow
 *             path after a cycle converged: the cycle is finished (by
 *             the poll, or by the collection at the limit if it had not
 *             converged), the allocation fails, and the finalizer of an
 *             object the cycle found dead has run by the time the
 *             out-of-memory function is called
 *   uncollectable  uncollectable objects allocated during the cycle (from
 *             thread caches, shared lists, fresh pages, large; some moved
 *             by GC_realloc) hold the only pointer to white objects; the
 *             finish scans no uncollectable object again, so the barrier
 *             must have seen the stores, and the white objects survive
 *   huge      pointers stored during the cycle past the first 4 MiB of a
 *             16 MiB object (whose later pages' headers read as free)
 *             to white objects: they survive
 *   finish_rescan  after the cycle converged, with nothing allocated until
 *             its finish, the only pointers to white objects are stored
 *             into black objects each on a page of its own, spread over
 *             32 MiB of heap: only the finish's rescan of written pages
 *             sees them (run with SGC_MARKERS=4: under uffd, in parts
 *             that several GC threads take); they survive
 *   finish_rescan_atomic  finish_rescan beside 48 MiB of live
 *             pointer-free data: under uffd the finish reads only the
 *             runs of pages that may hold pointers
 *   finish_refused  finish_rescan, with every PAGEMAP_SCAN refused from
 *             the first cycle's stores on (a seccomp filter, as a
 *             sandbox installed after start-up): the finish's parts and
 *             the later arms fail, the cycles report every page in use
 *             (uffd only; a warning says so) and nothing is lost
 *   mark_proc  a custom kind's mark procedure marks what an array outside
 *             the heap holds (a runtime's VM stack); objects stored only
 *             there after the cycle's drain survive, and the procedure
 *             never runs while a program thread runs (it waits for the
 *             finish's stop); a fork while it waits leaves the child's
 *             own collections running it
 *
 * The test runs with SGC_CONCURRENT_HOLD_MS set: after its first drain a
 * cycle's marking waits that long, so everything reachable at the start
 * is black while the case acts.  A cycle is started with
 * GC_start_incremental_collection and finished by allocating (the next
 * slow path after the marking converged), never by GC_gcollect, whose
 * stop-the-world collection after the finish would hide a lost object.
 * Heap stores go through GC_ptr_store_and_dirty, so that the manual
 * barrier (SGC_BARRIER=manual) sees them too; for the others it is a
 * plain store the barrier must catch by itself. */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"
#include "gc/gc_mark.h"
#include "gc/javaxfc.h"
#include "sgc.h"

#include <pthread.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "uffd_offered.h"

enum { WHITE_BYTES = 64, MAGIC = 0x5eed };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

/* Starts a cycle and waits for its first drain (the heaps here are a
 * few MB: marked in milliseconds, the hold then keeps the cycle open). */
static GC_word start_cycle(void) {
  GC_word before = GC_get_gc_no();
  GC_start_incremental_collection();
  sleep_ms(150);
  return before;
}

/* Allocates until the cycle started after collection BEFORE finished. */
static void *sink;
T_NOINLINE static void finish_by_allocating(GC_word before) {
  double deadline = now_s() + 60;
  /* Slowly: allocating past what a cycle may take would finish it
   * stopped (a fallback), not after its rounds. */
  while (GC_get_gc_no() == before) {
    for (int i = 0; i < 16; i++) sink = GC_malloc(32);
    sleep_ms(1);
    CHECK(now_s() < deadline, "the cycle did not finish within 60 s");
  }
  sink = NULL;
}

/* A white object: its index and the cycle in its words. */
static void *new_white(int i, int cycle) {
  unsigned *w = GC_malloc(WHITE_BYTES);
  CHECK(w != NULL);
  w[0] = MAGIC;
  w[1] = (unsigned)i;
  w[2] = (unsigned)cycle;
  return w;
}

static void check_white(const unsigned *w, int i, int cycle) {
  CHECK(w[0] == MAGIC && w[1] == (unsigned)i && w[2] == (unsigned)cycle,
        "object %d of cycle %d was reclaimed (words %x %x %x)", i, cycle, w[0], w[1], w[2]);
}

static GC_hidden_pointer *links; /* malloc'd: not a root */

/* A white object whose disappearing link links[I] says whether it lives. */
static void *new_linked_white(int i, int cycle) {
  void *w = new_white(i, cycle);
  links[i] = GC_HIDE_POINTER(w);
  CHECK(GC_general_register_disappearing_link((void **)&links[i], w) == GC_SUCCESS);
  return w;
}

/* Three cycles, each started and held, STORE(cycle) making N linked
 * white objects reachable only the case's way, then finished by
 * allocating: none may be reclaimed, and HELD(i) must still be object I
 * of that cycle.  DONE(i), if given, then lets holder I go. */
static void three_cycles(int n, const char *how, void (*store)(int cycle), void *(*held)(int i),
                         void (*done)(int i)) {
  for (int cycle = 0; cycle < 3; cycle++) {
    GC_gcollect();
    GC_word before = start_cycle();
    store(cycle);
    t_clear_stack();
    finish_by_allocating(before);
    int lost = 0;
    for (int i = 0; i < n; i++) lost += links[i] == 0;
    CHECK(lost == 0, "cycle %d: %d of %d objects %s were reclaimed", cycle, lost, n, how);
    for (int i = 0; i < n; i++) {
      CHECK(held(i) == GC_REVEAL_POINTER(links[i]));
      check_white(held(i), i, cycle);
      GC_unregister_disappearing_link((void **)&links[i]);
      if (done) done(i);
    }
  }
  t_note("%d objects %s survived 3 cycles", n, how);
}

/* ---- hazard ---- */
enum { PAIRS = 4000 };
static void **black[PAIRS]; /* .bss roots: black once the cycle drained */

T_NOINLINE static void move_into_black(int cycle) {
  void **gray[PAIRS / 8];
  for (int i = 0; i < PAIRS; i++) {
    /* C: white, reachable from this frame; W: white, only in C. */
    void **c = GC_malloc(2 * sizeof(void *));
    GC_ptr_store_and_dirty(&c[0], new_linked_white(i, cycle));
    /* The move: into an object already scanned, then out of C. */
    GC_ptr_store_and_dirty(&black[i][0], c[0]);
    GC_ptr_store_and_dirty(&c[0], NULL);
    gray[i % (PAIRS / 8)] = c;
  }
  __asm__ volatile("" : : "r"(gray) : "memory");
}

static void *black_child(int i) { return black[i][0]; }

static void case_hazard(void) {
  links = calloc(PAIRS, sizeof *links);
  CHECK(links != NULL);
  for (int i = 0; i < PAIRS; i++) black[i] = GC_malloc(2 * sizeof(void *));
  three_cycles(PAIRS, "moved into black ones", move_into_black, black_child, NULL);
}

/* ---- setmark ---- */
static GC_hidden_pointer *parents; /* malloc'd: not a root */

/* P holds W; both reachable only through hidden pointers: white. */
T_NOINLINE static void make_hidden_pairs(int cycle) {
  for (int i = 0; i < PAIRS; i++) {
    void **p = GC_malloc(2 * sizeof(void *));
    CHECK(p != NULL);
    p[0] = new_linked_white(i, cycle);
    parents[i] = GC_HIDE_POINTER(p);
  }
}

static void case_setmark(void) {
  links = calloc(PAIRS, sizeof *links);
  parents = calloc(PAIRS, sizeof *parents);
  CHECK(links != NULL && parents != NULL);
  for (int cycle = 0; cycle < 3; cycle++) {
    GC_gcollect();
    make_hidden_pairs(cycle);
    t_clear_stack();
    GC_word before = start_cycle();
    /* Resurrected: marked, but no pointer to P was ever stored. */
    for (int i = 0; i < PAIRS; i++) GC_set_mark_bit(GC_REVEAL_POINTER(parents[i]));
    finish_by_allocating(before);
    int lost = 0;
    for (int i = 0; i < PAIRS; i++) lost += links[i] == 0;
    CHECK(lost == 0, "cycle %d: %d of %d children of objects GC_set_mark_bit kept were reclaimed",
          cycle, lost, PAIRS);
    for (int i = 0; i < PAIRS; i++) {
      void **p = GC_REVEAL_POINTER(parents[i]);
      if (links[i]) check_white(p[0], i, cycle);
      GC_unregister_disappearing_link((void **)&links[i]);
    }
  }
  t_note("%d children of objects marked by GC_set_mark_bit survived 3 cycles", PAIRS);
}

/* ---- uncollectable ---- */
enum { UNCOLLECTABLES = 2000 };
static void ***holders; /* malloc'd: not a root (its objects are roots) */

/* Sizes over several classes, one in 400 large; one in four moved by
 * GC_realloc after the store (its copy is the only one left). */
T_NOINLINE static void fill_uncollectables(int cycle) {
  for (int i = 0; i < UNCOLLECTABLES; i++) {
    size_t bytes = i % 400 == 0 ? 3 * 4096 : (size_t)(16 + (i % 8) * 16);
    void **u = GC_malloc_uncollectable(bytes);
    CHECK(u != NULL);
    GC_ptr_store_and_dirty(&u[0], new_linked_white(i, cycle));
    if (i % 4 == 1) u = GC_realloc(u, 2 * bytes + 64);
    holders[i] = u;
  }
}

static void *holder_child(int i) { return holders[i][0]; }
static void free_holder(int i) { GC_free(holders[i]); }

static void case_uncollectable(void) {
  links = calloc(UNCOLLECTABLES, sizeof *links);
  holders = calloc(UNCOLLECTABLES, sizeof *holders);
  CHECK(links != NULL && holders != NULL);
  /* Free ones waiting in this thread's caches and on the shared lists. */
  for (int i = 0; i < UNCOLLECTABLES; i++) holders[i] = GC_malloc_uncollectable(16 + (i % 8) * 16);
  for (int i = 0; i < UNCOLLECTABLES; i++) GC_free(holders[i]);
  three_cycles(UNCOLLECTABLES, "held only by uncollectable ones allocated during the cycle",
               fill_uncollectables, holder_child, free_holder);
}

/* ---- read ---- */
enum { READS = 256 };
static char *atomic_buffer;   /* .bss root: pointer-free */
static void **scanned_buffer; /* .bss root: black once the cycle drained */

T_NOINLINE static void read_into_heap(int fds[2], int cycle) {
  void **holders[READS];
  for (int i = 0; i < READS; i++) {
    void *w = new_linked_white(i, cycle);
    holders[i] = GC_malloc(sizeof(void *));
    GC_ptr_store_and_dirty(&holders[i][0], w);
    CHECK(write(fds[1], &w, sizeof w) == (ssize_t)sizeof w);
    w = NULL;
    /* The kernel writes the pointer into the black buffer. */
    ssize_t got = read(fds[0], &scanned_buffer[i], sizeof(void *));
    CHECK(got == (ssize_t)sizeof(void *), "read into a GC_malloc buffer: %zd (%s)", got,
          got < 0 ? strerror(errno) : "short");
    GC_end_stubborn_change(&scanned_buffer[i]);
    GC_ptr_store_and_dirty(&holders[i][0], NULL);
  }
  __asm__ volatile("" : : "r"(holders) : "memory");
  /* Pointer-free: bytes only, written by the kernel in one call. */
  char pattern[8192];
  for (size_t k = 0; k < sizeof pattern; k++) pattern[k] = (char)(k * 7 + cycle);
  CHECK(write(fds[1], pattern, sizeof pattern) == (ssize_t)sizeof pattern);
  size_t have = 0;
  while (have < sizeof pattern) {
    ssize_t got = read(fds[0], atomic_buffer + have, sizeof pattern - have);
    CHECK(got > 0, "read into a GC_malloc_atomic buffer: %zd (%s)", got,
          got < 0 ? strerror(errno) : "end of file");
    have += (size_t)got;
  }
  CHECK(memcmp(atomic_buffer, pattern, sizeof pattern) == 0);
}

static void case_read(void) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  links = calloc(READS, sizeof *links);
  atomic_buffer = GC_malloc_atomic(8192);
  scanned_buffer = GC_malloc(READS * sizeof(void *));
  CHECK(links && atomic_buffer && scanned_buffer);
  for (int cycle = 0; cycle < 3; cycle++) {
    GC_gcollect();
    GC_word before = start_cycle();
    read_into_heap(fds, cycle);
    t_clear_stack();
    finish_by_allocating(before);
    for (int i = 0; i < READS; i++) {
      CHECK(links[i] != 0, "cycle %d: object %d, pointed to only by bytes read(2) wrote, "
            "was reclaimed", cycle, i);
      check_white(scanned_buffer[i], i, cycle);
      GC_unregister_disappearing_link((void **)&links[i]);
    }
  }
  t_note("read(2) into the heap during 3 cycles: %d pointers kept their objects", READS);
}

/* ---- lists, for fork and threads ---- */
typedef struct cell {
  struct cell *next;
  uint64_t v;
} cell;

static cell *build(int n, uint64_t seed) {
  cell *h = NULL;
  for (int i = 0; i < n; i++) {
    cell *c = GC_malloc(sizeof *c);
    CHECK(c != NULL);
    c->v = t_mix64(seed + (uint64_t)i);
    GC_ptr_store_and_dirty(&c->next, h);
    h = c;
  }
  return h;
}

static void verify(const cell *h, int n, uint64_t seed) {
  for (int i = n - 1; i >= 0; i--, h = h->next) {
    CHECK(h != NULL, "list of seed %llu ends early at %d", (unsigned long long)seed, i);
    CHECK(h->v == t_mix64(seed + (uint64_t)i), "list of seed %llu: cell %d overwritten",
          (unsigned long long)seed, i);
  }
  CHECK(h == NULL);
}

/* ---- fork ---- */
static cell *kept; /* .bss root */
static cell *big;  /* .bss root: a list long enough to fork mid-drain */

static void child_runs(void) {
  alarm(60);
  verify(kept, 20000, 1);
  verify(big, 400000, 7);
  /* The child has neither the parent's GC threads nor its cycle: it
   * collects, and runs a cycle of its own. */
  cell *mine = build(20000, 2);
  GC_gcollect();
  GC_word before = GC_get_gc_no();
  GC_start_incremental_collection();
  finish_by_allocating(before);
  verify(kept, 20000, 1);
  verify(mine, 20000, 2);
  _exit(0);
}

static void case_fork(void) {
  kept = build(20000, 1);
  big = build(400000, 7);
  for (int cycle = 0; cycle < 4; cycle++) {
    /* The last fork comes while the GC threads are still marking (the
     * child finds their work on the stacks, of a cycle it abandons). */
    GC_word before = cycle < 3 ? start_cycle() : GC_get_gc_no();
    if (cycle == 3) GC_start_incremental_collection();
    cell *during = build(5000, 100 + (uint64_t)cycle);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) child_runs();
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child of cycle %d: status %#x", cycle,
          status);
    finish_by_allocating(before);
    verify(kept, 20000, 1);
    verify(big, 400000, 7);
    verify(during, 5000, 100 + (uint64_t)cycle);
  }
  t_note("4 forks during cycles: children and parent sane");
}

/* ---- threads ---- */
enum { THREADS = 6, CELLS = 20000 };

static void *worker(void *arg) {
  uint64_t seed = (uint64_t)(uintptr_t)arg;
  cell *h = build(CELLS, seed);
  for (int i = 0; i < 50; i++) sink = GC_malloc(1000); /* garbage, slow paths */
  verify(h, CELLS, seed);
  return h;
}

static void case_threads(void) {
  for (int cycle = 0; cycle < 3; cycle++) {
    /* Started before the cycle, exiting during it. */
    pthread_t early[THREADS], late[THREADS];
    for (int t = 0; t < THREADS; t++)
      CHECK(pthread_create(&early[t], NULL, worker, (void *)(uintptr_t)(1000 * cycle + t)) == 0);
    GC_word before = start_cycle();
    /* Created during the cycle, exiting during it. */
    for (int t = 0; t < THREADS; t++)
      CHECK(pthread_create(&late[t], NULL, worker,
                           (void *)(uintptr_t)(1000 * cycle + 100 + t)) == 0);
    cell *lists[2 * THREADS];
    for (int t = 0; t < THREADS; t++) {
      CHECK(pthread_join(early[t], (void **)&lists[t]) == 0);
      CHECK(pthread_join(late[t], (void **)&lists[THREADS + t]) == 0);
    }
    if (GC_get_gc_no() == before) finish_by_allocating(before);
    for (int cycles = 0; cycles < 2; cycles++) {
      GC_word b = GC_get_gc_no();
      GC_start_incremental_collection();
      finish_by_allocating(b);
    }
    for (int t = 0; t < THREADS; t++) {
      verify(lists[t], CELLS, 1000 * (uint64_t)cycle + (uint64_t)t);
      verify(lists[THREADS + t], CELLS, 1000 * (uint64_t)cycle + 100 + (uint64_t)t);
    }
  }
  t_note("%d threads a cycle created and exiting around 9 cycles; their lists intact",
         2 * THREADS);
}

/* ---- finalize ---- */
enum { FINALIZABLE = 2000 };
static int finalized_dropped, finalized_kept;
static void **kept_objects; /* uncollectable table of the kept ones */

static void on_finalize(void *obj, void *data) {
  (void)obj;
  if (data) finalized_kept++;
  else finalized_dropped++;
}

T_NOINLINE static void make_finalizable(GC_hidden_pointer *dropped_links) {
  for (int i = 0; i < FINALIZABLE; i++) {
    void *keep = GC_malloc(48), *drop = GC_malloc(48);
    GC_register_finalizer(keep, on_finalize, (void *)1, NULL, NULL);
    GC_register_finalizer(drop, on_finalize, NULL, NULL, NULL);
    GC_ptr_store_and_dirty(&kept_objects[i], keep);
    dropped_links[i] = GC_HIDE_POINTER(drop);
    CHECK(GC_general_register_disappearing_link((void **)&dropped_links[i], drop) == GC_SUCCESS);
  }
}

static void case_finalize(void) {
  kept_objects = GC_malloc_uncollectable(FINALIZABLE * sizeof(void *));
  GC_hidden_pointer *dropped_links = calloc(FINALIZABLE, sizeof *dropped_links);
  CHECK(kept_objects && dropped_links);
  /* Registered during a cycle: its finish sees them. */
  GC_word before = start_cycle();
  make_finalizable(dropped_links);
  t_clear_stack();
  finish_by_allocating(before);
  for (int cycle = 0; cycle < 6; cycle++) {
    before = GC_get_gc_no();
    GC_start_incremental_collection();
    finish_by_allocating(before);
    GC_invoke_finalizers();
  }
  int cleared = 0;
  for (int i = 0; i < FINALIZABLE; i++) cleared += dropped_links[i] == 0;
  CHECK(finalized_kept == 0, "%d reachable objects were finalized", finalized_kept);
  /* Conservative: a few may stay reachable from stale words. */
  CHECK(finalized_dropped >= FINALIZABLE / 2, "only %d of %d dropped objects finalized",
        finalized_dropped, FINALIZABLE);
  CHECK(cleared >= FINALIZABLE / 2, "only %d of %d links to dropped objects cleared", cleared,
        FINALIZABLE);
  t_note("finalized %d of %d dropped, 0 of %d kept; %d links cleared", finalized_dropped,
         FINALIZABLE, FINALIZABLE, cleared);
}

/* ---- suspend ---- */
enum { SUSPENDS = 200 };
static _Atomic int allocator_stop;
static void *volatile allocator_sink;

static void *allocate_garbage(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&allocator_stop, memory_order_relaxed))
    for (int i = 0; i < 64; i++) allocator_sink = GC_malloc(48);
  return NULL;
}

/* A hang is the failure: the watchdog says so. */
static void *watchdog(void *arg) {
  (void)arg;
  double deadline = now_s() + 60; /* stops interrupt a sleep: the clock decides */
  while (now_s() < deadline) sleep_ms(100);
  fprintf(stderr, "FAIL [concurrent] suspend: a collection waited 60 s for a suspended thread\n");
  _exit(1);
}

static void case_suspend(void) {
  pthread_t dog, allocator;
  CHECK(pthread_create(&dog, NULL, watchdog, NULL) == 0);
  kept = build(200000, 3); /* a live list the cycles take a while to mark */
  CHECK(pthread_create(&allocator, NULL, allocate_garbage, NULL) == 0);
  for (int i = 0; i < SUSPENDS; i++) {
    sleep_ms(1 + i % 3);
    GC_suspend_thread((GC_SUSPEND_THREAD_ID)allocator);
    GC_gcollect(); /* finishes the running cycle, if any */
    GC_resume_thread((GC_SUSPEND_THREAD_ID)allocator);
  }
  atomic_store(&allocator_stop, 1);
  CHECK(pthread_join(allocator, NULL) == 0);
  verify(kept, 200000, 3);
  t_note("%d suspensions of an allocating thread during cycles, each followed by a collection",
         SUSPENDS);
}

/* ---- restart ---- */
enum { CHURNERS = 3, EARLY_BYTES = 256 << 10 };
static _Atomic int cycle_starts, early_starts;
static _Atomic int churn_stop;

static void on_cycle_start(void) {
  atomic_fetch_add(&cycle_starts, 1);
  if (GC_get_bytes_since_gc() < EARLY_BYTES) atomic_fetch_add(&early_starts, 1);
}

static void *churn(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&churn_stop, memory_order_relaxed)) {
    cell *garbage = build(100, 9);
    verify(garbage, 100, 9);
  }
  return NULL;
}

static void case_restart(void) {
  kept = build(100000, 5); /* live data the cycles mark */
  GC_set_start_callback(on_cycle_start);
  pthread_t threads[CHURNERS];
  for (int t = 0; t < CHURNERS; t++) CHECK(pthread_create(&threads[t], NULL, churn, NULL) == 0);
  double until = now_s() + 1.5; /* a stop interrupts a sleep */
  while (now_s() < until) sleep_ms(50);
  atomic_store(&churn_stop, 1);
  for (int t = 0; t < CHURNERS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
  GC_set_start_callback(0);
  int starts = atomic_load(&cycle_starts), early = atomic_load(&early_starts);
  CHECK(starts >= 3, "only %d cycles in 1.5 s", starts);
  CHECK(early == 0, "%d of %d cycles started with under %d KiB allocated since the last", early,
        starts, EARLY_BYTES >> 10);
  verify(kept, 100000, 5);
  t_note("%d cycles, none started right after the last finished", starts);
}

/* ---- finalizer_gc ---- */
enum { FIN_CYCLES = 10, FIN_LIST = 3000, FIN_LIVE = 100000 };
static int fin_busy, fin_runs;

/* The list lives only in this frame and the registers.  The cycle
 * started and finished here (GC_collect_a_little sets no stack cut of
 * its own) scans this thread from the innermost cut up: had the
 * finalizer run under an allocation path's cut, its frames would be
 * skipped, the list reclaimed and its cells taken by the garbage built
 * next. */
T_NOINLINE static void collect_in_finalizer(void *obj, void *data) {
  (void)obj;
  (void)data;
  if (fin_busy) return; /* the collection below may run finalizers too */
  fin_busy = 1;
  uint64_t seed = 1000 + (uint64_t)fin_runs;
  cell *mine = build(FIN_LIST, seed);
  GC_start_incremental_collection();
  double deadline = now_s() + 30;
  while (GC_collect_a_little()) {
    sleep_ms(1);
    CHECK(now_s() < deadline, "a cycle started in a finalizer did not finish in 30 s");
  }
  for (int i = 0; i < 4; i++) sink = build(FIN_LIST, 99);
  sink = NULL;
  verify(mine, FIN_LIST, seed);
  fin_runs++;
  fin_busy = 0;
}

static void case_finalizer_gc(void) {
  kept = build(FIN_LIVE, 11); /* live data, so cycles take a while to mark */
  for (int cycle = 0; cycle < FIN_CYCLES; cycle++) {
    GC_register_finalizer(GC_malloc(48), collect_in_finalizer, NULL, NULL, NULL);
    t_clear_stack();
    /* Finished by the poll at a refill once the marking converged; its
     * finalizer runs at the refill after that, or at this one. */
    finish_by_allocating(start_cycle());
    finish_by_allocating(start_cycle());
  }
  verify(kept, FIN_LIVE, 11);
  CHECK(fin_runs >= FIN_CYCLES / 2, "finalizers ran %d times in %d cycles", fin_runs, FIN_CYCLES);
  t_note("%d finalizers built a list, ran a cycle and found the list whole", fin_runs);
}

/* ---- prompt ---- */
enum { PROMPT_CYCLES = 5, PROMPT_GARBAGE = 8 << 20, PROMPT_STEP = 4096 };

static void case_prompt(void) {
  for (int cycle = 0; cycle < PROMPT_CYCLES; cycle++) {
    /* Dead before the cycle: its start sweeps them, and the pages go to
     * this thread's store, from which refills take them without
     * heap_lock (alloc/refill.c, refill_unlocked). */
    for (int i = 0; i < PROMPT_GARBAGE / 32; i++) sink = GC_malloc(32);
    sink = NULL;
    GC_gcollect();
    GC_word before = GC_get_gc_no();
    GC_start_incremental_collection();
    CHECK(GC_get_gc_no() == before, "GC_start_incremental_collection finished a cycle at once");
    /* A page's worth every 10 ms: a refill each time, a few MiB in all. */
    double start = now_s(), deadline = start + 10;
    size_t allocated = 0;
    while (GC_get_gc_no() == before) {
      CHECK(now_s() < deadline, "cycle %d: not finished %.1f s after its start (%zu KiB "
            "allocated meanwhile)", cycle, now_s() - start, allocated >> 10);
      for (size_t b = 0; b < PROMPT_STEP; b += 32) sink = GC_malloc(32);
      allocated += PROMPT_STEP;
      sleep_ms(10);
    }
    sink = NULL;
    SGC_gc_record_t rec;
    CHECK(SGC_get_gc_records(&rec, 1) == 1);
    CHECK(rec.concurrent && !rec.fallback, "cycle %d: finished %s", cycle,
          rec.concurrent ? "by a fallback" : "stopped, not as a cycle");
    t_note("cycle %d finished %.0f ms after its start, %zu KiB allocated", cycle,
           (now_s() - start) * 1e3, allocated >> 10);
  }
}

/* ---- oom_finish ---- */
static int oom_fin_runs, oom_fin_runs_at_oom = -1, oom_calls;

static void count_oom_finalizer(void *obj, void *data) {
  (void)obj;
  (void)data;
  oom_fin_runs++;
}

static void *record_oom(size_t bytes) {
  (void)bytes;
  oom_calls++;
  oom_fin_runs_at_oom = oom_fin_runs;
  return NULL;
}

T_NOINLINE static void drop_finalizable(void) {
  void *obj = GC_malloc(64);
  CHECK(obj != NULL);
  GC_register_finalizer(obj, count_oom_finalizer, NULL, NULL, NULL);
}

static void *oom_kept;

static void case_oom_finish(void) {
  enum { MIB = 1 << 20 };
  /* 8 MiB live: a request 2 MiB under the limit fits under it alone,
   * but not beside what the heap holds. */
  CHECK((oom_kept = GC_malloc_atomic(8 * MIB)) != NULL);
  GC_gcollect();
  drop_finalizable();
  t_clear_stack();
  size_t limit = GC_get_heap_size() + 4 * MIB, request = limit - 2 * MIB;
  GC_set_max_heap_size(limit);
  GC_set_oom_fn(record_oom);
  GC_word before = GC_get_gc_no();
  GC_start_incremental_collection();
  sleep_ms(300); /* a tiny heap: converged long before, unless the machine is busy */
  CHECK(GC_get_gc_no() == before, "the cycle finished before any allocation");
  CHECK(oom_fin_runs == 0);
  void *big = GC_malloc(request);
  CHECK(big == NULL, "%zu bytes under a limit of %zu beside 8 MiB live", request, limit);
  CHECK(GC_get_gc_no() != before, "the failing allocation did not finish the cycle");
  CHECK(oom_calls == 1, "the out-of-memory function ran %d times", oom_calls);
  CHECK(oom_fin_runs_at_oom == 1, "the finalizer had run %d times when the allocation failed",
        oom_fin_runs_at_oom);
  GC_set_oom_fn(NULL);
  GC_set_max_heap_size(0);
  CHECK(GC_malloc(64) != NULL);
  t_note("a failing large allocation finished the cycle and ran its finalizer first");
}

/* ---- huge ---- */
/* An object of 16 MiB: its pages past the first 4 MiB slot keep headers
 * that read as free (sgc's huge objects), and stores there must reach
 * the barrier's report like any other. */
enum { HUGE_BYTES = 16 << 20, HUGE_STORES = 1000 };
static void **huge; /* .bss root: black once the cycle drained */

T_NOINLINE static void store_into_huge(int cycle) {
  size_t words = HUGE_BYTES / sizeof(void *);
  for (int i = 0; i < HUGE_STORES; i++) {
    /* Spread over the last 12 MiB, a page or so apart. */
    GC_ptr_store_and_dirty(&huge[words - 1 - (size_t)i * 1536], new_linked_white(i, cycle));
  }
}

static void *huge_child(int i) { return huge[HUGE_BYTES / sizeof(void *) - 1 - (size_t)i * 1536]; }

static void case_huge(void) {
  links = calloc(HUGE_STORES, sizeof *links);
  huge = GC_malloc(HUGE_BYTES);
  CHECK(links != NULL && huge != NULL);
  three_cycles(HUGE_STORES, "stored past a 16 MiB object's first 4 MiB", store_into_huge,
               huge_child, NULL);
}

/* ---- finish_rescan ---- */
enum { SPREAD = 8000 };
static void **spread[SPREAD]; /* .bss roots: black once the cycle drained */

/* Each holder followed by a page's worth of objects of its size, kept
 * alive (a chain from one root) while they are made, so that the holders
 * lie a page apart: 8,000 pages, 8 of the uffd barrier's 4 MiB parts.
 * The filler dies at the first cycle's collection. */
static void *volatile filler;
T_NOINLINE static void spread_holders(void) {
  for (int i = 0; i < SPREAD; i++) {
    spread[i] = GC_malloc(2 * sizeof(void *));
    CHECK(spread[i] != NULL);
    for (int g = 0; g < 255; g++) {
      void **f = GC_malloc(2 * sizeof(void *));
      CHECK(f != NULL);
      f[0] = filler;
      filler = f;
    }
  }
  filler = NULL;
}

static bool refuse_scans; /* finish_refused: the kernel stops answering */
static void refuse_pagemap_scans(void);

T_NOINLINE static void store_after_convergence(int cycle) {
  static void *white[SPREAD]; /* cleared before the finish: a root until then */
  /* During the hold: the cycle cannot converge, so these allocations
   * do not finish it. */
  for (int i = 0; i < SPREAD; i++) white[i] = new_linked_white(i, cycle);
  /* The hold ends and the rounds converge (nothing is written): the
   * cycle waits, ready, for an allocation slow path to finish it. */
  sleep_ms(1200);
  if (refuse_scans && cycle == 0) refuse_pagemap_scans();
  for (int i = 0; i < SPREAD; i++) {
    GC_ptr_store_and_dirty(&spread[i][0], white[i]);
    white[i] = NULL;
  }
}

static void *spread_child(int i) { return spread[i][0]; }

static void case_finish_rescan(void) {
  links = calloc(SPREAD, sizeof *links);
  CHECK(links != NULL);
  spread_holders();
  three_cycles(SPREAD, "stored after the cycle converged", store_after_convergence, spread_child,
               NULL);
  SGC_gc_record_t r;
  if (SGC_get_gc_records(&r, 1) == 1)
    t_note("the last finish rescanned %llu written pages", (unsigned long long)r.finish_rescan_pages);
}

/* ---- finish_rescan_atomic ---- */
/* finish_rescan beside 48 MiB of live pointer-free data: the finish then
 * reads only the runs of pages that may hold pointers (the uffd
 * barrier's parts, where most live data is pointer-free). */
enum { ATOMIC_BLOCKS = 48, ATOMIC_BLOCK_BYTES = 1 << 20 };
static void *atomic_blocks[ATOMIC_BLOCKS]; /* .bss roots */

static void case_finish_rescan_atomic(void) {
  for (int i = 0; i < ATOMIC_BLOCKS; i++) {
    atomic_blocks[i] = GC_malloc_atomic(ATOMIC_BLOCK_BYTES);
    CHECK(atomic_blocks[i] != NULL);
    memset(atomic_blocks[i], 0x5a, ATOMIC_BLOCK_BYTES);
  }
  case_finish_rescan();
  for (int i = 0; i < ATOMIC_BLOCKS; i++)
    CHECK(((unsigned char *)atomic_blocks[i])[ATOMIC_BLOCK_BYTES - 1] == 0x5a);
}

/* ---- finish_refused ---- */
/* A sandbox that comes after start-up (a seccomp filter, as browsers and
 * servers install once initialised): from the first cycle's finish on,
 * every PAGEMAP_SCAN fails with EPERM.  That finish's parts are refused,
 * so it must report every page in use; the later cycles' arms are
 * refused, so they run as the full barrier does.  Nothing may be lost,
 * and each refusal must be said in a warning. */
/* Linux 6.7's value (older headers lack it): _IOWR('f', 16, 96 bytes). */
#define T_PAGEMAP_SCAN _IOWR('f', 16, char[96])

#if defined(__x86_64__)
#define T_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define T_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

static _Atomic int refusal_warnings;
static GC_warn_proc default_warn;

static void count_refusals(char *msg, GC_word arg) {
  if (strstr(msg, "uffd barrier")) atomic_fetch_add(&refusal_warnings, 1);
  default_warn(msg, arg);
}

static void refuse_pagemap_scans(void) {
#ifdef T_AUDIT_ARCH
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, T_AUDIT_ARCH, 0, 4),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 2),
      /* The request's low half (little-endian): the kernel reads an int. */
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)T_PAGEMAP_SCAN, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
  /* Every thread, the GC threads that read the finish's parts included.
   * A sandbox of the test's own that forbids filters: skipped. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    printf("concurrent: skipped (no seccomp filter: %s)\n", strerror(errno));
    fflush(stdout);
    _exit(77);
  }
  int fd = open("/proc/self/pagemap", O_RDONLY);
  CHECK(fd >= 0);
  errno = 0;
  CHECK(ioctl(fd, T_PAGEMAP_SCAN, NULL) < 0 && errno == EPERM, "the filter let PAGEMAP_SCAN through");
  close(fd);
#endif
}

static void case_finish_refused(void) {
#ifndef T_AUDIT_ARCH
  printf("concurrent: skipped (no seccomp filter written for this architecture)\n");
  exit(77);
#endif
  t_skip_without_uffd(t_test_name);
  default_warn = GC_get_warn_proc();
  GC_set_warn_proc(count_refusals);
  refuse_scans = true;
  case_finish_rescan();
  /* The finish's refused parts, then every later arm. */
  CHECK(atomic_load(&refusal_warnings) >= 2, "%d warnings of the refusals, 2 expected",
        atomic_load(&refusal_warnings));
  t_note("%d warnings of the kernel's refusals", atomic_load(&refusal_warnings));
}

/* ---- mark_proc ---- */
/* A runtime's frame (Guile's thread object marks its VM stack so): a
 * custom kind whose mark procedure marks what an array outside the heap
 * holds, mmap'd, so neither a root nor seen by any barrier. */
enum { SLOTS = 2000, FRAME_MAGIC = 0xf4a3e };
static void **outside;
static void **chain; /* .bss root: a list whose last cell holds the frame, so
                        that the cycle's drain, not the start's stop, finds it */
static _Atomic unsigned long program_ticks;
static _Atomic int ticker_stop, proc_calls, procs_beside_program;

static struct GC_ms_entry *mark_frame(GC_word *addr, struct GC_ms_entry *msp,
                                      struct GC_ms_entry *limit, GC_word env) {
  (void)env;
  if (addr[0] != FRAME_MAGIC) return msp; /* a free object of the kind */
  unsigned long ticks = atomic_load(&program_ticks);
  for (int i = 0; i < SLOTS; i++) msp = GC_MARK_AND_PUSH(outside[i], msp, limit, &outside[i]);
  /* A millisecond more: a program thread that runs meanwhile ticks. */
  double until = now_s() + 0.001;
  while (now_s() < until) {}
  if (atomic_load(&program_ticks) != ticks) procs_beside_program++;
  proc_calls++;
  return msp;
}

static void *tick(void *arg) {
  (void)arg;
  while (!atomic_load(&ticker_stop)) atomic_fetch_add(&program_ticks, 1);
  return NULL;
}

T_NOINLINE static void store_outside(int cycle) {
  for (int i = 0; i < SLOTS; i++) {
    outside[i] = new_linked_white(i, cycle);
  }
}

static void *outside_child(int i) { return outside[i]; }

/* The outside array's objects of cycle CYCLE all live and are intact. */
static void check_outside(int cycle, const char *where) {
  int lost = 0;
  for (int i = 0; i < SLOTS; i++) lost += links[i] == 0;
  CHECK(lost == 0, "%s: %d of %d objects held by the mark procedure were reclaimed", where, lost,
        SLOTS);
  for (int i = 0; i < SLOTS; i++) check_white(outside[i], i, cycle);
}

/* A fork while the frame's procedure waits for the cycle's finish: the
 * child forgets the abandoned cycle's waiting objects, and its own
 * collections (stop, then a cycle) must run the procedure again. */
static void fork_with_deferred_proc(void) {
  GC_gcollect();
  GC_word before = start_cycle();
  store_outside(3);
  t_clear_stack();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    alarm(60);
    GC_gcollect();
    check_outside(3, "child's first collection");
    for (int i = 0; i < SLOTS; i++) GC_unregister_disappearing_link((void **)&links[i]);
    store_outside(4);
    GC_gcollect();
    check_outside(4, "child's second collection");
    GC_word mine = GC_get_gc_no();
    GC_start_incremental_collection();
    finish_by_allocating(mine);
    check_outside(4, "child's cycle");
    _exit(0);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
  finish_by_allocating(before);
  check_outside(3, "parent's cycle across the fork");
  for (int i = 0; i < SLOTS; i++) GC_unregister_disappearing_link((void **)&links[i]);
  t_note("a fork while the procedure waited: child and parent kept its objects");
}

static void case_mark_proc(void) {
  outside = mmap(NULL, SLOTS * sizeof(void *), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  links = calloc(SLOTS, sizeof *links);
  CHECK(outside != MAP_FAILED && links != NULL);
  int kind = (int)GC_new_kind(GC_new_free_list(), GC_MAKE_PROC(GC_new_proc(mark_frame), 0), 0, 1);
  GC_word *frame = GC_generic_malloc(4 * sizeof(GC_word), kind);
  CHECK(frame != NULL);
  frame[0] = FRAME_MAGIC;
  chain = GC_malloc(2 * sizeof(void *));
  void **cell = chain;
  for (int i = 0; i < 256; i++, cell = cell[0]) cell[0] = GC_malloc(2 * sizeof(void *));
  cell[0] = frame;
  frame = NULL;
  cell = NULL;
  pthread_t ticker;
  CHECK(pthread_create(&ticker, NULL, tick, NULL) == 0);
  /* The frame is black once the cycle drained: its procedure ran, or waits. */
  three_cycles(SLOTS, "held only outside the heap, by a mark procedure,", store_outside,
               outside_child, NULL);
  atomic_store(&ticker_stop, 1);
  pthread_join(ticker, NULL);
  fork_with_deferred_proc();
  CHECK(proc_calls > 0, "the mark procedure never ran");
  CHECK(procs_beside_program == 0, "%d of %d mark procedure calls ran beside the program",
        procs_beside_program, proc_calls);
  t_note("%d mark procedure calls, none beside the program", proc_calls);
}

int main(int argc, char **argv) {
  t_test_name = "concurrent";
  GC_INIT();
  CHECK(argc == 2, "usage: concurrent hazard|read|fork|threads|finalize|setmark|uncollectable|suspend|restart|finalizer_gc|prompt|oom_finish|mark_proc|huge");
  CHECK(GC_is_incremental_mode(), "run with SGC_MODE=concurrent");
  if (strcmp(argv[1], "hazard") == 0) case_hazard();
  else if (strcmp(argv[1], "read") == 0) case_read();
  else if (strcmp(argv[1], "fork") == 0) case_fork();
  else if (strcmp(argv[1], "threads") == 0) case_threads();
  else if (strcmp(argv[1], "finalize") == 0) case_finalize();
  else if (strcmp(argv[1], "setmark") == 0) case_setmark();
  else if (strcmp(argv[1], "uncollectable") == 0) case_uncollectable();
  else if (strcmp(argv[1], "suspend") == 0) case_suspend();
  else if (strcmp(argv[1], "restart") == 0) case_restart();
  else if (strcmp(argv[1], "finalizer_gc") == 0) case_finalizer_gc();
  else if (strcmp(argv[1], "prompt") == 0) case_prompt();
  else if (strcmp(argv[1], "oom_finish") == 0) case_oom_finish();
  else if (strcmp(argv[1], "mark_proc") == 0) case_mark_proc();
  else if (strcmp(argv[1], "huge") == 0) case_huge();
  else if (strcmp(argv[1], "finish_rescan") == 0) case_finish_rescan();
  else if (strcmp(argv[1], "finish_refused") == 0) case_finish_refused();
  else if (strcmp(argv[1], "finish_rescan_atomic") == 0) case_finish_rescan_atomic();
  else CHECK(0, "unknown case %s", argv[1]);
  return 0;
}
