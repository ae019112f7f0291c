/* Thin wrappers over the kernel: memory, futexes, clocks, CPUs. */
#ifndef SGC_OS_H
#define SGC_OS_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Address space only: ROOM bytes aligned to ALIGN (0: a page), no access
 * and no memory until os_commit; NULL on failure.  With CHARGED, what is
 * committed counts against the kernel's overcommit limit (as sgc's own
 * tables do), so an impossible commit fails there and then; the heap's
 * pages are not charged, as before (MAP_NORESERVE). */
void *os_reserve_room(size_t room, size_t align, bool charged);
/* Makes SIZE bytes at P (inside a reservation) readable and writable,
 * zero until written; false when the kernel refuses. */
bool os_commit(void *p, size_t size);
/* Anonymous zeroed memory for sgc's own tables; NULL on failure. */
void *os_alloc(size_t size);
void os_free(void *p, size_t size);
/* The os_alloc'd array OLD (COUNT elements of SIZE bytes, room for
 * *CAPACITY) copied into one twice as large (FIRST elements when it has
 * none), the old one freed and *CAPACITY updated; NULL, OLD kept, when
 * the OS refuses.  For tables filled where malloc's lock may be held. */
void *os_grow_array(void *old, size_t count, size_t *capacity, size_t size, size_t first);
/* Give the pages back to the kernel; they read as zero afterwards.  False
 * when the kernel refused (locked pages, say): then they keep their
 * contents and must still be counted as written. */
bool os_decommit(void *p, size_t size);

void futex_wait(_Atomic uint32_t *word, uint32_t expected);
void futex_wait_timeout(_Atomic uint32_t *word, uint32_t expected, uint64_t ns);
void futex_wake_all(_Atomic uint32_t *word);

/* The memory node of each of the COUNT pages at ADDRESSES into NODES (-1
 * where none is known: not yet touched, or no NUMA support); false when
 * the kernel tells nothing (move_pages refused). */
bool os_page_nodes(void *const *addresses, int *nodes, unsigned long count);
uint64_t os_now_ns(void);      /* CLOCK_MONOTONIC */
uint64_t os_thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID: time this thread ran */
/* When the calling thread runs on CPU, moves it to another CPU of its
 * affinity mask, leaving the mask as it was; true when it moved. */
bool os_move_off_cpu(int cpu);
unsigned os_usable_cpus(void); /* affinity mask and cgroup quota */
/* Threads of the whole system that are running or ready to run now, the
 * caller among them (/proc/loadavg's fourth field); 0 when unreadable. */
unsigned os_runnable_threads(void);
/* The most GC threads sgc starts: 4 per CPU the kernel knows of (online
 * or not), and at least 1024. The bound follows the machine rather than
 * a constant (bdwgc's MAX_MARKERS is 16), yet refuses absurd requests
 * (SGC_MARKERS=-3 read as 2^32-3) with a warning; a larger request is
 * capped to it. */
unsigned os_markers_limit(void);
unsigned os_markers_limit_for(long configured_cpus); /* the rule, for any count */
int os_gettid(void);
/* The run of adjacent readable anonymous mappings (mmap'd, the brk heap,
 * the main stack) that holds ADDR, from /proc/self/maps (os/mappings.c);
 * false when none holds it or the map cannot be read.  Allocates nothing
 * and takes no lock: the collector calls it with the world stopped. */
bool os_readable_extent(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);
/* Whether thread TID of this process blocks signal SIG, from its
 * /proc status (false when that cannot be read): a diagnosis for a
 * thread that does not stop. */
bool os_thread_blocks_signal(int tid, int sig);

#endif
