/* The definition after libsgc's of a C library call sgc interposes
 * (threads/interpose.c, barrier/mprotect_*.c): dlsym(RTLD_NEXT), cached
 * in *CACHE, so a sanitizer's interceptor in front of sgc's still chains
 * through.  Fatal when there is none. */
#ifndef SGC_NEXT_DEFINITION_H
#define SGC_NEXT_DEFINITION_H

void *next_definition(void *_Atomic *cache, const char *name);
/* Finds NAME's next definition into *CACHE now, if there is one (a call
 * finds out, and says, if there is none): at start-up, for calls that may
 * come where dlsym may not run (a signal handler, a GC thread). */
void next_definition_prime(void *_Atomic *cache, const char *name);

/* next_definition, preferring NAME's symbol of VERSION when the next
 * object has one. */
void *next_definition_version(void *_Atomic *cache, const char *name, const char *version);

/* Defines next_NAME(), returning NAME's next definition as TYPE. */
#define NEXT(type, name)                                          \
  static void *_Atomic next_cache_##name;                         \
  static type next_##name(void) {                                 \
    return (type)next_definition(&next_cache_##name, #name);      \
  }

/* next_NAME(), as NEXT, preferring NAME's symbol of VERSION. */
#define NEXT_VERSION(type, name, version)                                      \
  static void *_Atomic next_cache_##name;                                      \
  static type next_##name(void) {                                              \
    return (type)next_definition_version(&next_cache_##name, #name, version);  \
  }

#endif
