/* What this machine charges for the kernel services a collector leans on,
 * measured without sgc (the README and docs/benchmarks/history.md quote
 * it when explaining figures that the machine, not the code, bounds):
 *
 *   faults    first touch of 64 MiB of fresh anonymous memory: 4 KiB pages,
 *             with MADV_HUGEPAGE, and pre-faulted by MAP_POPULATE (ms/MiB)
 *   futex     how long FUTEX_WAKE keeps the waker in the system call when
 *             it wakes a thread that has slept 2 ms (a parked GC thread)
 *   compute   a loop that touches no memory, on 1 and on 2 threads: the
 *             wall time ratio (1.00 when two threads get two CPUs)
 *
 *   cc -O2 -pthread tools/dev/vm_costs.c -o /tmp/vm_costs && /tmp/vm_costs
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

enum { FAULT_MIB = 64, ALIGN = 4 << 20 };

/* ms per MiB to touch FAULT_MIB MiB once: MODE 0 plain, 1 huge pages,
 * 2 populated by mmap (the mmap's time counts then). */
static double fault_ms_per_mib(int mode) {
  size_t size = (size_t)FAULT_MIB << 20;
  double t0 = now_ms();
  char *raw = mmap(NULL, size + ALIGN, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (mode == 2 ? MAP_POPULATE : 0), -1, 0);
  if (raw == MAP_FAILED) return -1;
  char *p = (char *)(((uintptr_t)raw + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
  if (mode == 1) madvise(p, size, MADV_HUGEPAGE);
  for (size_t i = 0; i < size; i += 4096) p[i] = 1;
  double ms = now_ms() - t0;
  munmap(raw, size + ALIGN);
  return ms / FAULT_MIB;
}

static _Atomic uint32_t word;

static void *sleeper(void *arg) {
  (void)arg;
  for (;;) {
    uint32_t v = atomic_load(&word);
    if (v == UINT32_MAX) return NULL;
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median µs the waker spends in FUTEX_WAKE over ROUNDS wake-ups. */
static double futex_wake_us(int rounds) {
  pthread_t t;
  pthread_create(&t, NULL, sleeper, NULL);
  double *us = malloc(sizeof(double) * (size_t)rounds);
  for (int i = 0; i < rounds; i++) {
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL); /* the sleeper's CPU goes idle */
    atomic_fetch_add(&word, 1);
    double t0 = now_ms();
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    us[i] = (now_ms() - t0) * 1e3;
  }
  atomic_store(&word, UINT32_MAX);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  pthread_join(t, NULL);
  qsort(us, (size_t)rounds, sizeof *us, cmp_double);
  double median = us[rounds / 2];
  free(us);
  return median;
}

static void *spin(void *arg) {
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < 200000000UL; i++) x += i;
  (void)arg;
  return NULL;
}

static double compute_ms(int threads) {
  pthread_t t[2];
  double t0 = now_ms();
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, spin, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  return now_ms() - t0;
}

int main(void) {
  printf("faults: %.3f ms/MiB with 4 KiB pages, %.3f with MADV_HUGEPAGE, %.3f with MAP_POPULATE\n",
         fault_ms_per_mib(0), fault_ms_per_mib(1), fault_ms_per_mib(2));
  printf("futex: FUTEX_WAKE of a thread asleep 2 ms keeps the waker %.1f us (median of 200)\n",
         futex_wake_us(200));
  double one = compute_ms(1), two = compute_ms(2);
  printf("compute: 1 thread %.0f ms, 2 threads %.0f ms (ratio %.2f; 1.00 = two full CPUs)\n", one,
         two, two / one);
  return 0;
}
