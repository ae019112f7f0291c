/* Per-CPU allocation caches (papers/001, Garthwaite, Dice and White),
 * made safe with Linux restartable sequences: SGC_LAB=cpu.  A list head
 * per CPU, kind and size class, popped in an rseq critical section that
 * commits with one store and restarts when the thread was preempted,
 * migrated or signalled.  Falls back to the per-thread lists where glibc
 * did not register rseq.  Flip mode (switching at collections) is not
 * implemented yet. */
#ifndef SGC_PERCPU_H
#define SGC_PERCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/layout.h"

struct cpu_cache {
  void *lists[KIND_THREAD_LOCAL_COUNT][SIZE_CLASS_COUNT];
} __attribute__((aligned(64)));

struct percpu_stats {
  uint64_t refills;          /* lists installed into a CPU's slot */
  uint64_t install_failures; /* the slot was refilled meanwhile: sidelined */
  uint64_t sidelined_reused; /* sidelined lists a later refill took */
  uint64_t sidelined_bytes;  /* bytes sitting in sidelined lists now */
};

extern bool percpu_enabled;  /* SGC_LAB=cpu and rseq usable */
extern struct cpu_cache *cpu_caches;
extern unsigned cpu_cache_count;
extern struct percpu_stats percpu_stats;

/* Reads SGC_LAB; says why per-CPU caches are off if they are. */
void percpu_init(void);
/* The fast path: an object from the current CPU's list, or NULL. */
void *percpu_pop(unsigned kind, unsigned cls);
/* GC_free's path: OBJ (cleared but for its first word) onto this CPU. */
void percpu_push(unsigned kind, unsigned cls, void *obj);
/* Refill (heap_lock held by the caller's refill): installs LIST on the
 * current CPU if its slot is empty, or sidelines it. */
void percpu_install(unsigned kind, unsigned cls, void *list);
/* A sidelined list for the refiller, or NULL (heap_lock held). */
void *percpu_take_sidelined(unsigned kind, unsigned cls);
/* Collector, world stopped: every object on CPU and sidelined lists. */
void percpu_for_each_free(void (*fn)(void *obj));
/* Bytes in CPU caches and sidelined lists (statistics, world stopped). */
uint64_t percpu_cached_bytes(void);

#endif
