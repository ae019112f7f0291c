/* Parallel marking (thesis §3.4): GC threads created once, parked on a
 * futex between collections, woken by the collecting thread, which marks
 * too.  Idle markers steal from random victims; termination is detected
 * with per-marker idle flags and the global detection-interrupted flag
 * (NSB, thesis §3.4.3), or with a locked idle counter in the No-NSB and
 * No-Opt variants.
 *
 * Parking is lazy and lock-free (papers/002 §3.1 in spirit): a helper
 * remembers the last phase epoch it served and sleeps on the epoch word;
 * the collector bumps the epoch and wakes everyone with one futex call.
 * A helper that wakes late still sees the new epoch, so it can never sleep
 * through a phase; the collector waits for every helper to report before
 * it touches the stacks again. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "mark/disclaim.h"
#include "common.h"
#include "mark/mark.h"
#include "mark/predict.h"
#include "mark/snapshot.h"
#include "os/numa.h"
#include "os/os.h"

enum { SPINS_BEFORE_YIELD = 64 };

static struct marker **markers;     /* [0] is the collector's */
static unsigned helpers_created;    /* GC threads alive */
/* A GC thread could not start (pthread_create or its stack refused): sgc
 * marks with those it has from then on, as bdwgc does, rather than try
 * (and warn) again at every collection.  Cleared in a fork child. */
static bool helpers_refused;
static unsigned active;             /* markers in the current phase */
static _Atomic uint32_t phase_epoch;
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static int idle_count; /* No-NSB termination, under counter_lock */

void parallel_mark_init(void) {
  markers = os_alloc(os_markers_limit() * sizeof *markers);
  if (!markers) sgc_fatal("cannot allocate the marker table");
  markers[0] = mark_collector;
}

unsigned parallel_markers_ready(void) { return active ? active : 1; }
unsigned parallel_markers_created(void) { return helpers_created + 1; }
struct marker *parallel_marker(unsigned i) { return markers[i]; }

static uint64_t next_random(struct marker *m) {
  m->rng ^= m->rng << 13;
  m->rng ^= m->rng >> 7;
  m->rng ^= m->rng << 17;
  return m->rng;
}

static struct marker *const *extra_victims;
static unsigned extra_victim_count;

void parallel_set_extra_victims(struct marker *const *victims, unsigned count) {
  extra_victims = victims;
  extra_victim_count = count;
}

/* The extra victims, after the markers: work a thread that assisted left
 * on its slot is marked by whichever marker runs out first, not left
 * until the driver gathers it after its drain (it held up to 5 of
 * gcbench's 16 MB, and the cycle's end by 3.7 ms). */
static bool steal_from_extra(struct marker *m) {
  if (!atomic_load_explicit(&mark_concurrently, memory_order_relaxed)) return false;
  for (unsigned k = 0; k < extra_victim_count; k++)
    if (marker_steal(m, extra_victims[k])) return true;
  return false;
}

/* A random victim first, then the others in turn; with several memory
 * nodes, every victim on the thief's node before any other (papers/002
 * §3.2: stealing that ignores nodes gives locality away).  Each victim is
 * tried once either way, so termination is unchanged. */
bool parallel_steal_from_someone(struct marker *m) {
  unsigned n = active;
  unsigned start = (unsigned)(next_random(m) % n);
  bool by_node = numa_active();
  unsigned node = atomic_load_explicit(&m->node, memory_order_relaxed);
  for (unsigned pass = 0; pass < 1u + by_node; pass++) {
    for (unsigned k = 0; k < n; k++) {
      struct marker *victim = markers[(start + k) % n];
      if (victim == m) continue;
      if (by_node &&
          (atomic_load_explicit(&victim->node, memory_order_relaxed) == node) != (pass == 0))
        continue;
      if (mark_config.deque == DEQUE_CHASE_LEV ? cl_steal(m, victim) : marker_steal(m, victim))
        return true;
    }
  }
  return extra_victim_count && steal_from_extra(m);
}

static bool terminated_nsb(void) {
  atomic_store_explicit(&mark_detection_interrupted, 0, memory_order_seq_cst);
  for (unsigned k = 0; k < active; k++)
    if (!atomic_load_explicit(&markers[k]->idle, memory_order_seq_cst)) return false;
  return atomic_load_explicit(&mark_detection_interrupted, memory_order_seq_cst) == 0;
}

static void backoff(unsigned *spins) {
  if (++*spins < SPINS_BEFORE_YIELD) __builtin_ia32_pause();
  else {
    sched_yield(); /* more markers than CPUs: let the busy ones run */
    *spins = 0;
  }
}

/* Idle: steal or detect termination.  Returns true when work was found. */
static bool look_for_work_nsb(struct marker *m) {
  atomic_store_explicit(&m->idle, 1, memory_order_seq_cst);
  unsigned spins = 0;
  for (;;) {
    if (parallel_steal_from_someone(m)) return true; /* marker_steal cleared idle */
    if (terminated_nsb()) return false;
    /* A concurrent cycle's finish: stop, work or none (parallel_gather_work). */
    if (atomic_load_explicit(&mark_yield_request, memory_order_relaxed)) return false;
    backoff(&spins);
  }
}

static bool someone_has_public_work(struct marker *m) {
  for (unsigned k = 0; k < active; k++) {
    struct marker *v = markers[k];
    if (v == m) continue;
    if (mark_config.deque == DEQUE_CHASE_LEV ? cl_has_work(v)
                                             : atomic_load_explicit(&v->bottom, memory_order_relaxed) <
                                                   atomic_load_explicit(&v->watermark, memory_order_relaxed))
      return true;
  }
  return false;
}

/* The locked counter of the No-NSB and No-Opt variants.  A marker enters
 * counted busy or idle (helpers start idle: they have no work of their
 * own), and is counted busy before it takes stolen work, so the count
 * never says "everyone idle" while someone holds work. */
static bool look_for_work_counter(struct marker *m) {
  if (!m->counted_idle) {
    pthread_mutex_lock(&counter_lock);
    idle_count++;
    pthread_mutex_unlock(&counter_lock);
    m->counted_idle = true;
  }
  unsigned spins = 0;
  for (;;) {
    pthread_mutex_lock(&counter_lock);
    bool done = idle_count == (int)active;
    pthread_mutex_unlock(&counter_lock);
    if (done || atomic_load_explicit(&mark_yield_request, memory_order_relaxed)) return false;
    if (someone_has_public_work(m)) {
      pthread_mutex_lock(&counter_lock);
      idle_count--;
      pthread_mutex_unlock(&counter_lock);
      m->counted_idle = false;
      if (parallel_steal_from_someone(m)) return true;
      pthread_mutex_lock(&counter_lock);
      idle_count++;
      pthread_mutex_unlock(&counter_lock);
      m->counted_idle = true;
    }
    backoff(&spins);
  }
}

/* The times add up over the collection's drains (a concurrent cycle's
 * rounds and its finish each drain): this drain's idle time only comes
 * off this drain's wall time. */
static void drain_cooperative(struct marker *m) {
  uint64_t start = os_now_ns(), cpu_start = os_thread_cpu_ns(), idle = 0;
  for (;;) {
    mark_drain_own(m);
    if (!mark_config.balance || active == 1) break;
    if (atomic_load_explicit(&mark_yield_request, memory_order_relaxed)) break;
    uint64_t idle_start = os_now_ns();
    bool more = mark_config.nsb ? look_for_work_nsb(m) : look_for_work_counter(m);
    idle += os_now_ns() - idle_start;
    if (!more) break;
  }
  m->idle_ns += idle;
  m->busy_ns += os_now_ns() - start - idle;
  m->cpu_ns += os_thread_cpu_ns() - cpu_start;
}

/* ---- phases: lock-free start, lazy joining ----
 * A phase is announced by bumping phase_epoch (the helpers' futex word)
 * after opening phase_gate, a 64-bit word holding the phase's epoch, an
 * "open" bit and how many helpers joined.  A helper joins with one CAS
 * that succeeds only while the gate is open for the epoch it saw; the
 * collector closes the gate when its own work is done (for marking: when
 * termination is detected) and waits only for the helpers that joined.  A
 * helper that wakes late finds the gate closed and goes back to sleep, so
 * a small collection never waits for sleeping threads to wake (the
 * tiny-heap slowdown of bdwgc issues #320/#453). */

enum { GATE_OPEN = 1u << 31, GATE_COUNT = GATE_OPEN - 1 };
static _Atomic uint64_t phase_gate;
static _Atomic uint32_t phase_leave; /* bumped when the last joiner leaves */
static _Atomic uint32_t phase_joins; /* helpers that joined the phase */
static void (*phase_work)(struct marker *, void *);
static void *phase_arg;
static uint64_t phase_start_ns; /* when the collector announced the phase */

static void mark_phase(struct marker *m, void *arg) {
  (void)arg;
  drain_cooperative(m);
}

static bool gate_join(uint32_t epoch) {
  uint64_t g = atomic_load_explicit(&phase_gate, memory_order_acquire);
  for (;;) {
    if ((uint32_t)(g >> 32) != epoch || !(g & GATE_OPEN)) return false;
    if (atomic_compare_exchange_weak_explicit(&phase_gate, &g, g + 1, memory_order_acq_rel,
                                              memory_order_acquire))
      return true;
  }
}

static void gate_leave(void) {
  uint64_t g = atomic_fetch_sub_explicit(&phase_gate, 1, memory_order_acq_rel) - 1;
  if (!(g & GATE_OPEN) && (g & GATE_COUNT) == 0) {
    atomic_fetch_add_explicit(&phase_leave, 1, memory_order_release);
    futex_wake_all(&phase_leave);
  }
}

static _Atomic unsigned helpers_started;
static _Atomic int phase_collector_cpu = -1; /* where the collector runs the phase */

/* A helper woken onto the collector's CPU waits there while the collector
 * marks, even with another CPU idle (the wake-up placed it by the waker),
 * and the collection marks alone with the costs of marking in parallel:
 * 9 of 250 collections of gcbench -t 1 had their helper on a CPU for less
 * than half its presence.  Such a helper moves itself: its affinity
 * without that CPU makes the kernel migrate it at once, and the old mask
 * is restored right after, so the user's affinity settings stand
 * (os_move_off_cpu). */

/* SGC_MARKERS_CYCLE: successive collections take the counts of the list
 * in turn, and the adaptive choice below is off.  It measures what more
 * GC threads give within one run: a 2-GC-thread collection and the
 * 1-GC-thread one next to it mark alike heaps (the collections, and so
 * the heap, do not depend on the count) milliseconds apart, while
 * separate runs, seconds apart on a shared VM, marked the same heap
 * (bh-pt: 92.6 MB in 20 collections every run) at 1,540 to 2,771 MB/s
 * with one GC thread (20261122-035000-deque-ceiling).  Advanced once per
 * collection (parallel_after_collection). */
static unsigned cycle_position;

/* Set for a concurrent cycle's finish (parallel_finish_takes_all). */
static bool finish_takes_all;

void parallel_finish_takes_all(bool on) { finish_takes_all = on; }

/* The markers the coming mark uses: what the pre-wake and the mark
 * itself must agree on.  A cycle's finish is a pause with every helper
 * on a CPU of its own, and what it marks is whatever the cycle left,
 * which neither the predictor nor the rule sees: both learnt from the
 * cycle's drains beside busy program threads, where helpers got no CPU,
 * and chose one GC thread for 16-24 of gcbench's 30-38 finishes; the
 * worst pauses were such finishes marking 6-13 MB alone (4.4-6.4 ms in
 * 4 runs of 6, against 2.3-2.7 with two GC threads). */
static unsigned markers_for_next_mark(void) {
  if (sgc_settings.markers_cycle_length)
    return sgc_settings.markers_cycle[cycle_position % sgc_settings.markers_cycle_length];
  unsigned most = sgc_settings.markers ? sgc_settings.markers : 1;
  if (finish_takes_all) return most;
  if (sgc_settings.markers_choice == MARKERS_AUTO) return predict_markers(most);
  return parallel_adaptive_markers(most);
}

/* ---- waking the helpers before the world stops ----
 * A parked helper takes 30-70 us to run again after the futex wake.  So
 * the collector wakes the helpers the coming mark will use before it
 * clears the marks and stops the world (collect.c): they wake meanwhile,
 * move off the collector's CPU, answer, and wait for the phase yielding
 * their CPU.  Only a hint: a helper that misses it, or whose wait
 * (SGC_PREWAKE_US) runs out, is woken by the phase as before. */
static _Atomic uint32_t prewake_seq;       /* bumped per pre-wake */
static _Atomic unsigned prewake_markers;   /* markers the coming mark uses; 0: none woken */
static _Atomic unsigned prewake_answers;   /* helpers awake for the latest pre-wake */
/* The phase epoch the latest pre-wake is for (the coming mark's).  A
 * helper woken by the pre-wake but run only after that mark had begun
 * meets the pre-wake first in its next wait, after the mark: taken as
 * one, it yielded its CPU for the whole SGC_PREWAKE_US (2 ms) after every
 * such collection, waiting for a mark that had come and gone: 2 ms of
 * CPU a collection where it now takes 23-27 us (bb_gc_threads_idle),
 * a fifth of bench-shapes -s large's CPU samples (history.md, "A
 * pre-wake answered after its mark"). */
static _Atomic uint32_t prewake_epoch;

void parallel_prewake(void) {
  unsigned want = markers_for_next_mark();
  atomic_store_explicit(&prewake_markers, 0, memory_order_relaxed);
  if (want <= 1 || helpers_created == 0 || !sgc_settings.prewake_ns) return;
  /* Only when every marker can have a CPU of its own: with more (4 GC
   * threads on 2 CPUs) the pre-woken helpers wait on CPUs the collector
   * and the others need; gcbench -t 2 ran 1.14x as long with all of them
   * pre-woken, and its pauses were 1.09x with only one (21 runs). */
  if (want > sgc_settings.usable_cpus) return;
  atomic_store_explicit(&prewake_answers, 0, memory_order_relaxed);
  atomic_store_explicit(&prewake_markers, want, memory_order_relaxed);
  atomic_store_explicit(&phase_collector_cpu, sched_getcpu(), memory_order_relaxed);
  /* Only collecting threads, holding the collector's locks, bump the
   * epoch (parallel_run_phase), so this read is the current one. */
  uint32_t coming = atomic_load_explicit(&phase_epoch, memory_order_relaxed) + 1;
  atomic_store_explicit(&prewake_epoch, coming, memory_order_relaxed);
  /* Release: a helper that sees the new sequence sees the count and the
   * epoch. */
  atomic_fetch_add_explicit(&prewake_seq, 1, memory_order_release);
  futex_wake_all(&phase_epoch);
}

/* Called just before the stop: a pre-woken helper that has not answered
 * may be queued behind this thread on its CPU, where it would wait out
 * the collector's whole time slice (up to 3 ms: gcbench -t 2 had 13 of
 * 153 helpers that missed their pre-wake join 0.1-3.3 ms into the mark,
 * tools/analysis/helper_cpu.py).  One yield lets such a helper run and move itself
 * off this CPU; when none is queued here it costs a system call. */
void parallel_prewake_settle(void) {
  unsigned woken = atomic_load_explicit(&prewake_markers, memory_order_relaxed);
  if (woken > 1 && atomic_load_explicit(&prewake_answers, memory_order_acquire) < woken - 1)
    sched_yield();
}

/* Waits until phase_epoch moves past SEEN; *HINT is the last pre-wake
 * this helper answered, *AWAKE whether the phase found it yield-waiting
 * in a pre-wake's window (SGC_TRACE's "prewoken"): not asleep, nor still
 * spinning after the phase before.  Counting that spin as a pre-wake
 * once made a helper report one with SGC_PREWAKE_US=0: preempted (a busy
 * neighbour on a 2-CPU machine) between its last phase and this wait, it
 * came back after the next phase had begun (bb_prewake_trace, 1 failure
 * in 3 repetitions of the suite beside a busy loop). */
static uint32_t helper_wait_phase(struct marker *m, uint32_t seen, uint32_t *hint, bool *awake) {
  uint32_t epoch;
  unsigned spins = 0;
  uint64_t awake_until = 0;
  *awake = false;
  while ((epoch = atomic_load_explicit(&phase_epoch, memory_order_acquire)) == seen) {
    if (++spins < 256) {
      __builtin_ia32_pause();
      continue;
    }
    uint32_t h = atomic_load_explicit(&prewake_seq, memory_order_acquire);
    if (h != *hint) {
      *hint = h;
      /* For the phase after SEEN, or a stale one (above). */
      if (m->index < atomic_load_explicit(&prewake_markers, memory_order_relaxed) &&
          atomic_load_explicit(&prewake_epoch, memory_order_relaxed) == seen + 1) {
        awake_until = os_now_ns() + sgc_settings.prewake_ns;
        /* Off the collector's CPU first, then answer (parallel_prewake_settle). */
        os_move_off_cpu(atomic_load_explicit(&phase_collector_cpu, memory_order_relaxed));
        atomic_fetch_add_explicit(&prewake_answers, 1, memory_order_release);
      }
    }
    *awake = awake_until && os_now_ns() < awake_until;
    if (*awake) {
      /* Not on the collector's CPU (where it may have been put back): it
       * marks there without yielding, and this helper would wait behind it. */
      os_move_off_cpu(atomic_load_explicit(&phase_collector_cpu, memory_order_relaxed));
      sched_yield();
    } else {
      futex_wait(&phase_epoch, seen);
    }
  }
  return epoch;
}

static void *helper_main(void *arg) {
  struct marker *m = arg;
  sigset_t all;
  sigfillset(&all);
  /* Not the fault signals: a GC thread's write to a page the mprotect
   * barrier protects must reach its handler (barrier/mprotect_signals.c). */
  sigdelset(&all, SIGSEGV);
  sigdelset(&all, SIGBUS);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  uint32_t seen = 0, hint = atomic_load_explicit(&prewake_seq, memory_order_relaxed);
  /* SGC_NUMA_PIN: on its node's CPUs for good (parallel_ensure_markers
   * chose the node), unless the process was bound to some already. */
  if (numa_pin && numa_active())
    atomic_store_explicit(&m->pinned,
                          numa_pin_self(atomic_load_explicit(&m->node, memory_order_relaxed)),
                          memory_order_relaxed);
  atomic_fetch_add_explicit(&helpers_started, 1, memory_order_release);
  for (;;) {
    bool awake;
    uint32_t epoch = helper_wait_phase(m, seen, &hint, &awake);
    seen = epoch;
    if (!gate_join(epoch)) continue;
    atomic_fetch_add_explicit(&phase_joins, 1, memory_order_relaxed);
    if (m->index < active) {
      bool pinned = atomic_load_explicit(&m->pinned, memory_order_relaxed);
      if (!pinned) os_move_off_cpu(atomic_load_explicit(&phase_collector_cpu, memory_order_relaxed));
      if (numa_active() && !pinned)
        atomic_store_explicit(&m->node, numa_current_node(), memory_order_relaxed);
      /* phase_start_ns was written before the epoch's release store. */
      /* The mark's join only: a parallel sweep's phase follows it in the
       * same collection, and its join would overwrite what the trace
       * reports as the mark's (docs/settings.md, SGC_TRACE). */
      if (phase_work == mark_phase) {
        m->join_ns = os_now_ns() - phase_start_ns;
        m->prewoken = awake;
      }
      phase_work(m, phase_arg);
    }
    gate_leave();
  }
  return NULL;
}

/* Creates GC threads up to WANT markers in all; called before the world
 * stops (thread creation may take libc locks). */
void parallel_ensure_markers(unsigned want) {
  if (want > os_markers_limit()) want = os_markers_limit(); /* bounds guard */
  while (!helpers_refused && helpers_created + 1 < want) {
    unsigned index = helpers_created + 1;
    struct marker *m = os_alloc(sizeof *m);
    int refused = ENOMEM;
    if (m && marker_init(m, index)) {
      markers[index] = m;
      atomic_store_explicit(&m->node, numa_active() ? numa_pin_node(index) : 0, memory_order_relaxed);
      pthread_t thread;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      refused = pthread_create(&thread, &attr, helper_main, m);
      pthread_attr_destroy(&attr);
      if (refused == 0) {
        helpers_created++;
        continue;
      }
      markers[index] = NULL;
      marker_destroy(m);
    }
    if (m) os_free(m, sizeof *m);
    /* Before, each collection tried again and leaked the marker: with the
     * address space limited, the tenth collection died of "cannot
     * allocate a mark stack" (bb_out_of_memory, gc_threads). */
    helpers_refused = true;
    sgc_warn("cannot start GC thread %u (%s); collections mark with %u thread%s from now on",
             index, strerror(refused), helpers_created + 1, helpers_created ? "s" : "");
  }
  /* New helpers get a moment (at most 2 ms) to start, so the collection
   * that made them finds them parked rather than still being created:
   * joining late, they would make its parallelism look poor. */
  uint64_t deadline = os_now_ns() + 2000000;
  while (atomic_load_explicit(&helpers_started, memory_order_acquire) < helpers_created &&
         os_now_ns() < deadline)
    sched_yield();
}

/* SGC_MARKERS=rule, the default before SGC_MARKERS=auto: a measured
 * stand-in for the thesis's predictor (ch. 4).  When the last
 * collection's markers achieved a parallelism (summed busy time over the
 * busiest marker's) under 1.25 -- a list, a tiny heap -- the next one
 * marks alone, which also lets it set mark bits without atomics; every
 * ADAPTIVE_RETRY-th collection tries all markers again in case the
 * heap's shape changed. */
enum {
  ADAPTIVE_RETRY_MIN = 8,
  ADAPTIVE_RETRY_MAX = 256,
  /* Waking a GC thread costs tens of microseconds: a heap with less live
   * data than this per marker marks faster with fewer markers. */
  LIVE_BYTES_PER_MARKER = 256 << 10,
};
static unsigned adaptive_limit;   /* 0: no limit */
static unsigned adaptive_skipped; /* collections marked alone in a row */
static unsigned adaptive_retry = ADAPTIVE_RETRY_MIN;
/* The last collection's live data; before the first, what was allocated
 * so far, which bounds what it can find live (parallel_bound_first_live).
 * Without that bound a tiny heap's first collection woke every helper
 * (60-80 us more than its 25-40 us). */
static uint64_t last_live_bytes = UINT64_MAX;

void parallel_bound_first_live(uint64_t bytes) { last_live_bytes = bytes; }

/* Whether the helpers ran for at least half the collector's marking time.
 * A helper that joined late (woke slowly) or whose CPU ran something else
 * says nothing about the heap's shape: gcbench had collections where the
 * only helper arrived after 60% of the work and found nothing left to
 * steal, and first collections where the new helper was there all along
 * but got 70-110 us of CPU in 3.6 ms (its cpu_ns in the trace) and stole
 * twice; marking alone for the next 8 collections then cost a third of
 * the mark rate.  So the helpers' CPU time counts, not their wall time,
 * measured against the CPUs they could have had: with more markers than
 * CPUs (4 on 2) each helper gets a share of one CPU, and that must still
 * teach that a list does not mark in parallel, or every collection of it
 * keeps all markers (12.7 ms against 6 alone). */
static bool helpers_took_part(void) {
  uint64_t collector = markers[0]->busy_ns + markers[0]->idle_ns, ran = 0;
  for (unsigned k = 1; k < active; k++) ran += markers[k]->cpu_ns;
  unsigned usable_cpus = sgc_settings.usable_cpus;
  unsigned room = usable_cpus > 1 ? usable_cpus - 1 : 1; /* CPUs beside the collector's */
  if (room > active - 1) room = active - 1;
  return 2 * ran >= (uint64_t)room * collector;
}

void parallel_after_collection(const struct mark_totals *t) {
  last_live_bytes = t->bytes;
  cycle_position++;
  predict_after_collection(t, t->markers > 1 && helpers_took_part());
  if (sgc_settings.markers_choice != MARKERS_RULE) return;
  if (t->markers > 1 && !helpers_took_part()) return; /* nothing learnt */
  if (t->markers > 1) {
    double achieved = t->max_busy_ns ? (double)t->sum_busy_ns / (double)t->max_busy_ns : 1.0;
    bool poor = achieved < 1.25;
    /* A retry that still finds no parallelism waits twice as long. */
    if (poor && adaptive_limit == 0 && adaptive_skipped >= adaptive_retry)
      adaptive_retry = adaptive_retry * 2 > ADAPTIVE_RETRY_MAX ? ADAPTIVE_RETRY_MAX
                                                               : adaptive_retry * 2;
    if (!poor) adaptive_retry = ADAPTIVE_RETRY_MIN;
    adaptive_limit = poor ? 1 : 0;
    if (poor) adaptive_skipped = 0;
  } else if (adaptive_limit == 1 && ++adaptive_skipped >= adaptive_retry) {
    adaptive_limit = 0; /* try all markers next time */
  }
}

unsigned parallel_adaptive_markers(unsigned want) {
  if (sgc_settings.markers_choice != MARKERS_RULE) return want;
  if (adaptive_limit && want > adaptive_limit) want = adaptive_limit;
  if (last_live_bytes != UINT64_MAX) {
    uint64_t by_size = 1 + last_live_bytes / LIVE_BYTES_PER_MARKER;
    if (want > by_size) want = (unsigned)by_size;
  }
  return want;
}

/* The drain by every marker of this collection. */
static void drain_with_markers(void) {
  parallel_set_active(markers_for_next_mark());
  if (numa_active())
    atomic_store_explicit(&mark_collector->node, numa_current_node(), memory_order_relaxed);
  if (active <= 1) {
    uint64_t start = os_now_ns(), cpu_start = os_thread_cpu_ns();
    /* Beside the program a lone GC marker still has thieves: the threads
     * that assist (collect/assist.c) take their work from its stack,
     * so it shares as with several markers. */
    mark_configure_drain(!atomic_load_explicit(&mark_concurrently, memory_order_relaxed));
    mark_drain_own(mark_collector);
    mark_configure_drain(false);
    mark_collector->busy_ns += os_now_ns() - start;
    mark_collector->cpu_ns += os_thread_cpu_ns() - cpu_start;
    return;
  }
  if (!mark_config.balance) {
    /* Simple: deal the root entries round-robin, then no exchange.
     * Beside the program, threads that assist may be stealing from marker
     * 0's public part (collect/assist.c): it turns private under the lock
     * first.  Dealt while a thief took some, the entries kept were packed
     * below the thief's raised bottom, where no pop reaches them, and
     * their objects were never scanned (the oracle's objects freed while
     * reachable, 2 runs in 6). */
    struct marker *m0 = mark_collector;
    pthread_mutex_lock(&m0->lock);
    size_t from = atomic_load_explicit(&m0->bottom, memory_order_relaxed);
    atomic_store_explicit(&m0->watermark, from, memory_order_relaxed);
    pthread_mutex_unlock(&m0->lock);
    size_t n = m0->top, kept = from;
    for (size_t i = from; i < n; i++) {
      struct mark_range r = m0->entries[i];
      unsigned to = (unsigned)(i % active);
      if (to == 0) m0->entries[kept++] = r;
      else marker_push(markers[to], r.lo, r.hi);
    }
    m0->top = kept; /* the watermark stays at FROM: all kept entries private */
  }
  /* Helpers start idle (they own no work) and may join late or never. */
  for (unsigned k = 0; k < active; k++) {
    atomic_store_explicit(&markers[k]->idle, k != 0, memory_order_relaxed);
    markers[k]->counted_idle = k != 0;
  }
  idle_count = (int)active - 1;
  atomic_store_explicit(&mark_detection_interrupted, 0, memory_order_relaxed);
  /* Simple hands work to every helper, so it must wait for all of them. */
  parallel_run_phase(mark_phase, NULL, !mark_config.balance);
}

void parallel_drain_concurrent(void) { drain_with_markers(); }

void parallel_gather_work(void) {
  struct marker *to = mark_collector;
  for (unsigned i = 1; i < parallel_markers_created(); i++) {
    struct marker *m = markers[i];
    /* No phase runs: the owner is parked, its whole stack readable. */
    size_t from = atomic_load_explicit(&m->bottom, memory_order_relaxed);
    for (size_t k = from; k < m->top; k++) marker_push(to, m->entries[k].lo, m->entries[k].hi);
    marker_forget(m);
  }
  /* Marker 0's own public part becomes private again, as a drain
   * expects at its start. */
  atomic_store_explicit(&to->watermark, atomic_load_explicit(&to->bottom, memory_order_relaxed),
                        memory_order_relaxed);
}

void mark_drain_parallel(void) {
  snapshot_before_drain(); /* SGC_SNAPSHOT: the roots are queued, nothing marked */
  drain_with_markers();
  mark_overflow_recover();
  /* Kinds marked from all (gc_disclaim.h): what the objects nothing
   * reached point to survives until their disclaim procedures have run.
   * Marked by the collector alone, as finalize.c marks what finalizable
   * objects reach: usually little (their closures, their fields). */
  if (disclaim_push_unreached()) mark_drain();
}

/* Runs WORK on marker 0 and on every helper that joins in time; with
 * WAIT_ALL, on every active helper. */
void parallel_run_phase(void (*work)(struct marker *, void *), void *arg, bool wait_all) {
  if (active <= 1 || helpers_created == 0) {
    work(mark_collector, arg);
    return;
  }
  phase_work = work;
  phase_arg = arg;
  atomic_store_explicit(&phase_joins, 0, memory_order_relaxed);
  atomic_store_explicit(&phase_collector_cpu, sched_getcpu(), memory_order_relaxed);
  phase_start_ns = os_now_ns();
  uint32_t epoch = atomic_load_explicit(&phase_epoch, memory_order_relaxed) + 1;
  atomic_store_explicit(&phase_gate, ((uint64_t)epoch << 32) | GATE_OPEN, memory_order_release);
  atomic_store_explicit(&phase_epoch, epoch, memory_order_release);
  futex_wake_all(&phase_epoch);
  work(mark_collector, arg);
  if (wait_all) {
    /* Every helper must join: all of them get the epoch eventually. */
    while (atomic_load_explicit(&phase_joins, memory_order_acquire) < helpers_created)
      sched_yield();
  }
  atomic_fetch_and_explicit(&phase_gate, ~(uint64_t)GATE_OPEN, memory_order_acq_rel);
  for (;;) {
    uint32_t v = atomic_load_explicit(&phase_leave, memory_order_acquire);
    if ((atomic_load_explicit(&phase_gate, memory_order_acquire) & GATE_COUNT) == 0) break;
    futex_wait(&phase_leave, v);
  }
}

/* Sets how many markers the next phases use (1 .. GC threads + 1). */
unsigned parallel_set_active(unsigned want) {
  if (want < 1) want = 1;
  active = want < helpers_created + 1 ? want : helpers_created + 1;
  return active;
}

void parallel_after_fork_child(void) {
  helpers_created = 0;
  helpers_refused = false;
  atomic_store(&helpers_started, 0);
  active = 1;
  atomic_store(&phase_gate, 0);
}
