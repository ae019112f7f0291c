/* The mprotect barrier's parts (mprotect.c, mprotect_signals.c,
 * mprotect_syscalls.c); internal to src/barrier/. */
#ifndef SGC_BARRIER_MPROTECT_H
#define SGC_BARRIER_MPROTECT_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "barrier/backend.h"

/* A page's byte in backend.h's page table. */
enum mprotect_page_state {
  MP_UNTRACKED = 0, /* not a heap page this cycle (or not armed) */
  MP_PROTECTED = 1, /* read-only, holding pointers when armed: a write faults */
  MP_DIRTY = 2,     /* unprotected by a write: reported, then protected again */
  MP_OPEN = 3,      /* never protected this cycle: free, pointer-free, or taken
                       from the pool since; reported whenever it holds pointers */
};

/* Whether the barrier is armed (a fast test for the wrappers). */
extern _Atomic bool mprotect_armed;

/* mprotect.c: makes the tracked pages around A writable and records them
 * written; false when A is not a page this barrier protects.  Async-signal-safe. */
bool mprotect_open_for_fault(uintptr_t a);
/* The same for every page of [LO, HI) a system call will write, pinned
 * (not in a signal handler): writable when it returns, whatever the
 * page's byte says. */
void mprotect_open_range(uintptr_t lo, uintptr_t hi);

/* mprotect_signals.c: installs the SIGSEGV handler (barrier_init, the
 * world running: it takes a lock the interposed sigaction holds; false
 * when the kernel refused). */
bool mprotect_install_handler(void);

/* mprotect_syscalls.c: the heap buffers of system calls are pinned
 * while the calls run, armed or not, so that no arm or collect protects
 * them meanwhile.  An arm or a collect sets mprotect_reprotecting
 * (seq_cst), then reads the pins into OUT (at most 256 ranges) and
 * protects no page in them; SIZE_MAX: a call found no slot, and no page
 * may be protected.  mprotect_pinning says whether calls pin: undecided
 * until barrier_init (they pin in concurrent mode), then whether this
 * barrier is the one in use. */
enum { MPROTECT_PINS_UNDECIDED, MPROTECT_PINS_ON, MPROTECT_PINS_OFF };
extern _Atomic uint8_t mprotect_pinning;
extern _Atomic bool mprotect_reprotecting;
size_t mprotect_pins(struct barrier_range *out);
/* In a child of fork(): no call is in flight. */
void mprotect_pins_forget(void);

#endif
