/* bdwgc's gc_backptr.h calls that pick objects at random; the back
 * pointers themselves and GC_print_backtrace are collect/backptr.c's. */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "gc/gc_backptr.h"
#include "gc/gc_mark.h"
#include "heap/heap.h"

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
    if (heap_holds(lo + r)) return (void *)(lo + r);
  }
  return NULL;
}

/* As bdwgc: an address inside an object the last collection marked (not
 * necessarily its start); NULL when none turns up. */
GC_API void *GC_generate_random_valid_address(void) {
  for (int tries = 0; tries < 100000; tries++) {
    void *p = GC_generate_random_heap_address();
    void *base = GC_base(p);
    if (base && GC_is_marked(base)) return p;
  }
  return NULL;
}

GC_API void GC_generate_random_backtrace(void) {
  if (!GC_try_to_collect(NULL)) {
    GC_err_printf("Cannot generate a backtrace: garbage collection is disabled!\n");
    return;
  }
  void *p = GC_generate_random_valid_address();
  if (!p) return;
  GC_printf("\n****Chosen address %p in object\n", p);
  GC_print_backtrace(p);
}
