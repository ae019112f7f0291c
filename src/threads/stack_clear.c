/* Zeroing the dead part of a thread's stack, below its stack pointer.
 *
 * A conservative scan reads every word of a live frame, and a frame
 * holds stale words where the code left slots unwritten (padding, locals
 * not yet set, spill slots of paths not taken): whatever an earlier,
 * deeper call left there.  The collector's own calls run deep (stopping
 * the world, marking, sweeping) and the allocation slow path gathers
 * list heads; the program's next frames laid over that memory would hand
 * those words to the next collection as roots, keeping dropped objects
 * alive.  bdwgc zeroes such memory now and then (its GC_clear_stack);
 * sgc does it after an explicit collection and on every
 * STACK_CLEAR_REFILLS-th refill, over a bounded span, so the cost stays
 * a small fraction of the path that pays it. */
#include <string.h>

#include "common.h"
#include "threads/thread.h"

/* Room kept above the stack's lowest address: the zeroing never comes
 * near the guard page of a small thread stack. */
enum { STACK_CLEAR_MARGIN = 16 << 10 };

SGC_NOINLINE static void zero_below(size_t bytes) {
  char dead[bytes];
  memset(dead, 0, bytes);
  __asm__ volatile("" : : "r"(dead) : "memory"); /* the stores are the point */
}

void thread_stack_clear_dead(struct sgc_thread *t, size_t bytes) {
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  uintptr_t end = thread_stack_end(t);
  /* Only on the thread's own stack with its bottom known: a coroutine's
   * or an alternate signal stack's size is not. */
  if (t->stack_lo_end != end || sp < t->stack_lo || sp >= end) return;
  if (sp - t->stack_lo < bytes + STACK_CLEAR_MARGIN) return;
  zero_below(bytes);
}
