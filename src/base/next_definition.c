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
