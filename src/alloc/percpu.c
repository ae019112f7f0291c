/* Per-CPU caches with rseq (x86-64).
 *
 * Rules followed (SPEC.md §4): glibc's registration is shared, read
 * through __rseq_offset; the abort signature is glibc's 0x53053053; the
 * CPU number is read inside the critical section; the only rseq field
 * written is rseq_cs; descriptors live in __rseq_cs and
 * __rseq_cs_ptr_array; the abort handler sits outside the sequence right
 * after its signature.
 *
 * cpu_id, not mm_cid, indexes the caches, by measurement
 * (tools/dev/rseq_index_bench.sh on the 2-CPU development VM: the same
 * sequence costs 12.3 vs 12.5 ns at 2 threads, 13.6 vs 13.3 at 8, 5.7 vs
 * 6.7 at 32, and both use 2 indices).  At equal cost cpu_id wins on
 * availability: it is part of the 20-byte area glibc registers on every
 * rseq kernel, while mm_cid needs AT_RSEQ_FEATURE_SIZE >= 28 (Linux 6.3).
 * mm_cid would pay off where a container allows a sparse set of CPUs
 * (fewer, denser caches); that case does not arise on this machine. */
#include "alloc/percpu.h"

#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <unistd.h>

#include "alloc/alloc.h"
#include "common.h"
#include "os/os.h"

bool percpu_enabled;
bool percpu_flip;
bool percpu_fell_back;
struct cpu_cache cpu_caches[PERCPU_MAX_CPUS];
unsigned cpu_cache_count;
struct percpu_stats percpu_stats;

static inline struct rseq *thread_rseq(void) {
  return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

static void percpu_start(const char *lab, bool asked);

/* Flip by default: it keeps per-thread caches while the threads' caches
 * hold little (programs with about as many threads as CPUs never
 * switch) and switches where many threads each hold a cache, which
 * per-thread caches make grow with the threads (issue 53). */
void percpu_init(void) {
  const char *lab = getenv("SGC_LAB");
  percpu_start(lab && *lab ? lab : "flip", lab && *lab);
}

void percpu_set_mode(int lab) {
  percpu_enabled = percpu_flip = false;
  percpu_start(lab == 2 ? "cpu" : lab == 3 ? "flip" : "thread", true);
}

/* ASKED: the program chose LAB; the default falls back to per-thread
 * caches without a word where per-CPU ones cannot run. */
static void percpu_start(const char *lab, bool asked) {
  if (!strcmp(lab, "thread")) return;
  if (strcmp(lab, "cpu") && strcmp(lab, "flip")) {
    sgc_warn("SGC_LAB=%s: use thread, cpu or flip; using flip", lab);
    lab = "flip";
  }
  bool flip = !strcmp(lab, "flip");
  if (__rseq_size < 20 || (int32_t)thread_rseq()->cpu_id < 0) {
    if (!asked) return;
    percpu_fell_back = true;
    sgc_warn("SGC_LAB=%s: rseq is not registered by glibc here; using per-thread caches", lab);
    return;
  }
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  if (cpus < 1) cpus = 1;
  if (cpus > PERCPU_MAX_CPUS) {
    if (asked)
      sgc_warn("SGC_LAB=%s: %ld CPUs, more than %d; using per-thread caches", lab, cpus,
               PERCPU_MAX_CPUS);
    return;
  }
  cpu_cache_count = (unsigned)cpus;
  percpu_flip = flip;
  percpu_enabled = !flip; /* flip starts per-thread */
}

bool percpu_flip_decide(uint64_t thread_cache_bytes, uint64_t cpu_cache_bytes, unsigned threads) {
  if (!percpu_flip) return false;
  /* Only with more threads than CPUs: otherwise per-thread caches are
   * no more than per-CPU ones would be, and keep their objects nearer
   * their thread. */
  if (!percpu_enabled && threads > cpu_cache_count &&
      thread_cache_bytes > (uint64_t)FLIP_BUFFER_BYTES * cpu_cache_count) {
    percpu_enabled = true;
    /* GC_free's fast path pushes on the thread's list whenever its page
     * cache hits; marked, the cache only serves free_slow, which pushes
     * on the CPU's list. */
    FOR_EACH_THREAD_ALLOC(t) t->free_cache_page |= FREE_CACHE_BYPASS;
    percpu_stats.flips_to_cpu++;
    return true;
  } else if (percpu_enabled && cpu_cache_bytes > (uint64_t)FLIP_BUFFER_BYTES * threads) {
    percpu_enabled = false;
    percpu_stats.flips_to_thread++;
  }
  return false;
}

/* Pushes OBJ on this CPU's list: link it to the head (a store into the
 * object, harmless to repeat), then commit the head. */
void percpu_push(unsigned kind, unsigned cls, void *obj) {
  struct rseq *rs = thread_rseq();
  char *slot = (char *)cpu_caches + ((size_t)kind * SIZE_CLASS_COUNT + cls) * sizeof(void *);
  __asm__ __volatile__(RSEQ_START("%[rs]") RSEQ_CPU_SLOT("%[rs]", "%[slot]")
                       "movq (%%rax), %%rcx\n\t"
                       "movq %%rcx, (%[obj])\n\t" /* link: a store into our object */
                       "movq %[obj], (%%rax)\n\t" /* commit */
                       "2:\n\t" RSEQ_ABORT
                       :
                       : [rs] "r"(rs), [slot] "r"(slot), [obj] "r"(obj)
                       : "rax", "rcx", "memory", "cc");
}

/* Takes this CPU's whole list of (KIND, CLS): load the head, commit an
 * empty slot with the one store. */
void *percpu_detach(unsigned kind, unsigned cls) {
  struct rseq *rs = thread_rseq();
  char *slot = (char *)cpu_caches + ((size_t)kind * SIZE_CLASS_COUNT + cls) * sizeof(void *);
  void *list;
  __asm__ __volatile__(RSEQ_START("%[rs]") RSEQ_CPU_SLOT("%[rs]", "%[slot]")
                       "movq (%%rax), %[list]\n\t"
                       "movq $0, (%%rax)\n\t" /* commit */
                       "2:\n\t" RSEQ_ABORT
                       : [list] "=&r"(list)
                       : [rs] "r"(rs), [slot] "r"(slot)
                       : "rax", "memory", "cc");
  return list;
}

/* Installs LIST as this CPU's list if the slot is empty; returns whether
 * it did.  Same sequence shape: the commit is the one store. */
static bool try_install(unsigned kind, unsigned cls, void *list) {
  struct rseq *rs = thread_rseq();
  char *slot = (char *)cpu_caches + ((size_t)kind * SIZE_CLASS_COUNT + cls) * sizeof(void *);
  uint64_t installed;
  __asm__ __volatile__(RSEQ_START("%[rs]")
                       "xorl %k[installed], %k[installed]\n\t"
                       RSEQ_CPU_SLOT("%[rs]", "%[slot]")
                       "cmpq $0, (%%rax)\n\t"
                       "jnz 5f\n\t"
                       "movq %[list], (%%rax)\n\t" /* commit */
                       "2:\n\t"
                       "movl $1, %k[installed]\n\t"
                       "jmp 5f\n\t"
                       /* An aborted refill is reopened: counted, then restarted. */
                       RSEQ_ABORT_WITH("lock incq %[reopened]\n\t")
                       "5:\n\t"
                       : [installed] "=&r"(installed), [reopened] "+m"(percpu_stats.reopened)
                       : [rs] "r"(rs), [slot] "r"(slot), [list] "r"(list)
                       : "rax", "memory", "cc");
  return installed != 0;
}

/* The counts are statistics: outside heap_lock (the page path) they
 * are added atomically, relaxed. */
void percpu_install(unsigned kind, unsigned cls, void *list, size_t bytes,
                    struct thread_alloc *owner) {
  if (try_install(kind, cls, list)) {
    __atomic_fetch_add(&percpu_stats.refills, 1, __ATOMIC_RELAXED);
    return;
  }
  /* Another thread refilled this CPU's slot (or we moved to a CPU whose
   * slot is full): the list is not dropped but sidelined for the next
   * refiller of the class -- it joins the batches (alloc/batches.c),
   * which every refill looks at first: the shared ones under heap_lock,
   * else the refilling thread's own, which other threads steal from. */
  __atomic_fetch_add(&percpu_stats.install_failures, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&percpu_stats.sidelined_bytes, bytes, __ATOMIC_RELAXED);
  if (owner) batch_push_own(owner, kind, cls, list);
  else batch_push(kind, cls, list);
}

void percpu_for_each_free(void (*fn)(void *obj)) {
  if (!cpu_cache_count) return; /* flip mode keeps walking them while per-thread */
  for (unsigned c = 0; c < cpu_cache_count; c++)
    for (unsigned k = 0; k < KIND_THREAD_LOCAL_COUNT; k++)
      for (unsigned s = 0; s < SIZE_CLASS_COUNT; s++)
        for (void *p = cpu_caches[c].lists[k][s]; p; p = *(void **)p) fn(p);
}
