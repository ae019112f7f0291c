/* The definition after libsgc's of a C library call sgc interposes
 * (threads/interpose.c, barrier/mprotect_*.c): dlsym(RTLD_NEXT), cached
 * in *CACHE, so a sanitizer's interceptor in front of sgc's still chains
 * through.  Fatal when there is none. */
#ifndef SGC_NEXT_DEFINITION_H
#define SGC_NEXT_DEFINITION_H

void *next_definition(void *_Atomic *cache, const char *name);

/* Defines next_NAME(), returning NAME's next definition as TYPE. */
#define NEXT(type, name)                                          \
  static type next_##name(void) {                                 \
    static void *_Atomic cache;                                   \
    return (type)next_definition(&cache, #name);                  \
  }

#endif
