/* Observability: every collection leaves an SGC_gc_record_t in a ring of
 * the last RING_SIZE; SGC_TRACE=FILE gets one JSON object per line,
 * GC_PRINT_STATS=1 one human line per collection on stderr, SGC_STATS=1 a
 * summary at exit.  Output happens after the collector released its
 * locks, never with the world stopped. */
#include "stats/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "alloc/page_store.h"
#include "alloc/percpu.h"
#include "barrier/barrier.h"
#include "heap/accounting.h"
#include "heap/heap_lock.h"
#include "common.h"
#include "heap/heap.h"
#include "heap/placement.h"
#include "mark/mark.h"
#include "mark/marker.h"
#include "os/os.h"
#include "roots/roots.h"

enum { RING_SIZE = 1024 };

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
/* One flusher at a time, so the trace's lines come in collection order: a
 * flusher takes a record under stats_lock and writes it after releasing
 * that lock, so two of them (threads leaving heap_lock after nearby
 * collections) could swap two lines: a trace once held collection 22's
 * where 21's belonged (bb_markers_cycle, beside two busy loops).  Taken
 * before stats_lock; never by the collector, which only records. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static SGC_gc_record_t ring[RING_SIZE];
/* Each record's markers, for the trace only (SGC_TRACE): made at start-up
 * when it is asked for.  As a static table it took 4.5 MiB of address
 * space in every process, which under an address-space limit the heap
 * lacked (history.md, "The GC threads' malloc arena"). */
static struct marker_record (*ring_markers)[TRACE_MAX_MARKERS];
static unsigned ring_marker_count[RING_SIZE];
/* A GC thread's NUMA share of a collection: its node, and the heap bytes
 * it scanned in all and on objects of its own node.  A ring beside
 * ring_markers, mapped only with several nodes (stats_init). */
struct numa_marker_record {
  unsigned node;
  uint64_t scanned_bytes, local_bytes;
};
static struct numa_marker_record (*ring_numa)[TRACE_MAX_MARKERS];

static uint64_t recorded, flushed;
static SGC_stats_t totals;

static const char *reason_name(int reason) {
  switch (reason) {
  case SGC_REASON_ALLOCATION: return "allocation";
  case SGC_REASON_EXPLICIT: return "explicit";
  case SGC_REASON_HEAP_LIMIT: return "heap-limit";
  case SGC_REASON_TORTURE: return "torture";
  case SGC_REASON_FINALIZERS: return "finalizers";
  default: return "unknown";
  }
}

static void print_store(const struct page_store_counters *c, void *arg) {
  (void)arg;
  char node[24] = "";
  if (numa_active()) snprintf(node, sizeof node, "; node %d", c->node);
  fprintf(stderr,
          "sgc: page store of thread %d (%s): u_i %ld, max u_i %ld; taken %ld, remote %ld, "
          "stolen %ld; %ld free%s\n",
          c->tid, c->alive ? "running" : "exited", c->used, c->max_used, c->taken, c->remote,
          c->stolen, c->free, node);
}

/* papers/002 Table 4 from accesses per node: the share that was remote,
 * and the imbalance, the standard deviation of the nodes' accesses over
 * their mean (0: even; sqrt(nodes - 1): all on one node). */
static double numa_remote_ratio(const uint64_t *scanned, unsigned nodes, uint64_t local) {
  uint64_t all = 0;
  for (unsigned n = 0; n < nodes; n++) all += scanned[n];
  return all ? 1.0 - (double)local / (double)all : 0.0;
}
/* Newton's square root: sgc links no libm. */
static double square_root(double x) {
  if (x <= 0) return 0;
  double r = x > 1 ? x : 1;
  for (int i = 0; i < 64; i++) r = (r + x / r) / 2;
  return r;
}
static double numa_imbalance(const uint64_t *scanned, unsigned nodes) {
  double sum = 0, squares = 0;
  for (unsigned n = 0; n < nodes; n++) sum += (double)scanned[n];
  if (!nodes || sum == 0) return 0.0;
  double mean = sum / nodes;
  for (unsigned n = 0; n < nodes; n++) squares += ((double)scanned[n] - mean) * ((double)scanned[n] - mean);
  return square_root(squares / nodes) / mean;
}

/* "a/b/c" of NODES entries of V into OUT. */
static const char *per_node(char *out, size_t room, const uint64_t *v, unsigned nodes) {
  int n = 0;
  out[0] = 0;
  for (unsigned i = 0; i < nodes && n >= 0 && (size_t)n < room; i++)
    n += snprintf(out + n, room - (size_t)n, "%s%" PRIu64, i ? "/" : "", v[i]);
  return out;
}

static void print_numa(const SGC_stats_t *s) {
  static const char *placements[] = {"firsttouch", "interleave", "local"};
  unsigned nodes = s->numa_nodes < SGC_NUMA_NODES ? (unsigned)s->numa_nodes : SGC_NUMA_NODES;
  char used[256], free_pages[256], scanned[512], bmb[512];
  uint64_t scanned_kib[SGC_NUMA_NODES], bmb_kib[SGC_NUMA_NODES];
  for (unsigned n = 0; n < nodes; n++) {
    scanned_kib[n] = s->numa_scanned_bytes[n] >> 10;
    bmb_kib[n] = s->numa_bmb_bytes[n] >> 10;
  }
  fprintf(stderr,
          "sgc: numa: %d nodes%s, placement %s, BMB %s, %d GC threads pinned; pages in use per "
          "node %s, free %s; marking scanned KiB per node %s (remote ratio %.3f, imbalance "
          "%.3f); %" PRIu64 " fresh pages off the taker's node; mark bytes KiB per node %s; %" PRIu64
          " memory-policy calls (%" PRIu64 " refused)\n",
          s->numa_nodes, s->numa_fake ? " (fake)" : "", placements[s->numa_placement],
          s->numa_bmb ? "on" : "off", s->numa_pinned_threads,
          per_node(used, sizeof used, s->numa_pages_used, nodes),
          per_node(free_pages, sizeof free_pages, s->numa_pages_free, nodes),
          per_node(scanned, sizeof scanned, scanned_kib, nodes),
          numa_remote_ratio(s->numa_scanned_bytes, nodes, s->numa_local_scanned_bytes),
          numa_imbalance(s->numa_scanned_bytes, nodes), s->numa_foreign_pages,
          per_node(bmb, sizeof bmb, bmb_kib, nodes), s->numa_bind_calls, s->numa_bind_failures);
}

void stats_print_summary(void) {
  SGC_stats_t s;
  SGC_get_stats(&s);
  fprintf(stderr,
          "sgc: %" PRIu64 " collections, pause total %.3f ms, max %.3f ms, mark total %.3f ms; "
          "heap %.1f MiB (peak %.1f MiB); allocated %.1f MiB\n",
          s.collections, s.total_pause_ns / 1e6, s.max_pause_ns / 1e6, s.total_mark_ns / 1e6,
          s.heap_bytes / 1048576.0, s.peak_heap_bytes / 1048576.0,
          s.total_allocated_bytes / 1048576.0);
  static const char *names[] = {"ps", "al", "lps"};
  fprintf(stderr,
          "sgc: pages (policy %s, k %.2f): consumed %" PRIu64 " (%.1f MiB), in use %" PRIu64
          ", live %" PRIu64 " (max %" PRIu64 "), sum max u_i %" PRIu64 "; taken %" PRIu64
          ", remote %" PRIu64 " (ratio %.3f), stolen %" PRIu64 "\n",
          names[s.page_policy], s.lps_k, s.pages_consumed, s.pages_consumed * 4096 / 1048576.0,
          s.pages_used, s.pages_live, s.max_pages_live, s.sum_max_used, s.pages_taken,
          s.remote_pages, s.pages_taken ? (double)s.remote_pages / (double)s.pages_taken : 0.0,
          s.stolen_pages);
  if (s.collections) {
    uint64_t known = s.last_live_bytes + s.last_cache_bytes + s.last_store_free_bytes +
                     s.last_pool_free_bytes;
    fprintf(stderr,
            "sgc: heap at the last collection %.1f MiB: live %.1f, free in allocation caches "
            "%.1f, free pages in thread stores %.1f, free pages in the pool %.1f, the rest "
            "(pages to sweep lazily, free space in partly used pages) %.1f\n",
            s.last_heap_bytes / 1048576.0, s.last_live_bytes / 1048576.0,
            s.last_cache_bytes / 1048576.0, s.last_store_free_bytes / 1048576.0,
            s.last_pool_free_bytes / 1048576.0,
            (s.last_heap_bytes > known ? s.last_heap_bytes - known : 0) / 1048576.0);
    if (s.last_blacklisted_pages)
      fprintf(stderr, "sgc: free pages black-listed by the last collection (false pointers): %" PRIu64 "\n",
              s.last_blacklisted_pages);
  }
  if (s.numa_nodes > 1) print_numa(&s);
  if (sgc_settings.print_stats >= 2) {
    heap_lock_acquire();
    page_stores_visit(print_store, NULL);
    pthread_mutex_unlock(&heap_lock);
  }
  uint64_t refills = s.page_refills + s.unlocked_refills;
  fprintf(stderr,
          "sgc: refills %" PRIu64 ", %" PRIu64 " without heap_lock (%.1f%%); %" PRIu64
          " took a batch another thread freed\n",
          refills, s.unlocked_refills, refills ? 100.0 * (double)s.unlocked_refills / (double)refills : 0.0,
          s.stolen_batches);
  if (s.concurrent_cycles)
    fprintf(stderr,
            "sgc: concurrent cycles %" PRIu64 " (barrier %s), %" PRIu64
            " finished stopped (fallbacks); start pause max %.3f ms\n",
            s.concurrent_cycles, barrier_name(barrier_in_use()), s.concurrent_fallbacks,
            s.max_start_pause_ns / 1e6);
  if (s.mark_overflow_rescans)
    fprintf(stderr,
            "sgc: mark stacks overflowed: %" PRIu64 " entries dropped, %" PRIu64
            " rescans of the marked heap\n",
            s.mark_overflow_dropped, s.mark_overflow_rescans);
  if (percpu_fell_back)
    fprintf(stderr, "sgc: per-CPU caches requested, but rseq is unavailable: per-thread caches\n");
  if (cpu_cache_count)
    fprintf(stderr,
            "sgc: per-CPU caches (rseq, %u CPUs, %s, now %s): refills %" PRIu64
            " (reopened after an abort %" PRIu64 "), install failures %" PRIu64
            " (sidelined, %" PRIu64 " bytes); flips to per-CPU %" PRIu64 ", to per-thread %" PRIu64
            "\n",
            cpu_cache_count, percpu_flip ? "flip" : "cpu", percpu_enabled ? "per-CPU" : "per-thread",
            percpu_stats.refills, percpu_stats.reopened, percpu_stats.install_failures,
            percpu_stats.sidelined_bytes, percpu_stats.flips_to_cpu, percpu_stats.flips_to_thread);
}

static void at_exit(void) {
  stats_flush_pending();
  if (sgc_settings.print_stats) stats_print_summary();
}

void stats_init(void) {
  roots_exclude_own_table(ring, sizeof ring);
  if (sgc_settings.trace_path) {
    ring_markers = os_alloc(RING_SIZE * sizeof *ring_markers);
    if (!ring_markers) sgc_warn("SGC_TRACE: no memory for the markers' records; the trace leaves them out");
  }
  if (numa_counting) {
    ring_numa = os_alloc(RING_SIZE * sizeof *ring_numa);
    if (!ring_numa) sgc_warn("no memory for NUMA statistics: the trace leaves them out");
  }
  atexit(at_exit);
}

/* The entry of node N in the public arrays (SGC_NUMA_NODES long). */
static unsigned node_entry(unsigned n) { return n < SGC_NUMA_NODES ? n : SGC_NUMA_NODES - 1; }

/* NUMA's part of a record, from the GC threads' counters (mark.c resets
 * them at the next collection's start) and a walk of the heap's pages
 * (heap_lock held).  Only while numa_counting. */
static void record_numa(SGC_gc_record_t *r, struct numa_marker_record *markers, unsigned count) {
  r->numa_nodes = (int)numa.nodes;
  for (unsigned i = 0; i < parallel_markers_created(); i++) {
    struct marker *m = parallel_marker(i);
    uint64_t all = 0;
    for (unsigned n = 0; n < numa.nodes; n++) {
      all += m->node_scanned_bytes[n];
      r->numa_scanned_bytes[node_entry(n)] += m->node_scanned_bytes[n];
    }
    unsigned node = atomic_load_explicit(&m->node, memory_order_relaxed);
    uint64_t local = node < numa.nodes ? m->node_scanned_bytes[node] : 0;
    r->numa_local_scanned_bytes += local;
    if (i < count) markers[i] = (struct numa_marker_record){node, all, local};
  }
  uint64_t used[NUMA_MAX_NODES], free_pages[NUMA_MAX_NODES];
  heap_pages_per_node(used, free_pages);
  for (unsigned n = 0; n < numa.nodes; n++) r->numa_pages_used[node_entry(n)] += used[n];
}

void stats_record_collection(const SGC_gc_record_t *rec, const struct marker_record *markers,
                             unsigned count) {
  if (count > TRACE_MAX_MARKERS) count = TRACE_MAX_MARKERS;
  pthread_mutex_lock(&stats_lock);
  ring[recorded % RING_SIZE] = *rec;
  if (ring_markers) memcpy(ring_markers[recorded % RING_SIZE], markers, count * sizeof *markers);
  if (ring_numa) {
    SGC_gc_record_t *r = &ring[recorded % RING_SIZE];
    record_numa(r, ring_numa[recorded % RING_SIZE], count);
    for (unsigned n = 0; n < SGC_NUMA_NODES; n++) totals.numa_scanned_bytes[n] += r->numa_scanned_bytes[n];
    totals.numa_local_scanned_bytes += r->numa_local_scanned_bytes;
  }
  if (!ring_markers) count = 0;
  ring_marker_count[recorded % RING_SIZE] = count;
  recorded++;
  totals.collections++;
  totals.total_pause_ns += rec->pause_ns;
  totals.total_mark_ns += rec->mark_ns;
  if (rec->pause_ns > totals.max_pause_ns) totals.max_pause_ns = rec->pause_ns;
  if (rec->heap_bytes > totals.peak_heap_bytes) totals.peak_heap_bytes = rec->heap_bytes;
  totals.last_heap_bytes = rec->heap_bytes;
  totals.last_live_bytes = rec->live_bytes;
  totals.last_cache_bytes = rec->cache_bytes;
  totals.last_store_free_bytes = rec->store_free_bytes;
  totals.last_pool_free_bytes = rec->pool_free_bytes;
  totals.last_blacklisted_pages = rec->blacklisted_pages;
  if (rec->concurrent) {
    totals.concurrent_cycles++;
    if (rec->fallback) totals.concurrent_fallbacks++;
    if (rec->start_pause_ns > totals.max_start_pause_ns) totals.max_start_pause_ns = rec->start_pause_ns;
  }
  pthread_mutex_unlock(&stats_lock);
}

/* The trace file's name as opened (%p expanded), for messages. */
static char trace_file[4096];

/* Writes one record's line.  Tracing goes on after a failed write (a
 * later one may succeed), but the first failure is told, once, with the
 * file and the error: a full disk dropped every record silently before.
 * With trace_lock held. */
static void trace_write(int fd, const char *line, size_t n) {
  static bool warned;
  ssize_t done = write(fd, line, n);
  if (done == (ssize_t)n || warned) return;
  warned = true;
  sgc_warn("SGC_TRACE: cannot write to %s (%s): trace records are lost", trace_file,
           done < 0 ? strerror(errno) : "short write");
}

/* Appends `"NAME":[v0,v1,...]` for NODES entries. */
static int json_array(char *out, size_t room, const char *name, const uint64_t *v, unsigned nodes) {
  int n = snprintf(out, room, "\"%s\":[", name);
  for (unsigned i = 0; i < nodes && n > 0 && (size_t)n < room; i++)
    n += snprintf(out + n, room - (size_t)n, "%s%" PRIu64, i ? "," : "", v[i]);
  if (n > 0 && (size_t)n < room) n += snprintf(out + n, room - (size_t)n, "]");
  return n;
}

/* The trace's "numa" object (several nodes only). */
static int numa_json(char *out, size_t room, const SGC_gc_record_t *r) {
  unsigned nodes = r->numa_nodes < SGC_NUMA_NODES ? (unsigned)r->numa_nodes : SGC_NUMA_NODES;
  static const char *placements[] = {"firsttouch", "interleave", "local"};
  int n = snprintf(out, room, ",\"numa\":{\"nodes\":%d,\"fake\":%s,\"placement\":\"%s\",\"bmb\":%s,",
                   r->numa_nodes, numa.fake ? "true" : "false", placements[numa_placement],
                   numa_bmb ? "true" : "false");
  if (n > 0 && (size_t)n < room) n += json_array(out + n, room - (size_t)n, "scanned_bytes", r->numa_scanned_bytes, nodes);
  if (n > 0 && (size_t)n < room)
    n += snprintf(out + n, room - (size_t)n,
                  ",\"local_scanned_bytes\":%" PRIu64 ",\"remote_ratio\":%.4f,\"imbalance\":%.4f,",
                  r->numa_local_scanned_bytes,
                  numa_remote_ratio(r->numa_scanned_bytes, nodes, r->numa_local_scanned_bytes),
                  numa_imbalance(r->numa_scanned_bytes, nodes));
  if (n > 0 && (size_t)n < room) n += json_array(out + n, room - (size_t)n, "pages_used", r->numa_pages_used, nodes);
  if (n > 0 && (size_t)n < room) n += snprintf(out + n, room - (size_t)n, "}");
  return n;
}

static void write_trace(int fd, const SGC_gc_record_t *r, const struct marker_record *m,
                        const struct numa_marker_record *nm, unsigned count) {
  /* A marker's object is at most ~275 characters, ~350 with NUMA's part;
   * the numa object at most ~1,100 for 16 nodes. */
  char line[2048 + TRACE_MAX_MARKERS * 360];
  int n = snprintf(line, sizeof line,
                   "{\"gc_no\":%" PRIu64 ",\"reason\":\"%s\",\"threads\":%d,\"markers\":%d,"
                   "\"start_ns\":%" PRIu64 ",\"pause_ns\":%" PRIu64 ",\"stop_ns\":%" PRIu64
                   ",\"mark_ns\":%" PRIu64 ",\"sweep_ns\":%" PRIu64 ",\"marked_bytes\":%" PRIu64
                   ",\"marked_objects\":%" PRIu64 ",\"live_bytes\":%" PRIu64
                   ",\"heap_bytes\":%" PRIu64 ",\"allocated_bytes\":%" PRIu64
                   ",\"steal_attempts\":%" PRIu64 ",\"steal_successes\":%" PRIu64
                   ",\"mark_idle_ns\":%" PRIu64 ",\"mark_busy_max_ns\":%" PRIu64
                   ",\"mark_busy_min_ns\":%" PRIu64 ",\"pages_consumed\":%" PRIu64
                   ",\"pages_used\":%" PRIu64 ",\"pages_live\":%" PRIu64
                   ",\"pages_taken\":%" PRIu64 ",\"remote_pages\":%" PRIu64
                   ",\"cache_bytes\":%" PRIu64 ",\"prestop_ns\":%" PRIu64
                   ",\"store_free_bytes\":%" PRIu64 ",\"pool_free_bytes\":%" PRIu64
                   ",\"predicted_mark_ns\":%" PRIu64 ",\"auto_markers\":%d"
                   ",\"snapshot_ns\":%" PRIu64 ",\"blacklisted_pages\":%" PRIu64
                   ",\"concurrent\":%d,\"fallback\":%d,\"start_pause_ns\":%" PRIu64
                   ",\"cycle_ns\":%" PRIu64 ",\"rescanned_pages\":%" PRIu64 ",\"rounds\":%" PRIu64
                   ",\"mutator_marked_bytes\":%" PRIu64 ",\"cycle_allocated_bytes\":%" PRIu64
                   ",\"finish_rescan_pages\":%" PRIu64 ",\"finish_rescan_bytes\":%" PRIu64
                   ",\"finish_rescan_ns\":%" PRIu64 ",\"finish_roots_ns\":%" PRIu64
                   ",\"finish_drain_ns\":%" PRIu64 ",\"finish_marked_bytes\":%" PRIu64
                   ",\"assists\":%" PRIu64 ",\"assists_idle\":%" PRIu64
                   ",\"assist_asked_bytes\":%" PRIu64 ",\"rescanned_bytes\":%" PRIu64
                   ",\"start_arm_ns\":%" PRIu64
                   ",\"assist_rescan_steals\":%" PRIu64 ",\"assist_yields\":%" PRIu64,
                   r->gc_no, reason_name(r->reason), r->threads, r->markers, r->start_ns,
                   r->pause_ns, r->stop_ns, r->mark_ns, r->sweep_ns, r->marked_bytes,
                   r->marked_objects, r->live_bytes, r->heap_bytes, r->allocated_bytes,
                   r->steal_attempts, r->steal_successes, r->mark_idle_ns, r->mark_busy_max_ns,
                   r->mark_busy_min_ns, r->pages_consumed, r->pages_used, r->pages_live,
                   r->pages_taken, r->remote_pages, r->cache_bytes, r->prestop_ns,
                   r->store_free_bytes, r->pool_free_bytes, r->predicted_mark_ns,
                   r->auto_markers, r->snapshot_ns, r->blacklisted_pages, r->concurrent,
                   r->fallback, r->start_pause_ns, r->cycle_ns, r->rescanned_pages, r->rounds,
                   r->mutator_marked_bytes, r->cycle_allocated_bytes, r->finish_rescan_pages,
                   r->finish_rescan_bytes, r->finish_rescan_ns, r->finish_roots_ns,
                   r->finish_drain_ns, r->finish_marked_bytes, r->assists, r->assists_idle,
                   r->assist_asked_bytes, r->rescanned_bytes, r->start_arm_ns,
                   r->assist_rescan_steals, r->assist_yields);
  if (nm && r->numa_nodes > 1 && n > 0 && (size_t)n < sizeof line)
    n += numa_json(line + n, sizeof line - (size_t)n, r);
  if (n > 0 && (size_t)n < sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, ",\"mark_threads\":[");
  /* Each GC thread's share: its marked bytes and objects, steals tried and
   * won, busy and idle (stealing, terminating) time, and the CPU time it
   * got meanwhile. */
  for (unsigned i = 0; i < count && n > 0 && (size_t)n < sizeof line - 360; i++) {
    n += snprintf(line + n, sizeof line - (size_t)n,
                  "%s{\"bytes\":%" PRIu64 ",\"objects\":%" PRIu64 ",\"steal_attempts\":%" PRIu64
                  ",\"steal_successes\":%" PRIu64 ",\"busy_ns\":%" PRIu64 ",\"idle_ns\":%" PRIu64
                  ",\"cpu_ns\":%" PRIu64 ",\"join_ns\":%" PRIu64 ",\"prewoken\":%s",
                  i ? "," : "", m[i].bytes, m[i].objects, m[i].steal_attempts, m[i].steal_successes,
                  m[i].busy_ns, m[i].idle_ns, m[i].cpu_ns, m[i].join_ns,
                  m[i].prewoken ? "true" : "false");
    /* Its node, the heap bytes it scanned, and the share of them on
     * objects of its own node. */
    if (nm && r->numa_nodes > 1)
      n += snprintf(line + n, sizeof line - (size_t)n,
                    ",\"node\":%u,\"scanned_bytes\":%" PRIu64 ",\"local_share\":%.4f", nm[i].node,
                    nm[i].scanned_bytes,
                    nm[i].scanned_bytes ? (double)nm[i].local_bytes / (double)nm[i].scanned_bytes : 0.0);
    n += snprintf(line + n, sizeof line - (size_t)n, "}");
  }
  if (n > 0 && (size_t)n < sizeof line - 3) n += snprintf(line + n, sizeof line - (size_t)n, "]}\n");
  if (n > 0) trace_write(fd, line, (size_t)n);
}

/* SGC_TRACE's file, opened by the first collection that writes to it:
 * with sgc preloaded into a tree of processes (a compiler running cc and
 * ld), those that never collect leave it alone, where opening it at
 * start-up truncated what the collecting one had written.  "%p" in the
 * name becomes the process id: one file per process, forked children
 * included (stats_after_fork_child).  With stats_lock held. */
static void trace_open(void) {
  if (sgc_settings.trace_fd >= 0 || !sgc_settings.trace_path) return;
  char path[4096];
  size_t n = 0;
  for (const char *c = sgc_settings.trace_path; *c && n + 24 < sizeof path; c++) {
    if (c[0] == '%' && c[1] == 'p') {
      n += (size_t)snprintf(path + n, sizeof path - n, "%d", (int)getpid());
      c++;
    } else {
      path[n++] = *c;
    }
  }
  path[n] = 0;
  memcpy(trace_file, path, n + 1);
  sgc_settings.trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (sgc_settings.trace_fd < 0) {
    sgc_warn("SGC_TRACE: cannot open %s", path);
    sgc_settings.trace_path = NULL;
  }
}

/* fork(): trace_lock and stats_lock are held across it (after heap_lock,
 * as collect_locked takes them), so the child never inherits one held by
 * a thread it does not have. */
void stats_before_fork(void) {
  pthread_mutex_lock(&trace_lock);
  pthread_mutex_lock(&stats_lock);
}
void stats_after_fork_parent(void) {
  pthread_mutex_unlock(&stats_lock);
  pthread_mutex_unlock(&trace_lock);
}

void stats_after_fork_child(void) {
  pthread_mutex_unlock(&stats_lock);
  pthread_mutex_unlock(&trace_lock);
  if (sgc_settings.trace_path && strstr(sgc_settings.trace_path, "%p") && sgc_settings.trace_fd >= 0) {
    close(sgc_settings.trace_fd);
    sgc_settings.trace_fd = -1;
  }
}

void stats_flush_pending(void) {
  if (!sgc_settings.trace_path && !sgc_settings.print_each_gc) return;
  pthread_mutex_lock(&trace_lock);
  for (;;) {
    SGC_gc_record_t r;
    struct marker_record m[TRACE_MAX_MARKERS];
    struct numa_marker_record nm[TRACE_MAX_MARKERS];
    unsigned count;
    pthread_mutex_lock(&stats_lock);
    if (flushed == recorded) {
      pthread_mutex_unlock(&stats_lock);
      pthread_mutex_unlock(&trace_lock);
      return;
    }
    if (recorded - flushed > RING_SIZE) flushed = recorded - RING_SIZE; /* lost to the ring */
    trace_open();
    r = ring[flushed % RING_SIZE];
    count = ring_marker_count[flushed % RING_SIZE];
    if (count) memcpy(m, ring_markers[flushed % RING_SIZE], count * sizeof *m);
    if (ring_numa && count) memcpy(nm, ring_numa[flushed % RING_SIZE], count * sizeof *nm);
    flushed++;
    pthread_mutex_unlock(&stats_lock);
    if (sgc_settings.trace_fd >= 0) write_trace(sgc_settings.trace_fd, &r, m, ring_numa ? nm : NULL, count);
    if (sgc_settings.print_each_gc)
      fprintf(stderr,
              "sgc: collection %" PRIu64 " (%s): pause %.3f ms (stop %.3f, mark %.3f), "
              "sweep %.3f ms, marked %" PRIu64 " bytes in %" PRIu64 " objects, heap %" PRIu64
              " bytes\n",
              r.gc_no, reason_name(r.reason), r.pause_ns / 1e6, r.stop_ns / 1e6, r.mark_ns / 1e6,
              r.sweep_ns / 1e6, r.marked_bytes, r.marked_objects, r.heap_bytes);
  }
}


/* The NUMA fields of SGC_stats_t but the scanned bytes (heap_lock held). */
static void numa_stats_read(SGC_stats_t *out) {
  out->numa_nodes = (int)numa.nodes;
  out->numa_fake = numa.fake;
  out->numa_placement = (int)numa_placement;
  out->numa_bmb = numa_bmb && numa_active();
  out->numa_pinned_threads = 0;
  for (unsigned i = 0; i < parallel_markers_created(); i++)
    out->numa_pinned_threads +=
        atomic_load_explicit(&parallel_marker(i)->pinned, memory_order_relaxed);
  if (!numa_active()) return;
  uint64_t used[NUMA_MAX_NODES], free_pages[NUMA_MAX_NODES];
  heap_pages_per_node(used, free_pages);
  for (unsigned n = 0; n < NUMA_MAX_NODES; n++)
    out->numa_pages_used[node_entry(n)] = out->numa_pages_free[node_entry(n)] =
        out->numa_bmb_bytes[node_entry(n)] = out->numa_bound_bytes[node_entry(n)] = 0;
  for (unsigned n = 0; n < numa.nodes; n++) {
    unsigned e = node_entry(n);
    out->numa_pages_used[e] += used[n];
    out->numa_pages_free[e] += free_pages[n];
    out->numa_bmb_bytes[e] += atomic_load_explicit(&heap_bmb_bytes[n], memory_order_relaxed);
    out->numa_bound_bytes[e] +=
        atomic_load_explicit(&numa_decisions.bound_bytes[n], memory_order_relaxed);
  }
  out->numa_foreign_pages = atomic_load_explicit(&heap_foreign_takes, memory_order_relaxed);
  out->numa_interleaved_bytes =
      atomic_load_explicit(&numa_decisions.interleaved_bytes, memory_order_relaxed);
  out->numa_bind_calls = atomic_load_explicit(&numa_decisions.bind_calls, memory_order_relaxed);
  out->numa_bind_failures =
      atomic_load_explicit(&numa_decisions.bind_failures, memory_order_relaxed);
}

static void stats_read(SGC_stats_t *out) {
  pthread_mutex_lock(&stats_lock);
  *out = totals;
  pthread_mutex_unlock(&stats_lock);
  out->heap_bytes = heap_size_bytes();
  if (out->heap_bytes > out->peak_heap_bytes) out->peak_heap_bytes = out->heap_bytes;
  out->total_allocated_bytes = GC_get_total_bytes();
  heap_lock_acquire();
  out->page_refills = heap_accounting.page_refills;
  out->stolen_batches = heap_accounting.stolen_batches;
  out->mark_overflow_dropped = mark_overflow_dropped();
  out->mark_overflow_rescans = mark_overflow_rescans();
  out->unlocked_refills = atomic_load_explicit(&refills_unlocked, memory_order_relaxed);
  out->large_allocations = heap_accounting.large_allocations;
  out->page_policy = (int)page_policy;
  out->lps_k = page_policy_k;
  struct page_counters pages;
  page_counters_read(&pages);
  out->pages_consumed = (uint64_t)pages.a;
  out->pages_used = (uint64_t)pages.u;
  out->pages_live = (uint64_t)pages.l;
  out->max_pages_live = (uint64_t)pages.max_l;
  out->sum_max_used = (uint64_t)pages.sum_max_u;
  out->pages_taken = (uint64_t)pages.taken;
  out->remote_pages = (uint64_t)pages.remote;
  out->stolen_pages = (uint64_t)pages.stolen;
  out->lab = percpu_enabled ? SGC_LAB_CPU : SGC_LAB_THREAD;
  out->lab_flip = percpu_flip;
  out->lab_fell_back = percpu_fell_back;
  out->percpu_refills = percpu_stats.refills;
  out->percpu_install_failures = percpu_stats.install_failures;
  out->percpu_reopened = percpu_stats.reopened;
  out->percpu_sidelined_bytes = percpu_stats.sidelined_bytes;
  out->lab_flips = percpu_stats.flips_to_cpu + percpu_stats.flips_to_thread;
  numa_stats_read(out);
  pthread_mutex_unlock(&heap_lock);
}

struct store_copy {
  char *out;
  size_t max, count, size; /* size: the caller's record size */
};

static void copy_store(const struct page_store_counters *c, void *arg) {
  struct store_copy *copy = arg;
  if (copy->count < copy->max) {
    SGC_page_store_stats_t s = {
        .thread_id = c->tid,
        .alive = c->alive,
        .pages_used = (uint64_t)c->used,
        .max_pages_used = (uint64_t)c->max_used,
        .pages_taken = (uint64_t)c->taken,
        .remote_pages = (uint64_t)c->remote,
        .stolen_pages = (uint64_t)c->stolen,
        .free_pages = (uint64_t)c->free,
        .node = c->node};
    memcpy(copy->out + copy->count * copy->size, &s, copy->size < sizeof s ? copy->size : sizeof s);
  }
  copy->count++;
}

GC_API size_t SGC_get_page_store_stats_sized(SGC_page_store_stats_t *out, size_t max,
                                             size_t size) {
  sgc_ensure_init();
  struct store_copy copy = {(char *)out, out && size ? max : 0, 0, size};
  heap_lock_acquire();
  page_stores_visit(copy_store, &copy);
  pthread_mutex_unlock(&heap_lock);
  return copy.count;
}

GC_API size_t SGC_get_gc_records_sized(SGC_gc_record_t *out, size_t max, size_t size) {
  size_t copied = size < sizeof(SGC_gc_record_t) ? size : sizeof(SGC_gc_record_t);
  pthread_mutex_lock(&stats_lock);
  size_t have = recorded < RING_SIZE ? (size_t)recorded : RING_SIZE;
  size_t n = have < max ? have : max;
  for (size_t i = 0; i < n; i++)
    memcpy((char *)out + i * size, &ring[(recorded - n + i) % RING_SIZE], copied);
  pthread_mutex_unlock(&stats_lock);
  return n;
}

GC_API void SGC_get_stats_sized(SGC_stats_t *out, size_t size) {
  SGC_stats_t all;
  stats_read(&all);
  memcpy(out, &all, size < sizeof all ? size : sizeof all);
}

/* The calls as programs built against an older sgc.h made them, with no
 * size: the structs as they were before they grew (the first field added
 * since marks their end), so such a program's smaller arrays are never
 * overrun.  Parenthesised names: sgc.h makes the plain ones macros. */
GC_API void(SGC_get_stats)(SGC_stats_t *out) {
  SGC_get_stats_sized(out, offsetof(SGC_stats_t, numa_nodes));
}
GC_API size_t(SGC_get_gc_records)(SGC_gc_record_t *out, size_t max) {
  return SGC_get_gc_records_sized(out, max, offsetof(SGC_gc_record_t, predicted_mark_ns));
}
GC_API size_t(SGC_get_page_store_stats)(SGC_page_store_stats_t *out, size_t max) {
  return SGC_get_page_store_stats_sized(out, max, offsetof(SGC_page_store_stats_t, node));
}
