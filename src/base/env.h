/* Settings from the environment, checked.  A value that is not what the
 * README says the variable takes (not a number, out of range, trailing
 * junk) is ignored with a warning that names it: a typo must never change
 * a collector's configuration silently (SGC_MARKERS=-3 used to ask for
 * 2^32 GC threads and got 1,023, SGC_SPLIT_BYTES=abc turned the SLO
 * variant off). */
#ifndef SGC_ENV_H
#define SGC_ENV_H

#include <stddef.h>

/* NAME's value, or NULL when it is unset or empty. */
const char *env_value(const char *name);
/* A's name when A is set, else B's (SGC_X before bdwgc's GC_X). */
const char *env_first(const char *a, const char *b);
/* A byte count with an optional k, m or g suffix. */
size_t env_size(const char *name, size_t fallback);
/* The same, at most MAX: more is ignored with a warning. */
size_t env_size_in(const char *name, size_t fallback, size_t max);
/* An integer from MIN to MAX. */
long env_long_in(const char *name, long fallback, long min, long max);
/* A number from MIN up. */
double env_double_min(const char *name, double fallback, double min);
/* One of a setting's words, as the value paired with it. */
struct env_word {
  const char *word;
  int value;
};
int env_choice(const char *name, const struct env_word *words, unsigned count, int fallback);
#define ENV_WORDS_COUNT(words) (unsigned)(sizeof(words) / sizeof((words)[0]))

#endif
