/* Range sets (roots/range_set.c) against a plain model: random adds with
 * bdwgc's same-start rule (many starts repeated), removals of every range
 * inside a random span, and clears, checked after each step: the same
 * ranges, and an index that finds every start (an add of an existing
 * start must extend, never duplicate).  What could fail: the index
 * losing an entry when a removal moves the last item or shifts a probe
 * run back (a duplicate range appears), or keeping a stale one. */
#include <string.h>

#include "roots/range_set.h"
#include "unit.h"

enum { MODEL_MAX = 4096, STARTS = 1500 };

static struct range model[MODEL_MAX];
static size_t model_count;

static void model_add(uintptr_t lo, uintptr_t hi) {
  if (hi <= lo) return;
  for (size_t i = 0; i < model_count; i++)
    if (model[i].lo == lo) {
      if (hi > model[i].hi) model[i].hi = hi;
      return;
    }
  model[model_count++] = (struct range){lo, hi};
}

static void model_remove(uintptr_t lo, uintptr_t hi) {
  for (size_t i = 0; i < model_count;)
    if (model[i].lo >= lo && model[i].hi <= hi) model[i] = model[--model_count];
    else i++;
}

/* Same ranges, in any order. */
static int same_as_model(const struct range_set *set) {
  if (set->count != model_count) return 0;
  for (size_t i = 0; i < model_count; i++) {
    int found = 0;
    for (size_t j = 0; j < set->count && !found; j++)
      found = set->items[j].lo == model[i].lo && set->items[j].hi == model[i].hi;
    if (!found) return 0;
  }
  return 1;
}

int main(void) {
  struct range_set set;
  memset(&set, 0, sizeof set);
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  int mismatches = 0;
  size_t most = 0;
  for (int step = 0; step < 200000; step++) {
    uint64_t r = unit_xorshift(&rng);
    /* Starts on a grid so they repeat, 16-byte aligned like real roots. */
    uintptr_t lo = 0x10000 + (uintptr_t)(r % STARTS) * 64;
    uintptr_t hi = lo + 16 + (uintptr_t)((r >> 20) % 256);
    unsigned what = (unsigned)(r >> 40) % 10000;
    if (what < 8000 && model_count < MODEL_MAX) {
      range_set_add_or_extend(&set, lo, hi, "test ranges");
      model_add(lo, hi);
    } else if (what < 9998) {
      uintptr_t span = 64 * (1 + (uintptr_t)((r >> 50) % 4));
      range_set_remove(&set, lo, lo + span);
      model_remove(lo, lo + span);
    } else {
      range_set_clear(&set);
      model_count = 0;
    }
    if (model_count > most) most = model_count;
    if (step % 997 == 0 || what >= 9998) {
      int same = same_as_model(&set);
      if (!same) mismatches++;
      CHECK(same, "step %d: the set has %zu ranges, the model %zu", step, set.count, model_count);
    }
    if (mismatches > 3) break;
  }
  CHECK(same_as_model(&set), "at the end: %zu ranges, the model %zu", set.count, model_count);
  CHECK(most > 1000, "the set held at most %zu ranges: too few to fill the index", most);
  /* Holds: inside a range, not past its end. */
  range_set_clear(&set);
  range_set_add_or_extend(&set, 0x1000, 0x1010, "test ranges");
  range_set_add_or_extend(&set, 0x1000, 0x1040, "test ranges");
  CHECK(set.count == 1, "a second add of one start made %zu ranges", set.count);
  CHECK(range_set_holds(&set, 0x103f) && !range_set_holds(&set, 0x1040), "holds is wrong");

  /* Short removals against many ranges look each address up as a start
   * (range_set_remove): starts on odd bytes, 3 apart, each range 5 bytes
   * long so neighbours overlap.  [lo, lo + 8) holds the range at lo and
   * the one at lo + 3 (ends at lo + 8), not the one at lo + 6. */
  range_set_clear(&set);
  enum { MANY = 20000 };
  for (uintptr_t i = 0; i < MANY; i++)
    range_set_add_or_extend(&set, 0x20001 + 3 * i, 0x20006 + 3 * i, "test ranges");
  CHECK(set.count == MANY, "%zu ranges added", set.count);
  range_set_remove(&set, 0x20001 + 300, 0x20001 + 308);
  CHECK(set.count == MANY - 2, "a short removal left %zu ranges", set.count);
  range_set_add_or_extend(&set, 0x20001 + 306, 0x20001 + 400, "test ranges");
  CHECK(set.count == MANY - 2, "the range at lo + 6 was removed or doubled: %zu", set.count);
  /* One by one, as a program drops what it added. */
  for (uintptr_t i = 0; i < MANY; i++) range_set_remove(&set, 0x20001 + 3 * i, 0x20006 + 3 * i);
  CHECK(set.count == 1, "%zu ranges left after removing each (the extended one stays)", set.count);
  CHECK(set.items[0].lo == 0x20001 + 306, "the range left starts at %#lx",
        (unsigned long)set.items[0].lo);
  range_set_remove(&set, 0x20001 + 306, 0x20001 + 400);
  CHECK(set.count == 0, "%zu ranges left", set.count);
  return unit_finish();
}
