/* bdwgc's debugging allocation (GC_DEBUG, GC_debug_*) and leak finding
 * (GC_find_leak).  A debugging object carries a header before the
 * program's bytes (where it was allocated, its size, a check word) and a
 * check word right after them.  They reveal:
 *  - an overwrite past the end (or of the header): checked for every
 *    debugging object at each collection (reported at each, as bdwgc
 *    does) and by GC_debug_free;
 *  - a double free: GC_debug_free keeps a collectable object, filled with
 *    a pattern, until the collector finds it unreachable, so a second
 *    GC_debug_free finds it marked freed;
 *  - in leak mode, an object that became unreachable without being
 *    freed: reported once, with its file and line, and kept.
 * Objects from the plain calls carry nothing and are not checked; in
 * leak mode collect/leak_find.c reports them, through the same list.
 *
 * All debugging objects are on one list, linked through their headers by
 * hidden (complemented) pointers so the list keeps none alive.  The list
 * is walked once per collection, after marking and before sweeping, with
 * heap_lock held (collect.c); the reports are printed after the
 * collection has let go of its locks, since a program's print or warn
 * procedure may allocate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "barrier/barrier.h"
#include "collect/finalize.h"
#include "common.h"
#include "gc/gc_mark.h"
#include "heap/heap.h"
#include "mark/custom_kind.h"
#include "collect/debug_alloc.h"

enum {
  DEBUG_FREED = 1,         /* GC_debug_free'd, kept until unreachable */
  DEBUG_LEAK_REPORTED = 2, /* reported as leaked: kept, not reported again */
  DEBUG_UNCOLLECTABLE = 4,
  /* A collection found it reachable (or uncollectable): from then on the
   * last collection's marks say whether it is held (collect/backptr.c).
   * Without it the object came after the last collection, which bdwgc's
   * back pointers call "not marked". */
  DEBUG_SURVIVED = 8,
};
#define DEBUG_START_MAGIC ((uintptr_t)0xfedcedcbfedcedcbULL)
#define DEBUG_END_MAGIC ((uintptr_t)0xbcdecdefbcdecdefULL)
#define DEBUG_FREED_BYTE 0xdb

struct debug_header {
  uintptr_t hidden_next, hidden_prev; /* ~address: the list retains nothing */
  const char *file;
  int32_t line;
  uint16_t flags; /* DEBUG_*, under debug_lock */
  int16_t kind;   /* bdwgc's numbering, for GC_debug_realloc */
  size_t size;    /* the program's bytes */
  uintptr_t magic; /* DEBUG_START_MAGIC ^ the header's address */
};
_Static_assert(sizeof(struct debug_header) % GRANULE_BYTES == 0, "header keeps granule alignment");
enum { HEADER_BYTES = sizeof(struct debug_header), TRAILER_BYTES = sizeof(uintptr_t) };

SGC_EXPORT const size_t GC_debug_header_size = HEADER_BYTES;
GC_API size_t GC_get_debug_header_size(void) { return HEADER_BYTES; }

static pthread_mutex_t debug_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t list_hidden; /* ~first header, or 0 */
static size_t list_length;
/* Set by the first debugging allocation; collections walk nothing before
 * (relaxed: a collection that misses the first object misses it unmarked
 * only if it was already dropped, which no report needs). */
static atomic_bool debug_started;

static struct debug_header *reveal(uintptr_t h) { return h ? (struct debug_header *)~h : NULL; }
static uintptr_t hide(struct debug_header *h) { return h ? ~(uintptr_t)h : 0; }

/* ---- the reports, gathered under debug_lock, printed outside it ---- */

enum report_what { REPORT_LEAK, REPORT_SMASH, REPORT_LEAK_PLAIN };
struct report {
  enum report_what what;
  void *object, *where;
  const char *file;
  int line;
  size_t size;
  int kind;
};
enum { REPORTS_MAX = 256 };
static struct report reports[REPORTS_MAX];
static unsigned report_count, reports_dropped;
static atomic_uint reports_pending;
/* The walk found the list broken (after_mark); said once, when printing. */
static bool list_broken, list_broken_told;
/* One printer at a time: collections in several threads may end at once. */
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void *user_of(struct debug_header *h) { return (char *)h + HEADER_BYTES; }

static void report_add(enum report_what what, struct debug_header *h, void *where) {
  if (report_count == REPORTS_MAX) {
    reports_dropped++;
    return;
  }
  reports[report_count++] = (struct report){what, user_of(h), where, h->file, h->line, h->size,
                                            h->kind};
  atomic_store_explicit(&reports_pending, 1, memory_order_relaxed);
}

void debug_report_plain_leak(void *object, size_t size, bool atomic) {
  pthread_mutex_lock(&debug_lock);
  if (report_count == REPORTS_MAX) {
    reports_dropped++;
  } else {
    reports[report_count++] =
        (struct report){REPORT_LEAK_PLAIN, object, NULL, NULL, 0, size, atomic ? GC_I_PTRFREE : GC_I_NORMAL};
    atomic_store_explicit(&reports_pending, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&debug_lock);
}

/* One debugging object in bdwgc's words (its GC_print_obj): a kind the
 * program made is named by its number and descriptor. */
static void print_object_line(void *user, const char *file, int line, size_t size, int kind) {
  const char *name = kind == GC_I_PTRFREE ? "PTRFREE"
                     : kind == GC_I_NORMAL ? "NORMAL"
                     : kind == 2         ? "UNCOLLECTABLE"
                     : kind == 3         ? "ATOMIC_UNCOLLECTABLE"
                                         : NULL;
  if (!file) file = "?";
  if (name) {
    GC_err_printf("%p (%s:%d, sz= %lu, %s)\n", user, file, line, (unsigned long)size, name);
    return;
  }
  unsigned long descr =
      custom_kind_valid(kind) ? (unsigned long)custom_kinds[kind - KIND_COUNT].descriptor : 0;
  GC_err_printf("%p (%s:%d, sz= %lu, kind= %d, descr= 0x%lx)\n", user, file, line,
                (unsigned long)size, kind, descr);
}

static void print_smash(const char *what, const struct report *r) {
  GC_err_printf("%s%s%p in or near object at %p (%s:%d, sz= %lu)\n", what, *what ? " " : "",
                r->where, r->object,
                r->file ? r->file : "?", r->line, (unsigned long)r->size);
}

/* bdwgc's GC_print_all_errors: the leaks in one list, then the smashes. */
void debug_objects_print_reports(void) {
  if (!atomic_load_explicit(&reports_pending, memory_order_relaxed)) return;
  static struct report copy[REPORTS_MAX];
  pthread_mutex_lock(&print_lock);
  pthread_mutex_lock(&debug_lock);
  bool tell_broken = list_broken && !list_broken_told;
  list_broken_told |= tell_broken;
  unsigned n = report_count, dropped = reports_dropped;
  memcpy(copy, reports, n * sizeof *copy);
  report_count = reports_dropped = 0;
  atomic_store_explicit(&reports_pending, 0, memory_order_relaxed);
  pthread_mutex_unlock(&debug_lock);
  unsigned leaks = 0, smashes = 0;
  for (unsigned i = 0; i < n; i++) {
    if (copy[i].what == REPORT_SMASH) smashes++;
    else leaks++;
  }
  if (leaks) {
    GC_err_printf("Found %u leaked objects:\n", leaks);
    for (unsigned i = 0; i < n; i++)
      if (copy[i].what == REPORT_LEAK)
        print_object_line(copy[i].object, copy[i].file, copy[i].line, copy[i].size, copy[i].kind);
      else if (copy[i].what == REPORT_LEAK_PLAIN) /* bdwgc's words for an object without a header */
        GC_err_printf("object at %p of appr. %lu bytes (%s)\n", copy[i].object,
                      (unsigned long)copy[i].size,
                      copy[i].kind == GC_I_PTRFREE ? "atomic" : "composite");
  }
  if (smashes) {
    GC_err_printf("GC_check_heap_block: found %u smashed heap objects:\n", smashes);
    for (unsigned i = 0; i < n; i++)
      if (copy[i].what == REPORT_SMASH) print_smash("", &copy[i]);
  }
  if (dropped) GC_err_printf("(and %u more leaked or smashed objects not listed)\n", dropped);
  pthread_mutex_unlock(&print_lock);
  if ((leaks || smashes || dropped) && sgc_settings.abort_on_leak)
    sgc_fatal("Leaked or smashed objects encountered (GC_ABORT_ON_LEAK)");
  if (tell_broken)
    sgc_warn("an object from a GC_debug_* call was freed with GC_free, not GC_debug_free "
             "(GC_FREE): older debugging objects are no longer checked");
}

void debug_objects_fork_lock(bool take) {
  if (take) pthread_mutex_lock(&debug_lock);
  else pthread_mutex_unlock(&debug_lock);
}

/* bdwgc collects once more at exit in leak mode, so leaks made last are
 * reported too. */
static void collect_at_exit(void) {
  if (__atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED)) GC_gcollect();
}
static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;
static void register_at_exit(void) { atexit(collect_at_exit); }
void debug_objects_leak_mode_on(void) { pthread_once(&at_exit_once, register_at_exit); }

/* ---- the checks ---- */

static uintptr_t end_check_word(const struct debug_header *h) {
  return DEBUG_END_MAGIC ^ (uintptr_t)h;
}

/* The first overwritten check byte, or NULL. */
static void *smashed_at(struct debug_header *h) {
  if (h->magic != (DEBUG_START_MAGIC ^ (uintptr_t)h)) return &h->magic;
  uintptr_t want = end_check_word(h);
  const unsigned char *end = (const unsigned char *)user_of(h) + h->size;
  if (memcmp(end, &want, TRAILER_BYTES) == 0) return NULL;
  for (unsigned i = 0; i < TRAILER_BYTES; i++)
    if (end[i] != ((const unsigned char *)&want)[i]) return (void *)(end + i);
  return NULL;
}

/* The header of P when P is what a debugging call returned, else NULL. */
static struct debug_header *header_of(const void *p) {
  void *base = GC_base((void *)p);
  if (!base || (char *)p - (char *)base != HEADER_BYTES) return NULL;
  struct debug_header *h = base;
  /* The start check word is what says "debugging object"; a smashed one
   * is taken for a plain object. */
  return h->magic == (DEBUG_START_MAGIC ^ (uintptr_t)h) ? h : NULL;
}

static void unlink_locked(struct debug_header *h) {
  struct debug_header *next = reveal(h->hidden_next), *prev = reveal(h->hidden_prev);
  if (next) next->hidden_prev = h->hidden_prev;
  if (prev) prev->hidden_next = h->hidden_next;
  else list_hidden = h->hidden_next;
  h->hidden_next = h->hidden_prev = 0;
  list_length--;
}

/* After marking, heap_lock held, before the sweep reads the marks (no
 * thread sweeps or formats a page until then: collect.c).  Unreachable
 * objects leave the list (the sweep reclaims them), but in leak mode an
 * unreachable object never freed is reported and kept marked. */
void debug_objects_after_mark(void) {
  if (!atomic_load_explicit(&debug_started, memory_order_relaxed)) return;
  pthread_mutex_lock(&debug_lock);
  bool leak_mode = __atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED) != 0;
  size_t seen = 0, limit = list_length, dropped = 0;
  for (struct debug_header *h = reveal(list_hidden), *next, *prev = NULL; h; prev = h, h = next) {
    /* A debugging object the program gave to GC_free (not GC_FREE) left
     * the list pointing at reused memory: the list is cut there, so the
     * walk neither loops nor reads garbage (its objects go unchecked). */
    if (++seen > limit || h->magic != (DEBUG_START_MAGIC ^ (uintptr_t)h)) {
      if (prev) prev->hidden_next = 0;
      else list_hidden = 0;
      list_length = seen - 1 - dropped;
      list_broken = true;
      atomic_store_explicit(&reports_pending, 1, memory_order_relaxed);
      break;
    }
    next = reveal(h->hidden_next);
    /* As bdwgc's GC_check_heap: every collection reports every smashed
     * object it still holds. */
    void *smash = smashed_at(h);
    if (smash) report_add(REPORT_SMASH, h, smash);
    if ((h->flags & DEBUG_UNCOLLECTABLE) || object_is_marked(h)) {
      h->flags |= DEBUG_SURVIVED;
      continue;
    }
    if (leak_mode && !(h->flags & DEBUG_FREED)) {
      if (!(h->flags & DEBUG_LEAK_REPORTED)) report_add(REPORT_LEAK, h, NULL);
      h->flags |= DEBUG_LEAK_REPORTED;
      struct page_header *page;
      uintptr_t base = object_start_rule((uintptr_t)h, &page, true);
      if (base) mark_bit_set(page, base);
      continue;
    }
    unlink_locked(h);
    dropped++;
    h = prev; /* still the last node kept */
  }
  pthread_mutex_unlock(&debug_lock);
}

/* ---- what back pointers and backtraces read (collect/backptr.c) ---- */

bool debug_object_view(uintptr_t base, size_t bytes, struct debug_object *out) {
  struct debug_header *h = (struct debug_header *)base;
  if (bytes < HEADER_BYTES + TRAILER_BYTES || h->magic != (DEBUG_START_MAGIC ^ base)) return false;
  /* Written before the program had the pointer; flags under debug_lock,
   * which the world stopped or the caller holds (relaxed: one field). */
  uint16_t flags = __atomic_load_n(&h->flags, __ATOMIC_RELAXED);
  *out = (struct debug_object){user_of(h), h->file, h->line, h->size, h->kind,
                               (flags & DEBUG_SURVIVED) != 0};
  return true;
}

void debug_print_object(const struct debug_object *d) {
  print_object_line(d->user, d->file, d->line, d->size, d->kind);
}

/* ---- allocation ---- */

static void *debug_allocate(size_t bytes, int kind, const char *file, int line) {
  if (bytes > SIZE_MAX - HEADER_BYTES - TRAILER_BYTES) return sgc_out_of_memory(SIZE_MAX); /* a size that overflowed */
  if (!atomic_load_explicit(&debug_started, memory_order_relaxed)) {
    /* Without interior pointers, the program's pointer must still keep
     * the object (bdwgc registers the same displacement). */
    GC_register_displacement(HEADER_BYTES);
    atomic_store_explicit(&debug_started, true, memory_order_relaxed);
  }
  struct debug_header *h = GC_generic_or_special_malloc(HEADER_BYTES + bytes + TRAILER_BYTES, kind);
  if (!h) return NULL;
  h->file = file;
  h->line = line;
  h->size = bytes;
  h->kind = (int16_t)kind;
  h->flags = kind == 2 || kind == 3 ? DEBUG_UNCOLLECTABLE : 0;
  h->magic = DEBUG_START_MAGIC ^ (uintptr_t)h;
  uintptr_t end = end_check_word(h);
  memcpy((char *)user_of(h) + bytes, &end, TRAILER_BYTES);
  pthread_mutex_lock(&debug_lock);
  h->hidden_prev = 0;
  h->hidden_next = list_hidden;
  if (list_hidden) reveal(list_hidden)->hidden_prev = hide(h);
  list_hidden = hide(h);
  list_length++;
  pthread_mutex_unlock(&debug_lock);
  return user_of(h);
}

GC_API void *GC_debug_malloc(size_t n, const char *file, int line) {
  return debug_allocate(n, GC_I_NORMAL, file, line);
}
GC_API void *GC_debug_malloc_atomic(size_t n, const char *file, int line) {
  return debug_allocate(n, GC_I_PTRFREE, file, line);
}
GC_API void *GC_debug_malloc_uncollectable(size_t n, const char *file, int line) {
  return debug_allocate(n, 2, file, line);
}
GC_API void *GC_debug_malloc_atomic_uncollectable(size_t n, const char *file, int line) {
  return debug_allocate(n, 3, file, line);
}
GC_API void *GC_debug_malloc_ignore_off_page(size_t n, const char *file, int line) {
  return debug_allocate(n, GC_I_NORMAL, file, line);
}
GC_API void *GC_debug_malloc_atomic_ignore_off_page(size_t n, const char *file, int line) {
  return debug_allocate(n, GC_I_PTRFREE, file, line);
}
GC_API void *GC_debug_malloc_stubborn(size_t n, const char *file, int line) {
  return debug_allocate(n, GC_I_NORMAL, file, line);
}
GC_API void *GC_debug_generic_or_special_malloc(size_t n, int kind, const char *file, int line) {
  return debug_allocate(n, kind, file, line);
}
GC_API void *GC_debug_malloc_replacement(size_t n) {
  return debug_allocate(n, GC_I_NORMAL, "(malloc replacement)", 0);
}

static void *copy_debug(const void *s, size_t n, size_t alloc, const char *file, int line) {
  char *copy = debug_allocate(alloc, GC_I_PTRFREE, file, line);
  if (copy) {
    memcpy(copy, s, n);
    memset(copy + n, 0, alloc - n); /* pointer-free objects are not cleared */
  }
  return copy;
}
GC_API char *GC_debug_strdup(const char *s, const char *file, int line) {
  return s ? copy_debug(s, strlen(s), strlen(s) + 1, file, line) : NULL;
}
GC_API char *GC_debug_strndup(const char *s, size_t max, const char *file, int line) {
  if (!s) return NULL;
  size_t n = strnlen(s, max);
  return copy_debug(s, n, n + 1, file, line);
}
GC_API wchar_t *GC_debug_wcsdup(const wchar_t *, const char *file, int line);
GC_API wchar_t *GC_debug_wcsdup(const wchar_t *s, const char *file, int line) {
  if (!s) return NULL;
  size_t n = wcslen(s) * sizeof(wchar_t);
  return copy_debug(s, n, n + sizeof(wchar_t), file, line);
}

/* ---- freeing ---- */

static void report_now(const char *what, struct debug_header *h, void *where) {
  struct report r = {REPORT_SMASH, user_of(h), where, h->file, h->line, h->size, h->kind};
  print_smash(what, &r);
}

GC_API void GC_debug_free(void *p) {
  if (!p) return;
  void *base = GC_base(p);
  if (!base) sgc_fatal("GC_debug_free(%p): not an object of the collected heap", p);
  struct debug_header *h = header_of(p);
  if (!h) {
    GC_err_printf("GC_debug_free called on pointer %p w/o debugging info\n", p);
    GC_free(p); /* GC_free says what is wrong if P is no object's start */
    return;
  }
  pthread_mutex_lock(&debug_lock);
  uint16_t flags = h->flags;
  void *smash = smashed_at(h);
  bool release = (flags & DEBUG_UNCOLLECTABLE) || __atomic_load_n(&GC_find_leak, __ATOMIC_RELAXED);
  if (!(flags & DEBUG_FREED)) {
    h->flags |= DEBUG_FREED;
    if (release) unlink_locked(h);
  }
  pthread_mutex_unlock(&debug_lock);
  if (flags & DEBUG_FREED) {
    report_now("GC_debug_free: found previously deallocated (?) object at", h, p);
    return; /* a double free is ignored */
  }
  if (smash)
    report_now("GC_debug_free: found smashed location at", h, smash);
  if (release) {
    GC_free(base);
    return;
  }
  /* Kept, its bytes overwritten so a use after free shows, until the
   * collector finds it unreachable (debug_objects_after_mark). */
  memset(p, DEBUG_FREED_BYTE, h->size);
}

GC_API void *GC_debug_realloc(void *p, size_t n, const char *file, int line) {
  if (!p) return GC_debug_malloc(n, file, line);
  if (n == 0) {
    GC_debug_free(p);
    return NULL;
  }
  struct debug_header *h = header_of(p);
  if (!h) {
    GC_err_printf("GC_debug_realloc called on pointer %p w/o debugging info\n", p);
    return GC_realloc(p, n);
  }
  void *fresh = debug_allocate(n, h->kind, file, line);
  if (!fresh) return NULL;
  memcpy(fresh, p, h->size < n ? h->size : n);
  barrier_note_object(fresh); /* for the manual barrier, as GC_realloc */
  GC_debug_free(p);
  return fresh;
}
GC_API void *GC_debug_realloc_replacement(void *p, size_t n) {
  return GC_debug_realloc(p, n, "(realloc replacement)", 0);
}

/* ---- finalizers: registered on the object's start, run with the
 * program's pointer ---- */

struct debug_closure {
  GC_finalization_proc fn;
  void *cd;
};

static void invoke_debug_finalizer(void *base, void *data) {
  struct debug_closure *c = data;
  c->fn((char *)base + HEADER_BYTES, c->cd);
}

typedef void (*register_fn)(void *, GC_finalization_proc, void *, GC_finalization_proc *, void **);

static void register_debug(register_fn reg, void *obj, GC_finalization_proc fn, void *cd,
                           GC_finalization_proc *ofn, void **ocd) {
  struct debug_header *h = obj ? header_of(obj) : NULL;
  if (!h) {
    reg(obj, fn, cd, ofn, ocd); /* a plain object: registered as it is */
    return;
  }
  struct debug_closure *c = NULL;
  if (fn) {
    c = GC_malloc(sizeof *c); /* kept alive as the finalizer's client data */
    if (!c) {
      sgc_warn("GC_debug_register_finalizer: out of memory");
      return;
    }
    c->fn = fn;
    c->cd = cd;
  }
  GC_finalization_proc old_fn;
  void *old_cd;
  reg(h, c ? invoke_debug_finalizer : NULL, c, &old_fn, &old_cd);
  if (old_fn == invoke_debug_finalizer && old_cd) {
    old_fn = ((struct debug_closure *)old_cd)->fn;
    old_cd = ((struct debug_closure *)old_cd)->cd;
  }
  if (ofn) *ofn = old_fn;
  if (ocd) *ocd = old_cd;
}

GC_API void GC_debug_register_finalizer(void *obj, GC_finalization_proc fn, void *cd,
                                        GC_finalization_proc *ofn, void **ocd) {
  register_debug(GC_register_finalizer, obj, fn, cd, ofn, ocd);
}
GC_API void GC_debug_register_finalizer_ignore_self(void *obj, GC_finalization_proc fn, void *cd,
                                                    GC_finalization_proc *ofn, void **ocd) {
  register_debug(GC_register_finalizer_ignore_self, obj, fn, cd, ofn, ocd);
}
GC_API void GC_debug_register_finalizer_no_order(void *obj, GC_finalization_proc fn, void *cd,
                                                 GC_finalization_proc *ofn, void **ocd) {
  register_debug(GC_register_finalizer_no_order, obj, fn, cd, ofn, ocd);
}
GC_API void GC_debug_register_finalizer_unreachable(void *obj, GC_finalization_proc fn, void *cd,
                                                    GC_finalization_proc *ofn, void **ocd) {
  register_debug(GC_register_finalizer_unreachable, obj, fn, cd, ofn, ocd);
}
