/* The checked readers of settings (api/env.c): what each accepts, with
 * its value, and what each refuses, the fallback then standing.  Run
 * after start-up, so the settings read here change nothing in sgc. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "common.h"
#include "os/os.h"
#include "unit.h"

static const char *const NAME = "SGC_UNIT_ENV";

static size_t size_of(const char *text) {
  setenv(NAME, text, 1);
  return env_size(NAME, 7);
}
static long long_of(const char *text) {
  setenv(NAME, text, 1);
  return env_long_in(NAME, -9, 0, 100);
}
static double double_of(const char *text) {
  setenv(NAME, text, 1);
  return env_double_min(NAME, 0.5, 1.0);
}

int main(void) {
  /* Sizes: bytes, and k, m, g in either case, as powers of two. */
  CHECK(size_of("0") == 0, "0");
  CHECK(size_of("4096") == 4096, "4096");
  CHECK(size_of("3k") == 3u << 10 && size_of("3K") == 3u << 10, "k");
  CHECK(size_of("5m") == 5u << 20 && size_of("5M") == 5u << 20, "m");
  CHECK(size_of("2g") == (size_t)2 << 30 && size_of("2G") == (size_t)2 << 30, "g");
  const char *bad_sizes[] = {"-1", "m", "4q", "4kk", "4 k", " 4", "1.5m", "99999999999999g",
                             "99999999999999999999999"};
  for (unsigned i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; i++)
    CHECK(size_of(bad_sizes[i]) == 7, "size %s accepted as %zu", bad_sizes[i], size_of(bad_sizes[i]));

  /* Integers within their range, ends included. */
  CHECK(long_of("0") == 0 && long_of("100") == 100 && long_of("42") == 42, "in range");
  const char *bad_longs[] = {"-1", "101", "abc", "4x", "1e2", "99999999999999999999"};
  for (unsigned i = 0; i < sizeof bad_longs / sizeof *bad_longs; i++)
    CHECK(long_of(bad_longs[i]) == -9, "integer %s accepted as %ld", bad_longs[i], long_of(bad_longs[i]));

  CHECK(double_of("1") == 1.0 && double_of("2.5") == 2.5, "doubles");
  const char *bad_doubles[] = {"0.99", "abc", "1.5x", "nan", "-3"};
  for (unsigned i = 0; i < sizeof bad_doubles / sizeof *bad_doubles; i++)
    CHECK(double_of(bad_doubles[i]) == 0.5, "number %s accepted", bad_doubles[i]);

  /* Words: the value paired with the word, else the fallback. */
  static const struct env_word words[] = {{"lazy", 3}, {"parallel", 5}, {"also-parallel", 5}};
  setenv(NAME, "parallel", 1);
  CHECK(env_choice(NAME, words, ENV_WORDS_COUNT(words), 1) == 5, "parallel");
  setenv(NAME, "lazy", 1);
  CHECK(env_choice(NAME, words, ENV_WORDS_COUNT(words), 1) == 3, "lazy");
  setenv(NAME, "Parallel", 1);
  CHECK(env_choice(NAME, words, ENV_WORDS_COUNT(words), 1) == 1, "a word differing in case");

  /* Unset or empty: the fallback, and SGC_ before bdwgc's GC_. */
  unsetenv(NAME);
  CHECK(env_size(NAME, 7) == 7 && env_long_in(NAME, -9, 0, 1) == -9, "unset");
  setenv(NAME, "", 1);
  CHECK(env_size(NAME, 7) == 7, "empty");
  setenv("GC_UNIT_ENV", "1", 1);
  CHECK(!strcmp(env_first(NAME, "GC_UNIT_ENV"), "GC_UNIT_ENV"), "empty SGC_ name falls to GC_");
  setenv(NAME, "2", 1);
  CHECK(!strcmp(env_first(NAME, "GC_UNIT_ENV"), NAME), "SGC_ name first");

  /* GC threads have no fixed cap: the bound is 4 per CPU the kernel knows
   * of, at least 1024, and a larger request is cut to it (with a warning),
   * never wrapped or refused. */
  long configured = sysconf(_SC_NPROCESSORS_CONF);
  unsigned limit = os_markers_limit();
  CHECK(limit == os_markers_limit_for(configured), "GC thread bound %u with %ld CPUs", limit,
        configured);
  /* The rule itself, for machines this one is not. */
  CHECK(os_markers_limit_for(2) == 1024 && os_markers_limit_for(256) == 1024, "small machines");
  CHECK(os_markers_limit_for(257) == 1028 && os_markers_limit_for(4096) == 16384,
        "more than 256 CPUs: 4 a CPU");
  CHECK(os_markers_limit_for(-1) == 1024 && os_markers_limit_for(1L << 40) == 1024,
        "an impossible CPU count");
  unsigned markers_before = sgc_settings.markers;
  settings_set_markers(UINT_MAX);
  CHECK(sgc_settings.markers == limit, "UINT_MAX GC threads gave %u", sgc_settings.markers);
  settings_set_markers(limit);
  CHECK(sgc_settings.markers == limit, "the bound itself gave %u", sgc_settings.markers);
  settings_set_markers(markers_before);
  return unit_finish();
}
