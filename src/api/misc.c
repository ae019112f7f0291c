/* Small bdwgc calls that belong to no other part. */
#include <string.h>

#include "base/env.h"
#include "collect/collect.h"
#include "collect/concurrent.h"
#include "common.h"
#include "heap/heap.h"
#include "mark/snapshot.h"
#include "os/os.h"

SGC_EXPORT int GC_all_interior_pointers = 1;

GC_API unsigned GC_get_version(void) {
  return (GC_TMP_VERSION_MAJOR << 16) | (GC_TMP_VERSION_MINOR << 8) | GC_TMP_VERSION_MICRO;
}

/* Changing the rule after objects exist is allowed (bdwgc asks for it
 * before GC_INIT); it only makes marking more or less conservative. */
GC_API void GC_set_all_interior_pointers(int on) {
  sgc_ensure_init();
  GC_all_interior_pointers = on != 0;
  heap_interior_pointers = on != 0;
  settings_interior_pointers_set(on != 0);
}
GC_API int GC_get_all_interior_pointers(void) { return heap_interior_pointers; }
/* With interior pointers recognised every displacement is already valid;
 * without them sgc recognises object starts and these offsets. */
GC_API void GC_register_displacement(size_t offset) {
  if (offset >= PAGE_BYTES)
    sgc_fatal("GC_register_displacement(%zu): displacements must be below %d", offset,
              (int)PAGE_BYTES);
  sgc_ensure_init();
  heap_lock_acquire();
  heap_displacements[offset / 64] |= (uint64_t)1 << (offset % 64);
  pthread_mutex_unlock(&heap_lock);
}

GC_API void GC_set_pages_executable(int on) { (void)on; }
GC_API int GC_get_pages_executable(void) { return 0; }
/* bdwgc's incremental mode is sgc's concurrent one (docs/concurrent.md);
 * GC_ENABLE_INCREMENTAL and SGC_MODE=concurrent turn it on at start-up. */
GC_API void GC_enable_incremental(void) {
  sgc_ensure_init();
  /* SGC_MODE=stop, set by whoever runs the program, wins over its code. */
  const char *mode = env_value("SGC_MODE");
  if (mode && strcmp(mode, "stop") == 0) return;
  heap_lock_acquire();
  concurrent_set_mode(true);
  pthread_mutex_unlock(&heap_lock);
}
GC_API int GC_is_incremental_mode(void) { return sgc_settings.concurrent; }
/* bdwgc's variable form of GC_get_parallel, kept in step by
 * settings_set_markers, the one place the marker count is set. */
SGC_EXPORT int GC_parallel;
void settings_set_markers(unsigned n) {
  if (n > os_markers_limit()) {
    sgc_warn("%u GC threads asked for; sgc starts at most %u (4 per CPU, at least 1024)", n,
             os_markers_limit());
    n = os_markers_limit();
  }
  sgc_settings.markers = n;
  GC_parallel = (int)n - 1;
}
GC_API void GC_set_markers_count(unsigned n) {
  if (n) settings_set_markers(n);
}
GC_API int GC_get_parallel(void) { return GC_parallel; }
GC_API void GC_start_mark_threads(void) {}


GC_API int SGC_snapshot_next(const char *dir) {
  sgc_ensure_init();
  heap_lock_acquire(); /* collections read the request under it */
  bool ok = snapshot_request(dir);
  pthread_mutex_unlock(&heap_lock);
  return ok ? 0 : -1;
}
