/* What the uffd write barrier's kernel calls cost on this machine
 * (docs/concurrent.md, "Pages the barrier covers"), without sgc: a 1 GiB
 * reservation registered for asynchronous write protection, MIB MiB of it
 * touched; then, alone and beside a thread spinning in the same process
 * (so TLB flushes reach another CPU): PAGEMAP_SCAN protecting every
 * written page, a scan that finds none, a write fault per page,
 * UFFDIO_WRITEPROTECT lifting the protection over the whole reservation
 * and over the touched part, and over pages none or an eighth of which
 * are protected (its cost follows the present pages, not the protected).
 *
 *   cc -O2 -pthread tools/dev/uffd_costs.c -o /tmp/uffd_costs && /tmp/uffd_costs 64
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../src/barrier/uffd_uapi.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int uffd, pagemap;

/* PAGEMAP_SCAN over [LO, LO + LEN), protecting the written pages again
 * with PROTECT; the pages it reported. */
static long scan(char *lo, size_t len, bool protect) {
  static struct page_region vec[1024];
  long total = 0;
  for (uint64_t a = (uintptr_t)lo, end = a + len; a < end;) {
    struct pm_scan_arg arg = {.size = sizeof arg,
                              .flags = (protect ? PM_SCAN_WP_MATCHING : 0) | PM_SCAN_CHECK_WPASYNC,
                              .start = a, .end = end, .vec = (uintptr_t)vec, .vec_len = 1024,
                              .category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN};
    long n = ioctl(pagemap, PAGEMAP_SCAN, &arg);
    if (n < 0) {
      perror("PAGEMAP_SCAN");
      exit(1);
    }
    for (long i = 0; i < n; i++) total += (long)((vec[i].end - vec[i].start) / 4096);
    a = arg.walk_end;
  }
  return total;
}

static void unprotect(char *lo, size_t len) {
  struct uffdio_writeprotect wp = {.range = {.start = (uintptr_t)lo, .len = len}, .mode = 0};
  if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) != 0) perror("UFFDIO_WRITEPROTECT");
}

/* Microseconds per touched page, as ns. */
static double ns_per_page(double us, size_t pages) { return us * 1e3 / (double)pages; }

static double touch_all(char *r, size_t len, char value) {
  double t = now_us();
  for (size_t i = 0; i < len; i += 4096) r[i] = value;
  return now_us() - t;
}

static atomic_int spin_stop;
static void *spinner(void *arg) {
  volatile long x = 0;
  while (!atomic_load(&spin_stop)) x++;
  return arg;
}

int main(int argc, char **argv) {
  size_t reserve = 1ul << 30, mib = argc > 1 ? (size_t)atoi(argv[1]) : 64;
  size_t len = mib << 20, pages = len / 4096;
  uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  struct uffdio_api api = {.api = UFFD_API,
                           .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED};
  if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) != 0) {
    perror("userfaultfd with UFFD_FEATURE_WP_ASYNC");
    return 1;
  }
  pagemap = open("/proc/self/pagemap", O_RDONLY);
  char *r = mmap(NULL, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  madvise(r, reserve, MADV_NOHUGEPAGE);
  struct uffdio_register reg = {.range = {.start = (uintptr_t)r, .len = reserve},
                                .mode = UFFDIO_REGISTER_MODE_WP};
  if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
    perror("UFFDIO_REGISTER");
    return 1;
  }
  touch_all(r, len, 1);
  for (int spin = 0; spin < 2; spin++) {
    pthread_t thread;
    atomic_store(&spin_stop, 0);
    if (spin) pthread_create(&thread, NULL, spinner, NULL);
    usleep(1000);
    double t = now_us();
    scan(r, len, true);
    double protect = now_us() - t;
    t = now_us();
    scan(r, len, true);
    double clean = now_us() - t;
    double faults = touch_all(r, len, 2);
    scan(r, len, true);
    t = now_us();
    unprotect(r, reserve);
    double lift_reserve = now_us() - t;
    scan(r, len, true);
    t = now_us();
    unprotect(r, len);
    double lift = now_us() - t;
    t = now_us();
    unprotect(r, len);
    double lift_none = now_us() - t;
    scan(r, len / 8, true);
    t = now_us();
    unprotect(r, len);
    double lift_eighth = now_us() - t;
    double writes = touch_all(r, len, 3);
    printf("%s, %zu pages (ns a page): protect %.0f, scan finding none %.1f, write fault %.0f, "
           "plain write %.0f; lift over 1 GiB %.0f, over the pages %.0f, none protected %.0f, "
           "an eighth %.0f\n",
           spin ? "beside a spinning thread" : "alone", pages, ns_per_page(protect, pages),
           ns_per_page(clean, pages), ns_per_page(faults, pages), ns_per_page(writes, pages),
           ns_per_page(lift_reserve, pages), ns_per_page(lift, pages), ns_per_page(lift_none, pages),
           ns_per_page(lift_eighth, pages));
    if (spin) {
      atomic_store(&spin_stop, 1);
      pthread_join(thread, NULL);
    }
  }
  return 0;
}
