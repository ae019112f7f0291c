/* Checked reading of settings from the environment (env.h). */
#include "base/env.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

const char *env_value(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

const char *env_first(const char *a, const char *b) { return env_value(a) ? a : b; }

size_t env_size(const char *name, size_t fallback) { return env_size_in(name, fallback, SIZE_MAX); }

size_t env_size_in(const char *name, size_t fallback, size_t max) {
  const char *v = env_value(name);
  if (!v) return fallback;
  /* Digits first: strtoull would take "-1" as 2^64 - 1. */
  char *end = (char *)v;
  unsigned long long n = 0;
  errno = 0;
  if (*v >= '0' && *v <= '9') n = strtoull(v, &end, 10);
  static const char units[] = "kKmMgG"; /* pairs: 2^10, 2^20, 2^30 */
  unsigned shift = 0;
  const char *unit = end != v && *end ? strchr(units, *end) : NULL;
  if (unit) {
    shift = 10 * (unsigned)(1 + (unit - units) / 2);
    end++;
  }
  if (end == v || *end || errno) {
    sgc_warn("ignoring %s=%s: not a size (bytes, or a number with k, m or g)", name, v);
    return fallback;
  }
  if (n > (SIZE_MAX >> shift) || (size_t)(n << shift) > max) {
    sgc_warn("ignoring %s=%s: too large (at most %zu)", name, v, max);
    return fallback;
  }
  return (size_t)(n << shift);
}

long env_long_in(const char *name, long fallback, long min, long max) {
  const char *v = env_value(name);
  if (!v) return fallback;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (end == v || *end || errno) {
    sgc_warn("ignoring %s=%s: not a number", name, v);
    return fallback;
  }
  if (n < min || n > max) {
    sgc_warn("ignoring %s=%s: want a number from %ld to %ld", name, v, min, max);
    return fallback;
  }
  return n;
}

double env_double_min(const char *name, double fallback, double min) {
  const char *v = env_value(name);
  if (!v) return fallback;
  char *end;
  errno = 0;
  double n = strtod(v, &end);
  if (end == v || *end || errno) {
    sgc_warn("ignoring %s=%s: not a number", name, v);
    return fallback;
  }
  if (!(n >= min)) { /* NaN too */
    sgc_warn("ignoring %s=%s: want a number of at least %g", name, v, min);
    return fallback;
  }
  return n;
}

int env_choice(const char *name, const struct env_word *words, unsigned count, int fallback) {
  const char *v = env_value(name);
  if (!v) return fallback;
  for (unsigned i = 0; i < count; i++)
    if (!strcmp(v, words[i].word)) return words[i].value;
  char list[256] = "";
  for (unsigned i = 0; i < count; i++) {
    if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, words[i].word, sizeof list - strlen(list) - 1);
  }
  sgc_warn("ignoring %s=%s: want one of %s", name, v, list);
  return fallback;
}
