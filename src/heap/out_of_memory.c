/* Out of memory: bdwgc's GC_oom_fn hook, and the default message that
 * says why (a size no heap holds, the program's limit, or the OS). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "heap/heap.h"

/* Says which of the three it was: a size no heap could hold (SIZE_MAX
 * is what the callers pass for a size computation that overflowed, as
 * bdwgc's do), the program's heap limit, or the OS refusing memory.
 * Through the warn procedure (GC_ignore_warn_proc silences it), the
 * heap's size in MiB its argument, as bdwgc's "Out of Memory!" line. */
static void *default_oom(size_t bytes) {
  size_t heap_mib = heap_size_bytes() >> 20, limit = sgc_settings.max_heap_bytes;
  int refusal = heap_grow_refusal();
  char why[256];
  if (bytes == SIZE_MAX)
    snprintf(why, sizeof why, "cannot allocate SIZE_MAX bytes: a size that overflowed (heap ");
  else if (bytes >> ADDRESS_BITS)
    snprintf(why, sizeof why, "cannot allocate %zu bytes: more than a heap can hold "
             "(%d-bit addresses; heap ", bytes, (int)ADDRESS_BITS);
  else if (limit && (bytes > limit || refusal == HEAP_REFUSED_LIMIT))
    snprintf(why, sizeof why, "cannot allocate %zu bytes: the heap limit of %zu MiB "
             "is reached (SGC_MAXIMUM_HEAP_SIZE, GC_set_max_heap_size; heap ", bytes, limit >> 20);
  else
    snprintf(why, sizeof why, "cannot allocate %zu bytes: the system refused more "
             "memory (%s; heap ", bytes, strerror(refusal > 0 ? refusal : ENOMEM));
  sgc_warn_line(SGC_WARNING_PREFIX "out of memory: ", why, "%lu MiB)\n", (GC_word)heap_mib);
  return NULL;
}

/* bdwgc's variable, which older programs assign directly: plain, so the
 * program's stores are ordinary ones, and read here with relaxed atomic
 * builtins (a function installed is seen by the next failure). */
SGC_EXPORT GC_oom_func GC_oom_fn = default_oom;

GC_API void GC_set_oom_fn(GC_oom_func f) {
  __atomic_store_n(&GC_oom_fn, f ? f : default_oom, __ATOMIC_RELAXED);
}
GC_API GC_oom_func GC_get_oom_fn(void) { return __atomic_load_n(&GC_oom_fn, __ATOMIC_RELAXED); }

/* bdwgc calls the oom function and returns what it returns. */
void *sgc_out_of_memory(size_t bytes) {
  GC_oom_func f = __atomic_load_n(&GC_oom_fn, __ATOMIC_RELAXED);
  return f ? f(bytes) : default_oom(bytes);
}
