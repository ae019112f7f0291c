/* Stopping the world with signals (papers/002 §3.1 for the protocol's
 * spirit: no lock on the restart path).
 *
 * The collector bumps world_epoch to an odd value and sends SIGPWR to each
 * registered thread not in a blocking section (GC_do_blocking, and sgc's
 * own waits in GC_pthread_join and for heap_lock).  The handler saves the
 * interrupted registers and stack pointer in the thread's record, counts
 * itself in stop_acks and sleeps on a futex until world_epoch changes.
 * Restarting is one store and one futex wake: no second signal, and a
 * thread that wakes late can never miss the restart, because it compares
 * epochs instead of waiting for an event.  Everything the handler calls is
 * async-signal-safe (atomics and the futex system call). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/env.h"
#include "common.h"
#include "os/os.h"
#include "base/lock_wait.h"
#include "threads/thread.h"

/* The signal threads are stopped with: SIGPWR unless SGC_SUSPEND_SIGNAL
 * or GC_set_suspend_signal says otherwise (stop_world_move_signal).
 * Written under registry_lock, which every stop holds; relaxed: readers
 * outside a stop (the exit destructor, GC_pthread_sigmask, sigwait) run
 * after the single-threaded start-up that sets it. */
static _Atomic int suspend_signal = SIGPWR;
/* No restart signal is sent (threads resume through a futex); what
 * GC_set_thr_restart_signal set is only reported back. */
static _Atomic int nominal_restart_signal = SIGXCPU;
#define SUSPEND_SIGNAL atomic_load_explicit(&suspend_signal, memory_order_relaxed)

static _Atomic uint32_t world_epoch; /* odd while the world is stopped */
static _Atomic uint32_t stop_acks;
/* How many acks the collector waits for; UINT32_MAX while it is still
 * signalling.  Only the last ack wakes it: with a thousand threads, a
 * wake per ack would make the collector bounce in and out of the kernel. */
static _Atomic uint32_t stop_target;

GC_API int GC_get_suspend_signal(void) { return SUSPEND_SIGNAL; }
GC_API int GC_get_thr_restart_signal(void) {
  return atomic_load_explicit(&nominal_restart_signal, memory_order_relaxed);
}
GC_API void GC_set_thr_restart_signal(int sig) {
  atomic_store_explicit(&nominal_restart_signal, sig, memory_order_relaxed);
}

static void save_context(struct sgc_thread *self, const ucontext_t *uc) {
  for (int i = 0; i < NGREG; i++) self->stopped_regs[i] = uc->uc_mcontext.gregs[i];
  uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
  thread_note_alternate_stack(self, sp); /* only off its own stack: threads/stacks.c */
  atomic_store_explicit(&self->stopped_sp, sp, memory_order_relaxed);
}

/* Acknowledges stop EPOCH and sleeps until the world restarts. */
static void stop_for_epoch(struct sgc_thread *self, uint32_t epoch) {
  /* Release: the collector, seeing this epoch, sees the registers. */
  atomic_store_explicit(&self->acked_epoch, epoch, memory_order_release);
  uint32_t acks = atomic_fetch_add_explicit(&stop_acks, 1, memory_order_seq_cst) + 1;
  if (acks >= atomic_load_explicit(&stop_target, memory_order_seq_cst)) futex_wake_all(&stop_acks);
  while (atomic_load_explicit(&world_epoch, memory_order_acquire) == epoch)
    futex_wait(&world_epoch, epoch);
}

/* The way out of a blocking section (GC_do_blocking, GC_call_with_gc_active),
 * without a lock: threads waking often from a condition variable or poll
 * would otherwise all queue on registry_lock, which every stop holds.
 *
 * A stop (stop_world) bumps world_epoch to odd and then reads each
 * thread's BLOCKED: 1 counts the thread as stopped, scanned from
 * blocked_sp, and the thread must not run the program again until the
 * epoch moves on.  Leaving, the thread stores BLOCKED 0 and then reads the
 * epoch.  All four accesses are seq_cst, so they fall in one order:
 *  - the thread read an even epoch: any stop's increment comes after its
 *    store, so that stop reads BLOCKED 0 and signals it as a running
 *    thread (its read of BLOCKED follows its increment, which follows this
 *    read of the epoch, which follows the store);
 *  - it read an odd epoch: a stop is under way, which may have counted it
 *    as stopped already.  It puts BLOCKED back (blocked_sp unchanged: this
 *    frame lies below it and holds nothing of the program's) and sleeps on
 *    the epoch until the stop ends, then tries again.  A stop that read
 *    BLOCKED 0 meanwhile has signalled it: the handler acknowledges (or
 *    thread_stopped sees BLOCKED 1 again), and start_world's increment
 *    and wake end the sleep either way.
 * Every reader of a blocked thread's stack or blocking_arg runs between
 * stop_world and start_world (collections, GC_stop_world_external, the
 * back-pointer search), so no one else needs the old rule that a blocked
 * thread cannot leave while registry_lock is held.  Async-signal-safe
 * (atomics and the futex), as a section may run in a signal handler.  A
 * handler that runs between the store and the read and enters a section
 * of its own moves blocked_sp down (or onto its alternate stack) while a
 * stop that counted the thread may read it: the scan then covers more of
 * the stack, never less, and that section's exit waits for the stop. */
void stop_world_leave_blocking(struct sgc_thread *t) {
  for (;;) {
    atomic_store_explicit(&t->blocked, 0, memory_order_seq_cst);
    uint32_t epoch = atomic_load_explicit(&world_epoch, memory_order_seq_cst);
    if (!(epoch & 1)) return;
    atomic_store_explicit(&t->blocked, 1, memory_order_seq_cst);
    int saved_errno = errno; /* the section's caller reads errno as it was left */
    while (atomic_load_explicit(&world_epoch, memory_order_acquire) == epoch)
      futex_wait(&world_epoch, epoch);
    errno = saved_errno;
  }
}

/* GC_suspend_thread's park: sleeps until GC_resume_thread clears
 * ext_suspend.  Meanwhile collections do not signal the thread (SIGPWR is
 * blocked in this handler) but scan the context saved on entry. */
static void park(struct sgc_thread *self) {
  unsigned counted = lock_wait_park();
  atomic_store_explicit(&self->ext_parked, 1, memory_order_seq_cst);
  futex_wake_all(&self->ext_parked); /* the suspender waits for it */
  while (atomic_load_explicit(&self->ext_suspend, memory_order_acquire))
    futex_wait(&self->ext_suspend, 1);
  /* Leaving races with a stop that may have counted the thread as parked.
   * The store then load here and stop_world's epoch increment then load of
   * ext_parked are all seq_cst, so one side sees the other: the collector
   * finds the thread unparked and signals it (the signal waits until this
   * handler returns, and this stop is acknowledged below), or this thread
   * sees the stop and stays stopped for it, its context unchanged. */
  atomic_store_explicit(&self->ext_parked, 0, memory_order_seq_cst);
  lock_wait_unpark(counted);
  uint32_t epoch = atomic_load_explicit(&world_epoch, memory_order_seq_cst);
  if (epoch & 1) stop_for_epoch(self, epoch);
}

static void suspend_handler(int sig, siginfo_t *info, void *context) {
  (void)sig;
  (void)info;
  int saved_errno = errno;
  uint32_t epoch = atomic_load_explicit(&world_epoch, memory_order_acquire);
  struct sgc_thread *self = sgc_self;
  /* A signal delivered after its stop ended (it was blocked meanwhile)
   * has nothing to do, unless the thread is asked to park. */
  bool stopping = (epoch & 1) != 0;
  if (!self || (!stopping && !atomic_load_explicit(&self->ext_suspend, memory_order_acquire))) {
    errno = saved_errno;
    return;
  }
  save_context(self, context);
  if (stopping) stop_for_epoch(self, epoch);
  /* Not while it marks for a cycle: the cycle's finish would wait for
   * its marker slot until it is resumed; it parks once done. */
  if (atomic_load_explicit(&self->ext_suspend, memory_order_acquire) &&
      !atomic_load_explicit(&self->assisting, memory_order_relaxed))
    park(self);
  errno = saved_errno;
}

/* glibc keeps its own signals -- SIGCANCEL, the kernel's first real-time
 * signal (32), and SIGSETXID (33), below the SIGRTMIN it reports -- out of
 * every mask it is handed, sigfillset's and sigaction's included, so that
 * no program can block cancellation.  On top of the suspend handler a
 * cancellation goes wrong either way.  glibc 2.41's deferred cancellation
 * acts only when the signal interrupted a cancellable system call; on top
 * of the handler it sees the handler's futex wait and does nothing, and the
 * read() the suspend signal interrupted then restarts past glibc's
 * cancellation check, blocked for good (bb_threads' pthread_cancel under
 * Debian 13's glibc; tests/blackbox/cancel_stop.c).  Older glibc switches to
 * asynchronous cancellation around blocking calls and unwinds the thread
 * out of the handler in the middle of a stop.  So the handler's mask, as
 * the kernel keeps it, gets these signals added directly (read back and
 * rewritten with rt_sigaction, glibc's restorer kept): held until the
 * handler returns, the signal is delivered at the interrupted point, where
 * glibc acts as if no collection had happened.  SIGSETXID (setuid in
 * another thread) waits for the world to restart. */
struct kernel_sigaction {
  void *handler;
  unsigned long flags;
  void *restorer;
  uint64_t mask; /* bit N-1 for signal N */
};

/* "SIGPWR (30)": a signal named for a message. */
struct signal_name {
  char text[32];
};
static struct signal_name signal_name(int sig) {
  struct signal_name n;
  const char *abbrev = sigabbrev_np(sig);
  if (abbrev) snprintf(n.text, sizeof n.text, "SIG%s (%d)", abbrev, sig);
  else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
    snprintf(n.text, sizeof n.text, "SIGRTMIN+%d (%d)", sig - SIGRTMIN, sig);
  else snprintf(n.text, sizeof n.text, "signal %d", sig);
  return n;
}

static void block_libc_signals_in_handler(int sig) {
  struct kernel_sigaction ks;
  if (syscall(SYS_rt_sigaction, sig, NULL, &ks, sizeof ks.mask) != 0)
    sgc_fatal("cannot read the %s handler back: %s", signal_name(sig).text, strerror(errno));
  for (int s = 32; s < SIGRTMIN; s++) ks.mask |= 1ull << (s - 1);
  if (syscall(SYS_rt_sigaction, sig, &ks, NULL, sizeof ks.mask) != 0)
    sgc_fatal("cannot block glibc's signals in the %s handler: %s", signal_name(sig).text,
              strerror(errno));
}

/* What the suspend signal's disposition was before sgc took it: given
 * back when sgc moves to another signal. */
static struct sigaction displaced_action;

static bool handler_is_ours(int sig) {
  struct sigaction now;
  return sigaction(sig, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
         now.sa_sigaction == suspend_handler;
}

static void install_handler(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = suspend_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  /* Nothing may run on top of the handler except the synchronous fault
   * signals; sigfillset leaves glibc's own signals out, hence
   * block_libc_signals_in_handler. */
  sigfillset(&sa.sa_mask);
  sigdelset(&sa.sa_mask, SIGSEGV);
  sigdelset(&sa.sa_mask, SIGBUS);
  sigdelset(&sa.sa_mask, SIGILL);
  sigdelset(&sa.sa_mask, SIGFPE);
  if (sigaction(sig, &sa, &displaced_action) != 0)
    sgc_fatal("cannot install the %s handler: %s", signal_name(sig).text, strerror(errno));
  block_libc_signals_in_handler(sig);
}

/* Whether SIG can stop threads: one a handler can catch, that no fault
 * or glibc itself uses. */
static bool signal_usable(int sig) {
  if (sig < 1 || sig > SIGRTMAX || (sig > SIGSYS && sig < SIGRTMIN)) return false;
  switch (sig) {
  case SIGKILL: case SIGSTOP: case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE:
  case SIGABRT: case SIGTRAP: case SIGSYS: case SIGCHLD: case SIGCONT:
    return false;
  default:
    return true;
  }
}

/* SGC_SUSPEND_SIGNAL: a number, a name (SIGUSR2 or USR2), or
 * SIGRTMIN+N; 0 when unset or not usable (with a warning). */
static int signal_from_env(void) {
  const char *v = env_value("SGC_SUSPEND_SIGNAL");
  if (!v) return 0;
  const char *name = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
  char *end;
  long sig = strtol(v, &end, 10);
  if (end == v || *end) {
    sig = -1;
    if (strncmp(name, "RTMIN+", 6) == 0) {
      long n = strtol(name + 6, &end, 10);
      if (end != name + 6 && !*end && n >= 0) sig = SIGRTMIN + n;
    }
    for (int s = 1; sig < 0 && s < SIGRTMIN; s++) {
      const char *abbrev = sigabbrev_np(s);
      if (abbrev && strcmp(abbrev, name) == 0) sig = s;
    }
  }
  if (sig < 0 || sig > SIGRTMAX || !signal_usable((int)sig)) {
    sgc_warn("ignoring SGC_SUSPEND_SIGNAL=%s: want a signal number or name a handler can "
             "catch and that no fault uses, e.g. SIGUSR2 or SIGRTMIN+5", v);
    return 0;
  }
  return (int)sig;
}

void stop_world_init(void) {
  int sig = signal_from_env();
  if (sig) atomic_store_explicit(&suspend_signal, sig, memory_order_relaxed);
  install_handler(SUSPEND_SIGNAL);
}

/* GC_set_suspend_signal: sgc took its signal at start-up, from a library
 * constructor, so a program's call before GC_INIT moves it, while no other
 * thread is registered (one could be stopped by neither signal, or have
 * the new one blocked).  The old signal's disposition is given back, when
 * the program has not replaced sgc's handler already. */
bool stop_world_move_signal(int sig) {
  if (!signal_usable(sig)) {
    sgc_warn("GC_set_suspend_signal(%d): not a signal sgc can stop threads with (a handler "
             "must catch it, and no fault or glibc use it); keeping %s",
             sig, signal_name(SUSPEND_SIGNAL).text);
    return false;
  }
  registry_lock_take(); /* no stop runs meanwhile */
  int old = SUSPEND_SIGNAL;
  bool moved = sig == old;
  if (!moved && thread_registry_count() > 1) {
    pthread_mutex_unlock(&registry_lock);
    sgc_warn("GC_set_suspend_signal(%d) after other threads registered: keeping %s (call it "
             "before GC_INIT and before creating threads, or set SGC_SUSPEND_SIGNAL)",
             sig, signal_name(old).text);
    return false;
  }
  if (!moved) {
    struct sigaction old_displaced = displaced_action;
    bool ours = handler_is_ours(old);
    install_handler(sig);
    if (ours) sigaction(old, &old_displaced, NULL);
    atomic_store_explicit(&suspend_signal, sig, memory_order_relaxed);
  }
  pthread_mutex_unlock(&registry_lock);
  return true;
}

/* Whether signalled thread T is stopped for stop EPOCH: it acknowledged,
 * or it has since entered a blocking section or started exiting (it may
 * have the signal blocked then: it leaves the section only once this stop
 * ends, stop_world_leave_blocking, and an exiting thread touches the heap
 * only under heap_lock, which the collector holds). */
/* GC_set_on_thread_event's callback, told of each thread a stop holds
 * (signalled or parked) once all are stopped, and again as they are let
 * go; relaxed: one installed during a collection counts from the next. */
static _Atomic(GC_on_thread_event_proc) on_thread_event;

GC_API void GC_set_on_thread_event(GC_on_thread_event_proc f) {
  atomic_store_explicit(&on_thread_event, f, memory_order_relaxed);
}
GC_API GC_on_thread_event_proc GC_get_on_thread_event(void) {
  return atomic_load_explicit(&on_thread_event, memory_order_relaxed);
}

static void report_thread_events(struct sgc_thread *self, GC_EventType event) {
  GC_on_thread_event_proc f = atomic_load_explicit(&on_thread_event, memory_order_relaxed);
  if (!f) return;
  FOR_EACH_THREAD(t)
    if (t != self && t->scan_regs) f(event, (void *)t->pthread);
}

static bool thread_stopped(struct sgc_thread *t, uint32_t epoch) {
  if (atomic_load_explicit(&t->acked_epoch, memory_order_acquire) == epoch ||
      atomic_load_explicit(&t->ext_parked, memory_order_seq_cst)) {
    t->scan_from = atomic_load_explicit(&t->stopped_sp, memory_order_relaxed);
    return true;
  }
  /* Seq_cst: see stop_world_leave_blocking. */
  if (atomic_load_explicit(&t->blocked, memory_order_seq_cst)) {
    t->scan_regs = false;
    t->scan_from = t->blocked_sp;
    return true;
  }
  return false;
}

/* A thread running on another CPU acknowledges within microseconds of
 * the signal; sleeping on the futex meanwhile lets this CPU go idle, and
 * waking an idle CPU costs tens of microseconds in a VM.  So the collector
 * first watches the count for a bounded time (SGC_STOP_SPIN_US, default
 * 50), when there are no more signalled threads than CPUs: a woken thread
 * that lands on this CPU preempts the spinner.  With many more threads
 * than CPUs the spin is wasted (bursty, 200 threads: 1.10x the time to
 * stop).  gcbench and cube with 2 threads on 2 CPUs (their main thread
 * waiting in pthread_join was signalled too then): 0.68x and 0.76x the
 * time to stop (tools/dev/ab.sh -n 11 -t -f stop_ns -a SGC_STOP_SPIN_US=0 -b
 * SGC_STOP_SPIN_US=50); 20 us was too short for gcbench (1.41x the stop
 * time of 50), 100 too long for cube (1.16x).  Threads waiting in
 * GC_pthread_join or for heap_lock are no longer signalled at all
 * (threads/pthread_api.c), so most collections of those programs now
 * signal no thread and the spin does not start. */
static void spin_for_acks(uint32_t signalled) {
  uint64_t budget = sgc_settings.stop_spin_ns;
  if (!budget || !signalled || signalled > sgc_settings.usable_cpus) return;
  uint64_t deadline = os_now_ns() + budget;
  for (;;) {
    for (int i = 0; i < 64; i++) {
      if (atomic_load_explicit(&stop_acks, memory_order_acquire) >= signalled) return;
      __builtin_ia32_pause();
    }
    if (os_now_ns() >= deadline) return;
  }
}

/* A stop takes microseconds.  After STOP_DIAGNOSE_NS of waiting the
 * collector looks at the threads that have not stopped, and names those
 * whose signal mask holds SIGPWR back: a thread that blocked every
 * signal with sigprocmask (or a pthread_sigmask sgc did not redirect)
 * and then runs without allocating never stops, and the program hangs,
 * as it does with bdwgc, which says nothing.  After STOP_WARN_NS it names
 * any thread still running.  It goes on waiting: the thread may unblock
 * the signal later.  (The warnings are given with the other threads
 * stopped, which a warn procedure that takes a lock may not survive; a
 * hang that says why is still the better of the two.) */
static const uint64_t STOP_DIAGNOSE_NS = 2000000000ull, STOP_WARN_NS = 10000000000ull;

static void diagnose_slow_stop(struct sgc_thread *self, uint32_t epoch, bool warn_any) {
  int sig = SUSPEND_SIGNAL;
  FOR_EACH_THREAD(t) {
    if (t == self || !t->scan_regs || thread_stopped(t, epoch)) continue;
    if (os_thread_blocks_signal(t->tid, sig)) {
      if (!warn_any)
        sgc_warn("a collection waits for thread %d, which blocks %s, the signal sgc "
                 "stops threads with: it stops only once its allocation needs a refill or "
                 "it unblocks it (GC_pthread_sigmask keeps it unblocked; GC_do_blocking "
                 "covers a long wait)",
                 t->tid, signal_name(sig).text);
    } else if (warn_any) {
      sgc_warn("a collection has waited 10 s for thread %d to stop", t->tid);
    }
  }
}

/* A stop is late: if the program has put its own handler on the suspend
 * signal (or ignores it), no signalled thread will ever stop, and a
 * collection would wait for ever.  Stopping a thread some other way, or
 * scanning it running, is not safe: a fatal error that says what to
 * change.  A system call per millisecond of a late stop only. */
static void check_handler_still_ours(struct sgc_thread *late, bool stopping) {
  int sig = SUSPEND_SIGNAL;
  if (handler_is_ours(sig)) return;
  /* The threads stopped so far go on: one may hold the lock stderr's
   * stream takes. */
  if (stopping) start_world();
  sgc_fatal("thread %d cannot be stopped for a collection: the program has replaced sgc's "
            "handler for %s (or ignores it), the signal sgc stops threads with; give sgc a "
            "signal the program does not use: SGC_SUSPEND_SIGNAL=SIGUSR2 (for instance) in the "
            "environment, or GC_set_suspend_signal before GC_INIT",
            late->tid, signal_name(sig).text);
}

int stop_world(void) {
  struct sgc_thread *self = sgc_self;
  atomic_store_explicit(&stop_acks, 0, memory_order_relaxed);
  atomic_store_explicit(&stop_target, UINT32_MAX, memory_order_relaxed);
  /* seq_cst: the epoch store is ordered before every pthread_kill. */
  uint32_t epoch = atomic_fetch_add_explicit(&world_epoch, 1, memory_order_seq_cst) + 1;
  uint32_t signalled = 0;
  FOR_EACH_THREAD(t) {
    t->scan_regs = false;
    if (t == self) continue;
    /* A thread in GC_do_blocking published blocked_sp before the flag
     * (release, read here with acquire and more) and stays in its section
     * until this stop ends: seq_cst, see stop_world_leave_blocking. */
    if (atomic_load_explicit(&t->blocked, memory_order_seq_cst)) {
      t->scan_from = t->blocked_sp;
      continue;
    }
    t->scan_regs = true;
    /* Parked by GC_suspend_thread: stopped already, its context saved
     * (seq_cst: see park). */
    if (atomic_load_explicit(&t->ext_parked, memory_order_seq_cst)) {
      t->scan_from = atomic_load_explicit(&t->stopped_sp, memory_order_relaxed);
      continue;
    }
    int r = pthread_kill(t->pthread, SUSPEND_SIGNAL);
    if (r != 0) sgc_fatal("cannot suspend thread %d: %s", t->tid, strerror(r));
    signalled++;
  }
  /* seq_cst pairs with the handler: either it sees the target and wakes
   * us, or we see its ack before sleeping.  The timeout covers threads
   * that went blocking (or exiting) with the signal held back. */
  atomic_store_explicit(&stop_target, signalled, memory_order_seq_cst);
  spin_for_acks(signalled);
  uint64_t waited_ns = 0;
  for (;;) {
    uint32_t acks = atomic_load_explicit(&stop_acks, memory_order_seq_cst);
    bool all = true;
    FOR_EACH_THREAD(t) {
      if (t != self && t->scan_regs && !thread_stopped(t, epoch)) {
        all = false;
        break;
      }
    }
    if (all) break;
    futex_wait_timeout(&stop_acks, acks, 1000000);
    waited_ns += 1000000;
    FOR_EACH_THREAD(t) {
      if (t != self && t->scan_regs && !thread_stopped(t, epoch)) {
        check_handler_still_ours(t, true);
        break;
      }
    }
    if (waited_ns == STOP_DIAGNOSE_NS || waited_ns == STOP_WARN_NS)
      diagnose_slow_stop(self, epoch, waited_ns == STOP_WARN_NS);
  }
  report_thread_events(self, GC_EVENT_THREAD_SUSPENDED);
  return (int)signalled;
}

void start_world(void) {
  report_thread_events(sgc_self, GC_EVENT_THREAD_UNSUSPENDED);
  atomic_fetch_add_explicit(&world_epoch, 1, memory_order_seq_cst);
  futex_wake_all(&world_epoch);
}

/* GC_suspend_thread, with registry_lock held and the page path closed
 * (threads/suspend.c), so no collection runs meanwhile and T holds none of
 * the collector's locks when it parks. */
void stop_world_park(struct sgc_thread *t) {
  atomic_store_explicit(&t->ext_suspend, 1, memory_order_seq_cst);
  int r = pthread_kill(t->pthread, SUSPEND_SIGNAL);
  if (r != 0) sgc_fatal("cannot suspend thread %d: %s", t->tid, strerror(r));
  uint64_t waited_ns = 0;
  while (!atomic_load_explicit(&t->ext_parked, memory_order_seq_cst)) {
    futex_wait_timeout(&t->ext_parked, 0, 1000000);
    waited_ns += 1000000;
    if (!atomic_load_explicit(&t->ext_parked, memory_order_seq_cst))
      check_handler_still_ours(t, false);
    if (waited_ns == 10000000000ull)
      sgc_warn("GC_suspend_thread has waited 10 s for thread %d to stop: is %s blocked?", t->tid,
               signal_name(SUSPEND_SIGNAL).text);
  }
}

/* Seq_cst, as GC_suspend_thread's store of ext_suspend before its
 * signal: either the handler ran after `assisting` was cleared and
 * parked, or this load sees the request.  A signal to oneself is
 * delivered before pthread_kill returns. */
void thread_park_if_asked(struct sgc_thread *self) {
  if (atomic_load_explicit(&self->ext_suspend, memory_order_seq_cst))
    pthread_kill(self->pthread, SUSPEND_SIGNAL);
}

void stop_world_unpark(struct sgc_thread *t) {
  /* Release: pairs with park's acquire load. */
  atomic_store_explicit(&t->ext_suspend, 0, memory_order_release);
  futex_wake_all(&t->ext_suspend);
}
