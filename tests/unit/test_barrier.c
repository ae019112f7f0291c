/* The write barrier backends (barrier/barrier.h), one per run: the test
 * runs with SGC_BARRIER set (tests/unit/CMakeLists.txt) and skips (77)
 * where that backend is not available here.  Over a pointer-holding
 * object of OBJECT_PAGES pages, some written before the barrier is armed
 * and some never touched: after writes to a known set of pages, from
 * several threads too, a collect must report exactly those pages of the
 * object (mprotect: their 4-page groups, the documented false positives);
 * a write after a collect shows in the next one and not before;
 * disarming leaves the pages writable; read(2) into the heap works while
 * armed; a child of fork() is not broken. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier/barrier.h"
#include "common.h"
#include "heap/heap.h"
#include "unit.h"
#include "unit_marked.h"

enum { OBJECT_PAGES = 64, THREADS = 4, MPROTECT_GROUP = 4 };

static char *object; /* page aligned: a large object starts a page */
static enum barrier_kind kind;
static bool seen[OBJECT_PAGES];
static size_t seen_outside;

static void visit(uintptr_t lo, uintptr_t hi, void *arg) {
  for (uintptr_t a = lo; a < hi; a += PAGE_BYTES) {
    uintptr_t at = a - (uintptr_t)object;
    if (at < (uintptr_t)OBJECT_PAGES * PAGE_BYTES) seen[at / PAGE_BYTES] = true;
    else seen_outside++;
  }
}

static uintptr_t watched[2];
static bool watched_seen[2];
static void watch(uintptr_t lo, uintptr_t hi, void *arg) {
  for (int i = 0; i < 2; i++)
    if (watched[i] >= lo && watched[i] < hi) watched_seen[i] = true;
}

static void write_page(unsigned page, char value) {
  char *p = object + (size_t)page * PAGE_BYTES + 8 * (page % 16);
  *(volatile char *)p = value;
  if (kind == BARRIER_MANUAL) barrier_note_store(p);
}

static void collect(void) {
  memset(seen, 0, sizeof seen);
  seen_outside = 0;
  barrier_collect_dirty(visit, NULL);
}

/* The same in steps of one page, as a concurrent round takes it
 * (barrier_collect_begin; a backend without steps collects whole at
 * the begin).  BETWEEN runs after the begin, before the first step. */
static void collect_in_steps(void (*between)(void)) {
  memset(seen, 0, sizeof seen);
  seen_outside = 0;
  bool stepped = barrier_collect_begin();
  if (!stepped) barrier_collect_dirty(visit, NULL);
  if (between) between();
  for (bool done = !stepped; !done;) barrier_collect_step(visit, NULL, 1, &done);
}

/* Whether the last collect reported exactly the pages in WRITTEN (COUNT
 * of them), or for mprotect exactly their groups. */
static void check_exact(const char *what, const unsigned *written, unsigned count) {
  bool want[OBJECT_PAGES] = {false};
  if (kind == BARRIER_FULL) { /* every page holding a marked object, always */
    for (unsigned p = 0; p < OBJECT_PAGES; p++) CHECK(seen[p], "%s: page %u not reported", what, p);
    return;
  }
  for (unsigned i = 0; i < count; i++) {
    unsigned p = written[i];
    if (kind == BARRIER_MPROTECT) {
      for (unsigned q = p & ~(MPROTECT_GROUP - 1u); q < (p | (MPROTECT_GROUP - 1u)) + 1; q++)
        want[q] = true;
    } else {
      want[p] = true;
    }
  }
  for (unsigned p = 0; p < OBJECT_PAGES; p++)
    CHECK(seen[p] == want[p], "%s: page %u %s", what, p,
          want[p] ? "written, not reported" : "reported, not written");
}

static void write_page_44(void) { write_page(44, 8); }

static pthread_barrier_t start_line;
static void *writer(void *arg) {
  unsigned id = (unsigned)(uintptr_t)arg;
  pthread_barrier_wait(&start_line);
  write_page(20 + id * 9, (char)id); /* its own page: 20, 29, 38, 47 */
  write_page(50, (char)id);          /* a page they all write */
  return NULL;
}

/* read(2) from a pipe into B while armed must not fail (EFAULT). */
static void check_read_into(char *b, const char *what) {
  int fds[2];
  if (pipe(fds) != 0) return;
  char data[3 * PAGE_BYTES];
  memset(data, 'r', sizeof data);
  ssize_t wrote = write(fds[1], data, sizeof data);
  ssize_t got = read(fds[0], b + 100, sizeof data);
  CHECK(wrote == (ssize_t)sizeof data && got == wrote, "read(2) into %s: %zd (%s)", what, got,
        got < 0 ? strerror(errno) : "short");
  CHECK(b[100] == 'r' && b[100 + sizeof data - 1] == 'r', "read(2) into %s: data", what);
  close(fds[0]);
  close(fds[1]);
  /* readv into two pages of it, recv from a socket into another. */
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return;
  wrote = write(fds[1], data, sizeof data);
  struct iovec parts[2] = {{b + 10, PAGE_BYTES}, {b + 2 * PAGE_BYTES + 20, PAGE_BYTES}};
  got = readv(fds[0], parts, 2);
  CHECK(got == 2 * PAGE_BYTES, "readv(2) into %s: %zd (%s)", what, got, got < 0 ? strerror(errno) : "short");
  got = recv(fds[0], b + 3 * PAGE_BYTES, PAGE_BYTES, 0);
  CHECK(got == PAGE_BYTES, "recv(2) into %s: %zd (%s)", what, got, got < 0 ? strerror(errno) : "short");
  CHECK(b[3 * PAGE_BYTES] == 'r' && b[2 * PAGE_BYTES + 20] == 'r', "readv, recv into %s: data", what);
  close(fds[0]);
  close(fds[1]);
}

int main(void) {
  GC_init();
  const char *want = getenv("SGC_BARRIER");
  kind = barrier_init();
  printf("barrier %s\n", barrier_name(kind));
  if (want && strcmp(want, barrier_name(kind)) != 0) {
    printf("skipped: the %s barrier is not available here\n", want);
    return 77;
  }
  for (enum barrier_kind k = 0; k < BARRIER_KIND_COUNT; k++)
    printf("  %s: %s\n", barrier_name(k), barrier_available(k) ? "available" : "unavailable");
  object = GC_malloc((size_t)OBJECT_PAGES * PAGE_BYTES);
  char *atomic_buffer = GC_malloc_atomic(4 * PAGE_BYTES);
  char *scanned_buffer = GC_malloc(4 * PAGE_BYTES);
  CHECK(object && ((uintptr_t)object & (PAGE_BYTES - 1)) == 0, "object at %p", (void *)object);
  unit_mark_object(object); /* reached by the marker: its writes matter */
  for (unsigned p = 0; p < 16; p++) object[(size_t)p * PAGE_BYTES] = 1; /* 16.. never touched */
  pthread_t threads[THREADS];
  pthread_barrier_init(&start_line, NULL, THREADS + 1);
  for (unsigned i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, writer, (void *)(uintptr_t)i);

  barrier_arm();
  CHECK(barrier_armed(), "armed");
  collect();
  check_exact("nothing written", NULL, 0);
  /* Touched before arm (0, 3, 8) and never touched (17, 40, 63). */
  static const unsigned first[] = {0, 3, 8, 17, 40, 63, 20, 29, 38, 47, 50};
  write_page(0, 2);
  write_page(3, 2);
  write_page(8, 2);
  write_page(17, 2);
  write_page(40, 2);
  write_page(63, 2);
  pthread_barrier_wait(&start_line);
  for (unsigned i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  collect();
  check_exact("first writes", first, sizeof first / sizeof first[0]);
  printf("first collect: %zu pages reported outside the object\n", seen_outside);

  /* Re-armed by the collect: nothing until the next write. */
  collect();
  check_exact("after a collect", NULL, 0);
  static const unsigned second[] = {3, 33};
  write_page(3, 3);
  write_page(33, 3);
  collect();
  check_exact("second writes", second, 2);
  collect();
  check_exact("re-armed again", NULL, 0);

  check_read_into(atomic_buffer, "a GC_malloc_atomic buffer");
  check_read_into(scanned_buffer, "a GC_malloc buffer");
  collect(); /* the buffers' pages (not checked: outside the object) */

  /* fork(): the child writes the heap and collects; the parent's record
   * is its own. */
  pid_t child = fork();
  if (child == 0) {
    write_page(5, 9);
    write_page(60, 9);
    collect();
    bool ok = kind == BARRIER_FULL || (seen[5] && seen[60]);
    write_page(6, 9);
    collect();
    ok = ok && (kind == BARRIER_FULL || seen[6]);
    barrier_disarm();
    memset(object, 7, (size_t)OBJECT_PAGES * PAGE_BYTES);
    _exit(ok ? 0 : 3);
  }
  int status = -1;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child: status %#x", status);
  static const unsigned third[] = {11};
  write_page(11, 4);
  collect();
  check_exact("the parent after fork", third, 1);

  struct barrier_counts counts = barrier_counts();
  printf("counts: %llu pages, %llu collects, %llu faults, %llu ns arming\n",
         (unsigned long long)counts.dirty_pages, (unsigned long long)counts.collect_calls,
         (unsigned long long)counts.faults, (unsigned long long)counts.arm_ns);
  CHECK(counts.collect_calls == 7, "%llu collects", (unsigned long long)counts.collect_calls);
  CHECK(kind != BARRIER_MPROTECT || counts.faults > 0, "mprotect counted no fault");

  barrier_disarm();
  CHECK(!barrier_armed(), "disarmed");
  memset(object, 5, (size_t)OBJECT_PAGES * PAGE_BYTES);
  CHECK(object[0] == 5 && object[(size_t)OBJECT_PAGES * PAGE_BYTES - 1] == 5, "writable");
  CHECK(barrier_counts().faults == counts.faults, "faults after disarm");

  /* Armed again: the earlier writes are forgotten. */
  barrier_arm();
  collect();
  check_exact("armed again", NULL, 0);
  write_page(62, 1);
  collect();
  static const unsigned fourth[] = {62};
  check_exact("armed again, one write", fourth, 1);
  /* In steps: the same report; a write after the begin shows in that
   * collect or the next, never lost between two steps. */
  static const unsigned stepped[] = {2, 7, 8, 9, 30, 61};
  for (unsigned i = 0; i < sizeof stepped / sizeof stepped[0]; i++) write_page(stepped[i], 8);
  collect_in_steps(NULL);
  check_exact("in steps", stepped, sizeof stepped / sizeof stepped[0]);
  collect_in_steps(write_page_44);
  bool seen_44 = seen[44];
  for (unsigned p = 0; p < OBJECT_PAGES; p++)
    CHECK(!seen[p] || p / MPROTECT_GROUP == 44 / MPROTECT_GROUP || kind == BARRIER_FULL,
          "in steps, a write after the begin: page %u reported", p);
  collect();
  CHECK(seen_44 || seen[44], "a write after a stepped collect's begin was never reported");
  /* A chunk added while armed (heap_grow's hook covers it): an object
   * larger than the first chunk's room makes one. */
  size_t chunks_before = 0, chunks_after = 0;
  FOR_EACH_CHUNK(c) chunks_before++;
  const size_t big_bytes = (size_t)1536 << 20;
  char *big = GC_malloc(big_bytes);
  FOR_EACH_CHUNK(c) chunks_after++;
  CHECK(big && chunks_after > chunks_before, "no new chunk (%zu, then %zu)", chunks_before, chunks_after);
  if (big) {
    unit_mark_object(big);
    collect();
    big[5] = 1;
    big[big_bytes - 1] = 1;
    if (kind == BARRIER_MANUAL) {
      barrier_note_store(big);
      barrier_note_store(big + big_bytes - 1);
    }
    watched[0] = (uintptr_t)big;
    watched[1] = (uintptr_t)big + big_bytes - 1;
    memset(watched_seen, 0, sizeof watched_seen);
    barrier_collect_dirty(watch, NULL);
    CHECK(watched_seen[0] && watched_seen[1], "a new chunk's writes: first page %d, last %d",
          watched_seen[0], watched_seen[1]);
  }

  if (kind == BARRIER_MANUAL) { /* bdwgc's calls: a slot's page, an object's pages */
    GC_ptr_store_and_dirty(object + 9 * PAGE_BYTES, atomic_buffer);
    collect();
    static const unsigned slot[] = {9};
    check_exact("GC_ptr_store_and_dirty", slot, 1);
    GC_end_stubborn_change(object + 5 * PAGE_BYTES + 3);
    collect();
    for (unsigned p = 0; p < OBJECT_PAGES; p++)
      CHECK(seen[p], "GC_end_stubborn_change: page %u not reported", p);
  }

  /* A cycle's finish: recording stops in the pause (uffd keeps its
   * protections), writes meanwhile work, and the next arm forgets them
   * and records afresh. */
  barrier_stop_recording();
  CHECK(!barrier_armed(), "recording stopped");
  write_page(3, 6);
  write_page(40, 6);
  write_page(41, 6);
  CHECK(object[3 * PAGE_BYTES + 8 * 3] == 6 && object[41 * PAGE_BYTES + 8 * 9] == 6,
        "written after recording stopped");
  barrier_arm();
  collect();
  check_exact("armed after a stop", NULL, 0);
  write_page(12, 7);
  write_page(40, 7);
  collect();
  static const unsigned after_stop[] = {12, 40};
  check_exact("armed after a stop, two writes", after_stop, 2);
  barrier_disarm();
  return unit_finish();
}
