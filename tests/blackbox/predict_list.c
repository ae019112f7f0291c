/* predict_list [NODES]: a linked list of NODES (200,000) 16-byte nodes,
 * built once, then 16 explicit collections (predict_list.sh and
 * markers_choice.sh read their trace).  Prints "ok" when the list is
 * intact after them. */
#include "gc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct cell {
  struct cell *next;
  uintptr_t value;
};

static struct cell *volatile head;

int main(int argc, char **argv) {
  GC_INIT();
  enum { COLLECTIONS = 16 };
  uintptr_t nodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
  for (uintptr_t i = 0; i < nodes; i++) {
    struct cell *c = GC_MALLOC(sizeof *c);
    if (!c) return 1;
    c->next = head;
    c->value = i * 2654435761u;
    head = c;
  }
  for (int k = 0; k < COLLECTIONS; k++) GC_gcollect();
  uintptr_t i = nodes;
  for (struct cell *c = head; c; c = c->next)
    if (c->value != --i * 2654435761u) {
      printf("node %lu corrupted\n", (unsigned long)i);
      return 1;
    }
  printf(i == 0 ? "ok\n" : "short list\n");
  return i != 0;
}
