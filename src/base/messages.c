/* Errors and warnings: the GC_set_warn_proc and GC_set_abort_func hooks
 * and the fatal path for provable misuse (the out-of-memory hook is the
 * heap's: heap/out_of_memory.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

/* bdwgc's convention: MSG is a printf format, a whole line with its
 * newline, with at most one conversion, for ARG, and it starts "GC
 * Warning: " (bdwgc's WARN macro puts it there): programs that filter
 * or reword warnings in their warn procedure look for it. */
static void default_warn(char *msg, GC_word arg) { fprintf(stderr, msg, (unsigned long)arg); }

static _Atomic(GC_warn_proc) warn_proc = default_warn;
static _Atomic(GC_abort_func) abort_func; /* NULL: print to stderr */

void sgc_warn_line(const char *prefix, const char *text, const char *suffix, GC_word arg) {
  char line[1100];
  size_t n = (size_t)snprintf(line, 64, "%s", prefix);
  for (const char *c = text; *c && n + 2 < 1024; c++) {
    if (*c == '%') line[n++] = '%';
    line[n++] = *c;
  }
  snprintf(line + n, sizeof line - n, "%s", suffix);
  atomic_load(&warn_proc)(line, arg);
}

GC_API void GC_set_warn_proc(GC_warn_proc p) { atomic_store(&warn_proc, p ? p : default_warn); }
GC_API GC_warn_proc GC_get_warn_proc(void) { return atomic_load(&warn_proc); }
GC_API void GC_ignore_warn_proc(char *msg, GC_word arg) { (void)msg; (void)arg; }
GC_API void GC_abort_on_oom(void) { sgc_fatal("out of memory: insufficient memory for an allocation"); }
GC_API void GC_set_abort_func(GC_abort_func f) { atomic_store(&abort_func, f); }
GC_API GC_abort_func GC_get_abort_func(void) { return atomic_load(&abort_func); }

void sgc_warn(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sgc_warn_line(SGC_WARNING_PREFIX, msg, "\n", 0);
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
