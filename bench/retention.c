/*
 * retention.c: how much of what a program drops a collection fails to
 * reclaim (issue 58: collect what bdwgc collects).
 *
 * Each round, every one of -t threads builds -n structures (a list of -l
 * nodes, its head a GC_malloc'd object) through a call chain -d frames
 * deep whose frames hold the structures' addresses in locals, gives each
 * head a disappearing link (GC_general_register_disappearing_link, the
 * link in pointer-free memory, so it holds nothing alive), drops every
 * reference, and returns; the threads wait at a barrier -- stopped in the
 * program, their dead stack holding the addresses -- while the main thread
 * calls GC_gcollect() twice and counts the links a collection left set:
 * the structures it kept though nothing referenced them.  The main thread
 * builds its share too, through the same chain, so its own stale stack
 * words count.
 *
 *   -t threads (1)   -n structures per thread per round (200)
 *   -l nodes per structure (50)   -r rounds (20)   -d call depth (40)
 *
 * Metrics: retained (structures kept, all rounds), dropped (structures
 * built), retained_pct, retained_max (the worst round).  Self-check: every
 * link of a structure still referenced stays set (a collector that clears
 * a live object's link is wrong), and a round's retained count never
 * exceeds what it dropped.
 */
#include "bench_common.h"

#include <getopt.h>

struct node {
  struct node *next;
  uintptr_t value;
};

static long per_thread = 200, list_len = 50, rounds = 20, depth = 40;
static int threads = 1;
static pthread_barrier_t built, counted;

/* Each thread's links for a round: pointer-free memory, so the links
 * keep nothing alive; the array itself is reachable from here. */
static void **links[1024];

static struct node *build_list(uintptr_t tag) {
  struct node *head = NULL;
  for (long i = 0; i < list_len; i++) {
    struct node *n = GC_MALLOC(sizeof *n);
    n->next = head;
    n->value = tag + (uintptr_t)i;
    head = n;
  }
  return head;
}

/* Builds structures FROM..TO of SLOT's array through LEFT more frames; the
 * frames' locals hold the heads while the call is live. */
static __attribute__((noinline)) void build_deep(int slot, long from, long to, long left,
                                                  uintptr_t tag) {
  struct node *volatile held[4] = {NULL, NULL, NULL, NULL};
  if (left > 0 && to - from > 1) {
    long mid = from + (to - from) / 2;
    build_deep(slot, from, mid, left - 1, tag);
    build_deep(slot, mid, to, left - 1, tag);
    return;
  }
  for (long i = from; i < to; i++) {
    struct node *head = build_list(tag + (uintptr_t)i * 1000);
    held[i & 3] = head;
    GC_general_register_disappearing_link(&links[slot][i], head);
    links[slot][i] = head; /* a link is the pointer, in memory the scan skips */
  }
  (void)held;
}

static void build_round(int slot, long round) {
  build_deep(slot, 0, per_thread, depth, (uintptr_t)round << 32);
}

static void *worker(void *arg) {
  int slot = (int)(intptr_t)arg;
  for (long r = 0; r < rounds; r++) {
    build_round(slot, r);
    pthread_barrier_wait(&built);
    pthread_barrier_wait(&counted);
  }
  return NULL;
}

static long count_retained(void) {
  long kept = 0;
  for (int s = 0; s < threads; s++)
    for (long i = 0; i < per_thread; i++)
      if (links[s][i]) {
        kept++;
        GC_unregister_disappearing_link(&links[s][i]);
        links[s][i] = NULL;
      }
  return kept;
}

/* Structures kept on purpose: their links must stay set. */
static void check_live_links(void) {
  enum { LIVE = 16 };
  static struct node *live[LIVE];
  void **live_links = GC_MALLOC_ATOMIC(LIVE * sizeof *live_links);
  for (int i = 0; i < LIVE; i++) {
    live[i] = build_list(7);
    live_links[i] = live[i];
    GC_general_register_disappearing_link(&live_links[i], live[i]);
  }
  GC_gcollect();
  GC_gcollect();
  for (int i = 0; i < LIVE; i++)
    if (live_links[i] != live[i]) bench_fail("the link of a live structure was cleared");
  for (int i = 0; i < LIVE; i++) GC_unregister_disappearing_link(&live_links[i]);
}

int main(int argc, char **argv) {
  int c;
  while ((c = getopt(argc, argv, "t:n:l:r:d:")) != -1) {
    switch (c) {
    case 't': threads = (int)bench_arg_long("-t", optarg, 1, 1024); break;
    case 'n': per_thread = bench_arg_long("-n", optarg, 1, 1000000); break;
    case 'l': list_len = bench_arg_long("-l", optarg, 1, 1000000); break;
    case 'r': rounds = bench_arg_long("-r", optarg, 1, 100000); break;
    case 'd': depth = bench_arg_long("-d", optarg, 0, 1000); break;
    default:
      fprintf(stderr, "usage: retention [-t threads] [-n structures] [-l nodes] [-r rounds] "
                      "[-d depth]\n");
      return 2;
    }
  }
  GC_INIT();
  for (int s = 0; s < threads; s++) links[s] = GC_MALLOC_ATOMIC((size_t)per_thread * sizeof(void *));
  pthread_barrier_init(&built, NULL, (unsigned)threads);
  pthread_barrier_init(&counted, NULL, (unsigned)threads);
  pthread_t tid[1024];
  double start = bench_now();
  for (int s = 1; s < threads; s++)
    if (bench_thread_create(&tid[s], NULL, worker, (void *)(intptr_t)s) != 0) {
      fprintf(stderr, "retention: cannot start a thread\n");
      return 1;
    }
  long retained = 0, retained_max = 0;
  for (long r = 0; r < rounds; r++) {
    build_round(0, r);
    pthread_barrier_wait(&built);
    GC_gcollect();
    GC_gcollect();
    long kept = count_retained();
    if (kept > (long)threads * per_thread) bench_fail("round %ld: %ld kept of fewer", r, kept);
    retained += kept;
    if (kept > retained_max) retained_max = kept;
    pthread_barrier_wait(&counted);
  }
  for (int s = 1; s < threads; s++) bench_thread_join(tid[s], NULL);
  double wall = bench_now() - start;
  check_live_links();
  long dropped = rounds * threads * per_thread;
  bench_result_begin("retention", threads, wall);
  bench_kv("retained", "%ld", retained);
  bench_kv("dropped", "%ld", dropped);
  bench_kv("retained_pct", "%.4f", 100.0 * (double)retained / (double)dropped);
  bench_kv("retained_max", "%ld", retained_max);
  return bench_result_end();
}
