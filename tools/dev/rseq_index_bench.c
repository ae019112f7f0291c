/* Which rseq field should index per-CPU caches: cpu_id or mm_cid?  The
 * same pop/push sequence as src/alloc/percpu.c, on a pool of nodes per
 * index, run by T threads; prints ns per pop+push and how many distinct
 * indices the threads used.  Build and run: tools/dev/rseq_index_bench.sh */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include <time.h>

#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#endif

enum { SLOTS = 1024, NODES = 64, OPS = 2000000 };
struct slot {
  void *head;
  char pad[56];
};
static struct slot slots[SLOTS];
static _Atomic int used[SLOTS];

#define DEFINE_POP(name, OFF)                                                                 \
  static void *name(struct rseq *rs) {                                                        \
    void *result;                                                                             \
    __asm__ __volatile__(".pushsection __rseq_cs, \"aw\"\n\t.balign 32\n\t3:\n\t"              \
                         ".long 0x0, 0x0\n\t.quad 1f, (2f - 1f), 4f\n\t.popsection\n\t"        \
                         "0:\n\tleaq 3b(%%rip), %%rax\n\tmovq %%rax, 8(%[rs])\n\t1:\n\t"        \
                         "movl " #OFF "(%[rs]), %%eax\n\tshlq $6, %%rax\n\taddq %[base], %%rax\n\t" \
                         "movq (%%rax), %[r]\n\ttestq %[r], %[r]\n\tjz 5f\n\t"                  \
                         "movq (%[r]), %%rcx\n\tmovq %%rcx, (%%rax)\n\t2:\n\tjmp 5f\n\t"        \
                         ".pushsection __rseq_failure, \"ax\"\n\t.byte 0x0f, 0xb9, 0x3d\n\t"   \
                         ".long 0x53053053\n\t4:\n\tjmp 0b\n\t.popsection\n\t5:\n\t"            \
                         : [r] "=&r"(result)                                                   \
                         : [rs] "r"(rs), [base] "r"(slots)                                     \
                         : "rax", "rcx", "memory", "cc");                                      \
    return result;                                                                            \
  }                                                                                           \
  static void name##_push(struct rseq *rs, void *obj) {                                       \
    __asm__ __volatile__(".pushsection __rseq_cs, \"aw\"\n\t.balign 32\n\t3:\n\t"              \
                         ".long 0x0, 0x0\n\t.quad 1f, (2f - 1f), 4f\n\t.popsection\n\t"        \
                         "0:\n\tleaq 3b(%%rip), %%rax\n\tmovq %%rax, 8(%[rs])\n\t1:\n\t"        \
                         "movl " #OFF "(%[rs]), %%eax\n\tshlq $6, %%rax\n\taddq %[base], %%rax\n\t" \
                         "movq (%%rax), %%rcx\n\tmovq %%rcx, (%[o])\n\tmovq %[o], (%%rax)\n\t"  \
                         "2:\n\tjmp 5f\n\t.pushsection __rseq_failure, \"ax\"\n\t"              \
                         ".byte 0x0f, 0xb9, 0x3d\n\t.long 0x53053053\n\t4:\n\tjmp 0b\n\t"       \
                         ".popsection\n\t5:\n\t"                                               \
                         :                                                                     \
                         : [rs] "r"(rs), [base] "r"(slots), [o] "r"(obj)                       \
                         : "rax", "rcx", "memory", "cc");                                      \
  }

DEFINE_POP(pop_cpu_id, 4)
DEFINE_POP(pop_mm_cid, 24)

static int use_mm_cid;

static void *worker(void *arg) {
  (void)arg;
  struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
  for (long i = 0; i < OPS; i++) {
    void *p = use_mm_cid ? pop_mm_cid(rs) : pop_cpu_id(rs);
    if (!p) p = malloc(64); /* this index's pool is empty */
    used[use_mm_cid ? ((uint32_t *)rs)[6] : rs->cpu_id] = 1;
    if (use_mm_cid) pop_mm_cid_push(rs, p);
    else pop_cpu_id_push(rs, p);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  use_mm_cid = argc > 2 && argv[2][0] == 'm';
  unsigned long feature = getauxval(AT_RSEQ_FEATURE_SIZE);
  if (__rseq_size == 0 || (use_mm_cid && feature < 28)) {
    printf("rseq size %u feature size %lu: %s unavailable\n", __rseq_size, feature,
           use_mm_cid ? "mm_cid" : "rseq");
    return 0;
  }
  pthread_t t[256];
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  int distinct = 0;
  for (int i = 0; i < SLOTS; i++) distinct += used[i];
  double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / ((double)threads * OPS);
  printf("index=%s threads=%d ns_per_pop_push=%.2f distinct_indices=%d (rseq size %u, feature %lu)\n",
         use_mm_cid ? "mm_cid" : "cpu_id", threads, ns, distinct, __rseq_size, feature);
  return 0;
}
