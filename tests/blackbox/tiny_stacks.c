/* tiny_stacks: threads with the smallest stack pthreads allows
 * (PTHREAD_STACK_MIN, 16 KiB) allocate, keep lists, and run collections
 * themselves while the others are stopped.
 *
 * A collection runs on the stack of the thread that starts it, and every
 * stopped thread runs sgc's suspend handler on its own stack: either
 * needing more than such a stack holds overflows it (SIGSEGV).  bdwgc
 * 8.2.2 crashes on this program.  TINY_THREADS (8) threads; each keeps a
 * list of every 64th object it allocates and checks it at the end.
 * Run also with 4 GC threads and in torture mode. */
#define GC_THREADS 1
#include "gc.h"

#include <limits.h>
#include <pthread.h>

#include "common.h"

struct node {
  struct node *next;
  long value;
  long pad[4];
};

static void *worker(void *arg) {
  long seed = (long)(intptr_t)arg;
  struct node *kept = NULL;
  long count = 0;
  for (long i = 0; i < 200000; i++) {
    struct node *n = GC_malloc(sizeof *n);
    CHECK(n != NULL);
    n->value = seed * 1000000 + i;
    if (i % 64 == 0) {
      n->next = kept;
      kept = n;
      count++;
    }
    if (i % 40000 == 0) GC_gcollect();
  }
  for (struct node *n = kept; n; n = n->next, count--)
    CHECK(n->value % 64 == 0 && n->value / 1000000 == seed, "a kept node reads %ld", n->value);
  CHECK(count == 0, "the list lost %ld nodes", count);
  return NULL;
}

int main(void) {
  t_test_name = "tiny_stacks";
  GC_INIT();
  int threads = (int)t_env_long("TINY_THREADS", 8);
  pthread_attr_t attr;
  CHECK(pthread_attr_init(&attr) == 0);
  CHECK(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) == 0);
  pthread_t t[64];
  CHECK(threads >= 1 && threads <= 64);
  for (int i = 0; i < threads; i++)
    CHECK(pthread_create(&t[i], &attr, worker, (void *)(intptr_t)(i + 1)) == 0);
  for (int i = 0; i < threads; i++) CHECK(pthread_join(t[i], NULL) == 0);
  t_note("%d threads with %d-byte stacks allocated, kept and collected", threads,
         (int)PTHREAD_STACK_MIN);
  return 0;
}
