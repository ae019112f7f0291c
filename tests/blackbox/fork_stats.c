/* fork_stats: fork while another thread holds sgc's statistics lock.
 *
 * sgc's statistics (SGC_get_stats, SGC_get_gc_records, the SGC_TRACE
 * writer) sit behind a lock of their own, taken outside the heap lock.
 * A reader thread here copies the collection records in a tight loop, so
 * it holds that lock most of the time, while the main thread forks.  Each
 * child collects (which records a collection under the lock), reads the
 * statistics and checks that its own collection was counted.  A child
 * that inherited the lock held would wait forever: alarm() kills it and
 * the parent reports the signal.  sgc takes the lock in its fork handlers
 * (stats_before_fork), so no child can inherit it held.
 *
 * sgc-only: the statistics API is sgc's.
 */
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include "gc.h"
#include "sgc.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { FORKS = 60, RECORDS = 1024 };

static atomic_int stop_reading;
static atomic_long reads;

static void *reader(void *arg) {
  (void)arg;
  static SGC_gc_record_t records[RECORDS];
  while (!atomic_load(&stop_reading)) {
    size_t n = SGC_get_gc_records(records, RECORDS);
    SGC_stats_t stats;
    SGC_get_stats(&stats);
    CHECK(n <= RECORDS);
    atomic_fetch_add(&reads, 1);
  }
  return NULL;
}

static void child(void) {
  alarm(5);
  SGC_stats_t before, after;
  SGC_get_stats(&before);
  void *p = GC_malloc(64);
  CHECK(p != NULL);
  GC_gcollect();
  SGC_get_stats(&after);
  if (after.collections != before.collections + 1) _exit(3);
  SGC_gc_record_t last;
  if (SGC_get_gc_records(&last, 1) != 1) _exit(4);
  _exit(0);
}

int main(void) {
  t_test_name = "fork_stats";
  GC_INIT();
  /* Records for the reader to copy: it holds the lock longer with more. */
  for (int i = 0; i < 300; i++) {
    CHECK(GC_malloc(128) != NULL);
    GC_gcollect();
  }
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, reader, NULL) == 0);
  while (atomic_load(&reads) < 10) sched_yield();
  int hung = 0;
  for (int i = 0; i < FORKS; i++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) child();
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      hung++;
      break; /* one is enough; each costs the alarm's 5 s */
    } CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %#x", i, status);
  }
  atomic_store(&stop_reading, 1);
  CHECK(pthread_join(thread, NULL) == 0);
  t_note("%d forks, %ld reads of the statistics meanwhile, %d children hung\n", FORKS,
         atomic_load(&reads), hung);
  CHECK(hung == 0, "%d of %d children hung on a lock held at fork", hung, FORKS);
  return 0;
}
