/* Checked reading of settings from the environment (env.h). */
#include "api/env.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

const char *env_value(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

const char *env_first(const char *a, const char *b) { return env_value(a) ? a : b; }

size_t env_size(const char *name, size_t fallback) {
  const char *v = env_value(name);
  if (!v) return fallback;
  char *end;
  errno = 0;
  /* strtoull takes "-1" as 2^64 - 1: only digits are a size. */
  unsigned long long n = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : (end = (char *)v, 0);
  unsigned shift = 0;
  switch (end == v ? '?' : *end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  case 0: break;
  default: end = (char *)v; break;
  }
  if (end == v || *end || errno) {
    sgc_warn("ignoring %s=%s: not a size (bytes, or a number with k, m or g)", name, v);
    return fallback;
  }
  if (n > (SIZE_MAX >> shift)) {
    sgc_warn("ignoring %s=%s: too large", name, v);
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
