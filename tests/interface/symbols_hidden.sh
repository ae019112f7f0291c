#!/bin/sh
# Only the public API is visible: libsgc.so exports, and libsgc.a defines
# globally, nothing but GC_ and SGC_ names and the libc calls sgc wraps on
# purpose (threads/interpose.c: joins, detach, sigwait, signal masks,
# signalfd; threads/sleep_calls.c: the sleeping calls; barrier/mprotect_*.c: sigaction, signal, the read and recv calls; AddressSanitizer's
# own __asan and __odr_asan names aside), and a program linked
# statically may define names sgc uses inside (heap_lock, mark_word, ...)
# without a clash (src/CMakeLists.txt, libsgc.a's localized object).
#   symbols_hidden.sh LIBSGC_SO LIBSGC_A INCLUDE_DIR
TAG=symbols_hidden
. "$(dirname "$0")/../lib/test_common.sh"
SO=$1 A=$2 INC=$3
INTERPOSED='pthread_join\|pthread_tryjoin_np\|pthread_timedjoin_np\|pthread_clockjoin_np\|pthread_detach\|sigwait\|sigwaitinfo\|sigtimedwait\|sigaction\|signal\|pthread_sigmask\|sigprocmask\|signalfd\|read\|pread\|pread64\|readv\|preadv\|recv\|recvfrom\|recvmsg\|nanosleep\|clock_nanosleep\|usleep\|sleep\|pause\|pthread_barrier_wait\|pthread_cond_wait\|pthread_cond_timedwait\|pthread_cond_clockwait\|poll\|ppoll\|__poll_chk\|__ppoll_chk\|select\|pselect\|epoll_wait\|epoll_pwait\|epoll_pwait2'
for lib in "$SO" "$A"; do
  case $lib in
    *.so*) names=$(nm -D --defined-only "$lib" | awk 'NF==3 {print $3}') ;;
    *) names=$(nm -g --defined-only "$lib" | awk 'NF==3 {print $3}') ;;
  esac
  [ -n "$names" ] || fail "$lib: no symbols read"
  stray=$(printf '%s\n' "$names" | grep -v '^\(GC_\|SGC_\)' | grep -vx "$INTERPOSED" | grep -v '^__\(odr_\)\?asan' | head -20 | tr '\n' ' ')
  [ -z "$stray" ] || fail "$lib makes internal names visible: $stray"
done
cat >"$TMP/clash.c" <<'PROG'
#include <stdio.h>
#include <gc.h>
/* Names sgc uses inside; the program's own. */
int heap_lock = 7, registry_lock = 8;
long mark_word(long x) { return x + 1; }
void *os_alloc(unsigned long n) { (void)n; return 0; }
int main(void) {
  GC_INIT();
  void *volatile p = 0;
  for (int i = 0; i < 200000; i++) p = GC_MALLOC(64);
  GC_gcollect();
  if (!p || heap_lock != 7 || registry_lock != 8 || mark_word(1) != 2 || os_alloc(1)) {
    puts("FAIL [symbols_hidden] the program's own names changed");
    return 1;
  }
  return 0;
}
PROG
${CC:-cc} ${CFLAGS:-} -O1 -I"$INC" "$TMP/clash.c" "$A" -lpthread -ldl -o "$TMP/clash" 2>"$TMP/link.log" ||
  fail "a static link with the program's own heap_lock, mark_word, os_alloc failed: $(head -5 "$TMP/link.log")"
"$TMP/clash" || fail "the statically linked program failed"
echo "symbols_hidden: only GC_/SGC_ names visible; static link with clashing names runs"
