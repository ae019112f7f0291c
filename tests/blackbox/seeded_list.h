/* seeded_list.h: a list of GC_MALLOC'd nodes whose values follow from a
 * seed, held only by the stack of the thread that built it, and its
 * check; and the collections that count how many threads they stopped.
 * The tests of sleeping and waiting threads share them
 * (sleeping_threads, waiting_threads, cond_stress, sleep_in_handler).
 * Include gc.h and sgc.h, then common.h, before this header. */
#ifndef SGC_TESTS_SEEDED_LIST_H
#define SGC_TESTS_SEEDED_LIST_H

struct node {
  struct node *next;
  long value;
};

/* COUNT nodes, values SEED * COUNT + i, the last built first. */
static T_UNUSED struct node *seeded_list(long seed, long count) {
  struct node *head = NULL;
  for (long i = 0; i < count; i++) {
    struct node *n = GC_MALLOC(sizeof *n);
    CHECK(n != NULL, "out of memory");
    n->next = head;
    n->value = seed * count + i;
    head = n;
  }
  return head;
}

/* Nodes of seeded_list(SEED, COUNT) whose value changed, plus one when
 * the list's length did; 0 for an intact list. */
static T_UNUSED long seeded_list_damage(const struct node *head, long seed, long count) {
  long bad = 0, i = count;
  for (; head; head = head->next) bad += head->value != seed * count + --i;
  return bad + (i != 0);
}

/* COLLECTIONS collections, each followed by a list of garbage over the
 * freed neighbours of the lists threads hold; the most threads one of
 * them stopped, the collector included (SGC_get_gc_records). */
static T_UNUSED int most_threads_stopped(int collections, long count) {
  int most = 0;
  for (int i = 0; i < collections; i++) {
    GC_gcollect();
    (void)seeded_list(100 + i, count);
    SGC_gc_record_t rec;
    CHECK(SGC_get_gc_records(&rec, 1) == 1, "no collection record");
    if (rec.threads > most) most = rec.threads;
  }
  return most;
}

#endif
