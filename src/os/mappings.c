/* The process's memory map (/proc/self/maps), read for one question: what
 * readable memory lies around an address.  The collector asks it with
 * the world stopped, for a thread that runs on a stack nobody told sgc of
 * (threads/stacks.c), so it takes no lock and allocates nothing: open,
 * read and close into a buffer on the caller's stack. */
#include "os/os.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Memory a stack may live in: anonymous mappings (mmap, a thread's
 * stack, malloc's arenas), the brk heap and the main stack.  Not files,
 * whose reads may have effects or fault past their end, and not the
 * kernel's [vvar] pages, some of which fault when read. */
static bool may_hold_a_stack(const char *path, const char *line_end) {
  while (path < line_end && *path == ' ') path++;
  if (path == line_end) return true;
  return strncmp(path, "[heap]", 6) == 0 || strncmp(path, "[stack", 6) == 0 ||
         strncmp(path, "[anon", 5) == 0;
}

static uintptr_t parse_hex(const char **s, const char *end) {
  uintptr_t v = 0;
  for (; *s < end; (*s)++) {
    char c = **s;
    unsigned d;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else break;
    v = v << 4 | d;
  }
  return v;
}

/* The run of adjacent readable mappings that may hold a stack, which the
 * lines of the map extend line by line (they come in address order). */
struct extent_search {
  uintptr_t addr, lo, hi;
  bool found; /* [lo, hi) holds addr: only extending it is left */
  bool done;
};

static void take_line(struct extent_search *s, const char *line, const char *end) {
  const char *p = line;
  uintptr_t start = parse_hex(&p, end);
  if (p >= end || *p != '-') return;
  p++;
  uintptr_t stop = parse_hex(&p, end);
  if (p + 5 > end || *p != ' ') return;
  bool readable = p[1] == 'r';
  /* The path is the sixth field: skip perms, offset, device, inode. */
  const char *path = p + 1;
  for (int field = 0; field < 4 && path < end; field++) {
    while (path < end && *path != ' ') path++;
    while (path < end && *path == ' ') path++;
  }
  bool usable = readable && may_hold_a_stack(path, end);
  if (usable && start == s->hi) {
    s->hi = stop;
  } else if (s->found) {
    s->done = true;
    return;
  } else if (usable) {
    s->lo = start;
    s->hi = stop;
  } else {
    s->lo = s->hi = 0;
  }
  if (s->addr >= s->lo && s->addr < s->hi) s->found = true;
}

bool os_readable_extent(uintptr_t addr, uintptr_t *lo, uintptr_t *hi) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct extent_search s = {.addr = addr};
  char buf[4096];
  size_t kept = 0; /* a partial line carried to the next read */
  for (;;) {
    ssize_t n = read(fd, buf + kept, sizeof buf - kept);
    if (n <= 0) break;
    size_t have = kept + (size_t)n;
    const char *line = buf, *end = buf + have;
    for (const char *nl; !s.done && (nl = memchr(line, '\n', (size_t)(end - line)));
         line = nl + 1)
      take_line(&s, line, nl);
    if (s.done) break;
    kept = (size_t)(end - line);
    if (kept == sizeof buf) kept = 0; /* no line is this long: drop it */
    memmove(buf, line, kept);
  }
  close(fd);
  if (!s.found) return false;
  *lo = s.lo;
  *hi = s.hi;
  return true;
}

/* /proc/self/task/TID/status's SigBlk line: the thread's blocked signals. */
bool os_thread_blocks_signal(int tid, int sig) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char *line = strstr(buf, "\nSigBlk:");
  if (!line) return false;
  const char *p = line + 8;
  while (*p == ' ' || *p == '\t') p++;
  uintptr_t mask = parse_hex(&p, buf + n);
  return sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1);
}
