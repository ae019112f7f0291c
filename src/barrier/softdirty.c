/* BARRIER_SOFTDIRTY: the kernel's soft-dirty bits.  Writing "4" to
 * /proc/self/clear_refs clears every page's bit (and write-protects the
 * page table entries, so the next write sets it again); bit 55 of a
 * page's /proc/self/pagemap entry says whether it was written since.
 *
 * clear_refs acts on the whole process at once: it cannot re-arm the
 * pages a collect reports while the program runs without losing writes
 * made between the read and the clear.  So the bits are cleared only at
 * barrier_arm (world stopped), and every collect reports every page
 * written since: the documented false positives of this backend (a page
 * reported once is reported again; rounds do not shrink), exact at the
 * finalize pause.  Needs CONFIG_MEM_SOFT_DIRTY; the probe writes a
 * scratch page between a clear and a read, and refuses where the bit
 * does not say so. */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "barrier/backend.h"
#include "common.h"
#include "heap/heap.h"

enum { SOFT_DIRTY_BIT = 55 };

static int clear_refs_fd = -1, pagemap_fd = -1;
static pid_t owner;

static void close_fds(void) {
  if (clear_refs_fd >= 0) close(clear_refs_fd);
  if (pagemap_fd >= 0) close(pagemap_fd);
  clear_refs_fd = pagemap_fd = -1;
}

/* The fds a child of fork() inherits name its parent's memory: it opens
 * its own.  Its pages keep the bits they had, and its writes set more. */
static bool ready(void) {
  if (clear_refs_fd >= 0 && owner == getpid()) return true;
  close_fds();
  clear_refs_fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  owner = getpid();
  if (clear_refs_fd >= 0 && pagemap_fd >= 0) return true;
  close_fds();
  return false;
}

static bool clear_bits(void) { return pwrite(clear_refs_fd, "4", 1, 0) == 1; }

static bool page_bit(uintptr_t a, bool *set) {
  uint64_t entry;
  if (pread(pagemap_fd, &entry, sizeof entry, (off_t)(a / PAGE_BYTES * sizeof entry)) != sizeof entry)
    return false;
  *set = entry >> SOFT_DIRTY_BIT & 1;
  return true;
}

static bool softdirty_probe(void) {
  if (!ready()) {
    barrier_probe_refused(BARRIER_SOFTDIRTY, "cannot open /proc/self/clear_refs or pagemap");
    return false;
  }
  volatile char *scratch = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bool before = true, after = false, read = false;
  if (scratch != MAP_FAILED) {
    scratch[0] = 1;
    read = clear_bits() && page_bit((uintptr_t)scratch, &before);
    scratch[0] = 2;
    read = read && page_bit((uintptr_t)scratch, &after);
    munmap((void *)scratch, PAGE_BYTES);
  }
  if (read && !before && after) return true;
  barrier_probe_refused(BARRIER_SOFTDIRTY, read ? "the kernel keeps no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY)"
                                                : "clear_refs or pagemap refused");
  close_fds();
  return false;
}

static bool softdirty_arm(void) { return ready() && clear_bits(); }

/* The chunk's pages in use, bounded by its page count (read without a
 * lock: a collect racing heap_grow may miss pages just added, which are
 * free; the finalize pause reads it exactly). */
static bool collect_range(struct barrier_range r, struct barrier_runs *runs) {
  struct chunk *c = chunk_of_address(r.lo);
  uintptr_t hi = c ? c->base + c->page_count * PAGE_BYTES : r.hi;
  uint64_t entries[512];
  for (uintptr_t a = r.lo; a < hi;) {
    size_t n = (hi - a) / PAGE_BYTES;
    if (n > 512) n = 512;
    ssize_t got = pread(pagemap_fd, entries, n * sizeof entries[0], (off_t)(a / PAGE_BYTES * sizeof entries[0]));
    if (got <= 0) return false;
    n = (size_t)got / sizeof entries[0];
    for (size_t i = 0; i < n; i++, a += PAGE_BYTES)
      if (entries[i] >> SOFT_DIRTY_BIT & 1) barrier_runs_add(runs, a, a + PAGE_BYTES);
  }
  return true;
}

static size_t softdirty_collect(barrier_visit_fn *visit, void *arg) {
  struct barrier_runs runs = {visit, arg, 0, 0, 0, false};
  bool ok = ready();
  size_t n = barrier_range_count();
  for (size_t i = 0; ok && i < n; i++) ok = collect_range(barrier_range_at(i), &runs);
  barrier_runs_flush(&runs);
  return ok ? runs.pages : (size_t)BARRIER_COLLECT_FAILED;
}

static void softdirty_disarm(void) {}

const struct barrier_ops barrier_softdirty_ops = {
    .probe = softdirty_probe, .arm = softdirty_arm, .cover = NULL,
    .collect = softdirty_collect, .disarm = softdirty_disarm};
