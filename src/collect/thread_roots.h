/* Every root the registered threads hold, in one walk (collect/thread_roots.c),
 * for the collection's root push and for the back-pointer search
 * (collect/backptr.c), so both read the same roots. */
#ifndef SGC_COLLECT_THREAD_ROOTS_H
#define SGC_COLLECT_THREAD_ROOTS_H

#include <stdint.h>

struct sgc_thread;

/* Memory a thread's roots lie in (stacks, thread-local storage, glibc's
 * key blocks), or a stopped thread's saved registers. */
enum thread_root_place { THREAD_ROOT_MEMORY, THREAD_ROOT_REGISTERS };

struct thread_root_visitor {
  /* [lo, hi): words to read as possible pointers. */
  void (*range)(uintptr_t lo, uintptr_t hi, enum thread_root_place place, void *arg);
  /* One possible pointer kept in sgc's records of a thread: one that may
   * live only in a register of it (REGISTERS: a blocking section's
   * argument, a start routine's, an object being handed out), or an
   * unjoined thread's result (MEMORY). */
  void (*word)(uintptr_t word, enum thread_root_place place, void *arg);
  void *arg;
};

/* With the world stopped: the roots of every registered thread but SELF's
 * stack (its caller reads it from its own frame), of threads not started
 * yet and of exited ones not yet joined. */
void thread_roots_for_each(const struct sgc_thread *self, const struct thread_root_visitor *v);

#endif
