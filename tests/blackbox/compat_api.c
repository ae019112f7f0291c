/* compat_api: the rest of bdwgc's API that programs use beside GC_malloc
 * (gc_mark.h, gc_typed.h, gc_gcj.h and gc.h's callbacks), with the
 * behaviour bdwgc gives them; the same source passes against bdwgc
 * (run-against-bdwgc.sh).
 *
 *   1. GC_malloc_many: a list of distinct, zeroed objects (but for the
 *      link) that stays alive through its head.
 *   2. GC_generic_malloc with bdwgc's predefined kinds,
 *      and GC_get_kind_and_size reading them back.
 *   3. Typed and gcj objects keep what they point to.
 *   4. GC_set_on_collection_event sees a collection's events in order.
 *   5. GC_set_push_other_roots: objects reachable only from memory the
 *      collector does not scan survive while the callback pushes it, and
 *      die once it no longer does.
 *   6. GC_set_on_heap_resize hears GC_expand_hp.
 *   7. GC_set_disable_automatic_collection stops allocation-triggered
 *      collections only.
 *   7b. GC_get_prof_stats agrees with the single getters and writes no
 *      further than the size it is given; GC_get_size_map_at.
 *   8. GC_set_mark_bit from a push_other_roots callback keeps an object no
 *      root points to alive through that collection.
 *   9. GC_register_has_static_roots_callback is asked about the segment
 *      holding the program's own globals, and when it says no, an object
 *      only a global points to dies (last: the test's globals stop being
 *      roots then).
 */
#define GC_THREADS /* GC_get_parallel */
#define GC_REQUIRE_WCSDUP /* declared by both; Debian's bdwgc leaves it out */
#include <gc.h>
#include <gc/gc_gcj.h>
#include <gc/gc_mark.h>
#include <gc/gc_typed.h>

#include <pthread.h>
#include <unistd.h>
#include <wchar.h>

#include "common.h"

enum { HIDDEN = 200 };
/* bdwgc's predefined kinds (its gc_inline.h names them GC_I_*). */
enum { KIND_PTRFREE = 0, KIND_NORMAL = 1 };

static void collect(void) {
  GC_gcollect();
  GC_invoke_finalizers();
}

static void many(void) {
  void *list = GC_malloc_many(48);
  CHECK(list != NULL);
  collect(); /* only the head is a root now */
  int n = 0;
  for (void *p = list; p; p = GC_NEXT(p), n++) {
    for (size_t w = 1; w < 48 / sizeof(void *); w++)
      CHECK(((void **)p)[w] == NULL, "object %d word %zu not zero", n, w);
    CHECK(GC_base(p) == p, "object %d is not an object start", n);
    CHECK(GC_NEXT(p) != p, "object %d links to itself", n);
  }
  CHECK(n >= 1, "an empty list");
  t_note("GC_malloc_many(48): %d objects\n", n);
}

static void kinds(void) {
  size_t size = 0;
  void *normal = GC_generic_malloc(40, KIND_NORMAL);
  void *ptrfree = GC_generic_malloc_ignore_off_page(40, KIND_PTRFREE);
  CHECK(normal && ptrfree);
  CHECK(GC_get_kind_and_size(normal, &size) == KIND_NORMAL, "normal object's kind");
  CHECK(size >= 40, "size %zu", size);
  CHECK(GC_get_kind_and_size(ptrfree, &size) == KIND_PTRFREE, "pointer-free object's kind");
  /* A normal object is scanned: what it points to survives. */
  void **holder = GC_generic_malloc(sizeof(void *), KIND_NORMAL);
  long *target = GC_malloc_atomic(64);
  CHECK(holder && target);
  target[0] = 0x5eed;
  holder[0] = target;
  target = NULL;
  collect();
  CHECK(((long *)holder[0])[0] == 0x5eed, "the pointee of a GC_generic_malloc object");
}

struct typed {
  long number;
  void *pointer;
};

static void typed_and_gcj(void) {
  GC_word bitmap[GC_BITMAP_SIZE(struct typed)] = {0};
  GC_set_bit(bitmap, GC_WORD_OFFSET(struct typed, pointer));
  GC_descr d = GC_make_descriptor(bitmap, GC_WORD_LEN(struct typed));
  struct typed *t = GC_malloc_explicitly_typed(sizeof *t, d);
  CHECK(t != NULL);
  long *pointee = GC_malloc_atomic(32);
  pointee[0] = 77;
  t->pointer = pointee;
  pointee = NULL;
  struct typed *array = GC_calloc_explicitly_typed(10, sizeof *array, d);
  CHECK(array != NULL);
  CHECK(array[9].number == 0 && array[9].pointer == NULL, "calloc'd element not zero");

  static void *vtable[2] = {0, 0}; /* a gcj vtable: descriptor in word 1 */
  GC_init_gcj_malloc(0, NULL);
  void **g = GC_gcj_malloc(4 * sizeof(void *), vtable);
  CHECK(g != NULL && g[0] == (void *)vtable, "gcj object's first word is its vtable");
  collect();
  CHECK(((long *)t->pointer)[0] == 77, "typed object's pointee");
}

static int events[64], event_count;
static void on_event(GC_EventType e) {
  if (event_count < 64) events[event_count++] = (int)e;
}

static int index_of(int e) {
  for (int i = 0; i < event_count; i++)
    if (events[i] == e) return i;
  return -1;
}

static void collection_events(void) {
  GC_set_on_collection_event(on_event);
  CHECK(GC_get_on_collection_event() == on_event);
  GC_gcollect();
  GC_set_on_collection_event(NULL);
  int start = index_of(GC_EVENT_START), mark_start = index_of(GC_EVENT_MARK_START),
      mark_end = index_of(GC_EVENT_MARK_END), reclaim_start = index_of(GC_EVENT_RECLAIM_START),
      reclaim_end = index_of(GC_EVENT_RECLAIM_END), end = index_of(GC_EVENT_END);
  CHECK(start >= 0 && mark_start >= 0 && mark_end >= 0 && end >= 0, "%d events", event_count);
  CHECK(start < mark_start && mark_start < mark_end && mark_end < end, "event order");
  CHECK(reclaim_start >= 0 && reclaim_start < reclaim_end && reclaim_end <= end,
        "reclaim events %d %d", reclaim_start, reclaim_end);
}

/* Pointers the collector cannot see: in malloc'd memory. */
static void **hidden;
static int finalized;
static int pushing;
static GC_push_other_roots_proc previous_push; /* chained, as bdwgc asks */

static void push_hidden(void) {
  if (previous_push) previous_push();
  if (pushing) GC_push_all(hidden, hidden + HIDDEN);
}

static void count_finalized(void *obj, void *cd) { finalized++; }

static T_NOINLINE void fill_hidden(void) {
  for (int i = 0; i < HIDDEN; i++) {
    hidden[i] = GC_malloc(64);
    GC_register_finalizer(hidden[i], count_finalized, NULL, NULL, NULL);
  }
}

static T_NOINLINE void clear_stack(void) {
  volatile char junk[8192];
  memset((char *)junk, 0, sizeof junk);
}

static void other_roots(void) {
  hidden = calloc(HIDDEN, sizeof(void *));
  CHECK(hidden != NULL);
  pushing = 1;
  previous_push = GC_get_push_other_roots();
  GC_set_push_other_roots(push_hidden);
  fill_hidden();
  clear_stack();
  collect();
  collect();
  CHECK(finalized == 0, "%d objects pushed as other roots were finalized", finalized);
  pushing = 0;
  collect();
  collect();
  CHECK(finalized > HIDDEN / 2, "only %d of %d objects died once no longer pushed", finalized,
        HIDDEN);
  GC_set_push_other_roots(previous_push);
  free(hidden);
  t_note("other roots: %d of %d died once unpushed\n", finalized, HIDDEN);
}

static void **mark_slot; /* malloc'd: not scanned */
static int marking, mark_finalized;
static void count_mark_finalized(void *obj, void *cd) { mark_finalized++; }
static void set_mark(void) {
  if (previous_push) previous_push();
  if (marking) GC_set_mark_bit(*mark_slot);
}
static T_NOINLINE void fill_mark_slot(void) {
  *mark_slot = GC_malloc(64);
  GC_register_finalizer(*mark_slot, count_mark_finalized, NULL, NULL, NULL);
}

/* The collections after the marking stops run on a fresh thread: this
 * thread's stack, below the current frame, keeps copies of the pointer
 * from the collections that marked it (the collector ran set_mark and its
 * finalization pass here), and a later collection's frames there can
 * leave one unwritten.  A change to GC_gcollect's frame kept the object
 * alive that way under UBSan.  Blocked in the join, this thread is
 * scanned only above its frame. */
static void *collect_twice(void *arg) {
  collect();
  collect();
  return arg;
}

static void set_mark_bit(void) {
  mark_slot = malloc(sizeof *mark_slot);
  CHECK(mark_slot != NULL);
  previous_push = GC_get_push_other_roots();
  GC_set_push_other_roots(set_mark);
  fill_mark_slot();
  clear_stack();
  marking = 1;
  collect();
  collect();
  CHECK(mark_finalized == 0, "an object marked by GC_set_mark_bit was finalized");
  marking = 0;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, collect_twice, NULL) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(mark_finalized == 1, "the object did not die once no longer marked (%d)", mark_finalized);
  GC_set_push_other_roots(previous_push);
  free(mark_slot);
}

static GC_word resized_to;
static void on_resize(GC_word size) { resized_to = size; }

static void heap_resize(void) {
  GC_set_on_heap_resize(on_resize);
  size_t before = GC_get_heap_size();
  CHECK(GC_expand_hp(8 << 20), "GC_expand_hp");
  CHECK(resized_to >= before + (8 << 20), "told %lu after growing from %zu",
        (unsigned long)resized_to, before);
  GC_set_on_heap_resize(NULL);
}

static void automatic_collection(void) {
  GC_set_disable_automatic_collection(1);
  CHECK(GC_get_disable_automatic_collection() == 1);
  GC_word before = GC_get_gc_no();
  for (int i = 0; i < 200000; i++) CHECK(GC_malloc(64) != NULL); /* 12 MB of garbage */
  CHECK(GC_get_gc_no() == before, "%lu collections while automatic ones were off",
        (unsigned long)(GC_get_gc_no() - before));
  GC_gcollect();
  CHECK(GC_get_gc_no() > before, "an explicit collection ran");
  GC_set_disable_automatic_collection(0);
  CHECK(GC_collect_a_little() == 0);
  CHECK(GC_get_memory_use() > 0 && GC_get_memory_use() <= GC_get_heap_size());
}

static void prof_stats(void) {
  struct GC_prof_stats_s s;
  size_t n = GC_get_prof_stats(&s, sizeof s);
  CHECK(n == sizeof s, "filled %zu of %zu bytes", n, sizeof s);
  CHECK(s.gc_no == GC_get_gc_no());
  CHECK(s.heapsize_full >= GC_get_heap_size() && s.heapsize_full > 0);
  CHECK(s.markers_m1 == (GC_word)GC_get_parallel());
  CHECK(s.bytes_allocd_since_gc <= GC_get_total_bytes());
  struct {
    GC_word first[3];
    GC_word canary;
  } older = {{0, 0, 0}, 0x5151};
  CHECK(GC_get_prof_stats((struct GC_prof_stats_s *)(void *)&older, 3 * sizeof(GC_word)) ==
        3 * sizeof(GC_word));
  CHECK(older.canary == 0x5151, "wrote past the size it was given");
  CHECK(older.first[0] == s.heapsize_full || older.first[0] >= GC_get_heap_size());
  CHECK(GC_get_size_map_at(24) >= 24 && GC_get_size_map_at(24) != (size_t)-1);
}

static void *a_global;
static int global_segment_seen, global_finalized;

static int holds_global(void *start, size_t size) {
  return (char *)&a_global >= (char *)start && (char *)&a_global < (char *)start + size;
}
static int scan_all(const char *name, void *start, size_t size) {
  global_segment_seen += holds_global(start, size);
  return 1; /* as without the callback */
}
static int skip_globals(const char *name, void *start, size_t size) {
  return !holds_global(start, size);
}
static void count_global(void *obj, void *cd) { global_finalized++; }

static T_NOINLINE void fill_global(void) {
  a_global = GC_malloc(64);
  GC_register_finalizer(a_global, count_global, NULL, NULL, NULL);
}

static void static_roots_callback(void) {
  fill_global();
  clear_stack();
  GC_register_has_static_roots_callback(scan_all);
  collect();
  CHECK(global_segment_seen > 0, "never asked about the segment of the program's globals");
  CHECK(global_finalized == 0, "an object a scanned global points to was finalized");
  GC_register_has_static_roots_callback(skip_globals);
  collect();
  collect();
  CHECK(global_finalized == 1, "the globals' segment was scanned though the callback said no");
}

/* sgc only: GC_wcsdup (Debian's bdwgc is built without it) and
 * GC_log_printf, which bdwgc keeps private, going to GC_set_log_fd's
 * descriptor. */
static void wide_strings_and_log(void) {
#ifdef SGC_GC_H
  const wchar_t *text = L"wide \u00e9t\u00e9";
  wchar_t *copy = GC_WCSDUP(text);
  CHECK(copy != NULL && copy != text && wcscmp(copy, text) == 0);
  CHECK(GC_size(copy) >= (wcslen(text) + 1) * sizeof(wchar_t));
  int fds[2];
  CHECK(pipe(fds) == 0);
  GC_set_log_fd(fds[1]);
  GC_log_printf("logged %d\n", 42);
  GC_set_log_fd(2);
  close(fds[1]); /* a log written elsewhere reads as end of file, not a hang */
  char line[32] = {0};
  CHECK(read(fds[0], line, sizeof line - 1) > 0 && strcmp(line, "logged 42\n") == 0,
        "GC_log_printf wrote \"%s\" to its descriptor", line);
  close(fds[0]);
#endif
}

int main(void) {
  t_test_name = "compat_api";
  GC_INIT();
  GC_set_finalize_on_demand(1); /* finalizers run in collect() only */
  many();
  kinds();
  typed_and_gcj();
  collection_events();
  other_roots();
  heap_resize();
  automatic_collection();
  prof_stats();
  set_mark_bit();
  static_roots_callback();
  wide_strings_and_log();
  t_note("ok\n");
  return 0;
}
