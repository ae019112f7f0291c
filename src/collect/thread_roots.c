/* The registered threads' roots, walked once for whoever reads them: the
 * collection pushes them (collect.c), the back-pointer search scans them
 * for the object it looks for (backptr.c). */
#include "collect/thread_roots.h"

#include "common.h"
#include "roots/roots.h"
#include "threads/thread.h"

static void memory_range(uintptr_t lo, uintptr_t hi, void *arg) {
  const struct thread_root_visitor *v = arg;
  v->range(lo, hi, THREAD_ROOT_MEMORY, v->arg);
}

/* T's stack from FROM (its stack pointer SP, less the red zone where it
 * has one) up to the stack's end, or what else it runs on (an alternate
 * signal stack, a coroutine's: threads/stacks.c). */
static void visit_stack(struct sgc_thread *t, uintptr_t sp, uintptr_t from,
                        const struct thread_root_visitor *v) {
  if (!from) return;
  struct stack_ranges ranges;
  thread_stack_ranges(t, sp, from, &ranges);
  for (unsigned i = 0; i < ranges.count; i++)
    v->range(ranges.range[i].lo, ranges.range[i].hi, THREAD_ROOT_MEMORY, v->arg);
}

void thread_roots_for_each(const struct sgc_thread *self, const struct thread_root_visitor *v) {
  roots_dynamic_tls_resolve();
  FOR_EACH_THREAD(t) {
    v->word((uintptr_t)t->alloc.in_flight, THREAD_ROOT_REGISTERS, v->arg);
    roots_visit_thread_tls(t, memory_range, (void *)v);
    roots_visit_thread_dynamic_tls(t, memory_range, (void *)v);
    roots_visit_thread_specific(t, memory_range, (void *)v);
    if (t == self) continue;
    /* The x86-64 red zone: leaf code may keep data 128 bytes below sp.
     * All of a stopped thread's stack, its slow-path frames included: it
     * may be between releasing heap_lock (or leaving the page path) and
     * returning the object it takes, which no free list holds then. */
    visit_stack(t, t->scan_from, t->scan_regs ? t->scan_from - 128 : t->scan_from, v);
    if (t->scan_regs)
      v->range((uintptr_t)t->stopped_regs, (uintptr_t)(t->stopped_regs + NGREG),
               THREAD_ROOT_REGISTERS, v->arg);
    v->word((uintptr_t)t->blocking_arg, THREAD_ROOT_REGISTERS, v->arg);
    v->word((uintptr_t)t->start_arg, THREAD_ROOT_REGISTERS, v->arg);
  }
  for (struct sgc_thread *t = thread_pending_first(); t; t = t->next)
    v->word((uintptr_t)t->start_arg, THREAD_ROOT_REGISTERS, v->arg);
  for (struct sgc_thread *t = thread_zombie_first(); t; t = t->next) {
    v->word((uintptr_t)t->exit_result, THREAD_ROOT_MEMORY, v->arg);
    uintptr_t d = (uintptr_t)t->exit_descriptor; /* holds the result (threads/registry.c) */
    if (d) v->range(d, d + t->exit_descriptor_bytes, THREAD_ROOT_MEMORY, v->arg);
  }
}
