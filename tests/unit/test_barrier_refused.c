/* userfaultfd refused (a seccomp filter makes the system call fail with
 * EPERM, as a container's profile does): barrier_init must fall back to
 * the next barrier with a warning naming uffd, the reason and the
 * fallback, and that barrier must work.  x86-64 only (the filter checks
 * the architecture); skips (77) elsewhere or where uffd was never
 * available. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "barrier/barrier.h"
#include "common.h"
#include "heap/heap.h"
#include "unit.h"

static char warning[512];
static void keep_warning(char *msg, GC_word arg) {
  if (strstr(msg, "barrier")) snprintf(warning, sizeof warning, "%s", msg);
}

static bool refuse_userfaultfd(void) {
#if defined(__x86_64__) && defined(SYS_userfaultfd)
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
#else
  return false;
#endif
}

static size_t reported;
static void count(uintptr_t lo, uintptr_t hi, void *arg) { reported += (hi - lo) / PAGE_BYTES; }

int main(void) {
  GC_init();
  if (syscall(SYS_userfaultfd, 0) < 0 && errno != EINVAL) {
    printf("skipped: userfaultfd is unavailable here anyway\n");
    return 77;
  }
  if (!refuse_userfaultfd()) {
    printf("skipped: cannot install a seccomp filter here\n");
    return 77;
  }
  CHECK(syscall(SYS_userfaultfd, 0) < 0 && errno == EPERM, "the filter lets userfaultfd through");
  GC_set_warn_proc(keep_warning);
  enum barrier_kind kind = barrier_init();
  printf("barrier %s; warning: %s", barrier_name(kind), warning);
  CHECK(kind != BARRIER_UFFD, "uffd in use though refused");
  CHECK(strstr(warning, "uffd") && strstr(warning, "not permitted") && strstr(warning, barrier_name(kind)),
        "the warning: %s", warning);
  /* The fallback works. */
  char *object = GC_malloc(8 * PAGE_BYTES);
  barrier_arm();
  barrier_collect_dirty(count, NULL);
  reported = 0;
  object[3 * PAGE_BYTES] = 1;
  barrier_collect_dirty(count, NULL);
  CHECK(reported >= 1, "the %s barrier reported %zu pages after a write", barrier_name(kind), reported);
  barrier_disarm();
  return unit_finish();
}
