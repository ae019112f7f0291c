/* System calls that write into the heap while the mprotect barrier is
 * armed.  The kernel does not fault into a handler for a protected page:
 * the call fails with EFAULT.  Pages of pointer-free objects are never
 * protected (mprotect.c), so a buffer from GC_malloc_atomic is safe with
 * any call.  For a pointer-holding buffer (GC_malloc), the calls below
 * are interposed (libsgc before libc, as threads/interpose.c's): each
 * pins its heap buffers for as long as it runs, armed or not, and opens
 * their pages when armed.  An arm or a collect protects no pinned page,
 * so a call blocked across a cycle's start (stopped and restarted, or in
 * GC_do_blocking, not stopped at all) finds its buffer writable.  Other
 * calls (and libc's internal reads, fread's among them) into a GC_malloc
 * buffer fail with EFAULT while a cycle runs under this barrier: use a
 * pointer-free buffer, or another barrier (docs/barriers.md). */
#include <sched.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <limits.h>
#include <unistd.h>

#include "barrier/mprotect.h"
#include "base/next_definition.h"
#include "common.h"
#include "heap/heap.h"

_Atomic bool mprotect_reprotecting;
_Atomic uint8_t mprotect_pinning;

/* The heap buffers of calls in flight, each in a slot (HI 0: free), so
 * that an arm or a collect leaves their pages open.  A call that finds
 * no slot counts in unpinned_calls instead, and while that is not 0 no
 * arm or collect protects any page. */
enum { PIN_SLOTS = 256, PINS_PER_CALL = 8 };
static struct {
  _Atomic uintptr_t lo, hi;
} pins[PIN_SLOTS];
static _Atomic unsigned unpinned_calls;

struct ticket {
  int slots[PINS_PER_CALL];
  int count;
  bool unpinned;
};

/* Seq_cst, paired with the reads of mprotect_pins: see enter. */
static int pin(uintptr_t lo, uintptr_t hi, unsigned start) {
  for (unsigned k = 0; k < PIN_SLOTS; k++) {
    unsigned i = (start + k) % PIN_SLOTS;
    uintptr_t free_hi = 0;
    if (atomic_load_explicit(&pins[i].hi, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong_explicit(&pins[i].hi, &free_hi, hi, memory_order_seq_cst,
                                                memory_order_relaxed)) {
      atomic_store_explicit(&pins[i].lo, lo, memory_order_seq_cst);
      return (int)i;
    }
  }
  return -1;
}

/* A child of fork() has only the thread that forked, which is in no
 * call: the other threads' pins would stay for ever. */
void mprotect_pins_forget(void) {
  for (unsigned i = 0; i < PIN_SLOTS; i++) atomic_store_explicit(&pins[i].hi, 0, memory_order_relaxed);
  atomic_store_explicit(&unpinned_calls, 0, memory_order_relaxed);
  atomic_store_explicit(&mprotect_reprotecting, false, memory_order_relaxed);
}

size_t mprotect_pins(struct barrier_range *out) {
  if (atomic_load_explicit(&unpinned_calls, memory_order_seq_cst)) return SIZE_MAX;
  size_t n = 0;
  for (unsigned i = 0; i < PIN_SLOTS; i++) {
    uintptr_t hi = atomic_load_explicit(&pins[i].hi, memory_order_seq_cst);
    if (hi) out[n++] = (struct barrier_range){atomic_load_explicit(&pins[i].lo, memory_order_seq_cst), hi};
  }
  return n;
}

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*preadv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);
NEXT(read_fn, read)
NEXT(pread_fn, pread)
NEXT(pread_fn, pread64)
NEXT(readv_fn, readv)
NEXT(preadv_fn, preadv)
NEXT(recv_fn, recv)
NEXT(recvfrom_fn, recvfrom)
NEXT(recvmsg_fn, recvmsg)

static bool in_heap(const void *p, size_t len) {
  uintptr_t a = (uintptr_t)p;
  return len && a + len > atomic_load_explicit(&heap_lowest, memory_order_relaxed) &&
         a < atomic_load_explicit(&heap_highest, memory_order_relaxed);
}

/* Whether calls pin their buffers: with this barrier in use, and before
 * barrier_init has picked one (its first arm follows at once) when the
 * collector is in concurrent mode.  A call that came in before concurrent
 * mode was switched on is not pinned. */
static bool pinning(void) {
  uint8_t p = atomic_load_explicit(&mprotect_pinning, memory_order_acquire);
  return p == MPROTECT_PINS_ON ||
         (p == MPROTECT_PINS_UNDECIDED && __atomic_load_n(&sgc_settings.concurrent, __ATOMIC_RELAXED));
}

/* Buffers in the heap: pins them (or counts the call unpinned), waits
 * for an arm or collect protecting pages to finish, then, armed, opens
 * the pages.  An arm or a collect sets mprotect_reprotecting before it
 * reads the pins, the call pins before it reads the flag (seq_cst both):
 * either it sees the pin and leaves the pages open, or the call sees the
 * flag and opens them after it (the flag's release store, read by the
 * call's seq_cst load, makes the arm's armed flag and protections seen).
 * A collect that read a slot half written (its old LO) is one whose flag
 * the call then sees.  Pinned when not armed too: a call blocked in the
 * kernel across the stop of an arm never comes back here. */
static void enter(const struct iovec *iov, int count, struct ticket *t) {
  t->count = 0;
  t->unpinned = false;
  if (!pinning()) return;
  unsigned start = (unsigned)((uintptr_t)t >> 6);
  int in_heap_count = 0;
  for (int i = 0; i < count; i++) {
    if (!in_heap(iov[i].iov_base, iov[i].iov_len)) continue;
    in_heap_count++;
    uintptr_t lo = (uintptr_t)iov[i].iov_base, hi = lo + iov[i].iov_len;
    int slot = t->count < PINS_PER_CALL ? pin(lo, hi, start) : -1;
    if (slot >= 0) t->slots[t->count++] = slot;
    else t->unpinned = true;
  }
  if (!in_heap_count) return;
  if (t->unpinned) atomic_fetch_add_explicit(&unpinned_calls, 1, memory_order_seq_cst);
  while (atomic_load_explicit(&mprotect_reprotecting, memory_order_seq_cst)) sched_yield();
  if (!atomic_load_explicit(&mprotect_armed, memory_order_acquire)) return;
  for (int i = 0; i < count; i++)
    if (in_heap(iov[i].iov_base, iov[i].iov_len))
      mprotect_open_range((uintptr_t)iov[i].iov_base, (uintptr_t)iov[i].iov_base + iov[i].iov_len);
}

static void leave(const struct ticket *t) {
  for (int i = 0; i < t->count; i++)
    atomic_store_explicit(&pins[t->slots[i]].hi, 0, memory_order_release);
  if (t->unpinned) atomic_fetch_sub_explicit(&unpinned_calls, 1, memory_order_release);
}

#define ONE_BUFFER(buf, len) (struct iovec[1]){{(void *)(buf), (len)}}, 1

/* A call with one buffer, BUF of LEN bytes. */
#define ONE_BUFFER_CALL(name, params, buf, len, args)    \
  SGC_EXPORT ssize_t name params {                        \
    struct ticket t;                                      \
    enter(ONE_BUFFER(buf, len), &t);                      \
    ssize_t n = next_##name() args;                       \
    leave(&t);                                            \
    return n;                                             \
  }
ONE_BUFFER_CALL(read, (int fd, void *buf, size_t len), buf, len, (fd, buf, len))
ONE_BUFFER_CALL(pread, (int fd, void *buf, size_t len, off_t at), buf, len, (fd, buf, len, at))
ONE_BUFFER_CALL(pread64, (int fd, void *buf, size_t len, off_t at), buf, len, (fd, buf, len, at))
ONE_BUFFER_CALL(recv, (int fd, void *buf, size_t len, int flags), buf, len, (fd, buf, len, flags))

/* A call with COUNT buffers at IOV. */
#define VECTOR_CALL(name, params, args)                   \
  SGC_EXPORT ssize_t name params {                        \
    struct ticket t;                                      \
    enter(iov, count, &t);                                \
    ssize_t n = next_##name() args;                       \
    leave(&t);                                            \
    return n;                                             \
  }
VECTOR_CALL(readv, (int fd, const struct iovec *iov, int count), (fd, iov, count))
VECTOR_CALL(preadv, (int fd, const struct iovec *iov, int count, off_t at), (fd, iov, count, at))

SGC_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                            socklen_t *from_len) {
  /* The kernel writes *FROM_LEN too. */
  struct iovec bufs[3] = {{buf, len},
                          {from, from && from_len ? *from_len : 0},
                          {from_len, from && from_len ? sizeof *from_len : 0}};
  struct ticket t;
  enter(bufs, 3, &t);
  ssize_t n = next_recvfrom()(fd, buf, len, flags, from, from_len);
  leave(&t);
  return n;
}

SGC_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  /* The data buffers, the name, the control buffer and the header
   * itself (the kernel writes its lengths and flags back), in one call
   * of enter (those past PINS_PER_CALL make it unpinned).  More than
   * IOV_MAX buffers the kernel refuses anyway. */
  struct ticket t = {.count = 0, .unpinned = false};
  size_t count = msg->msg_iovlen <= IOV_MAX ? msg->msg_iovlen + 3 : 0;
  if (count) {
    struct iovec bufs[count];
    bufs[0] = (struct iovec){msg, sizeof *msg};
    bufs[1] = (struct iovec){msg->msg_name, msg->msg_name ? msg->msg_namelen : 0};
    bufs[2] = (struct iovec){msg->msg_control, msg->msg_control ? msg->msg_controllen : 0};
    for (size_t i = 3; i < count; i++) bufs[i] = msg->msg_iov[i - 3];
    enter(bufs, (int)count, &t);
  }
  ssize_t n = next_recvmsg()(fd, msg, flags);
  leave(&t);
  return n;
}
