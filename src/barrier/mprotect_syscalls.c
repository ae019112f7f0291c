/* System calls that write into the heap while the mprotect barrier is
 * armed.  The kernel does not fault into a handler for a protected page:
 * the call fails with EFAULT.  Pages of pointer-free objects are never
 * protected (mprotect.c), so a buffer from GC_malloc_atomic is safe with
 * any call.  For a pointer-holding buffer (GC_malloc), the calls below
 * are interposed (libsgc before libc, as threads/interpose.c's): each
 * opens and records the buffer's pages first, and while it runs no
 * collect protects pages again (mprotect_collect).  Other calls (and
 * libc's internal reads, fread's among them) into a GC_malloc buffer
 * fail with EFAULT while a cycle runs under this barrier: use a
 * pointer-free buffer, or another barrier (docs/barriers.md). */
#include <sched.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "barrier/mprotect.h"
#include "base/next_definition.h"
#include "common.h"
#include "heap/heap.h"

_Atomic unsigned mprotect_syscalls_in_flight;
_Atomic bool mprotect_reprotecting;

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

/* Whether the call must be counted: armed, and a buffer in the heap.
 * Seq_cst, paired with mprotect_collect's: the count first, then the
 * collect's flag; a collect protecting pages again is waited for. */
static bool enter(const struct iovec *iov, int count) {
  if (!atomic_load_explicit(&mprotect_armed, memory_order_relaxed)) return false;
  bool any = false;
  for (int i = 0; i < count && !any; i++) any = in_heap(iov[i].iov_base, iov[i].iov_len);
  if (!any) return false;
  atomic_fetch_add_explicit(&mprotect_syscalls_in_flight, 1, memory_order_seq_cst);
  while (atomic_load_explicit(&mprotect_reprotecting, memory_order_seq_cst)) sched_yield();
  for (int i = 0; i < count; i++)
    if (in_heap(iov[i].iov_base, iov[i].iov_len))
      mprotect_open_range((uintptr_t)iov[i].iov_base, (uintptr_t)iov[i].iov_base + iov[i].iov_len);
  return true;
}

static void leave(bool counted) {
  if (counted) atomic_fetch_sub_explicit(&mprotect_syscalls_in_flight, 1, memory_order_release);
}

#define ONE_BUFFER(buf, len) (struct iovec[1]){{(void *)(buf), (len)}}, 1

/* A call with one buffer, BUF of LEN bytes. */
#define ONE_BUFFER_CALL(name, params, buf, len, args)    \
  SGC_EXPORT ssize_t name params {                        \
    bool counted = enter(ONE_BUFFER(buf, len));           \
    ssize_t n = next_##name() args;                       \
    leave(counted);                                       \
    return n;                                             \
  }
ONE_BUFFER_CALL(read, (int fd, void *buf, size_t len), buf, len, (fd, buf, len))
ONE_BUFFER_CALL(pread, (int fd, void *buf, size_t len, off_t at), buf, len, (fd, buf, len, at))
ONE_BUFFER_CALL(pread64, (int fd, void *buf, size_t len, off_t at), buf, len, (fd, buf, len, at))
ONE_BUFFER_CALL(recv, (int fd, void *buf, size_t len, int flags), buf, len, (fd, buf, len, flags))

/* A call with COUNT buffers at IOV. */
#define VECTOR_CALL(name, params, args)                   \
  SGC_EXPORT ssize_t name params {                        \
    bool counted = enter(iov, count);                     \
    ssize_t n = next_##name() args;                       \
    leave(counted);                                       \
    return n;                                             \
  }
VECTOR_CALL(readv, (int fd, const struct iovec *iov, int count), (fd, iov, count))
VECTOR_CALL(preadv, (int fd, const struct iovec *iov, int count, off_t at), (fd, iov, count, at))

SGC_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                            socklen_t *from_len) {
  struct iovec bufs[2] = {{buf, len}, {from, from && from_len ? *from_len : 0}};
  bool counted = enter(bufs, 2);
  ssize_t n = next_recvfrom()(fd, buf, len, flags, from, from_len);
  leave(counted);
  return n;
}

SGC_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  bool counted = false;
  if (atomic_load_explicit(&mprotect_armed, memory_order_relaxed)) {
    /* The data buffers, then the name and control buffers. */
    struct iovec extra[2] = {{msg->msg_name, msg->msg_namelen}, {msg->msg_control, msg->msg_controllen}};
    bool data = enter(msg->msg_iov, (int)msg->msg_iovlen);
    bool rest = enter(extra, 2);
    counted = data || rest;
    if (data && rest) leave(true); /* counted once */
  }
  ssize_t n = next_recvmsg()(fd, msg, flags);
  leave(counted);
  return n;
}
