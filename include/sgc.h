/*
 * sgc.h: sgc's native interface (thesis appendix A), statistics and
 * settings.  Everything in <gc.h> is available too.
 */
#ifndef SGC_SGC_H
#define SGC_SGC_H

#include "gc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Settings that SGC_init() takes.  Each field has an environment variable
 * (documented in the README); an explicit field wins over the environment.
 * Zero / negative values mean "default". */
typedef struct SGC_attr {
  size_t initial_heap_bytes; /* SGC_INITIAL_HEAP_SIZE / GC_INITIAL_HEAP_SIZE */
  size_t max_heap_bytes;     /* SGC_MAXIMUM_HEAP_SIZE / GC_MAXIMUM_HEAP_SIZE */
  int free_space_divisor;    /* GC_FREE_SPACE_DIVISOR */
  int torture_interval;      /* SGC_TORTURE: collect every N allocation slow paths */
  int extra_bytes;           /* SGC_EXTRA_BYTES: pad objects (bdwgc pads 1) */
  int page_policy;           /* SGC_PAGE_POLICY: 1 ps, 2 al, 3 lps (0: environment) */
  double lps_k;              /* SGC_LPS_K (0: environment) */
  int lab;                   /* SGC_LAB: 1 thread, 2 cpu, 3 flip (0: environment) */
  int mode;                  /* SGC_MODE: 1 stop, 2 concurrent (0: environment) */
  int reserved[11];
} SGC_attr_t;

/* Values of SGC_attr_t.page_policy and .lab. */
enum { SGC_PAGE_POLICY_PS = 1, SGC_PAGE_POLICY_AL = 2, SGC_PAGE_POLICY_LPS = 3 };
enum { SGC_LAB_THREAD = 1, SGC_LAB_CPU = 2, SGC_LAB_FLIP = 3 };
/* Values of SGC_attr_t.mode: stop-the-world collections, or concurrent
 * cycles (docs/concurrent.md). */
enum { SGC_MODE_STOP = 1, SGC_MODE_CONCURRENT = 2 };

GC_API void SGC_attr_init(SGC_attr_t *attr);

/* Initialise with NGCP collector threads (0: the CPUs this process may use).
 * sgc starts itself when loaded; SGC_init applies ATTR on top, which is
 * safe while only the calling thread allocates (call it first in main).
 * Returns 0. */
GC_API int SGC_init(int ngcp, const SGC_attr_t *attr);

/* Why a collection ran. */
enum SGC_gc_reason {
  SGC_REASON_ALLOCATION = 0, /* allocation since the last collection passed the threshold */
  SGC_REASON_EXPLICIT = 1,   /* GC_gcollect() */
  SGC_REASON_HEAP_LIMIT = 2, /* the heap could not grow further */
  SGC_REASON_TORTURE = 3,    /* SGC_TORTURE */
  SGC_REASON_FINALIZERS = 4  /* finalizers registered since the last collection */
};

/* Length of the per-node arrays of the statistics below. */
enum { SGC_NUMA_NODES = 16 };

/* One record per collection (also written by SGC_TRACE=FILE as JSON). */
typedef struct SGC_gc_record {
  uint64_t gc_no;
  int reason;              /* enum SGC_gc_reason */
  int markers;             /* collector threads that marked */
  int threads;             /* mutator threads stopped (incl. the collector) */
  uint64_t start_ns;       /* CLOCK_MONOTONIC at the first stop signal */
  uint64_t stop_ns;        /* time to stop the world */
  uint64_t mark_ns;        /* marking (roots, heap, finalization) */
  uint64_t sweep_ns;       /* eager sweep part (large objects, page lists) */
  uint64_t pause_ns;       /* world stopped, from the first signal to restart */
  uint64_t marked_bytes;
  uint64_t marked_objects;
  uint64_t heap_bytes;     /* heap size after the collection */
  uint64_t live_bytes;     /* = marked bytes (conservative) */
  uint64_t allocated_bytes;/* allocated since the previous collection */
  uint64_t steal_attempts; /* summed over markers */
  uint64_t steal_successes;
  uint64_t mark_idle_ns;   /* summed over markers: stealing and termination */
  uint64_t mark_busy_max_ns, mark_busy_min_ns; /* the busiest and least busy marker */
  /* Page policy counters after the collection (thesis §2.2.4), in pages of
   * small objects: a (consumed), u (in use), l (with survivors), handed to
   * threads, and of those consumed first by another thread. */
  uint64_t pages_consumed, pages_used, pages_live, pages_taken, remote_pages;
  /* Free bytes sitting in allocation caches (thread or per-CPU lists) at
   * the collection: what papers/001 calls wasted in partly used buffers. */
  uint64_t cache_bytes;
  /* From the collection's start to its first stop signal (start_ns), the
   * other threads still running: waiting for page operations in flight,
   * clearing the marks, waking the GC threads.  A thread that needs
   * heap_lock meanwhile waits for it through this, the pause and the
   * sweep. */
  uint64_t prestop_ns;
  /* Where the rest of the heap is after the collection (with live_bytes
   * and cache_bytes): free pages kept in threads' page stores (AL, LPS)
   * and free pages in the shared pool.  What heap_bytes holds beyond the
   * four is pages left to the lazy sweep and free space in partly used
   * pages. */
  uint64_t store_free_bytes, pool_free_bytes;
  /* The fast predictor's mark time for the markers used (0: none made;
   * SGC_MARKERS=auto predicts every collection), the count it chose
   * (0: not auto), and what a snapshot's dump took inside mark_ns
   * (SGC_SNAPSHOT; docs/prediction.md). */
  uint64_t predicted_mark_ns;
  uint64_t snapshot_ns;
  int auto_markers;
  int reserved_predict;
  /* Memory nodes (docs/numa.md; SGC_NUMA_FAKE simulates them): 0 or 1
   * with one node, when the fields below stay zero.  Heap bytes the GC
   * threads scanned, by the node the placement put each object on
   * (papers/002 Table 4's accesses per node), and of them those scanned
   * by a GC thread on that same node; pages in use per node after the
   * collection.  Nodes from SGC_NUMA_NODES - 1 on add up in the last entry. */
  int numa_nodes;
  uint64_t numa_scanned_bytes[SGC_NUMA_NODES];
  uint64_t numa_local_scanned_bytes;
  uint64_t numa_pages_used[SGC_NUMA_NODES];
  /* Free pages this collection found false pointers into: black-listed,
   * so new objects are placed elsewhere for a while (SGC_BLACKLIST). */
  uint64_t blacklisted_pages;
  /* A concurrent cycle (SGC_MODE=concurrent, docs/concurrent.md), which
   * this record's finish ended: pause_ns is then the finish's pause and
   * start_pause_ns the start's; cycle_ns from the start to the finish's
   * end; pages the barrier reported written and rescanned, in rounds
   * while the program ran and at the finish; bytes marked by allocating
   * threads (the rest of marked_bytes by the GC threads).  fallback: the
   * cycle had not converged and the finish marked the rest stopped. */
  int concurrent, fallback;
  uint64_t start_pause_ns, cycle_ns, rescanned_pages, rounds, mutator_marked_bytes;
  /* The cycle's parts: bytes allocated from its start to its finish; the
   * finish's pause split into the written pages it rescanned (pages,
   * bytes queued from them, time), the roots' push, the parallel drain
   * (time, and the bytes it marked: what the concurrent phase left). */
  uint64_t cycle_allocated_bytes, finish_rescan_pages, finish_rescan_bytes;
  uint64_t finish_rescan_ns, finish_roots_ns, finish_drain_ns, finish_marked_bytes;
  /* Allocation slow paths that were to mark during the cycle (assists),
   * those that marked nothing (no work to take, or no free slot), and
   * the bytes their budgets asked for (mutator_marked_bytes is what
   * they did). */
  uint64_t assists, assists_idle, assist_asked_bytes;
  /* Bytes of marked objects queued again from written pages, in rounds
   * and at the finish (rescanned_pages' contents that were scanned). */
  uint64_t rescanned_bytes;
  /* The barrier's arm at the cycle's start (uffd: a walk over the heap's
   * page tables), inside start_pause_ns only where the backend cannot
   * arm with the program running. */
  uint64_t start_arm_ns;
  /* Steals by assisting threads from the rounds' rescan queue: their
   * share of the rescans (docs/concurrent.md, "Rounds"). */
  uint64_t assist_rescan_steals;
  /* Assists that found no work while the cycle was behind (its marking
   * left at least the room left) and gave up the CPU once, so that the
   * GC threads holding the work run (SGC_ASSIST_YIELD). */
  uint64_t assist_yields;
} SGC_gc_record_t;

/* Totals since start. */
typedef struct SGC_stats {
  uint64_t collections;
  uint64_t total_pause_ns;
  uint64_t max_pause_ns;
  uint64_t total_mark_ns;
  uint64_t total_allocated_bytes;
  uint64_t heap_bytes;
  uint64_t peak_heap_bytes;
  uint64_t large_allocations;
  uint64_t page_refills;      /* free-list refills that took heap_lock */
  uint64_t unlocked_refills;  /* ... that did not (each thread adds its count every 64) */
  /* Free-page policy (SGC_PAGE_POLICY): 0 ps, 1 al, 2 lps, with k. */
  int page_policy;
  double lps_k;
  uint64_t pages_consumed;   /* a */
  uint64_t pages_used;       /* u */
  uint64_t pages_live;       /* l at the last collection */
  uint64_t max_pages_live;   /* max l */
  uint64_t sum_max_used;     /* sum over threads of max u_i */
  uint64_t pages_taken;      /* pages handed to threads */
  uint64_t remote_pages;     /* ... that another thread consumed first */
  uint64_t stolen_pages;     /* ... taken from another thread's store (LPS) */
  /* Allocation caches (SGC_LAB; papers/001 Table 2). */
  int lab;                   /* SGC_LAB_THREAD or SGC_LAB_CPU: the mode now */
  int lab_flip;              /* flip mode */
  int lab_fell_back;         /* per-CPU asked for, rseq unavailable */
  uint64_t percpu_refills;   /* refill transactions committed */
  uint64_t percpu_install_failures; /* ... failed: the list was sidelined */
  uint64_t percpu_reopened;  /* ... aborted by the kernel and restarted */
  uint64_t percpu_sidelined_bytes; /* bytes of refill lists sidelined so far */
  uint64_t lab_flips;
  /* Refills that took a batch of objects another thread freed (GC_free)
   * before the heap would give fresh pages (alloc/batches.c). */
  uint64_t stolen_batches;
  /* Mark stacks full and unable to grow (SGC_MARK_STACK_LIMIT, or the OS
   * refusing): entries dropped, and rescans of the marked heap that found
   * their objects again (mark/overflow.c). */
  uint64_t mark_overflow_dropped, mark_overflow_rescans;
  /* Where the heap was at the last collection (SGC_gc_record_t): live
   * bytes, free bytes in allocation caches, in threads' page stores, in
   * the shared pool; heap_bytes at that collection holds the four, the
   * pages left to the lazy sweep and the free space in partly used pages. */
  uint64_t last_heap_bytes, last_live_bytes, last_cache_bytes, last_store_free_bytes,
      last_pool_free_bytes;
  /* Memory nodes (docs/numa.md), nodes past the array's end added to its
   * last entry: how many (1: NUMA off), whether SGC_NUMA_FAKE simulates
   * them, SGC_NUMA_PLACEMENT (0 firsttouch, 1 interleave, 2 local),
   * SGC_BMB as in force, GC threads pinned (SGC_NUMA_PIN). */
  int numa_nodes, numa_fake, numa_placement, numa_bmb, numa_pinned_threads;
  /* Small and large pages in use per node now, and free pages in the pool
   * per node (interleave and local only: a clean page has no node under
   * first touch). */
  uint64_t numa_pages_used[SGC_NUMA_NODES], numa_pages_free[SGC_NUMA_NODES];
  /* Summed over collections: heap bytes scanned per object's node, and of
   * them by a GC thread on the object's node. */
  uint64_t numa_scanned_bytes[SGC_NUMA_NODES];
  uint64_t numa_local_scanned_bytes;
  /* Local placement: fresh pages a thread took from another node's stripes
   * because its own node had none free (the heap grew for none of them). */
  uint64_t numa_foreign_pages;
  /* Placement decisions: descriptor (mark-byte) bytes BMB put on each
   * node, heap bytes local placement bound to each node, heap bytes
   * interleaved, memory-policy calls decided and those the kernel refused
   * (under SGC_NUMA_FAKE none is made). */
  uint64_t numa_bmb_bytes[SGC_NUMA_NODES], numa_bound_bytes[SGC_NUMA_NODES];
  uint64_t numa_interleaved_bytes, numa_bind_calls, numa_bind_failures;
  /* Free pages the last collection black-listed (SGC_gc_record_t). */
  uint64_t last_blacklisted_pages;
  /* Concurrent cycles finished, of them fallbacks to a stopped finish,
   * and the longest start pause. */
  uint64_t concurrent_cycles, concurrent_fallbacks, max_start_pause_ns;
} SGC_stats_t;

GC_API void SGC_get_stats(SGC_stats_t *out);

/* One thread's page store (thesis §2.3: u_i and max u_i per thread).  A
 * store outlives its thread and serves the next thread that starts once
 * its pages are all released, so thread_id names its latest owner; its
 * counts other than max_pages_used add up over all its owners. */
typedef struct {
  int thread_id;             /* OS thread id (gettid) of the latest owner */
  int alive;                 /* that thread still runs */
  uint64_t pages_used;       /* u_i: small-object pages it holds now */
  uint64_t max_pages_used;   /* max u_i, since the latest owner took it */
  uint64_t pages_taken;      /* pages handed to it */
  uint64_t remote_pages;     /* ... that another thread consumed first */
  uint64_t stolen_pages;     /* ... taken from another thread's store (LPS) */
  uint64_t free_pages;       /* emptied pages waiting in it (AL, LPS) */
  int node;                  /* memory node its thread ran on at its latest refill */
} SGC_page_store_stats_t;

/* Copies up to MAX stores, newest first, and returns how many exist (more
 * than MAX means some were left out).  Under PS a store only counts: its
 * pages go back to the shared pool. */
GC_API size_t SGC_get_page_store_stats(SGC_page_store_stats_t *out, size_t max);
/* Copies up to MAX of the most recent records (oldest first) and returns how
 * many were copied; sgc keeps the last 1024. */
GC_API size_t SGC_get_gc_records(SGC_gc_record_t *out, size_t max);

/* The structs above grow at their end as sgc learns to count more.  The
 * calls take the caller's struct size (the macros pass it), so a program
 * built against an older sgc.h gets what its structs hold and no more;
 * one built before the _sized calls existed calls the plain names, which
 * copy the structs as they were then. */
GC_API void SGC_get_stats_sized(SGC_stats_t *out, size_t size);
GC_API size_t SGC_get_page_store_stats_sized(SGC_page_store_stats_t *out, size_t max,
                                             size_t size);
GC_API size_t SGC_get_gc_records_sized(SGC_gc_record_t *out, size_t max, size_t size);
#define SGC_get_stats(out) SGC_get_stats_sized((out), sizeof(SGC_stats_t))
#define SGC_get_page_store_stats(out, max) \
  SGC_get_page_store_stats_sized((out), (max), sizeof(SGC_page_store_stats_t))
#define SGC_get_gc_records(out, max) \
  SGC_get_gc_records_sized((out), (max), sizeof(SGC_gc_record_t))

/* The next collection writes a heap snapshot (the live graph as the
 * marker sees it, docs/prediction.md) into directory DIR, as
 * DIR/sgc-PID-GCNO.snap; SGC_SNAPSHOT=DIR does so at every collection.
 * Returns 0, or -1 when DIR is NULL or too long. */
GC_API int SGC_snapshot_next(const char *dir);

#ifdef __cplusplus
}
#endif
#endif /* SGC_SGC_H */
