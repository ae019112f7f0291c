/* dead_stack: what a returned call left on the stack does not keep an
 * object alive once the program has allocated on.
 *
 * A conservative scan reads every word of the live frames, and a frame
 * the program leaves partly unwritten (here a buffer it never fills; in
 * real code padding and locals not yet set) holds what an earlier call
 * wrote there.  sgc zeroes dead stack below the allocation slow path now
 * and then, as bdwgc does (docs/behaviour.md, "What is retained").
 *
 * Each round: fill_frame(), called a few frames below main, fills a
 * buffer in its frame with a new list's address and returns; main drops
 * the list (a disappearing link in pointer-free memory watches it) and
 * allocates 200,000 small objects, many refills, whose slow path runs
 * above that buffer; then hold_frame(), called the same way, lays its
 * frame over the same memory without writing its buffer, and collects
 * from there.  The list must be gone in most of 20 rounds: without the
 * zeroing it stayed in every one.
 *
 * A second part checks the other way: a list whose address only the
 * caller's frame holds, while the zeroing runs below it, survives. */
#define _GNU_SOURCE
#ifndef GC_THREADS
#define GC_THREADS
#endif
#include <gc.h>
#include <stdio.h>
#include <stdlib.h>

enum { SLOTS = 96, ROUNDS = 20 };

struct node {
  struct node *next;
  long value;
};

static struct node *make_list(long n) {
  struct node *head = NULL;
  for (long i = 0; i < n; i++) {
    struct node *x = GC_MALLOC(sizeof *x);
    x->next = head;
    x->value = i;
    head = x;
  }
  return head;
}

static void **link_slot; /* pointer-free: the link holds nothing alive */

/* Registers a link to a new list and leaves the list's address in every
 * slot of this frame's buffer. */
__attribute__((noinline)) static void fill_frame(void) {
  void *volatile slots[SLOTS];
  struct node *list = make_list(100);
  *link_slot = list;
  GC_general_register_disappearing_link(link_slot, list);
  for (int i = 0; i < SLOTS; i++) slots[i] = list;
  __asm__ volatile("" : : "r"(slots) : "memory");
}

/* The same frame shape, its buffer left unwritten: it holds whatever the
 * memory held.  Collects from here. */
__attribute__((noinline)) static void hold_frame(void) {
  void *volatile slots[SLOTS];
  __asm__ volatile("" : : "r"(slots) : "memory");
  GC_gcollect();
  GC_gcollect();
  __asm__ volatile("" : : "r"(slots) : "memory");
}

/* Runs FN DEPTH frames of 256 written bytes below the caller: the
 * buffers above lie deeper than the allocation slow path's frames, where
 * its zeroing reaches. */
__attribute__((noinline)) static void descend(int depth, void (*fn)(void)) {
  volatile char pad[256];
  for (int i = 0; i < 256; i++) pad[i] = 0;
  if (depth > 0) descend(depth - 1, fn);
  else fn();
  __asm__ volatile("" : : "r"(pad) : "memory");
}

__attribute__((noinline)) static void allocate_on(void) {
  for (long i = 0; i < 200000; i++) {
    void *volatile p = GC_MALLOC(16);
    (void)p;
  }
}

__attribute__((noinline)) static long sum_after_allocating(struct node *list) {
  allocate_on();
  GC_gcollect();
  long sum = 0;
  for (struct node *n = list; n; n = n->next) sum += n->value;
  return sum;
}

int main(void) {
  GC_INIT();
  link_slot = GC_MALLOC_ATOMIC(sizeof *link_slot);
  int kept = 0;
  for (int round = 0; round < ROUNDS; round++) {
    descend(4, fill_frame);
    allocate_on();
    descend(4, hold_frame);
    if (*link_slot) {
      kept++;
      GC_unregister_disappearing_link(link_slot);
      *link_slot = NULL;
    }
  }
  /* A list the caller's frame holds outlives allocation and collections. */
  struct node *volatile live = make_list(1000);
  long sum = sum_after_allocating(live);
  if (sum != 1000L * 999 / 2) {
    fprintf(stderr, "dead_stack: FAIL: a live list sums %ld after collections\n", sum);
    return 1;
  }
  printf("dead_stack: dropped lists kept in %d of %d rounds\n", kept, ROUNDS);
  if (kept > ROUNDS / 4) {
    fprintf(stderr, "dead_stack: FAIL: a dropped list's address on dead stack kept it in "
                    "%d of %d rounds: dead stack below the slow path is not zeroed\n",
            kept, ROUNDS);
    return 1;
  }
  return 0;
}
