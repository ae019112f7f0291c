/* Kernel interfaces.  Everything here that the suspend handler calls
 * (futex_*) is a bare system call and therefore async-signal-safe. */
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void *os_reserve_room(size_t room, size_t align, bool charged) {
  size_t span = room + align;
  char *raw = mmap(NULL, span, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (charged ? 0 : MAP_NORESERVE), -1, 0);
  if (raw == MAP_FAILED) return NULL;
  if (!align) return raw;
  uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
  size_t head = start - (uintptr_t)raw;
  size_t tail = span - head - room;
  if (head) munmap(raw, head);
  if (tail) munmap((char *)start + room, tail);
  return (void *)start;
}

bool os_commit(void *p, size_t size) { return mprotect(p, size, PROT_READ | PROT_WRITE) == 0; }

void *os_alloc(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void os_free(void *p, size_t size) {
  if (p) munmap(p, size);
}

void *os_grow_array(void *old, size_t count, size_t *capacity, size_t size, size_t first) {
  size_t grown = *capacity ? 2 * *capacity : first;
  void *bigger = os_alloc(grown * size);
  if (!bigger) return NULL;
  if (old) {
    memcpy(bigger, old, count * size);
    os_free(old, *capacity * size);
  }
  *capacity = grown;
  return bigger;
}

bool os_decommit(void *p, size_t size) { return madvise(p, size, MADV_DONTNEED) == 0; }

void futex_wait(_Atomic uint32_t *word, uint32_t expected) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void futex_wait_timeout(_Atomic uint32_t *word, uint32_t expected, uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

void futex_wake_all(_Atomic uint32_t *word) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

static uint64_t clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t os_now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t os_thread_cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

bool os_move_off_cpu(int cpu) {
  if (cpu < 0 || sched_getcpu() != cpu) return false;
  cpu_set_t mask, others;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
  others = mask;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0) return false;
  /* Setting the calling thread's affinity migrates it before the call
   * returns; the old mask back keeps the user's settings. */
  if (sched_setaffinity(0, sizeof others, &others) != 0) return false;
  sched_setaffinity(0, sizeof mask, &mask);
  return true;
}

int os_gettid(void) { return (int)syscall(SYS_gettid); }

/* bdwgc counts /proc/stat; a container or taskset sees fewer CPUs than
 * that, so sgc asks the affinity mask and the cgroup v2 CPU quota. */
static unsigned cgroup_cpu_limit(void) {
  FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
  if (!f) return 0;
  char quota[32];
  unsigned long period = 0;
  unsigned limit = 0;
  if (fscanf(f, "%31s %lu", quota, &period) == 2 && strcmp(quota, "max") != 0 && period) {
    unsigned long q = strtoul(quota, NULL, 10);
    limit = (unsigned)((q + period - 1) / period);
  }
  fclose(f);
  return limit;
}

unsigned os_usable_cpus(void) {
  cpu_set_t set;
  unsigned n = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = (unsigned)CPU_COUNT(&set);
  unsigned limit = cgroup_cpu_limit();
  if (limit && limit < n) n = limit;
  return n ? n : 1;
}

unsigned os_runnable_threads(void) {
  char buf[128];
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned runnable = 0;
  /* "0.77 1.38 3.93 1/80 8579": the fourth field's numerator. */
  return sscanf(buf, "%*s %*s %*s %u/", &runnable) == 1 ? runnable : 0;
}

unsigned os_markers_limit_for(long configured_cpus) {
  /* An impossible count (sysconf's -1, or beyond any kernel) keeps 1024. */
  if (configured_cpus > 256 && configured_cpus < (1L << 20)) return 4 * (unsigned)configured_cpus;
  return 1024;
}

unsigned os_markers_limit(void) {
  /* Relaxed: callers that race on the first call compute the same value. */
  static _Atomic unsigned cached;
  unsigned limit = atomic_load_explicit(&cached, memory_order_relaxed);
  if (!limit) {
    limit = os_markers_limit_for(sysconf(_SC_NPROCESSORS_CONF));
    atomic_store_explicit(&cached, limit, memory_order_relaxed);
  }
  return limit;
}

bool os_page_nodes(void *const *addresses, int *nodes, unsigned long count) {
  /* move_pages with no target nodes only reports where each page is. */
  if (syscall(SYS_move_pages, 0, count, addresses, NULL, nodes, 0) != 0) return false;
  for (unsigned long i = 0; i < count; i++)
    if (nodes[i] < 0) nodes[i] = -1;
  return true;
}
