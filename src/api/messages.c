/* Errors and warnings: GC_set_warn_proc / GC_set_oom_fn hooks and the
 * fatal path for provable misuse. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "heap/heap.h"

/* bdwgc's convention: MSG is a printf format, a whole line with its
 * newline, with at most one conversion, for ARG. */
static void default_warn(char *msg, GC_word arg) { fprintf(stderr, msg, (unsigned long)arg); }

static _Atomic(GC_warn_proc) warn_proc = default_warn;

/* Hands the warn procedure PREFIX, then TEXT with every '%' doubled (so
 * the line stays a format with no stray conversion), then SUFFIX, which
 * may hold the one "%lu" for ARG. */
static void warn_line(const char *prefix, const char *text, const char *suffix, GC_word arg) {
  char line[1100];
  size_t n = (size_t)snprintf(line, 64, "%s", prefix);
  for (const char *c = text; *c && n + 2 < 1024; c++) {
    if (*c == '%') line[n++] = '%';
    line[n++] = *c;
  }
  snprintf(line + n, sizeof line - n, "%s", suffix);
  atomic_load(&warn_proc)(line, arg);
}

/* Says which of the three it was: a size no heap could hold (SIZE_MAX
 * is what the callers pass for a size computation that overflowed, as
 * bdwgc's do), the program's heap limit, or the OS refusing memory. */
/* Through the warn procedure (GC_ignore_warn_proc silences it), the
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
  warn_line("sgc: out of memory: ", why, "%lu MiB)\n", (GC_word)heap_mib);
  return NULL;
}

static _Atomic(GC_abort_func) abort_func; /* NULL: print to stderr */
/* bdwgc's variable, which older programs assign directly: plain, so the
 * program's stores are ordinary ones, and read here with relaxed atomic
 * builtins (a function installed is seen by the next failure). */
SGC_EXPORT GC_oom_func GC_oom_fn = default_oom;

GC_API void GC_set_warn_proc(GC_warn_proc p) { atomic_store(&warn_proc, p ? p : default_warn); }
GC_API GC_warn_proc GC_get_warn_proc(void) { return atomic_load(&warn_proc); }
GC_API void GC_ignore_warn_proc(char *msg, GC_word arg) { (void)msg; (void)arg; }
GC_API void GC_set_oom_fn(GC_oom_func f) {
  __atomic_store_n(&GC_oom_fn, f ? f : default_oom, __ATOMIC_RELAXED);
}
GC_API GC_oom_func GC_get_oom_fn(void) { return __atomic_load_n(&GC_oom_fn, __ATOMIC_RELAXED); }
GC_API void GC_abort_on_oom(void) { sgc_fatal("out of memory: insufficient memory for an allocation"); }
GC_API void GC_set_abort_func(GC_abort_func f) { atomic_store(&abort_func, f); }
GC_API GC_abort_func GC_get_abort_func(void) { return atomic_load(&abort_func); }

void sgc_warn(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  warn_line("sgc: warning: ", msg, "\n", 0);
}

void sgc_fatal(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* bdwgc's rule: a client's abort function replaces the message, then
   * the process aborts all the same. */
  GC_abort_func f = atomic_load(&abort_func);
  if (f) f(msg);
  else fprintf(stderr, "sgc: fatal: %s\n", msg);
  abort();
}

/* bdwgc calls the oom function and returns what it returns. */
void *sgc_out_of_memory(size_t bytes) {
  GC_oom_func f = __atomic_load_n(&GC_oom_fn, __ATOMIC_RELAXED);
  return f ? f(bytes) : default_oom(bytes);
}
