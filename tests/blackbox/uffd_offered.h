/* Whether the kernel offers what sgc's uffd write barrier needs:
 * userfaultfd with asynchronous write protection (Linux 6.7+).  sgc's own
 * probe decides; this one only tells a test whether to skip (exit 77). */
#ifndef SGC_TESTS_UFFD_OFFERED_H
#define SGC_TESTS_UFFD_OFFERED_H

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The UAPI's values (Linux 6.7; older headers lack the names). */
enum { T_UFFD_FEATURE_WP_ASYNC = 1 << 15, T_UFFD_USER_MODE_ONLY = 1 };

static inline bool t_uffd_offered(void) {
  int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | T_UFFD_USER_MODE_ONLY);
  if (fd < 0) return false;
  struct uffdio_api api = {.api = UFFD_API, .features = T_UFFD_FEATURE_WP_ASYNC};
  bool ok = ioctl(fd, UFFDIO_API, &api) == 0 && (api.features & T_UFFD_FEATURE_WP_ASYNC);
  close(fd);
  return ok;
}

/* A test that needs the uffd barrier ends here, skipped (exit 77), where
 * the kernel lacks it. */
static inline void t_skip_without_uffd(const char *test) {
  if (t_uffd_offered()) return;
  printf("%s: skipped (no asynchronous userfaultfd write protection)\n", test);
  exit(77);
}
#endif
