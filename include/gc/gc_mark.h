/* The parts of bdwgc's <gc/gc_mark.h> sgc provides: the predefined kinds
 * numbered as bdwgc numbers them, and kinds a program makes with
 * GC_new_kind, whose objects are marked by their descriptor -- a length,
 * a bitmap, a per-object descriptor, or a mark procedure (GC_new_proc,
 * GC_MAKE_PROC) that reports pointers with GC_MARK_AND_PUSH.  The
 * descriptor encoding is bdwgc's, so programs compiled against bdwgc's
 * header work unchanged.  A mark procedure may run on any GC thread, with
 * the world stopped; it must not allocate, and it must push only through
 * GC_mark_and_push (sgc stops with a message otherwise). */
#ifndef SGC_GC_MARK_H
#define SGC_GC_MARK_H
#define GC_MARK_H /* bdwgc's guard, which programs test */
#include "../gc.h"
#ifdef __cplusplus
extern "C" {
#endif

/* How many bytes a mark procedure may push at a time, bdwgc's bound. */
#define GC_PROC_BYTES 100

/* Mark stack entries are opaque: procedures only pass the pointers on. */
struct GC_ms_entry {
  void *opaque;
};
typedef struct GC_ms_entry *(*GC_mark_proc)(GC_word *addr, struct GC_ms_entry *mark_stack_ptr,
                                            struct GC_ms_entry *mark_stack_limit, GC_word env);

#define GC_LOG_MAX_MARK_PROCS 6
#define GC_MAX_MARK_PROCS (1 << GC_LOG_MAX_MARK_PROCS)
#define GC_DS_TAG_BITS 2
#define GC_DS_TAGS ((1 << GC_DS_TAG_BITS) - 1)
#define GC_DS_LENGTH 0     /* the descriptor is a length in bytes */
#define GC_DS_BITMAP 1     /* the high bits say which words are pointers, word 0 first */
#define GC_DS_PROC 2       /* a mark procedure and its argument: */
#define GC_MAKE_PROC(proc_index, env) \
  (((((env) << GC_LOG_MAX_MARK_PROCS) | (proc_index)) << GC_DS_TAG_BITS) | GC_DS_PROC)
#define GC_DS_PER_OBJECT 3 /* the real descriptor is read from the object */
#define GC_INDIR_PER_OBJ_BIAS 0x10
/* bdwgc keeps mark procedure indices below this for its own uses; index
 * 0 is gcj's.  sgc reserves none but takes the same numbers. */
#define GC_RESERVED_MARK_PROCS 8
#define GC_GCJ_RESERVED_MARK_PROC_INDEX 0

/* Bounds of the heap while marking: words outside them are no pointers. */
GC_API void *GC_least_plausible_heap_addr;
GC_API void *GC_greatest_plausible_heap_addr;

/* Marks OBJ (any word; nothing happens unless it points to an object) and
 * queues what it points to; returns MARK_STACK_PTR.  Only inside a mark
 * procedure. */
GC_API struct GC_ms_entry *GC_mark_and_push(void *obj, struct GC_ms_entry *mark_stack_ptr,
                                            struct GC_ms_entry *mark_stack_limit, void **src);
#define GC_MARK_AND_PUSH(obj, msp, lim, src)                          \
  ((GC_word)(obj) >= (GC_word)GC_least_plausible_heap_addr &&         \
           (GC_word)(obj) <= (GC_word)GC_greatest_plausible_heap_addr \
       ? GC_mark_and_push(obj, msp, lim, src)                         \
       : (msp))

/* A zeroed free-list array for GC_new_kind (sgc does not read it). */
GC_API void **GC_new_free_list(void);
GC_API void **GC_new_free_list_inner(void);
/* A new kind: objects marked by DESCRIPTOR (a length descriptor plus the
 * object's size when ADJUST); sgc clears new objects whatever CLEAR. */
GC_API unsigned GC_new_kind(void **free_list, GC_word descriptor, int adjust, int clear);
GC_API unsigned GC_new_kind_inner(void **free_list, GC_word descriptor, int adjust, int clear);
/* A mark procedure's index for GC_MAKE_PROC (at most GC_MAX_MARK_PROCS). */
GC_API unsigned GC_new_proc(GC_mark_proc);
GC_API unsigned GC_new_proc_inner(GC_mark_proc);

/* bdwgc names these two in its gc_inline.h, with GC_malloc_kind. */
#define GC_I_PTRFREE 0
#define GC_I_NORMAL 1

/* Objects of a predefined kind (0 to 3) or one GC_new_kind returned;
 * any other number is a fatal error. */
GC_API void *GC_generic_malloc(size_t, int kind);
GC_API void *GC_generic_malloc_ignore_off_page(size_t, int kind);
GC_API void *GC_generic_malloc_uncollectable(size_t, int kind);
GC_API void *GC_generic_or_special_malloc(size_t, int kind);
GC_API void *GC_debug_generic_or_special_malloc(size_t, int kind, const char *file, int line);
#ifdef GC_DEBUG
#define GC_GENERIC_OR_SPECIAL_MALLOC(sz, knd) GC_debug_generic_or_special_malloc(sz, knd, GC_EXTRAS)
#else
#define GC_GENERIC_OR_SPECIAL_MALLOC(sz, knd) GC_generic_or_special_malloc(sz, knd)
#endif
GC_API void *GC_malloc_kind(size_t, int kind);
GC_API void *GC_malloc_kind_global(size_t, int kind);
/* The object's kind (as above) and, through the pointer, its size. */
GC_API int GC_get_kind_and_size(const void *, size_t *);
/* Whether the object's mark bit is set: inside or right after a collection. */
GC_API int GC_is_marked(const void *);

/* Called at the start of every collection, heap lock held. */
typedef void (*GC_start_callback_proc)(void);
GC_API void GC_set_start_callback(GC_start_callback_proc);
GC_API GC_start_callback_proc GC_get_start_callback(void);
/* Called while roots are pushed, world stopped; it names extra roots
 * with GC_push_all (ranges scanned conservatively). */
typedef void (*GC_push_other_roots_proc)(void);
GC_API void GC_set_push_other_roots(GC_push_other_roots_proc);
GC_API GC_push_other_roots_proc GC_get_push_other_roots(void);
GC_API void GC_push_all(void *bottom, void *top);
GC_API void GC_push_all_eager(void *bottom, void *top);
GC_API void GC_push_conditional(void *bottom, void *top, int all); /* all pages, always */
/* The object survives the collection in progress, unscanned. */
GC_API void GC_set_mark_bit(const void *);
GC_API void GC_clear_mark_bit(const void *);
GC_API void *GC_clear_stack(void *);
/* sgc's collector pushes its finalization tables itself: for a
 * push_other_roots function written for bdwgc, this does nothing more. */
GC_API void GC_push_finalizer_structures(void);

/* The object a mark procedure sees from the base GC_base gives: past the
 * debugging header of an object GC_debug_malloc allocated. */
#define GC_USR_PTR_FROM_BASE(p) ((void *)((char *)(p) + GC_get_debug_header_size()))

/* With the heap lock held (GC_call_with_alloc_lock), calls the function
 * for every object the last collection marked: its start, its size and
 * CLIENT_DATA.  It must not allocate. */
typedef void (*GC_reachable_object_proc)(void *obj, size_t bytes, void *client_data);
GC_API void GC_enumerate_reachable_objects_inner(GC_reachable_object_proc, void *client_data);
/* Whether P lies in a loaded object's writable data, scanned as a root at
 * every collection (bdwgc's temporary roots), rather than in a
 * GC_add_roots range or elsewhere.  Takes the heap lock (it reads the
 * loaded objects afresh). */
GC_API int GC_is_tmp_root(void *p);
/* Describes objects of KIND in the dumps (GC_dump_finalization): the
 * function writes at most GC_TYPE_DESCR_LEN characters and a NUL. */
#define GC_TYPE_DESCR_LEN 40
typedef void (*GC_describe_type_fn)(void *p, char *out_buf);
GC_API void GC_register_describe_type_fn(int kind, GC_describe_type_fn);

#ifdef __cplusplus
}
#endif
#endif
