/* System calls into pointer-holding heap pages beside the mprotect
 * barrier's own steps (issue 54: read(2) into the heap never fails with
 * EFAULT).  Reader threads call read, readv, pread, preadv and recv into
 * random places of one object; writer threads store into it, and each
 * fault opens a page group (its bytes say dirty a moment before the
 * protection is lifted); a controller collects in a tight loop, which
 * protects the written pages again.  With "cycles" the controller also
 * disarms and arms again every few collects, the writers parked as a
 * stopped world would be, the readers not (as threads in GC_do_blocking,
 * or a call restarted after the stop).  Everything runs on one CPU, with
 * PREEMPTERS threads that wake up every 20 us, so threads are preempted
 * anywhere, inside those windows too.
 *   unit_barrier_syscalls [collects|cycles] [SECONDS] [PREEMPTERS]
 * (default: collects, 1.5 s, 1 preempter; tools/ci/stress.sh runs longer).
 * Skips (77) where the mprotect barrier is not available. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "barrier/barrier.h"
#include "common.h"
#include "heap/heap.h"
#include "os/os.h"
#include "unit.h"

enum { OBJECT_PAGES = 512, READERS = 5, WRITERS = 2, MAX_LEN = 2 * PAGE_BYTES, MAX_PREEMPTERS = 8 };
static const char *const call_names[READERS] = {"read", "readv", "pread", "preadv", "recv"};

static char *object;
static int file_fd;
static _Atomic bool stop, park;
static _Atomic unsigned parked;
static _Atomic unsigned long calls, failed[READERS];

static void *reader(void *arg) {
  int kind = (int)(intptr_t)arg, fds[2];
  uint64_t state = 0x9e3779b97f4a7c15u * (uint64_t)(kind + 1);
  if (kind == 4 ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0 : pipe(fds) != 0) return NULL;
  static char data[MAX_LEN];
  char drain[MAX_LEN];
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    size_t len = 1 + unit_xorshift(&state) % MAX_LEN;
    size_t at = unit_xorshift(&state) % ((size_t)OBJECT_PAGES * PAGE_BYTES - len);
    struct iovec iov = {object + at, len};
    bool channel = kind != 2 && kind != 3;
    if (channel && write(fds[1], data, len) != (ssize_t)len) break;
    ssize_t got;
    switch (kind) {
    case 0: got = read(fds[0], object + at, len); break;
    case 1: got = readv(fds[0], &iov, 1); break;
    case 2: got = pread(file_fd, object + at, len, (off_t)at); break;
    case 3: got = preadv(file_fd, &iov, 1, (off_t)at); break;
    default: got = recv(fds[0], object + at, len, MSG_WAITALL);
    }
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    if (got == (ssize_t)len) continue;
    if (atomic_fetch_add_explicit(&failed[kind], 1, memory_order_relaxed) < 3)
      fprintf(stderr, "%s of %zu bytes into the heap: %zd (%s)\n", call_names[kind], len, got,
              got < 0 ? strerror(errno) : "short");
    /* What the call left in the channel, so that the next reads its own. */
    for (size_t left = got > 0 ? len - (size_t)got : len; channel && left;) {
      ssize_t n = read(fds[0], drain, left);
      if (n <= 0) break;
      left -= (size_t)n;
    }
  }
  close(fds[0]);
  close(fds[1]);
  return NULL;
}

static void *writer(void *arg) {
  uint64_t state = 7919 + (uintptr_t)arg;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    if (atomic_load_explicit(&park, memory_order_acquire)) {
      atomic_fetch_add_explicit(&parked, 1, memory_order_acq_rel);
      while (atomic_load_explicit(&park, memory_order_acquire)) sched_yield();
      atomic_fetch_sub_explicit(&parked, 1, memory_order_acq_rel);
      continue;
    }
    size_t at = (size_t)(unit_xorshift(&state) % ((size_t)OBJECT_PAGES * PAGE_BYTES / 8)) * 8;
    /* Small values: nothing here looks like a pointer. */
    __atomic_store_n((uint64_t *)(void *)(object + at), state & 0xffff, __ATOMIC_RELAXED);
  }
  return NULL;
}

/* Wakes every 20 us and runs a moment: each wake-up preempts whatever
 * thread runs on the CPU, at any point of it. */
static void *preempter(void *arg) {
  volatile unsigned long n = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < 1000; i++) n++;
  }
  return NULL;
}

static void visit_nothing(uintptr_t lo, uintptr_t hi, void *arg) {}

/* The writers parked (a stopped world, for them), then FN. */
static void with_writers_parked(void (*fn)(void)) {
  atomic_store_explicit(&park, true, memory_order_release);
  while (atomic_load_explicit(&parked, memory_order_acquire) < WRITERS) sched_yield();
  fn();
  atomic_store_explicit(&park, false, memory_order_release);
  while (atomic_load_explicit(&parked, memory_order_acquire) > 0) sched_yield();
}

static unsigned long long faults; /* of the arms before the last */
static void rearm(void) {
  faults += barrier_counts().faults;
  barrier_disarm();
  barrier_arm();
}

int main(int argc, char **argv) {
  bool cycles = argc > 1 && strcmp(argv[1], "cycles") == 0;
  double seconds = argc > 2 ? atof(argv[2]) : 1.5;
  int preempters = argc > 3 ? atoi(argv[3]) : 1;
  if (preempters > MAX_PREEMPTERS) preempters = MAX_PREEMPTERS;
  GC_init();
  if (barrier_init() != BARRIER_MPROTECT) {
    printf("skipped: the mprotect barrier is not in use (SGC_BARRIER=mprotect)\n");
    return 77;
  }
  /* One CPU, the one this runs on: threads preempt each other mid-step. */
  cpu_set_t one;
  CPU_ZERO(&one);
  int cpu = sched_getcpu();
  CPU_SET(cpu < 0 ? 0 : cpu, &one);
  sched_setaffinity(0, sizeof one, &one);

  object = GC_malloc((size_t)OBJECT_PAGES * PAGE_BYTES);
  static char file_data[OBJECT_PAGES * PAGE_BYTES];
  char path[] = "/tmp/sgc-unit-syscalls-XXXXXX";
  file_fd = mkstemp(path);
  if (!object || file_fd < 0) return 1;
  unlink(path);
  if (write(file_fd, file_data, sizeof file_data) != (ssize_t)sizeof file_data) return 1;
  barrier_arm();
  pthread_t threads[READERS + WRITERS + MAX_PREEMPTERS];
  int n = 0;
  for (intptr_t i = 0; i < READERS; i++) pthread_create(&threads[n++], NULL, reader, (void *)i);
  for (intptr_t i = 0; i < WRITERS; i++) pthread_create(&threads[n++], NULL, writer, (void *)i);
  for (int i = 0; i < preempters; i++) pthread_create(&threads[n++], NULL, preempter, NULL);
  uint64_t end = os_now_ns() + (uint64_t)(seconds * 1e9);
  unsigned long collects = 0, arms = 1;
  while (os_now_ns() < end) {
    barrier_collect_dirty(visit_nothing, NULL);
    sched_yield(); /* the calls wait while a collect protects pages */
    if (cycles && ++collects % 8 == 0) {
      with_writers_parked(rearm);
      arms++;
    }
    if (!cycles) collects++;
  }
  atomic_store(&stop, true);
  for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
  faults += barrier_counts().faults;
  barrier_disarm();
  unsigned long total_failed = 0;
  for (int k = 0; k < READERS; k++) total_failed += failed[k];
  printf("%s: %lu collects, %lu arms, %llu faults, %lu calls, %lu failed (", cycles ? "cycles" : "collects",
         collects, arms, faults, (unsigned long)calls, total_failed);
  for (int k = 0; k < READERS; k++) printf("%s%s %lu", k ? ", " : "", call_names[k], (unsigned long)failed[k]);
  printf(")\n");
  CHECK(calls > 0, "no call ran");
  /* The calls met protected pages: the writers faulted, and collects (or
   * arms, with cycles) protected pages again while they ran. */
  CHECK(faults > 0 && collects > 0, "%llu faults, %lu collects: nothing was protected", faults, collects);
  CHECK(!cycles || arms > 1, "%lu arms in the cycles mode", arms);
  CHECK(total_failed == 0, "%lu calls into the heap failed or came back short", total_failed);
  return unit_finish();
}
