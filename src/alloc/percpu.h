/* Per-CPU allocation caches (papers/001, Garthwaite, Dice and White),
 * made safe with Linux restartable sequences: SGC_LAB=cpu.  A list head
 * per CPU, kind and size class, popped in an rseq critical section that
 * commits with one store and restarts when the thread was preempted,
 * migrated or signalled.  Falls back to the per-thread lists where glibc
 * did not register rseq.  SGC_LAB=flip switches between the two at
 * collections (percpu_flip_decide). */
#ifndef SGC_PERCPU_H
#define SGC_PERCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/layout.h"

struct cpu_cache {
  void *lists[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
} __attribute__((aligned(512)));
/* The fast path indexes CPUs with a shift. */
_Static_assert(sizeof(struct cpu_cache) == 512, "cpu_cache must be 512 bytes");

struct percpu_stats {
  uint64_t flips_to_cpu, flips_to_thread;
  uint64_t refills;          /* lists installed into a CPU's slot */
  uint64_t reopened;         /* refill sequences aborted by the kernel and restarted */
  uint64_t install_failures; /* the slot was refilled meanwhile: sidelined */
  uint64_t sidelined_bytes;  /* bytes of refill lists sidelined so far */
};

enum { PERCPU_MAX_CPUS = 1024 }; /* more CPUs than this: per-thread caches */
extern bool percpu_enabled;  /* the fast path uses per-CPU caches now */
extern bool percpu_flip;     /* SGC_LAB=flip: the mode changes at collections */
extern bool percpu_fell_back; /* cpu or flip asked for, rseq unusable: per-thread */
/* Static so the fast path addresses it directly; untouched pages of
 * it cost no memory. */
extern struct cpu_cache cpu_caches[PERCPU_MAX_CPUS];
extern unsigned cpu_cache_count;
extern struct percpu_stats percpu_stats;

/* Reads SGC_LAB (default flip); says why per-CPU caches are off if the
 * program asked for them and they are. */
void percpu_init(void);
/* SGC_init's SGC_attr_t.lab (1 thread, 2 cpu, 3 flip). */
void percpu_set_mode(int lab);
struct rseq;

/* The assembly every rseq sequence here shares (x86-64).  A sequence is
 *   RSEQ_START(rs) ... the body, ending in its single committing store ...
 *   "2:" RSEQ_ABORT (or RSEQ_ABORT_COUNTED)
 * RSEQ_START emits the descriptor (in __rseq_cs, listed in
 * __rseq_cs_ptr_array) covering [1, 2) with abort handler 4, and
 * publishes it in rseq_cs, the only rseq field sgc writes.  RSEQ_ABORT
 * puts the handler out of line, right after glibc's signature 0x53053053,
 * and restarts the sequence from 0.  RSEQ_CPU_SLOT loads the address of
 * this CPU's slot into rax: cpu_id read inside the sequence, the 512-byte
 * cache stride as a shift. */
#define RSEQ_START(rs)                                                                 \
  ".pushsection __rseq_cs, \"aw\"\n\t.balign 32\n\t3:\n\t.long 0x0, 0x0\n\t"         \
  ".quad 1f, (2f - 1f), 4f\n\t.popsection\n\t"                                          \
  ".pushsection __rseq_cs_ptr_array, \"aw\"\n\t.quad 3b\n\t.popsection\n\t"            \
  "0:\n\tleaq 3b(%%rip), %%rax\n\tmovq %%rax, 8(" rs ")\n\t1:\n\t"
#define RSEQ_CPU_SLOT(rs, slot)                                                        \
  "movl 4(" rs "), %%eax\n\tshlq $9, %%rax\n\taddq " slot ", %%rax\n\t"
#define RSEQ_ABORT_WITH(extra)                                                         \
  ".pushsection __rseq_failure, \"ax\"\n\t.byte 0x0f, 0xb9, 0x3d\n\t"                  \
  ".long 0x53053053\n\t4:\n\t" extra "jmp 0b\n\t.popsection\n\t"
#define RSEQ_ABORT RSEQ_ABORT_WITH("")
/* The fast path, inlined into GC_malloc with the thread's rseq area RS: the
 * sequence is publish the descriptor, read cpu_id, load head and link,
 * commit the link with one store; an abort (preemption, migration,
 * signal) restarts it from the top.  See percpu.c for the rules. */
__attribute__((always_inline)) static inline void *percpu_pop_inline(struct rseq *rs,
                                                                      unsigned kind,
                                                                      unsigned cls) {
  char *slot = (char *)cpu_caches + ((size_t)kind * SIZE_CLASS_COUNT + cls) * sizeof(void *);
  void *result;
  /* asm goto: an empty list leaves by the C label, so the caller's test
   * of the result folds into the sequence's own. */
  __asm__ goto(RSEQ_START("%[rs]") RSEQ_CPU_SLOT("%[rs]", "%[slot]")
               "movq (%%rax), %[result]\n\t"
               "testq %[result], %[result]\n\t"
               "jz %l[empty]\n\t"
               "movq (%[result]), %%rcx\n\t"
               "movq %%rcx, (%%rax)\n\t" /* commit */
               "2:\n\t" RSEQ_ABORT
      : [result] "=&r"(result)
      : [rs] "r"(rs), [slot] "r"(slot)
      : "rax", "rcx", "memory", "cc"
      : empty);
  if (result == NULL) __builtin_unreachable(); /* the sequence left by "empty" */
  return result;
empty:
  return NULL;
}
/* GC_free's path: OBJ (cleared but for its first word) onto this CPU. */
void percpu_push(unsigned kind, unsigned cls, void *obj);
/* This CPU's list of (KIND, CLS), detached (heap_lock held, so no
 * collection sees the list nowhere). */
void *percpu_detach(unsigned kind, unsigned cls);
/* Refill: installs LIST (BYTES of objects, 0 when unknown) on the
 * current CPU if its slot is empty, or sidelines it into the shared
 * batches (OWNER NULL, heap_lock held) or into OWNER's own batches (the
 * page path without heap_lock: alloc/page_path.h). */
struct thread_alloc;
void percpu_install(unsigned kind, unsigned cls, void *list, size_t bytes,
                    struct thread_alloc *owner);
/* Collector, world stopped: every object on the CPU lists. */
void percpu_for_each_free(void (*fn)(void *obj));
/* Flip mode (papers/001 §5.2), at a collection with the world stopped:
 * per-thread caches leaving more than FLIP_BUFFER_BYTES x CPUs unused
 * switch to per-CPU caches; per-CPU caches leaving more than
 * FLIP_BUFFER_BYTES x allocating threads unused switch back. */
enum { FLIP_BUFFER_BYTES = 64 << 10 };
/* True when it switched to per-CPU caches. */
bool percpu_flip_decide(uint64_t thread_cache_bytes, uint64_t cpu_cache_bytes, unsigned threads);

#endif
