/* Memory nodes from /sys/devices/system/node, narrowed to the process's
 * allowed CPUs (sched_getaffinity) and memory nodes (get_mempolicy's
 * MPOL_F_MEMS_ALLOWED), and the memory-policy system calls made raw
 * (syscall(2)), so sgc needs no libnuma.  docs/numa.md says what each
 * setting decides. */
#include "os/numa.h"

#include <dirent.h>
#include <linux/mempolicy.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/env.h"
#include "common.h"

struct numa_topology numa = {.nodes = 1, .nodes_with_cpus = 1};
enum numa_placement numa_placement = NUMA_FIRSTTOUCH;
bool numa_bmb, numa_pin, numa_counting;
struct numa_decisions numa_decisions;

enum { KERNEL_NODES_MAX = 1024, MASK_WORDS = KERNEL_NODES_MAX / (8 * sizeof(unsigned long)) };

/* Parses a kernel list ("0-3,8,10-11") into SET; false when unreadable. */
static bool read_list(const char *path, cpu_set_t *set) {
  CPU_ZERO(set);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[4096];
  bool ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  if (!ok) return false;
  for (char *c = line; *c && *c != '\n';) {
    char *end;
    long lo = strtol(c, &end, 10), hi = lo;
    if (end == c) return false;
    if (*end == '-') hi = strtol(end + 1, &end, 10);
    for (long i = lo; i <= hi && i >= 0 && i < CPU_SETSIZE; i++) CPU_SET((int)i, set);
    c = *end == ',' ? end + 1 : end;
  }
  return true;
}

/* The memory nodes this process may use (cpuset, numactl --membind), as
 * kernel ids in ALLOWED; false when the kernel does not say. */
static bool allowed_memory_nodes(cpu_set_t *allowed) {
  unsigned long mask[MASK_WORDS] = {0};
  if (syscall(SYS_get_mempolicy, NULL, mask, (unsigned long)KERNEL_NODES_MAX, NULL,
              (unsigned long)MPOL_F_MEMS_ALLOWED) != 0)
    return false;
  CPU_ZERO(allowed);
  for (unsigned i = 0; i < KERNEL_NODES_MAX && i < CPU_SETSIZE; i++)
    if (mask[i / (8 * sizeof(unsigned long))] >> (i % (8 * sizeof(unsigned long))) & 1)
      CPU_SET(i, allowed);
  return true;
}

static void reset(void) {
  memset(&numa, 0, sizeof numa);
  for (unsigned c = 0; c < CPU_SETSIZE; c++) numa.node_of_cpu[c] = -1;
}

static void add_cpus(unsigned node, const cpu_set_t *cpus) {
  for (unsigned c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, cpus) && numa.node_of_cpu[c] < 0) {
      CPU_SET(c, &numa.cpus[node]);
      numa.node_of_cpu[c] = (int)node;
      numa.cpu_count[node]++;
    }
}

/* Fake: the allowed CPUs in order, cut into FAKE blocks as even as they
 * come (with fewer CPUs than nodes, some nodes have none: memory-only
 * nodes exist on real machines too). */
static void split_fake(const cpu_set_t *allowed, unsigned fake) {
  reset();
  numa.nodes = fake;
  numa.fake = true;
  unsigned total = (unsigned)CPU_COUNT(allowed), j = 0;
  for (unsigned c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, allowed)) continue;
    unsigned node = total ? j++ * fake / total : 0;
    CPU_SET(c, &numa.cpus[node]);
    numa.node_of_cpu[c] = (int)node;
    numa.cpu_count[node]++;
  }
}

/* The real nodes under SYS_ROOT that have memory the process may use. */
static void read_real(const char *sys_root, const cpu_set_t *allowed, bool ask_kernel) {
  reset();
  cpu_set_t memory, mems_allowed;
  char path[512];
  snprintf(path, sizeof path, "%s/has_memory", sys_root);
  bool know_memory = read_list(path, &memory);
  bool know_allowed = ask_kernel && allowed_memory_nodes(&mems_allowed);
  DIR *d = opendir(sys_root);
  int ids[NUMA_MAX_NODES];
  unsigned count = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    char *end;
    if (strncmp(e->d_name, "node", 4) != 0) continue;
    long id = strtol(e->d_name + 4, &end, 10);
    if (end == e->d_name + 4 || *end || id < 0 || id >= CPU_SETSIZE) continue;
    if (know_memory && !CPU_ISSET((int)id, &memory)) continue; /* CPU-only node */
    if (know_allowed && !CPU_ISSET((int)id, &mems_allowed)) {
      numa.bound = true; /* numactl --membind, a cpuset's mems */
      continue;
    }
    if (count == NUMA_MAX_NODES) {
      sgc_warn("more than %d memory nodes: sgc uses the first %d", NUMA_MAX_NODES, NUMA_MAX_NODES);
      break;
    }
    ids[count++] = (int)id;
  }
  if (d) closedir(d);
  /* Kernel ids in ascending order (readdir's order is the directory's). */
  for (unsigned i = 1; i < count; i++)
    for (unsigned j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
      int t = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = t;
    }
  bool bound = numa.bound;
  reset();
  numa.bound = bound;
  numa.nodes = count ? count : 1;
  for (unsigned i = 0; i < count; i++) {
    numa.kernel_node[i] = ids[i];
    cpu_set_t cpus, mine;
    snprintf(path, sizeof path, "%s/node%d/cpulist", sys_root, ids[i]);
    if (!read_list(path, &cpus)) continue;
    CPU_AND(&mine, &cpus, allowed);
    if (!CPU_EQUAL(&mine, &cpus)) numa.bound = true; /* taskset, --cpunodebind */
    add_cpus(i, &mine);
  }
  if (!count) add_cpus(0, allowed);
}

void numa_read_topology(const char *sys_root, const cpu_set_t *allowed, unsigned fake) {
  if (fake) split_fake(allowed, fake);
  else read_real(sys_root, allowed, strcmp(sys_root, "/sys/devices/system/node") == 0);
  numa.nodes_with_cpus = 0;
  for (unsigned n = 0; n < numa.nodes; n++) numa.nodes_with_cpus += numa.cpu_count[n] != 0;
  if (!numa.nodes_with_cpus) numa.nodes_with_cpus = 1;
}

void numa_init(void) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    CPU_ZERO(&allowed);
    CPU_SET(0, &allowed);
  }
  unsigned fake = (unsigned)env_long_in("SGC_NUMA_FAKE", 0, 0, NUMA_MAX_NODES);
  numa_read_topology("/sys/devices/system/node", &allowed, fake);
  static const struct env_word words[] = {
      {"firsttouch", NUMA_FIRSTTOUCH}, {"interleave", NUMA_INTERLEAVE}, {"local", NUMA_LOCAL}};
  numa_placement = (enum numa_placement)env_choice("SGC_NUMA_PLACEMENT", words,
                                                   ENV_WORDS_COUNT(words), NUMA_FIRSTTOUCH);
  numa_bmb = env_long_in("SGC_BMB", 0, 0, 1) != 0;
  numa_pin = env_long_in("SGC_NUMA_PIN", 0, 0, 1) != 0;
  /* A multi-node machine running with the defaults pays nothing per
   * scanned object unless statistics were asked for. */
  numa_counting = numa.nodes > 1 && (numa.fake || numa_placement != NUMA_FIRSTTOUCH || numa_bmb ||
                                     numa_pin || sgc_settings.print_stats || sgc_settings.trace_path);
  if (numa_pin && numa.bound && numa.nodes > 1)
    sgc_warn("SGC_NUMA_PIN=1: this process is bound to some CPUs or memory nodes already; "
             "GC threads are left where the binding puts them");
}

/* Stored plus one, so that the zero a new thread's TLS starts with means
 * "none"; initial-exec, as sgc's other TLS (it may be preloaded). */
static __thread int node_override_plus1 __attribute__((tls_model("initial-exec")));

void numa_set_thread_node(int node) {
  node_override_plus1 = node >= 0 && (unsigned)node < numa.nodes ? node + 1 : 0;
}

unsigned numa_current_node(void) {
  if (node_override_plus1) return (unsigned)node_override_plus1 - 1;
  int cpu = sched_getcpu();
  int node = cpu >= 0 && cpu < CPU_SETSIZE ? numa.node_of_cpu[cpu] : -1;
  return node >= 0 ? (unsigned)node : 0;
}

unsigned numa_pin_node(unsigned index) {
  unsigned k = index % numa.nodes_with_cpus;
  for (unsigned n = 0; n < numa.nodes; n++)
    if (numa.cpu_count[n] && k-- == 0) return n;
  return 0;
}

bool numa_pin_self(unsigned node) {
  if (numa.bound || node >= numa.nodes || !numa.cpu_count[node]) return false;
  return sched_setaffinity(0, sizeof numa.cpus[node], &numa.cpus[node]) == 0;
}

static bool syscalls_apply(void) { return numa.nodes > 1 && !numa.fake; }

static void kernel_mask(unsigned long *mask, int only) {
  memset(mask, 0, MASK_WORDS * sizeof *mask);
  for (unsigned n = 0; n < numa.nodes; n++) {
    int id = numa.kernel_node[n];
    if (only >= 0 && (unsigned)only != n) continue;
    mask[id / (8 * sizeof(unsigned long))] |= 1ul << (id % (8 * sizeof(unsigned long)));
  }
}

static void bind(void *p, size_t len, int mode, int node) {
  atomic_fetch_add_explicit(&numa_decisions.bind_calls, 1, memory_order_relaxed);
  if (!syscalls_apply()) return;
  unsigned long mask[MASK_WORDS];
  kernel_mask(mask, node);
  /* No MPOL_MF_MOVE: only pages not yet touched follow the policy, which
   * is every page of a new chunk or stripe. */
  if (syscall(SYS_mbind, p, len, (unsigned long)mode, mask, (unsigned long)KERNEL_NODES_MAX, 0ul) != 0) {
    static _Atomic bool warned;
    atomic_fetch_add_explicit(&numa_decisions.bind_failures, 1, memory_order_relaxed);
    if (!atomic_exchange_explicit(&warned, true, memory_order_relaxed))
      sgc_warn("mbind refused a memory policy (placement left to the kernel from here)");
  }
}

void numa_bind_interleave(void *p, size_t len) {
  atomic_fetch_add_explicit(&numa_decisions.interleaved_bytes, len, memory_order_relaxed);
  bind(p, len, MPOL_INTERLEAVE, -1);
}

void numa_bind_node(void *p, size_t len, unsigned node, _Atomic uint64_t *bytes) {
  atomic_fetch_add_explicit(&bytes[node], len, memory_order_relaxed);
  /* Preferred, not bound: a full node spills to another rather than fail
   * an allocation (the NAPS resizing pitfall in the kernel's terms). */
  bind(p, len, MPOL_PREFERRED, (int)node);
}

bool numa_query_pages(void *const *pages, size_t count, int *nodes) {
  if (!syscalls_apply()) return false;
  int status[64];
  for (size_t i = 0; i < count; i += 64) {
    size_t n = count - i < 64 ? count - i : 64;
    if (syscall(SYS_move_pages, 0, (unsigned long)n, pages + i, NULL, status, 0) != 0) return false;
    for (size_t j = 0; j < n; j++) {
      nodes[i + j] = -1;
      for (unsigned k = 0; k < numa.nodes; k++)
        if (numa.kernel_node[k] == status[j]) nodes[i + j] = (int)k;
    }
  }
  return true;
}
