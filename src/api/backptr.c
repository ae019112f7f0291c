/* bdwgc's gc_backptr.h calls.  sgc keeps no back pointers (bdwgc keeps
 * them only in its KEEP_BACK_PTRS builds), so the questions get "not
 * known"; the random addresses are real ones, for programs that print
 * them. */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "gc/gc_backptr.h"
#include "gc/gc_mark.h"
#include "heap/heap.h"

GC_API GC_ref_kind GC_get_back_ptr_info(void *dest, void **base_p, size_t *offset_p) {
  (void)dest;
  if (base_p) *base_p = NULL;
  if (offset_p) *offset_p = 0;
  return GC_NO_SPACE;
}

/* Tries random addresses between the heap's bounds until one lies in a
 * page of the heap (the bounds may span holes between chunks). */
GC_API void *GC_generate_random_heap_address(void) {
  static _Atomic unsigned seed = 1;
  sgc_ensure_init();
  uintptr_t lo = (uintptr_t)GC_least_plausible_heap_addr;
  uintptr_t hi = (uintptr_t)GC_greatest_plausible_heap_addr;
  if (hi <= lo) return NULL;
  for (int tries = 0; tries < 100000; tries++) {
    unsigned s = atomic_fetch_add_explicit(&seed, 0x9e3779b9u, memory_order_relaxed);
    uintptr_t r = ((uintptr_t)rand_r(&s) << 31 | (uintptr_t)rand_r(&s)) % (hi - lo);
    if (page_of_address(lo + r)) return (void *)(lo + r);
  }
  return NULL;
}

GC_API void *GC_generate_random_valid_address(void) {
  for (int tries = 0; tries < 100000; tries++) {
    void *base = GC_base(GC_generate_random_heap_address());
    if (base) return base;
  }
  return NULL;
}

GC_API void GC_print_backtrace(void *p) {
  GC_err_printf("GC_print_backtrace(%p): sgc keeps no back pointers\n", p);
}

GC_API void GC_generate_random_backtrace(void) {
  void *p = GC_generate_random_valid_address();
  if (p) GC_print_backtrace(p);
}
