/* sgc's own static tables are not roots (roots_exclude_own_table).  This
 * test links sgc statically, so the tables sit in the program's data
 * segment, which is scanned whole: the trace ring, the per-CPU caches and
 * the page map's first level came to 4.7 MB scanned at every collection.
 * What is left is the program's own data and libc's, well under 1 MB. */
#include "collect/collect.h"
#include "common.h"
#include "unit.h"

static void *volatile keep;

int main(void) {
  GC_init();
  keep = GC_malloc(64);
  GC_gcollect();
  size_t roots = heap_accounting.root_bytes;
  printf("static roots scanned: %zu bytes\n", roots);
  CHECK(roots > 0, "no static roots at all: the program's own data must be scanned");
  CHECK(roots < (size_t)1 << 20, "%zu bytes of static roots: sgc's tables are scanned", roots);
  CHECK(GC_is_heap_ptr(keep) && GC_size(keep) >= 64, "an object held by a static root died");
  return unit_finish();
}
