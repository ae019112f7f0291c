/* count_copies: an LD_PRELOAD library that counts the bytes a program
 * copies with memcpy in calls of at least 4 KiB, and the time they take,
 * and prints both at exit (stderr).  For GC_realloc's copies (both sgc
 * and bdwgc call memcpy through the PLT, so the count sees them):
 *
 *   cc -O2 -shared -fPIC tools/dev/count_copies.c -o /tmp/count_copies.so -ldl
 *   LD_PRELOAD=/tmp/count_copies.so build/bench/bench-shapes-sgc -s grow
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void *(*real_memcpy)(void *, const void *, size_t);
static unsigned long long big_calls, big_bytes, big_ns;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void *memcpy(void *dst, const void *src, size_t n) {
  if (!real_memcpy) real_memcpy = (void *(*)(void *, const void *, size_t))dlsym(RTLD_NEXT, "memcpy");
  if (n < 4096) return real_memcpy(dst, src, n);
  uint64_t t = now_ns();
  void *r = real_memcpy(dst, src, n);
  big_ns += now_ns() - t;
  big_calls++;
  big_bytes += n;
  return r;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "count_copies: %llu memcpy calls of 4 KiB or more, %llu MB, %.1f ms\n",
          big_calls, big_bytes >> 20, big_ns / 1e6);
}
