/* The mprotect barrier's SIGSEGV handler, and the program's own.
 *
 * The handler opens a protected heap page a write faulted on
 * (mprotect.c) and returns, so the write runs again.  Any other fault is
 * the program's: it goes to the handler the program installed, before
 * sgc's (kept at installation) or after it (sigaction and signal are
 * interposed here: while sgc's handler is in, a program's SIGSEGV action
 * is kept for chaining instead of replacing sgc's, and reads back as the
 * program set it).  With no handler of the program's, the default action
 * is restored and the fault, run again, ends the process as it would
 * have without sgc.
 *
 * sgc's handler runs with every signal blocked: a thread stopped for a
 * collection in the middle of it would leave a page open but unrecorded
 * at the finalize pause.  SA_ONSTACK: a program with an alternate signal
 * stack (for stack overflows) keeps getting its handler there. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "barrier/mprotect.h"
#include "base/next_definition.h"
#include "common.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
NEXT(sigaction_fn, sigaction)
NEXT(signal_fn, signal)
NEXT(sigmask_fn, pthread_sigmask)

static _Atomic bool installed;
/* The program's SIGSEGV action, written under a lock by the interposed
 * sigaction and read by the handler as a sequence lock: an odd count is
 * a write in progress, and a reader that saw the count change retries. */
static struct sigaction program_action;
static _Atomic unsigned program_action_seq;
static pthread_mutex_t program_action_lock = PTHREAD_MUTEX_INITIALIZER;

static void read_program_action(struct sigaction *out) {
  for (;;) {
    unsigned seq = atomic_load_explicit(&program_action_seq, memory_order_acquire);
    if (seq & 1) continue;
    memcpy(out, &program_action, sizeof *out);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&program_action_seq, memory_order_relaxed) == seq) return;
  }
}

/* Signals blocked while the count is odd: a thread stopped for a
 * collection there would leave another's chaining fault spinning, with
 * its own signals blocked, and the stop waiting for it. */
static void write_program_action(const struct sigaction *act) {
  sigset_t all, old;
  sigfillset(&all);
  next_pthread_sigmask()(SIG_SETMASK, &all, &old);
  atomic_fetch_add_explicit(&program_action_seq, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  memcpy(&program_action, act, sizeof *act);
  atomic_fetch_add_explicit(&program_action_seq, 1, memory_order_release);
  next_pthread_sigmask()(SIG_SETMASK, &old, NULL);
}

static void to_default(void) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  next_sigaction()(SIGSEGV, &dfl, NULL);
}

/* Whether the fault can be a write the barrier caused: on x86-64 the
 * page-fault error code says write (bit 1) and not an instruction fetch
 * (bit 4), so a jump into the heap is the program's fault rather than a
 * page opened again and again. */
static bool barrier_fault(const siginfo_t *info, const void *context) {
  if (info->si_code != SEGV_ACCERR) return false;
#if defined(__x86_64__)
  long long error = ((const ucontext_t *)context)->uc_mcontext.gregs[REG_ERR];
  if (!(error & 2) || (error & 16)) return false;
#endif
  return true;
}

static void on_segv(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  if (barrier_fault(info, context) && mprotect_open_for_fault((uintptr_t)info->si_addr)) {
    errno = saved_errno;
    return;
  }
  struct sigaction act;
  read_program_action(&act);
  bool with_info = act.sa_flags & SA_SIGINFO;
  if (!with_info && (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN)) {
    /* The fault runs again with the default action: the process ends
     * by SIGSEGV, as it would have without sgc (a fault's SIGSEGV is
     * never ignored). */
    to_default();
    errno = saved_errno;
    return;
  }
  if (act.sa_flags & SA_RESETHAND) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    write_program_action(&dfl); /* without the lock: no lock in a handler */
  }
  /* The mask the program's handler expects: the interrupted code's, its
   * sa_mask, and SIGSEGV itself unless SA_NODEFER. */
  sigset_t mask = ((ucontext_t *)context)->uc_sigmask;
  for (int s = 1; s < NSIG; s++)
    if (sigismember(&act.sa_mask, s) == 1) sigaddset(&mask, s);
  if (!(act.sa_flags & SA_NODEFER)) sigaddset(&mask, SIGSEGV);
  pthread_sigmask(SIG_SETMASK, &mask, NULL);
  errno = saved_errno;
  if (with_info) act.sa_sigaction(sig, info, context);
  else act.sa_handler(sig);
}

bool mprotect_install_handler(void) {
  if (atomic_load_explicit(&installed, memory_order_acquire)) return true;
  pthread_mutex_lock(&program_action_lock);
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_sigaction = on_segv;
  act.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigfillset(&act.sa_mask);
  bool ok = next_sigaction()(SIGSEGV, &act, &old) == 0;
  if (ok) {
    write_program_action(&old);
    atomic_store_explicit(&installed, true, memory_order_release);
  }
  pthread_mutex_unlock(&program_action_lock);
  return ok;
}

/* A write fault while SIGSEGV is blocked ends the process (the kernel
 * cannot deliver it): once sgc's handler is in, no mask the program asks
 * for blocks the fault signals.  Blocking them never kept a fault's
 * signal away anyway; only one sent with kill() gets through now. */
const sigset_t *barrier_mask_keeping_faults(const sigset_t *set, sigset_t *copy) {
  if (!set || !atomic_load_explicit(&installed, memory_order_acquire)) return set;
  if (set != copy) *copy = *set;
  sigdelset(copy, SIGSEGV);
  sigdelset(copy, SIGBUS);
  return copy;
}

/* ThreadSanitizer finds the definition after its own sigaction with
 * dlsym(RTLD_NEXT) as well, which is this one when libsgc comes after
 * libtsan, and calls it while it initialises, before instrumented code
 * may run (__tsan_func_entry faults there).  So the way through to the
 * next definition, taken while sgc's handler is not in, is not
 * instrumented: no call of instrumented code, nor of sgc_fatal. */
#if defined(__SANITIZE_THREAD__)
#define SGC_UNINSTRUMENTED __attribute__((no_sanitize_thread, noipa))
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SGC_UNINSTRUMENTED __attribute__((disable_sanitizer_instrumentation, noinline))
#endif
#endif
#ifndef SGC_UNINSTRUMENTED
#define SGC_UNINSTRUMENTED
#endif

/* next_definition's lookup, for the calls above (the same cache).  A
 * missing definition is said (fatally) by next_definition itself. */
SGC_UNINSTRUMENTED static void *next_uninstrumented(void *_Atomic *cache, const char *name) {
  void *f = atomic_load_explicit(cache, memory_order_relaxed);
  if (f) return f;
  f = dlsym(RTLD_NEXT, name);
  if (!f) return next_definition(cache, name);
  atomic_store_explicit(cache, f, memory_order_relaxed);
  return f;
}

/* The program's view of SIGSEGV once sgc's handler is in: its own
 * action, kept for chaining.  Other signals' handlers run with the
 * fault signals deliverable (above). */
static int sigaction_installed(int sig, const struct sigaction *act, struct sigaction *old) {
  if (sig != SIGSEGV) {
    struct sigaction changed;
    if (act) {
      changed = *act;
      sigdelset(&changed.sa_mask, SIGSEGV);
      sigdelset(&changed.sa_mask, SIGBUS);
      act = &changed;
    }
    return next_sigaction()(sig, act, old);
  }
  pthread_mutex_lock(&program_action_lock);
  if (old) read_program_action(old);
  if (act) write_program_action(act);
  pthread_mutex_unlock(&program_action_lock);
  return 0;
}

SGC_EXPORT SGC_UNINSTRUMENTED int sigaction(int sig, const struct sigaction *act,
                                            struct sigaction *old) {
  if (!atomic_load_explicit(&installed, memory_order_acquire))
    return ((sigaction_fn)next_uninstrumented(&next_cache_sigaction, "sigaction"))(sig, act, old);
  return sigaction_installed(sig, act, old);
}

static sighandler_t signal_installed(int sig, sighandler_t handler) {
  if (sig != SIGSEGV) return next_signal()(sig, handler);
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART; /* glibc's signal(): BSD semantics */
  sigemptyset(&act.sa_mask);
  sigaction_installed(sig, &act, &old);
  return old.sa_handler;
}

SGC_EXPORT SGC_UNINSTRUMENTED sighandler_t signal(int sig, sighandler_t handler) {
  if (!atomic_load_explicit(&installed, memory_order_acquire))
    return ((signal_fn)next_uninstrumented(&next_cache_signal, "signal"))(sig, handler);
  return signal_installed(sig, handler);
}
