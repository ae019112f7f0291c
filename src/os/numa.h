/* Memory nodes (NUMA): the topology the process may use, the placement
 * settings, and thin wrappers over mbind / move_pages (docs/numa.md).
 *
 * Nodes are numbered 0 .. numa.nodes-1 here; kernel_node maps them to the
 * kernel's ids.  SGC_NUMA_FAKE=N splits the allowed CPUs into N fake nodes:
 * every decision and statistic follows them, and no memory-policy system
 * call is made (the kernel's placement stays first touch). */
#ifndef SGC_NUMA_H
#define SGC_NUMA_H

#include <sched.h> /* cpu_set_t: sgc builds with _GNU_SOURCE */
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { NUMA_MAX_NODES = 64 };

/* SGC_NUMA_PLACEMENT: where the heap's pages live. */
enum numa_placement {
  NUMA_FIRSTTOUCH = 0, /* the kernel's default: the node of the thread that writes a page first */
  NUMA_INTERLEAVE = 1, /* chunks bound page by page round-robin over the nodes (NAPS interleaved) */
  NUMA_LOCAL = 2,      /* stripes of the heap bound to nodes; threads refill on their own (NAPS fragmented) */
};

struct numa_topology {
  unsigned nodes;                       /* 1: NUMA off (every decision below is skipped) */
  bool fake;                            /* SGC_NUMA_FAKE */
  /* The process's CPUs do not cover its nodes' CPUs (taskset, cpuset,
   * numactl --cpunodebind): SGC_NUMA_PIN leaves GC threads alone. */
  bool bound;
  int kernel_node[NUMA_MAX_NODES];      /* the kernel's id of node i (fake: 0) */
  cpu_set_t cpus[NUMA_MAX_NODES];       /* allowed CPUs of node i */
  unsigned cpu_count[NUMA_MAX_NODES];
  unsigned nodes_with_cpus;             /* nodes whose cpu_count is not 0 */
  int node_of_cpu[CPU_SETSIZE];         /* -1: not an allowed CPU */
};

extern struct numa_topology numa;
extern enum numa_placement numa_placement;
/* SGC_BMB: mark bytes (the page headers) spread over nodes by heap address. */
extern bool numa_bmb;
/* SGC_NUMA_PIN: GC threads pinned round-robin over the nodes with CPUs. */
extern bool numa_pin;

/* Reads the topology and the settings (once, at start-up). */
void numa_init(void);
/* For tests: reads the topology again from SYS_ROOT (a tree shaped as
 * /sys/devices/system/node) with the allowed CPUs ALLOWED; FAKE as
 * SGC_NUMA_FAKE (0: off). */
void numa_read_topology(const char *sys_root, const cpu_set_t *allowed, unsigned fake);

/* The one test the hot paths make: more than one node. */
static inline bool numa_active(void) { return numa.nodes > 1; }
/* Whether GC threads count the heap bytes they scan per node, and each
 * collection its pages per node (docs/numa.md, "Statistics"): with
 * several nodes, when a NUMA setting or SGC_STATS / SGC_TRACE asks. */
extern bool numa_counting;

/* The node of the calling thread: its override (numa_set_thread_node),
 * else the node of the CPU it runs on (0 when unknown). */
unsigned numa_current_node(void);
/* Tests: makes the calling thread's node NODE (-1: follow the CPU). */
void numa_set_thread_node(int node);
/* The node GC thread INDEX (1..) is pinned to: round-robin over the nodes
 * with CPUs, starting after marker 0's (the collector's) node 0. */
unsigned numa_pin_node(unsigned index);
/* Pins the calling thread to NODE's CPUs; false when refused or bound. */
bool numa_pin_self(unsigned node);

/* Memory-policy calls (raw system calls; no libnuma).  Under fake or one
 * node they only count.  Interleave over every node / prefer NODE, adding
 * LEN to BYTES[NODE]. */
void numa_bind_interleave(void *p, size_t len);
void numa_bind_node(void *p, size_t len, unsigned node, _Atomic uint64_t *bytes);
/* The node each of COUNT pages lies on now (move_pages query), or -1;
 * false when the kernel cannot say (one node, fake, no NUMA). */
bool numa_query_pages(void *const *pages, size_t count, int *nodes);

/* What the placement decided, for tests and statistics (relaxed atomics:
 * counters only). */
struct numa_decisions {
  _Atomic uint64_t bind_calls, bind_failures;
  _Atomic uint64_t interleaved_bytes;
  _Atomic uint64_t bound_bytes[NUMA_MAX_NODES]; /* heap stripes bound to each node (local) */
};
extern struct numa_decisions numa_decisions;

#endif
