/* pthread_setspecific's values as roots.
 *
 * glibc keeps a thread's key values in its thread descriptor (struct
 * pthread, at the thread pointer): the first 32 keys inline, the rest in
 * blocks of 32 it allocates with malloc, which no collector scans.  A
 * thread glibc created has its descriptor at the top of its stack
 * mapping, inside the stack scan; the main thread's lies in its static
 * thread-local storage, which is not.  So an object only a key value
 * held was collected: every one of the main thread's, and a created
 * thread's past the 32nd key (tests/blackbox/thread_specific.c; bdwgc
 * 8.2.2 loses them all, on either thread).  bdwgc users meet this: a
 * runtime keeps each thread's state under a key.
 *
 * sgc reads the layout from the descriptions glibc exports for
 * libthread_db, the debuggers' library: three 32-bit words each, an
 * element's size in bits, a count and an offset (glibc's nptl_db).  They
 * are private to glibc but fixed for a given libc.so; without them
 * (another C library) no key value is a root, as with bdwgc. */
#include <dlfcn.h>
#include <stdint.h>

#include "common.h"
#include "roots/roots.h"
#include "threads/thread.h"

static struct {
  bool known;
  size_t descriptor_bytes;  /* sizeof (struct pthread) */
  size_t level1_offset;     /* offsetof (struct pthread, specific) */
  unsigned level1_count;    /* pointers to blocks of key values */
  size_t level2_bytes;      /* one such block */
} layout;

const uint32_t *roots_glibc_description(const char *name) {
  return (const uint32_t *)dlsym(RTLD_DEFAULT, name);
}

void roots_thread_specific_init(void) {
  const uint32_t *size = roots_glibc_description("_thread_db_sizeof_pthread");
  const uint32_t *specific = roots_glibc_description("_thread_db_pthread_specific");
  const uint32_t *level2 = roots_glibc_description("_thread_db_pthread_key_data_level2_data");
  if (!size || !specific || !level2) return;
  /* The table of blocks is pointers, all of it inside the descriptor;
   * a block is COUNT elements of SIZE bits.  Anything else is a layout
   * this code does not know. */
  size_t table_bytes = specific[0] / 8;
  if (table_bytes % sizeof(void *) || specific[2] + table_bytes > size[0] || level2[0] % 8 ||
      level2[1] == 0 || size[0] > 65536)
    return;
  layout.descriptor_bytes = size[0];
  layout.level1_offset = specific[2];
  layout.level1_count = (unsigned)(table_bytes / sizeof(void *));
  layout.level2_bytes = (size_t)level2[0] / 8 * level2[1];
  layout.known = true;
}

void roots_visit_thread_specific(const struct sgc_thread *t, roots_range_visit *visit, void *arg) {
  uintptr_t d = t->thread_pointer;
  if (!layout.known || !d) return;
  uintptr_t d_end = d + layout.descriptor_bytes;
  /* The descriptor itself, unless it lies in the stack the collector
   * scans whole for T (a created thread's). */
  if (!thread_stack_mapping_holds(t, d)) visit(d, d_end, arg);
  const uintptr_t *blocks = (const uintptr_t *)(d + layout.level1_offset);
  for (unsigned i = 0; i < layout.level1_count; i++) {
    uintptr_t b = blocks[i];
    if (b && (b < d || b >= d_end)) visit(b, b + layout.level2_bytes, arg);
  }
}
