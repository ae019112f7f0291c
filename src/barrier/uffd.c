/* BARRIER_UFFD: userfaultfd write-protection in asynchronous mode, read
 * and re-armed by the PAGEMAP_SCAN ioctl (Linux 6.7+).
 *
 * Every chunk's whole reservation is registered for write-protection
 * (UFFDIO_REGISTER_MODE_WP) on an fd that asked for UFFD_FEATURE_WP_ASYNC:
 * a write to a protected page is resolved by the kernel itself, which
 * clears the page's protection; no signal reaches the program, and a
 * system call writing into the heap (read(2)) works as ever.  A page not
 * protected counts as written (PAGE_IS_WRITTEN).  One PAGEMAP_SCAN call
 * reports the written pages and protects them again
 * (PM_SCAN_WP_MATCHING), page by page under the page-table lock, so a
 * write either lands before the report (and the rescan sees it) or
 * faults and shows in the next scan.  Pages never touched hold no page
 * table entry: they are not reported, and a first write makes a page
 * without protection, which the next scan reports (the kernel's
 * UFFD_FEATURE_WP_UNPOPULATED keeps that so for pages released with
 * madvise as well).
 *
 * Which pages are protected (docs/concurrent.md, "Pages the barrier
 * covers"): a write faults only on a protected page, about a
 * microsecond, and lifting a protection costs a page table entry's
 * change (UFFDIO_WRITEPROTECT, 0.1-0.2 us a present page, whether
 * protected or not), so the barrier protects only pages whose writes may
 * need a rescan, and never lifts a protection.  The arm protects the
 * pages that held survivors of the last collection; a collect reports
 * and protects only pages holding a marked object.  Pages the program
 * allocates into (free, or holding only objects allocated since the last
 * collection, all white) so take no fault until they hold a marked
 * object; the scans leave them unprotected, so written, and the first
 * scan that covers them reports them.  After a cycle the protections
 * stay: a page then written faults once, and the next arm protects it
 * again only if it still holds survivors.
 *
 * fork(): without UFFD_FEATURE_EVENT_FORK the child's mappings lose the
 * registration and their pages' protection, so its writes never fault;
 * the fd and /proc/self/pagemap it inherits still name the parent's
 * memory.  So each call first checks the process id: a child opens its
 * own, registers its ranges again, and (armed) reports every page
 * present at its first scan, which is what the lost protections mean. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier/backend.h"
#include "common.h"
#include "heap/accounting.h"
#include "heap/heap.h"
#include "os/os.h"

#include "barrier/uffd_uapi.h"

static int uffd = -1, pagemap_fd = -1;
static pid_t owner;
/* Ranges [0, registered) of backend.h's list are registered on uffd. */
static size_t registered;
/* A new chunk could not be registered: collects fail, and barrier.c
 * reports every page in use until the next arm registers it. */
static bool uncovered;

static const char *open_fds(void) {
  const uint64_t features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;
  int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  /* Without the privilege (vm.unprivileged_userfaultfd=0), an fd for
   * faults in user mode only: asynchronous write faults never reach it,
   * in user or kernel mode alike. */
  if (fd < 0 && errno == EPERM)
    fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
  if (fd < 0) {
    return errno == ENOSYS ? "no userfaultfd in this kernel"
           : errno == EPERM ? "userfaultfd not permitted (seccomp or vm.unprivileged_userfaultfd)"
                            : "userfaultfd refused";
  }
  struct uffdio_api api = {.api = UFFD_API, .features = features};
  if (ioctl(fd, UFFDIO_API, &api) != 0 || (api.features & features) != features) {
    close(fd);
    return "no UFFD_FEATURE_WP_ASYNC (Linux 6.7+)";
  }
  int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pm < 0) {
    close(fd);
    return "cannot open /proc/self/pagemap";
  }
  uffd = fd;
  pagemap_fd = pm;
  owner = getpid();
  registered = 0;
  return NULL;
}

static bool register_range(uintptr_t lo, uintptr_t hi) {
  struct uffdio_register reg = {.range = {.start = lo, .len = hi - lo},
                                .mode = UFFDIO_REGISTER_MODE_WP};
  return ioctl(uffd, UFFDIO_REGISTER, &reg) == 0;
}

/* One PAGEMAP_SCAN over [LO, HI) that protects the written pages again
 * (with PROTECT) and, with RUNS, reports them; false when the kernel
 * refused. */
enum { SCAN_VEC = 128 };
static bool scan_into(uintptr_t lo, uintptr_t hi, struct barrier_runs *runs, bool protect,
                      struct page_region *vec, size_t vec_len) {
  while (lo < hi) {
    struct pm_scan_arg arg = {
        .size = sizeof arg, .flags = (protect ? PM_SCAN_WP_MATCHING : 0) | PM_SCAN_CHECK_WPASYNC,
        .start = lo, .end = hi, .vec = runs ? (uintptr_t)vec : 0,
        .vec_len = runs ? vec_len : 0,
        .category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN};
    long n = ioctl(pagemap_fd, PAGEMAP_SCAN, &arg);
    if (n < 0) return false;
    for (long i = 0; i < n; i++) barrier_runs_add(runs, vec[i].start, vec[i].end);
    if (arg.walk_end <= lo) return false; /* no progress: never expected */
    lo = arg.walk_end;
  }
  return true;
}

static bool scan(uintptr_t lo, uintptr_t hi, struct barrier_runs *runs, bool protect) {
  /* Static, not 3 KiB of the caller's stack: a cycle's finish runs on
   * the allocating thread's, which may be 16 KiB (bb_tiny_stacks).  One
   * caller at a time: the driver's rounds and the finish exclude each
   * other, and arm runs before a cycle's marking (heap_lock held); the
   * finish's parts have vectors of their own. */
  static struct page_region vec[SCAN_VEC];
  return scan_into(lo, hi, runs, protect, vec, SCAN_VEC);
}

/* A collect: the written pages holding a marked object, the others
 * neither reported nor protected (above, with one exception below).
 * The written ones first, one PAGEMAP_SCAN without protection over each
 * registered range (read_written: the kernel's walk of the page tables,
 * up to 128 runs a call); then the runs of them holding a marked object
 * are protected by PAGEMAP_SCANs that report them (process_pending).
 * Selecting first and scanning each selected run took an ioctl per run
 * of pages holding marked objects, written or not: 400-480 calls and
 * 0.3-0.9 ms a round on gcbench, under heap_lock (the finish, which
 * protects nothing, selects first where the runs are few:
 * part_written_marked).  A page written between
 * the two calls and not in the first report stays unprotected, so
 * written, for the next scan.
 *
 * Selected runs up to SPAN_GAP_PAGES apart share one protecting scan:
 * random writes over a large live heap (latency-256m) leave single
 * written pages a few apart, one ioctl each (15,000-23,000 a round,
 * 27-45 ms under heap_lock).  Such a scan also protects the written
 * pages of the gap that hold no marked object; its report is selected
 * again, so they are not reported, which is safe (a page skipped keeps
 * its state, and one protected without a report holds nothing scanned
 * yet: what marks an object on it later reads what is there then), and
 * costs a fault at their next write. */
enum { SPAN_GAP_PAGES = 16 };

struct scan_walk {
  struct barrier_runs *report; /* the caller's */
  bool ok;
  uintptr_t span_lo, span_hi; /* selected runs to protect in one scan */
  const struct barrier_range *span_range; /* the range holding the span */
};

/* The written runs a protecting scan reported: those selected, to the
 * caller. */
static void report_selected(uintptr_t lo, uintptr_t hi, void *arg) {
  struct scan_walk *w = arg;
  barrier_select_runs(BARRIER_PAGES_MARKED, lo, hi, w->report);
}

static void flush_span(struct scan_walk *w) {
  if (w->span_hi > w->span_lo && w->ok) {
    struct barrier_runs written = {report_selected, w, 0, 0, 0, false};
    w->ok = scan(w->span_lo, w->span_hi, &written, true);
    barrier_runs_flush(&written);
  }
  w->span_lo = w->span_hi = 0;
}

static void scan_selected(uintptr_t lo, uintptr_t hi, void *arg) {
  struct scan_walk *w = arg;
  /* A span never leaves its range: what lies between two may not be
   * registered, and the kernel would refuse the scan. */
  if (w->span_hi && lo >= w->span_hi && lo - w->span_hi <= SPAN_GAP_PAGES * PAGE_BYTES &&
      hi <= w->span_range->hi) {
    w->span_hi = hi;
    return;
  }
  flush_span(w);
  w->span_lo = lo;
  w->span_hi = hi;
  w->span_range = barrier_range_of(lo);
  if (!w->span_range) w->ok = false; /* never expected: a selected page outside every range */
}

/* The written runs of every registered range, as the kernel reported
 * them, in address order; a collect's steps process them from
 * pending_next on.  Grown by doubling (os_alloc), never shrunk. */
static struct page_region *pending;
static size_t pending_count, pending_capacity, pending_next;
static bool pending_full; /* os_alloc refused to grow it */

static void pending_add(uintptr_t lo, uintptr_t hi, void *arg) {
  (void)arg;
  if (pending_count == pending_capacity) {
    size_t capacity = pending_capacity ? 2 * pending_capacity : 1024;
    struct page_region *bigger = os_alloc(capacity * sizeof *bigger);
    if (!bigger) {
      pending_full = true;
      return;
    }
    if (pending_count) memcpy(bigger, pending, pending_count * sizeof *pending);
    if (pending) os_free(pending, pending_capacity * sizeof *pending);
    pending = bigger;
    pending_capacity = capacity;
  }
  pending[pending_count++] = (struct page_region){.start = lo, .end = hi};
}

/* The written pages of every registered range into pending: one scan
 * without protection each. */
static bool read_written(void) {
  pending_count = pending_next = 0;
  pending_full = false;
  struct barrier_runs runs = {pending_add, NULL, 0, 0, 0, false};
  bool ok = true;
  for (size_t i = 0; i < registered && ok; i++) {
    struct barrier_range r = barrier_range_at(i);
    ok = scan(r.lo, r.hi, &runs, false);
  }
  barrier_runs_flush(&runs);
  return ok && !pending_full;
}

/* Processes pending runs (selects the pages holding a marked object,
 * protects and reports them) until about MAX_PAGES pages of them are
 * done or none is left. */
static bool process_pending(struct barrier_runs *report, size_t max_pages) {
  struct scan_walk w = {report, true, 0, 0, NULL};
  struct barrier_runs selected = {scan_selected, &w, 0, 0, 0, false};
  size_t done = 0;
  while (pending_next < pending_count && done < max_pages && w.ok) {
    struct page_region run = pending[pending_next++];
    barrier_select_runs(BARRIER_PAGES_MARKED, run.start, run.end, &selected);
    done += (run.end - run.start) / PAGE_BYTES;
  }
  barrier_runs_flush(&selected);
  flush_span(&w);
  return w.ok;
}

/* The arm's way, selecting first: one protecting PAGEMAP_SCAN per run
 * of pages that held survivors.  Most of them were written since the
 * last collection, and reading the written ones first would walk every
 * page the program allocated into as well (cky: the arm's median 197 us
 * selecting first, 249 us reading the written pages first). */
static void protect_run(uintptr_t lo, uintptr_t hi, void *ok) {
  if (*(bool *)ok) *(bool *)ok = scan(lo, hi, NULL, true);
}

/* Registers the ranges added since the last call (a new chunk). */
static bool register_new_ranges(void) {
  size_t n = barrier_range_count();
  for (; registered < n; registered++) {
    struct barrier_range r = barrier_range_at(registered);
    if (!register_range(r.lo, r.hi)) return false;
  }
  return true;
}

/* A child of fork() opens its own fd and registers again (see above). */
static bool ready(void) {
  if (uffd >= 0 && owner == getpid()) return true;
  if (uffd >= 0) {
    close(uffd);
    close(pagemap_fd);
    uffd = pagemap_fd = -1;
  }
  return open_fds() == NULL;
}

/* Whether the kernel does it: a scratch mapping, one page written
 * before it is protected and one never touched; after a write to both,
 * a scan must report both, and a second scan neither. */
static bool uffd_probe(void) {
  const char *why = open_fds();
  if (why) {
    barrier_probe_refused(BARRIER_UFFD, why);
    return false;
  }
  why = "the kernel's PAGEMAP_SCAN did not report a written page";
  char *scratch = mmap(NULL, 2 * PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bool ok = false;
  if (scratch != MAP_FAILED) {
    uintptr_t lo = (uintptr_t)scratch, hi = lo + 2 * PAGE_BYTES;
    scratch[0] = 1;
    struct page_region vec[4];
    struct pm_scan_arg arg = {.size = sizeof arg,
                              .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
                              .start = lo, .end = hi, .vec = (uintptr_t)vec, .vec_len = 4,
                              .category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN};
    if (!register_range(lo, hi)) {
      why = "UFFDIO_REGISTER_MODE_WP refused";
    } else if (ioctl(pagemap_fd, PAGEMAP_SCAN, &arg) < 0) {
      why = errno == ENOTTY || errno == EINVAL ? "no PAGEMAP_SCAN (Linux 6.7+)" : "PAGEMAP_SCAN refused";
    } else {
      *(volatile char *)&scratch[0] = 2;
      *(volatile char *)&scratch[PAGE_BYTES] = 2;
      long n = ioctl(pagemap_fd, PAGEMAP_SCAN, &arg);
      bool both = n == 1 && vec[0].start == lo && vec[0].end == hi;
      n = ioctl(pagemap_fd, PAGEMAP_SCAN, &arg);
      ok = both && n == 0 && scratch[0] == 2 && scratch[PAGE_BYTES] == 2;
    }
    munmap(scratch, 2 * PAGE_BYTES); /* unregisters it too */
  }
  if (!ok) {
    barrier_probe_refused(BARRIER_UFFD, why);
    close(uffd);
    close(pagemap_fd);
    uffd = pagemap_fd = -1;
  }
  return ok;
}

/* Protects the written pages that held survivors of the last collection
 * (heap_lock held, the page path closed; those not written since are
 * protected still); the report is dropped: arm forgets what came
 * before. */
static bool uffd_arm(void) {
  uncovered = false;
  if (!ready() || !register_new_ranges()) return false;
  bool ok = true;
  barrier_for_each_run(BARRIER_PAGES_SURVIVORS, protect_run, &ok);
  return ok;
}

/* A new chunk while armed: registered, its pages unwritten so far. */
static void uffd_cover(uintptr_t lo, uintptr_t hi) {
  if (!ready() || !register_new_ranges()) uncovered = true;
}

static size_t uffd_collect(barrier_visit_fn *visit, void *arg) {
  struct barrier_runs runs = {visit, arg, 0, 0, 0, false};
  bool ok = ready() && register_new_ranges();
  uint64_t start = os_now_ns();
  ok = ok && read_written() && process_pending(&runs, SIZE_MAX);
  atomic_fetch_add_explicit(&barrier_arm_ns, os_now_ns() - start, memory_order_relaxed);
  barrier_runs_flush(&runs);
  if (!ok || uncovered) return BARRIER_COLLECT_FAILED;
  return runs.pages;
}

/* A collect in steps (barrier_collect_begin): the written pages are
 * read at once, then processed a step at a time. */
static bool uffd_collect_begin(void) {
  pending_count = pending_next = 0;
  if (!ready() || !register_new_ranges() || uncovered) return false;
  uint64_t start = os_now_ns();
  bool ok = read_written();
  atomic_fetch_add_explicit(&barrier_arm_ns, os_now_ns() - start, memory_order_relaxed);
  return ok;
}

static size_t uffd_collect_step(barrier_visit_fn *visit, void *arg, size_t max_pages, bool *done) {
  struct barrier_runs runs = {visit, arg, 0, 0, 0, false};
  uint64_t start = os_now_ns();
  bool ok = ready() && !uncovered && process_pending(&runs, max_pages);
  atomic_fetch_add_explicit(&barrier_arm_ns, os_now_ns() - start, memory_order_relaxed);
  barrier_runs_flush(&runs);
  *done = pending_next >= pending_count;
  if (!ok) return BARRIER_COLLECT_FAILED;
  return runs.pages;
}

/* The finish's collect in parts (barrier_collect_last_parts): the
 * registered ranges' committed pages (those past a chunk's committed end
 * were never written) in slices of LAST_PART_PAGES, each read by one
 * PAGEMAP_SCAN without protection and its written pages holding a marked
 * object reported, as collect_last does for all.  A slice of 4 MiB: a
 * heap of 60 MiB makes 15 parts to share among the GC threads, one of
 * 1 GiB 256. */
enum { LAST_PART_PAGES = 1024, PART_VEC = 32 };

static uintptr_t committed_end(struct barrier_range r) {
  struct chunk *c = chunk_of_address(r.lo);
  uintptr_t end = c ? c->base + c->page_count * PAGE_BYTES : r.hi;
  return end < r.hi ? end : r.hi;
}

static size_t range_parts(struct barrier_range r) {
  uintptr_t end = committed_end(r);
  size_t pages = end > r.lo ? (end - r.lo) / PAGE_BYTES : 0;
  return (pages + LAST_PART_PAGES - 1) / LAST_PART_PAGES;
}

static size_t uffd_last_parts(void) {
  if (!ready() || !register_new_ranges() || uncovered) return 0;
  size_t parts = 0;
  for (size_t i = 0; i < registered; i++) parts += range_parts(barrier_range_at(i));
  return parts;
}

/* A part's written runs, to the caller's report by the pages holding a
 * marked object. */
static void select_marked(uintptr_t lo, uintptr_t hi, void *report) {
  barrier_select_runs(BARRIER_PAGES_MARKED, lo, hi, report);
}

/* A part's runs of pages that may hold pointers, gathered while they
 * are few. */
enum { FEW_RUNS = 8 };
struct few_runs {
  struct barrier_runs *walk;
  size_t count;
  uintptr_t lo[FEW_RUNS], hi[FEW_RUNS];
};

static void gather_few(uintptr_t lo, uintptr_t hi, void *arg) {
  struct few_runs *f = arg;
  if (f->count == FEW_RUNS) {
    f->walk->stop = true;
    return;
  }
  f->lo[f->count] = lo;
  f->hi[f->count++] = hi;
}

/* The written pages of [LO, HI) holding a marked object, to REPORT:
 * the written runs the kernel reports, those pages of them selected.
 * In a heap whose live data is mostly pointer-free, where the pages
 * that may hold pointers lie in a few runs, the kernel walks those runs
 * alone (matmul's 8 MiB heap: 2,048 pages walked for a handful holding
 * pointers); else the whole part in one scan.  Elsewhere the walk of
 * the headers that finds the runs cost more than it saved: cky's,
 * gcbench's and cube's finishes read 10-25% longer with it. */
static bool part_written_marked(uintptr_t lo, uintptr_t hi, struct barrier_runs *report,
                                struct page_region *vec) {
  struct few_runs few = {.count = 0};
  struct barrier_runs pointers = {gather_few, &few, 0, 0, 0, false};
  few.walk = &pointers;
  bool whole = 2 * heap_accounting.live_atomic_after_gc < heap_accounting.live_after_gc;
  if (!whole) {
    barrier_select_runs(BARRIER_PAGES_POINTERS, lo, hi, &pointers);
    barrier_runs_flush(&pointers);
    whole = pointers.stop;
  }
  struct barrier_runs written = {select_marked, report, 0, 0, 0, false};
  bool ok = true;
  if (whole) ok = scan_into(lo, hi, &written, false, vec, PART_VEC);
  else
    for (size_t i = 0; i < few.count && ok; i++)
      ok = scan_into(few.lo[i], few.hi[i], &written, false, vec, PART_VEC);
  barrier_runs_flush(&written);
  return ok;
}

static size_t uffd_last_part(size_t k, barrier_visit_fn *visit, void *arg) {
  /* Each reader's own vector, small enough for the finishing thread's
   * stack (16 KiB in bb_tiny_stacks): 768 bytes, a call per 32 runs. */
  struct page_region vec[PART_VEC];
  for (size_t i = 0; i < registered; i++) {
    struct barrier_range r = barrier_range_at(i);
    size_t n = range_parts(r);
    if (k >= n) {
      k -= n;
      continue;
    }
    uintptr_t lo = r.lo + k * LAST_PART_PAGES * PAGE_BYTES, end = committed_end(r);
    uintptr_t hi = end - lo > LAST_PART_PAGES * PAGE_BYTES ? lo + LAST_PART_PAGES * PAGE_BYTES : end;
    struct barrier_runs report = {visit, arg, 0, 0, 0, false};
    bool ok = part_written_marked(lo, hi, &report, vec);
    barrier_runs_flush(&report);
    return ok ? report.pages : (size_t)BARRIER_COLLECT_FAILED;
  }
  return 0;
}

/* The finish's, on one thread: the parts of barrier_collect_last_parts
 * one after another.  Recording stops next, so the written pages stay
 * as they are (the next arm protects the survivors' again), and no
 * protection change, nor the TLB flush it takes, lengthens the pause. */
static size_t uffd_collect_last(barrier_visit_fn *visit, void *arg) {
  if (!ready() || !register_new_ranges() || uncovered) return BARRIER_COLLECT_FAILED;
  uint64_t start = os_now_ns();
  size_t parts = uffd_last_parts(), pages = 0;
  for (size_t k = 0; k < parts && pages != (size_t)BARRIER_COLLECT_FAILED; k++) {
    size_t n = uffd_last_part(k, visit, arg);
    pages = n == (size_t)BARRIER_COLLECT_FAILED ? n : pages + n;
  }
  atomic_fetch_add_explicit(&barrier_arm_ns, os_now_ns() - start, memory_order_relaxed);
  return pages;
}

/* Lifts every protection (barrier_disarm: a fork child's cycle
 * abandoned; not at a cycle's finish, which keeps them). */
static void uffd_disarm(void) {
  if (!ready()) return;
  size_t n = barrier_range_count();
  for (size_t i = 0; i < n && i < registered; i++) {
    struct barrier_range r = barrier_range_at(i);
    struct uffdio_writeprotect wp = {.range = {.start = r.lo, .len = r.hi - r.lo}, .mode = 0};
    ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
  }
}

const struct barrier_ops barrier_uffd_ops = {
    .probe = uffd_probe, .arm = uffd_arm, .cover = uffd_cover,
    .collect = uffd_collect, .collect_last = uffd_collect_last,
    .collect_begin = uffd_collect_begin, .collect_step = uffd_collect_step,
    .last_parts = uffd_last_parts, .last_part = uffd_last_part, .disarm = uffd_disarm,
    .keeps_protections = true,
    .arm_beside_program = true};
