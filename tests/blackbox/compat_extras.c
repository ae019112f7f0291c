/* The rest of bdwgc 8.2's public API that runtimes use (gc.h, gc_mark.h,
 * javaxfc.h, gc_inline.h), each call checked by what it must do:
 *
 *  - toggle-refs: STRONG keeps an otherwise unreachable object, WEAK keeps
 *    it only while reachable (and its entry is then forgotten), DROP
 *    forgets the entry; an object switched from STRONG to WEAK goes.
 *  - GC_set_await_finalize_proc hears of each object queued for
 *    finalization; GC_finalize_all runs every registered finalizer,
 *    reachable objects' too, once; the GC_finalizer_notifier variable is
 *    called in on-demand mode.
 *  - the variables GC_oom_fn and GC_on_heap_resize are the setters' own.
 *  - GC_get_expl_freed_bytes_since_gc counts GC_free's bytes and restarts
 *    at each collection; GC_incr_bytes_freed and GC_incr_bytes_allocd
 *    (bdwgc's private gc_alloc_ptrs.h, which libgc.so.1 exports and its
 *    gctest calls) add to it and to GC_get_bytes_since_gc.
 *  - GC_clear_exclusion_table undoes GC_exclude_static_roots.
 *  - GC_is_tmp_root: the program's data is one, a stack or a GC_add_roots
 *    range is not.
 *  - GC_enumerate_reachable_objects_inner reports every object kept.
 *  - GC_is_visible and GC_same_obj call their print procedures exactly
 *    when the program is wrong.
 *  - the dumps show the heap's runs and describe a finalizable object by
 *    the program's GC_register_describe_type_fn (sgc only).
 *
 * The same source builds against bdwgc (tests/run-against-bdwgc.sh). */
#define GC_THREADS 1
#include <gc.h>
#include <gc/gc_inline.h>
#include <gc/gc_mark.h>
#include <gc/javaxfc.h>

#include <unistd.h>

#include "common.h"

/* GC_oom_fn and friends are deprecated in bdwgc's header, still there. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

struct obj {
  uintptr_t id;
  uintptr_t pattern;
  struct obj *next;
};

static T_NOINLINE struct obj *new_obj(uintptr_t id) {
  struct obj *o = GC_MALLOC(sizeof *o);
  CHECK(o != NULL);
  o->id = id;
  o->pattern = id * 0x9e3779b97f4a7c15u;
  return o;
}

/* ---- toggle-refs ---- */

enum { GROUP = 200, TOGGLED = 3 * GROUP };
static GC_ToggleRefStatus answers[TOGGLED];
static int asked[TOGGLED];
static void *links[TOGGLED]; /* disappearing links, hidden from scanning */

static GC_ToggleRefStatus toggle(void *p) {
  struct obj *o = p;
  CHECK(o->id < TOGGLED && o->pattern == o->id * 0x9e3779b97f4a7c15u, "toggle-ref object corrupted");
  asked[o->id]++;
  return answers[o->id];
}

static T_NOINLINE void make_toggled(void) {
  for (int i = 0; i < TOGGLED; i++) {
    struct obj *o = new_obj((uintptr_t)i);
    answers[i] = i < GROUP ? GC_TOGGLE_REF_STRONG : i < 2 * GROUP ? GC_TOGGLE_REF_WEAK
                                                                  : GC_TOGGLE_REF_DROP;
    CHECK(GC_toggleref_add(o, answers[i] == GC_TOGGLE_REF_STRONG) == GC_SUCCESS);
    links[i] = (void *)GC_HIDE_POINTER(o);
    CHECK(GC_general_register_disappearing_link(&links[i], o) == GC_SUCCESS);
  }
}

static int alive(int from, int to) {
  int n = 0;
  for (int i = from; i < to; i++) n += links[i] != NULL;
  return n;
}

static void collect_clean(int times) {
  for (int i = 0; i < times; i++) {
    t_clear_stack();
    GC_gcollect();
  }
}

static void test_togglerefs(void) {
  GC_set_toggleref_func(toggle);
  CHECK(GC_get_toggleref_func() == toggle);
  make_toggled();
  collect_clean(3);
  CHECK(alive(0, GROUP) == GROUP, "strong: %d of %d kept", alive(0, GROUP), GROUP);
  for (int i = 0; i < GROUP; i++) {
    struct obj *o = (struct obj *)GC_REVEAL_POINTER((GC_word)links[i]);
    CHECK(o->id == (uintptr_t)i && o->pattern == o->id * 0x9e3779b97f4a7c15u, "strong object %d corrupted", i);
  }
  int weak_alive = alive(GROUP, 2 * GROUP), dropped_alive = alive(2 * GROUP, TOGGLED);
  CHECK(weak_alive <= GROUP / 10, "weak: %d of %d kept", weak_alive, GROUP);
  CHECK(dropped_alive <= GROUP / 10, "dropped: %d of %d kept", dropped_alive, GROUP);
  /* Dropped entries are asked once, dead weak ones no more after they go. */
  for (int i = 2 * GROUP; i < TOGGLED; i++) CHECK(asked[i] == 1, "dropped entry %d asked %d times", i, asked[i]);
  int weak_asked_after = 0;
  int snapshot[TOGGLED];
  memcpy(snapshot, asked, sizeof asked);
  collect_clean(1);
  for (int i = GROUP; i < 2 * GROUP; i++)
    if (!links[i]) weak_asked_after += asked[i] != snapshot[i];
  CHECK(weak_asked_after == 0, "%d collected weak entries still asked", weak_asked_after);
  for (int i = 0; i < GROUP; i++)
    CHECK(asked[i] == snapshot[i] + 1 && asked[i] >= 4, "strong entry %d asked %d times", i, asked[i]);
  /* Strong ones turned weak go. */
  for (int i = 0; i < GROUP; i++) answers[i] = GC_TOGGLE_REF_WEAK;
  collect_clean(3);
  CHECK(alive(0, GROUP) <= GROUP / 10, "toggled to weak: %d of %d kept", alive(0, GROUP), GROUP);
  GC_set_toggleref_func(0);
  t_note("toggle-refs: strong kept, weak and dropped collected, toggled collected");
}

/* ---- finalization ---- */

enum { FINALIZED = 500 };
static int finalized[FINALIZED], awaited;

static void count_finalizer(void *p, void *cd) {
  struct obj *o = p;
  CHECK(o->pattern == o->id * 0x9e3779b97f4a7c15u, "finalized object corrupted");
  finalized[(uintptr_t)cd]++;
}
static void await_proc(void *p) {
  struct obj *o = p;
  CHECK(o->id >= 1000 && o->id < 1000 + FINALIZED, "awaited object %p is not one registered", p);
  awaited++;
}
static int notified;
static void notifier(void) { notified++; }

static T_NOINLINE void make_finalizable(struct obj **keep, int from, int to) {
  for (int i = from; i < to; i++) {
    struct obj *o = new_obj(1000 + (uintptr_t)i);
    GC_REGISTER_FINALIZER(o, count_finalizer, (void *)(uintptr_t)i, 0, 0);
    if (keep) keep[i] = o;
  }
}

static struct obj *kept_finalizable[FINALIZED];

static void test_finalization(void) {
  GC_set_await_finalize_proc(await_proc);
  CHECK(GC_get_await_finalize_proc() == await_proc);
  GC_set_finalize_on_demand(1);
  GC_finalizer_notifier = notifier;
  CHECK(GC_get_finalizer_notifier() == notifier);
  make_finalizable(NULL, 0, FINALIZED / 2);
  collect_clean(2);
  CHECK(awaited >= FINALIZED / 2 * 9 / 10, "await proc told of %d of %d", awaited, FINALIZED / 2);
  CHECK(notified >= 1, "the notifier variable's function was not called");
  int ran = GC_invoke_finalizers();
  CHECK(ran == awaited, "%d finalizers ran, %d objects awaited", ran, awaited);
  GC_set_await_finalize_proc(0);
  /* GC_finalize_all: reachable objects' finalizers too, each once. */
  make_finalizable(kept_finalizable, FINALIZED / 2, FINALIZED);
  GC_finalize_all();
  for (int i = FINALIZED / 2; i < FINALIZED; i++) {
    CHECK(finalized[i] == 1, "GC_finalize_all ran object %d's finalizer %d times", i, finalized[i]);
    CHECK(kept_finalizable[i]->pattern == kept_finalizable[i]->id * 0x9e3779b97f4a7c15u);
  }
  collect_clean(2);
  CHECK(GC_invoke_finalizers() == 0, "finalizers left after GC_finalize_all");
  for (int i = 0; i < FINALIZED; i++) CHECK(finalized[i] <= 1, "object %d finalized twice", i);
  GC_set_finalize_on_demand(0);
  GC_finalizer_notifier = 0;
  t_note("finalization: %d awaited, GC_finalize_all ran %d reachable objects' finalizers once",
         awaited, FINALIZED / 2);
}

/* ---- variables, accounting ---- */

static size_t oom_request;
static void *my_oom(size_t n) {
  oom_request = n;
  return NULL;
}
static GC_word resized_to;
static void on_resize(GC_word n) { resized_to = n; }

static void test_variables(void) {
  GC_oom_func default_oom = GC_get_oom_fn();
  GC_oom_fn = my_oom;
  CHECK(GC_get_oom_fn() == my_oom);
  size_t huge = (size_t)1 << 46;
  CHECK(GC_MALLOC_ATOMIC(huge) == NULL);
  CHECK(oom_request >= huge, "GC_oom_fn was not asked (%zu)", oom_request);
  GC_set_oom_fn(default_oom);
  CHECK(GC_oom_fn == default_oom);
  GC_on_heap_resize = on_resize;
  CHECK(GC_get_on_heap_resize() == on_resize);
  size_t before = GC_get_heap_size();
  CHECK(GC_expand_hp(8 << 20));
  CHECK(resized_to > before, "heap resize callback: %lu after %zu", (unsigned long)resized_to, before);
  GC_on_heap_resize = 0;
#ifdef SGC_VERSION_STRING
  /* sgc has no incremental mode, so it protects nothing (bdwgc's answer
   * depends on its build and the page size). */
  CHECK(GC_incremental_protection_needs() == GC_PROTECTS_NONE);
#endif
  t_note("GC_oom_fn and GC_on_heap_resize assigned directly are called");
}

/* Declared by bdwgc's private/gc_alloc_ptrs.h only. */
GC_API void GC_CALL GC_incr_bytes_allocd(size_t bytes);
GC_API void GC_CALL GC_incr_bytes_freed(size_t bytes);

static void test_freed_bytes(void) {
  enum { N = 1000 };
  static void *objs[N];
  for (int i = 0; i < N; i++) objs[i] = GC_MALLOC(64);
  void *large = GC_MALLOC(200000);
  GC_gcollect();
  size_t at_start = GC_get_expl_freed_bytes_since_gc();
  CHECK(at_start == 0, "%zu bytes freed counted right after a collection", at_start);
  for (int i = 0; i < N; i++) GC_FREE(objs[i]);
  size_t small = GC_get_expl_freed_bytes_since_gc();
  CHECK(small >= N * 64 && small <= N * 64 * 2, "%zu bytes counted for %d 64-byte frees", small, N);
  GC_FREE(large);
  size_t with_large = GC_get_expl_freed_bytes_since_gc();
  CHECK(with_large >= small + 200000, "a 200000-byte free counted as %zu", with_large - small);
  GC_gcollect();
  CHECK(GC_get_expl_freed_bytes_since_gc() == 0, "the count did not restart at a collection");
  t_note("freed bytes: %zu for %d 64-byte objects, +%zu for a large one", small, N, with_large - small);
  GC_incr_bytes_freed(12345);
  CHECK(GC_get_expl_freed_bytes_since_gc() == 12345, "GC_incr_bytes_freed(12345) counted as %zu",
        GC_get_expl_freed_bytes_since_gc());
  size_t since = GC_get_bytes_since_gc();
  GC_incr_bytes_allocd(3 << 20);
  CHECK(GC_get_bytes_since_gc() >= since + (3 << 20), "GC_incr_bytes_allocd(3 MiB) counted as %zu",
        GC_get_bytes_since_gc() - since);
  GC_gcollect();
  CHECK(GC_get_bytes_since_gc() < (3 << 20), "the allocated count did not restart at a collection");
  t_note("GC_incr_bytes_freed and GC_incr_bytes_allocd counted");
}

/* ---- roots ---- */

enum { EXCLUDED = 100 };
static void *excluded_slots[EXCLUDED];
static void *excluded_links[EXCLUDED];

static T_NOINLINE void fill_excluded(void) {
  for (int i = 0; i < EXCLUDED; i++) {
    struct obj *o = new_obj(5000 + (uintptr_t)i);
    excluded_slots[i] = o;
    excluded_links[i] = (void *)GC_HIDE_POINTER(o);
    GC_general_register_disappearing_link(&excluded_links[i], o);
  }
}

static int excluded_alive(void) {
  int n = 0;
  for (int i = 0; i < EXCLUDED; i++) n += excluded_links[i] != NULL;
  return n;
}

static void test_roots(void) {
  GC_exclude_static_roots(excluded_slots, excluded_slots + EXCLUDED);
  fill_excluded();
  collect_clean(2);
  CHECK(excluded_alive() <= EXCLUDED / 10, "excluded: %d of %d kept", excluded_alive(), EXCLUDED);
#ifdef SGC_VERSION_STRING
  /* bdwgc 8.2.2 forgets its own exclusions too, and its next collection
   * crashed (SIGSEGV in GC_gcollect); sgc keeps its tables' apart. */
  GC_clear_exclusion_table();
  fill_excluded();
  collect_clean(2);
  CHECK(excluded_alive() == EXCLUDED, "after GC_clear_exclusion_table: %d of %d kept", excluded_alive(), EXCLUDED);
#endif

  int local = 0;
  CHECK(GC_is_tmp_root(excluded_slots), "the program's data is not a temporary root");
  CHECK(!GC_is_tmp_root(&local), "a stack address is a temporary root");
  void **added = malloc(64 * sizeof(void *));
  CHECK(added != NULL);
  GC_add_roots(added, added + 64);
  CHECK(!GC_is_tmp_root(added), "a GC_add_roots range is a temporary root");
  GC_remove_roots(added, added + 64);
  free(added);
  t_note("exclusions cleared; GC_is_tmp_root answers for data, stack and added roots");
}

/* ---- enumeration ---- */

enum { ENUMERATED = 300 };
static struct obj *enumerated_keep[ENUMERATED];
static int enumerated_found[ENUMERATED];

static void found_object(void *p, size_t bytes, void *cd) {
  (void)cd;
  for (int i = 0; i < ENUMERATED; i++)
    if (enumerated_keep[i] == p) {
      CHECK(bytes >= sizeof(struct obj));
      enumerated_found[i]++;
    }
}
static void *enumerate(void *cd) {
  GC_enumerate_reachable_objects_inner(found_object, cd);
  return NULL;
}

static void test_enumeration(void) {
  for (int i = 0; i < ENUMERATED; i++) enumerated_keep[i] = new_obj(7000 + (uintptr_t)i);
  GC_gcollect();
  GC_call_with_alloc_lock(enumerate, NULL);
  for (int i = 0; i < ENUMERATED; i++)
    CHECK(enumerated_found[i] == 1, "kept object %d reported %d times", i, enumerated_found[i]);
  t_note("enumeration reported each of %d kept objects once", ENUMERATED);
}

/* ---- checks and dumps ---- */

static int same_obj_calls, visible_calls;
static void *same_p, *same_q, *visible_p;
static void same_obj_print(void *p, void *q) {
  same_obj_calls++;
  same_p = p;
  same_q = q;
}
static void visible_print(void *p) {
  visible_calls++;
  visible_p = p;
}
static void describe(void *p, char *out) {
  (void)p;
  strcpy(out, "test object");
}

/* Runs the three dumps with standard error going to a file, and reads
 * back what they wrote into OUT. */
static void dump_stderr_into(char *out, size_t size) {
  fflush(stderr);
  FILE *f = tmpfile();
  CHECK(f != NULL);
  int saved = dup(2);
  CHECK(saved >= 0 && dup2(fileno(f), 2) == 2);
  GC_dump_regions();
  GC_dump_finalization();
  GC_print_free_list(GC_I_NORMAL, 2);
  fflush(stderr);
  CHECK(dup2(saved, 2) == 2);
  close(saved);
  rewind(f);
  size_t n = fread(out, 1, size - 1, f);
  out[n] = 0;
  fclose(f);
}

static void test_checks(void) {
  GC_same_obj_print_proc = same_obj_print;
  GC_is_visible_print_proc = visible_print;
  struct obj *a = new_obj(1), *b = new_obj(2);
  GC_same_obj(&a->pattern, a);
  CHECK(same_obj_calls == 0, "GC_same_obj complained of one object");
  GC_same_obj(a, b);
  CHECK(same_obj_calls == 1 && same_p == a && same_q == b, "GC_same_obj did not complain of two");
  GC_is_visible(&a->next);
  CHECK(visible_calls == 0, "GC_is_visible complained of an object's field");
#ifdef SGC_VERSION_STRING
  /* bdwgc 8.2.2 built with threads complains only of heap addresses
   * outside objects (and, seen here, of the caller's own stack). */
  void **plain = malloc(64);
  CHECK(plain != NULL);
  GC_is_visible(&plain[1]);
  CHECK(visible_calls == 1 && visible_p == (void *)&plain[1], "GC_is_visible passed malloc'd memory");
  free(plain);
  int local = 0;
  GC_is_visible(&local);
  CHECK(visible_calls == 1, "GC_is_visible complained of a stack slot");
  void **atomic = GC_MALLOC_ATOMIC(64);
  GC_is_visible(&atomic[1]);
  CHECK(visible_calls == 2 && visible_p == (void *)&atomic[1],
        "GC_is_visible passed a field of a pointer-free object");
#endif
  CHECK(GC_is_valid_displacement(&a->pattern) == &a->pattern);
  GC_register_describe_type_fn(GC_I_NORMAL, describe);
  GC_REGISTER_FINALIZER(a, count_finalizer, (void *)0, 0, 0);
  char dump[16384];
  dump_stderr_into(dump, sizeof dump);
#ifdef SGC_VERSION_STRING
  /* sgc's dumps: the heap's runs, and the finalizer described by the
   * program's function (bdwgc describes only in its debugging build). */
  CHECK(strstr(dump, "small objects") && strstr(dump, "test object"), "dumps: %.400s", dump);
#endif
  GC_REGISTER_FINALIZER(a, 0, 0, 0, 0);
  GC_reachable_here(b);
  t_note("print procedures called exactly for the wrong pointers; dumps read back");
}

int main(void) {
  t_test_name = "compat_extras";
  GC_INIT();
  test_checks(); /* first: its dumps stay short */
  test_togglerefs();
  test_finalization();
  test_variables();
  test_freed_bytes();
  test_roots();
  test_enumeration();
  t_note("passed");
  return 0;
}
