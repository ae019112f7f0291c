/* A minimal checker for the white-box tests: every CHECK counts, and the
 * program ends with "N passed, N failed". */
#ifndef SGC_UNIT_H
#define SGC_UNIT_H
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Atomic: several tests CHECK from many threads at once. */
static _Atomic int unit_passed, unit_failed;
#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (cond) unit_passed++;                                              \
    else if (unit_failed++ < 19) { /* the first 19 failures are told */  \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fputc('\n', stderr);                                                \
    }                                                                     \
  } while (0)
/* The process's resident set in KiB (/proc/self/statm), 0 if unreadable. */
static inline long unit_resident_kb(void) {
  long size = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * 4;
}
/* Marsaglia's xorshift64: a reproducible stream of pseudo-random words
 * from a non-zero *STATE. */
static inline uint64_t unit_xorshift(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}
static int unit_finish(void) {
  printf("%d passed, %d failed\n", unit_passed, unit_failed);
  return unit_failed ? 1 : 0;
}
#endif
