/* A word of a range scanned conservatively: stacks and data segments
 * hold what an AddressSanitizer build poisons (the redzones between
 * locals and between globals), and words other threads write meanwhile
 * (sgc's own statics among the data: a GC thread reads the collector's
 * mark stack fields as possible pointers while the collector updates
 * them, which ThreadSanitizer calls a race).  The collector must read it
 * all, so this read alone is not instrumented (tools/ci/sanitize.sh).  GCC
 * would inline it into the instrumented caller, or move the load there
 * (IPA-SRA), instrumenting it after all, so in those builds alone it is a
 * call the optimiser may not look into.  Used by the marker and by
 * GC_get_back_ptr_info's search of the roots (collect/backptr.c). */
#ifndef SGC_SCAN_READ_H
#define SGC_SCAN_READ_H

#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__)
#define SGC_SCAN_READ static __attribute__((no_sanitize_address, noipa, unused))
#elif defined(__SANITIZE_THREAD__)
#define SGC_SCAN_READ static __attribute__((no_sanitize_thread, noipa, unused))
#else
#define SGC_SCAN_READ static inline __attribute__((always_inline))
#endif
SGC_SCAN_READ uintptr_t scanned_word(const uintptr_t *p) { return *p; }

#endif
