#include "base/next_definition.h"

#include <dlfcn.h>
#include <stdatomic.h>

#include "common.h"

/* Relaxed: every thread finds the same definition. */
void *next_definition(void *_Atomic *cache, const char *name) {
  void *f = atomic_load_explicit(cache, memory_order_relaxed);
  if (f) return f;
  f = dlsym(RTLD_NEXT, name);
  if (!f) sgc_fatal("%s: no definition after libsgc's to call (%s)", name, dlerror());
  atomic_store_explicit(cache, f, memory_order_relaxed);
  return f;
}

void next_definition_prime(void *_Atomic *cache, const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (f) atomic_store_explicit(cache, f, memory_order_relaxed);
}

/* NAME at VERSION when the next object defines that version: glibc keeps
 * an old ABI of some calls beside the default one (pthread_cond_wait's
 * GLIBC_2.2.5 beside GLIBC_2.3.2), and an unversioned lookup has not
 * always returned the default. */
void *next_definition_version(void *_Atomic *cache, const char *name, const char *version) {
  void *f = atomic_load_explicit(cache, memory_order_relaxed);
  if (f) return f;
  f = dlvsym(RTLD_NEXT, name, version);
  if (!f) return next_definition(cache, name);
  atomic_store_explicit(cache, f, memory_order_relaxed);
  return f;
}
