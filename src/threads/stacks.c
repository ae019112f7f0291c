/* Where a thread's stack is, and what of it a collection scans.
 *
 * A stopped thread is scanned from its stack pointer up to its stack's
 * end.  That is right while the stack pointer lies on the thread's own
 * stack.  It does not when the thread runs elsewhere: a signal handler on
 * an alternate stack (sigaltstack), or a coroutine or fiber on a stack of
 * the program's own that the program did not announce with
 * GC_set_stackbottom.  The range from there to the stack's end then
 * crosses unmapped memory (a crash in the markers) or, when the other
 * stack lies above the thread's, is empty, and the objects only that
 * stack holds are reclaimed while in use (tests/blackbox/foreign_stacks.c;
 * bdwgc crashes on both shapes).
 *
 * So sgc keeps each thread's lowest stack address beside its end, and a
 * stop that finds the thread off that range scans instead:
 *  - on an alternate signal stack, which the suspend handler asks the
 *    kernel for (sigaltstack): that stack from the stack pointer up, and
 *    the whole of the thread's own stack, where the stack pointer it
 *    left is not known;
 *  - anywhere else, the run of readable anonymous memory that holds the
 *    stack pointer (a stack is one mapping, or lies inside the brk heap
 *    or a malloc arena), from the stack pointer up, and again the whole
 *    of the thread's own stack; with a warning, once, as the program
 *    should tell sgc (GC_set_stackbottom), and the stacks not running
 *    are still the program's to push (GC_set_push_other_roots).
 * A stack registered with GC_register_altstack keeps its bounds. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "os/os.h"
#include "threads/thread.h"

extern void *__libc_stack_end;

/* The deepest main stack assumed when RLIMIT_STACK is unlimited or
 * larger: a main thread deeper than this is found through the memory
 * map instead (thread_stack_ranges), only slower. */
static const uintptr_t MAIN_STACK_ASSUMED_MAX = (uintptr_t)1 << 30;

/* A thread's stack from its glibc descriptor, without pthread_getattr_np,
 * which mallocs (the CPU set it puts in the attributes): a thread that
 * never called malloc got a malloc arena of its own there, 64 MiB of
 * address space, which under an address-space limit the heap then lacks
 * (threads made with plain pthread_create register at their first
 * allocation, so each took one).  The descriptor's layout is glibc's
 * own: struct pthread holds the stack block's address, its size and the
 * guard's size as three consecutive words, and pthread_getattr_np reports
 * [block + guard, block + size).  The first answer pthread_getattr_np
 * gives teaches where those words are (learn_descriptor_layout); from
 * then on a thread reads its own, and takes them only when its stack
 * pointer and descriptor lie inside.  -1: not learnt yet; -2: not found,
 * pthread_getattr_np always.  Relaxed: every thread learns the same. */
static _Atomic int stack_words_at = -1;
/* Until it is learnt, one registering thread at a time asks
 * pthread_getattr_np: threads that register at once would each take an
 * arena (heap reached under the limit: 128 MiB in one run of six). */
static pthread_mutex_t learn_lock = PTHREAD_MUTEX_INITIALIZER;
/* How far above the descriptor's start the words are looked for: glibc
 * 2.36's struct pthread takes about 2.3 KiB. */
enum { DESCRIPTOR_SEARCH_BYTES = 4096 };

/* The descriptor DESC of a thread whose stack is [LO, END), as
 * pthread_getattr_np said: where the three words lie. */
static void learn_descriptor_layout(uintptr_t desc, uintptr_t lo, uintptr_t end) {
  if (atomic_load_explicit(&stack_words_at, memory_order_relaxed) != -1) return;
  if (desc < lo || desc >= end) return; /* not at its stack's top: no lesson */
  const uintptr_t *w = (const uintptr_t *)desc;
  size_t words = (end - desc < DESCRIPTOR_SEARCH_BYTES ? end - desc : DESCRIPTOR_SEARCH_BYTES) /
                 sizeof *w;
  int found = -2;
  for (size_t i = 0; i + 2 < words; i++)
    if (w[i] && w[i] + w[i + 1] == end && w[i] + w[i + 2] == lo) {
      found = (int)i;
      break;
    }
  atomic_store_explicit(&stack_words_at, found, memory_order_relaxed);
}

/* The calling thread's stack from its descriptor, as learnt; 0 when not
 * learnt, or when the words do not hold its stack pointer and descriptor. */
static uintptr_t stack_from_descriptor(uintptr_t *lo) {
  int at = atomic_load_explicit(&stack_words_at, memory_order_relaxed);
  if (at < 0) return 0;
  const uintptr_t *w = (const uintptr_t *)__builtin_thread_pointer() + at;
  uintptr_t block = w[0], low = block + w[2], end = block + w[1];
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0), desc = (uintptr_t)__builtin_thread_pointer();
  if (!block || low >= end || sp < low || sp >= end || desc < low || desc >= end) return 0;
  *lo = low;
  return end;
}

uintptr_t thread_stack_bounds_of_self(uintptr_t *lo) {
  *lo = 0;
  if (os_gettid() == getpid()) {
    /* The main thread: glibc records where its stack started, and the
     * stack grows down to RLIMIT_STACK below (pthread_getattr_np would
     * read /proc with malloc, which may be sgc's own at start-up). */
    uintptr_t end = ((uintptr_t)__libc_stack_end + 4095) & ~(uintptr_t)4095;
    struct rlimit limit;
    uintptr_t depth = MAIN_STACK_ASSUMED_MAX;
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        limit.rlim_cur < depth)
      depth = (uintptr_t)limit.rlim_cur;
    if (end > depth) *lo = end - depth;
    return end;
  }
  uintptr_t known = stack_from_descriptor(lo);
  if (known) return known;
  bool learning = atomic_load_explicit(&stack_words_at, memory_order_relaxed) == -1;
  if (learning) {
    pthread_mutex_lock(&learn_lock);
    known = stack_from_descriptor(lo); /* another thread learnt it meanwhile */
    if (known) {
      pthread_mutex_unlock(&learn_lock);
      return known;
    }
  }
  pthread_attr_t attr;
  void *addr = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
  }
  if (!addr) sgc_fatal("cannot find the stack of thread %d", os_gettid());
  *lo = (uintptr_t)addr; /* above the guard pages: glibc leaves them out */
  learn_descriptor_layout((uintptr_t)pthread_self(), *lo, (uintptr_t)addr + size);
  if (learning) pthread_mutex_unlock(&learn_lock);
  return (uintptr_t)addr + size;
}

void thread_stacks_after_fork_child(void) { pthread_mutex_init(&learn_lock, NULL); }

void thread_stack_give(struct sgc_thread *rec, pthread_t thread) {
  pthread_attr_t attr;
  void *addr = NULL;
  size_t size = 0;
  if (pthread_getattr_np(thread, &attr) == 0) {
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
  }
  rec->given_stack_lo = (uintptr_t)addr;
  rec->given_stack_end = (uintptr_t)addr + size;
  /* Release: the thread that reads 1 reads the bounds. */
  atomic_store_explicit(&rec->stack_given, addr ? 1 : 2, memory_order_release);
  futex_wake_all(&rec->stack_given);
}

uintptr_t thread_stack_given(struct sgc_thread *rec, uintptr_t *lo) {
  uint32_t given;
  while ((given = atomic_load_explicit(&rec->stack_given, memory_order_acquire)) == 0)
    futex_wait(&rec->stack_given, 0);
  if (given != 1) return 0;
  *lo = rec->given_stack_lo;
  /* Its own descriptor, which no other thread writes meanwhile. */
  learn_descriptor_layout((uintptr_t)pthread_self(), *lo, rec->given_stack_end);
  return rec->given_stack_end;
}

uintptr_t thread_stack_base_of_self(void) {
  uintptr_t lo;
  return thread_stack_bounds_of_self(&lo);
}

/* SP lies on T's own stack, as far as sgc knows it: with the lowest
 * address unknown (the program moved the end), below the end is all. */
static bool on_own_stack(const struct sgc_thread *t, uintptr_t sp, uintptr_t end) {
  if (t->stack_lo_end == end) return sp >= t->stack_lo && sp < end;
  return sp < end;
}

void thread_note_alternate_stack(struct sgc_thread *t, uintptr_t sp) {
  uintptr_t end = thread_stack_end(t);
  uintptr_t lo = 0, hi = 0;
  /* Asked only off the known stack, or where its bottom is unknown: a
   * system call per stop otherwise.  The bare system call (glibc's
   * wrapper is one too) is async-signal-safe; the handler saves errno. */
  if (t->stack_lo_end != end || !on_own_stack(t, sp, end)) {
    stack_t alt;
    if (syscall(SYS_sigaltstack, NULL, &alt) == 0 && !(alt.ss_flags & SS_DISABLE)) {
      lo = (uintptr_t)alt.ss_sp;
      hi = lo + alt.ss_size;
    }
  }
  t->stopped_alt_lo = lo;
  t->stopped_alt_hi = hi;
}

static void add_range(struct stack_ranges *out, uintptr_t lo, uintptr_t hi) {
  if (lo < hi) {
    out->range[out->count].lo = lo;
    out->range[out->count].hi = hi;
    out->count++;
  }
}

/* Warnings found with the world stopped wait for it to restart: the
 * program's warn procedure (fprintf by default) may need a lock a
 * stopped thread holds.  Each is given once per process. */
static struct {
  bool foreign_pending, foreign_given, unreadable_pending, unreadable_given;
  int foreign_tid, unreadable_tid;
  uintptr_t foreign_sp, foreign_end, unreadable_end;
} warnings;

void thread_stacks_warn(void) {
  if (warnings.foreign_pending) {
    warnings.foreign_pending = false;
    sgc_warn("thread %d runs on a stack sgc was not told of (stack pointer %p, its own "
             "stack ends at %p): sgc scans the memory around it and all of its own stack; "
             "GC_set_stackbottom says where a coroutine's stack ends (gc.h)",
             warnings.foreign_tid, (void *)warnings.foreign_sp, (void *)warnings.foreign_end);
  }
  if (warnings.unreadable_pending) {
    warnings.unreadable_pending = false;
    sgc_warn("thread %d runs off its own stack, and that stack below %p is not readable: "
             "not scanned", warnings.unreadable_tid, (void *)warnings.unreadable_end);
  }
}

/* All of T's own stack, ending at END, for a thread stopped elsewhere:
 * from its known bottom, which for a pthread stack is mapped throughout;
 * the main stack is mapped only as deep as it grew, which the memory map
 * tells. */
static void add_whole_own_stack(const struct sgc_thread *t, uintptr_t end,
                                struct stack_ranges *out) {
  uintptr_t lo, hi;
  if (t->stack_lo_end == end && !t->is_main) add_range(out, t->stack_lo, end);
  else if (os_readable_extent(end - 1, &lo, &hi)) add_range(out, lo, end);
  else if (!warnings.unreadable_given) {
    warnings.unreadable_given = warnings.unreadable_pending = true;
    warnings.unreadable_tid = t->tid;
    warnings.unreadable_end = end;
  }
}

void thread_stack_ranges(struct sgc_thread *t, uintptr_t sp, uintptr_t from,
                         struct stack_ranges *out) {
  out->count = 0;
  if (sp >= t->altstack_lo && sp < t->altstack_hi) { /* GC_register_altstack */
    add_range(out, from > t->altstack_lo ? from : t->altstack_lo, t->altstack_hi);
    add_range(out, t->normstack_lo, t->normstack_hi);
    return;
  }
  uintptr_t end = thread_stack_end(t);
  if (t->stack_lo_end == end && on_own_stack(t, sp, end)) {
    add_range(out, from, end);
    return;
  }
  if (t == sgc_self) thread_note_alternate_stack(t, sp); /* the collector itself */
  if (sp >= t->stopped_alt_lo && sp < t->stopped_alt_hi) {
    add_range(out, from > t->stopped_alt_lo ? from : t->stopped_alt_lo, t->stopped_alt_hi);
    add_whole_own_stack(t, end, out);
    return;
  }
  /* The program moved the end (GC_set_stackbottom): trusted. */
  if (t->stack_lo_end != end && sp < end) {
    add_range(out, from, end);
    return;
  }
  uintptr_t lo, hi;
  if (!os_readable_extent(sp, &lo, &hi))
    sgc_fatal("thread %d runs on a stack sgc cannot find (stack pointer %p, outside its "
              "stack ending at %p, and /proc/self/maps does not show it): call "
              "GC_set_stackbottom when switching stacks (gc.h)",
              t->tid, (void *)sp, (void *)end);
  if (end > lo && end <= hi) { /* the main stack, grown deeper than assumed */
    add_range(out, from > lo ? from : lo, end);
    return;
  }
  if (!warnings.foreign_given) {
    warnings.foreign_given = warnings.foreign_pending = true;
    warnings.foreign_tid = t->tid;
    warnings.foreign_sp = sp;
    warnings.foreign_end = end;
  }
  add_range(out, from > lo ? from : lo, hi);
  add_whole_own_stack(t, end, out);
}
