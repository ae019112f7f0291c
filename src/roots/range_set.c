/* Range sets (roots/range_set.h). */
#include "roots/range_set.h"

#include <string.h>

#include "common.h"
#include "os/os.h"

static void grow_items(struct range_set *set, const char *what) {
  size_t capacity = set->capacity ? 2 * set->capacity : 64;
  struct range *items = os_alloc(capacity * sizeof *items);
  if (!items)
    sgc_fatal("out of memory for the table of %s (%zu of them)", what, set->count);
  if (set->count) memcpy(items, set->items, set->count * sizeof *items);
  if (set->items) os_free(set->items, set->capacity * sizeof *set->items);
  set->items = items;
  set->capacity = capacity;
}

void range_set_add(struct range_set *set, uintptr_t lo, uintptr_t hi, const char *what) {
  if (hi <= lo) return;
  if (set->count == set->capacity) grow_items(set, what);
  set->items[set->count++] = (struct range){lo, hi};
}

/* ---- the index by start address ---- */

static size_t slot_of(const struct range_set *set, uintptr_t lo) {
  uint64_t h = (uint64_t)lo * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (set->index_slots - 1);
}

static void index_put(struct range_set *set, size_t item) {
  size_t s = slot_of(set, set->items[item].lo);
  while (set->index[s]) s = (s + 1) & (set->index_slots - 1);
  set->index[s] = (uint32_t)(item + 1);
}

/* Sizes the index for the set's items (at least twice their number) and
 * fills it again from them. */
static void index_rebuild(struct range_set *set, const char *what) {
  size_t slots = set->index_slots ? set->index_slots : 128;
  while (slots < 2 * (set->count + 1)) slots *= 2;
  if (slots != set->index_slots) {
    uint32_t *index = os_alloc(slots * sizeof *index); /* zeroed */
    if (!index) sgc_fatal("out of memory for the index of %s", what);
    if (set->index) os_free(set->index, set->index_slots * sizeof *set->index);
    set->index = index;
    set->index_slots = slots;
  } else {
    memset(set->index, 0, slots * sizeof *set->index);
  }
  for (size_t i = 0; i < set->count; i++) index_put(set, i);
}

/* The slot holding item ITEM (which the index must hold). */
static size_t index_slot_of_item(const struct range_set *set, size_t item) {
  size_t s = slot_of(set, set->items[item].lo);
  while (set->index[s] != item + 1) s = (s + 1) & (set->index_slots - 1);
  return s;
}

/* Empties slot S, moving later entries of its probe run back so every
 * entry stays reachable from its home slot (deletion without tombstones
 * for linear probing). */
static void index_delete_slot(struct range_set *set, size_t s) {
  size_t mask = set->index_slots - 1, empty = s;
  set->index[empty] = 0;
  for (size_t j = (s + 1) & mask; set->index[j]; j = (j + 1) & mask) {
    size_t home = slot_of(set, set->items[set->index[j] - 1].lo);
    /* The entry stays when its home lies cyclically in (empty, j]. */
    bool stays = empty <= j ? (home > empty && home <= j) : (home > empty || home <= j);
    if (stays) continue;
    set->index[empty] = set->index[j];
    set->index[j] = 0;
    empty = j;
  }
}

static struct range *index_find(const struct range_set *set, uintptr_t lo) {
  if (!set->index_slots) return NULL;
  for (size_t s = slot_of(set, lo); set->index[s]; s = (s + 1) & (set->index_slots - 1)) {
    struct range *r = &set->items[set->index[s] - 1];
    if (r->lo == lo) return r;
  }
  return NULL;
}

void range_set_add_or_extend(struct range_set *set, uintptr_t lo, uintptr_t hi,
                             const char *what) {
  if (hi <= lo) return;
  struct range *r = index_find(set, lo);
  if (r) {
    if (hi > r->hi) r->hi = hi;
    return;
  }
  range_set_add(set, lo, hi, what);
  if (2 * (set->count + 1) > set->index_slots) index_rebuild(set, what);
  else index_put(set, set->count - 1);
}

/* Removes item I: the last item moves into its place, and the index
 * follows both. */
static void remove_item(struct range_set *set, size_t i) {
  size_t last = set->count - 1;
  if (set->index_slots) {
    index_delete_slot(set, index_slot_of_item(set, i));
    if (last != i) set->index[index_slot_of_item(set, last)] = (uint32_t)(i + 1);
  }
  set->items[i] = set->items[last];
  set->count--;
}

/* bdwgc's rule asks for every range inside [lo, hi), which an index by
 * start cannot list.  A short [lo, hi) against many ranges looks up each
 * address in it as a start (starts are unique in an indexed set): a
 * program that removed its 100,000 ranges one by one, as it added them,
 * scanned them all each time, 5.5 s (bench-shapes -s roots).  Otherwise a
 * scan of every range, as bdwgc's. */
void range_set_remove(struct range_set *set, uintptr_t lo, uintptr_t hi) {
  if (hi <= lo) return; /* nothing is inside: no empty range is kept */
  if (set->index_slots && hi - lo < set->count / 4) {
    for (uintptr_t a = lo; a < hi; a++) {
      struct range *r = index_find(set, a);
      if (r && r->hi <= hi) remove_item(set, (size_t)(r - set->items));
    }
    return;
  }
  for (size_t i = 0; i < set->count;) {
    if (set->items[i].lo < lo || set->items[i].hi > hi) i++;
    else remove_item(set, i);
  }
}

void range_set_clear(struct range_set *set) {
  set->count = 0;
  if (set->index_slots) memset(set->index, 0, set->index_slots * sizeof *set->index);
}

bool range_set_holds(const struct range_set *set, uintptr_t a) {
  for (size_t i = 0; i < set->count; i++)
    if (a >= set->items[i].lo && a < set->items[i].hi) return true;
  return false;
}
