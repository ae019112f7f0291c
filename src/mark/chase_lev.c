/* A Chase-Lev work-stealing deque of mark ranges (SGC_MARK_DEQUE=
 * chase-lev), the alternative to the thesis's watermark stack that
 * issue 4 asks to measure.  Memory orders follow Le, Pop, Cohen and
 * Zappa Nardelli, "Correct and efficient work-stealing for weak memory
 * models" (PPoPP 2013), with the lessons SPEC.md §4 lists: signed
 * indices, the fence in take, atomic element reads, a reload of the
 * buffer after growing, and old buffers kept until the collection ends
 * (a thief may still read them).
 *
 * A slot holds two words; a thief reads them with relaxed loads and then
 * claims the slot with a CAS on top.  The owner never rewrites a slot a
 * thief may be reading: it would first have to wrap the whole buffer,
 * and a full buffer grows instead. */
#include <string.h>

#include "common.h"
#include "mark/marker.h"
#include "os/os.h"

enum { CL_INITIAL_SLOTS = 1 << 13 };

static size_t buffer_bytes(int64_t slots) {
  return sizeof(struct cl_buffer) + (size_t)slots * sizeof(struct cl_slot);
}

/* NULL when the OS refuses. */
static struct cl_buffer *buffer_new(int64_t slots) {
  struct cl_buffer *b = os_alloc(buffer_bytes(slots));
  if (!b) return NULL;
  b->mask = slots - 1;
  b->retired_next = NULL;
  return b;
}

/* The first buffer's slots: CL_INITIAL_SLOTS, or fewer under
 * SGC_MARK_STACK_LIMIT (a power of two, as the mask needs). */
static int64_t initial_slots(void) {
  int64_t slots = CL_INITIAL_SLOTS;
  while (mark_config.stack_limit && (size_t)slots > mark_config.stack_limit && slots > 256)
    slots /= 2;
  return slots;
}

bool cl_init(struct marker *m) {
  struct cl_buffer *b = buffer_new(initial_slots());
  if (!b) return false;
  atomic_store(&m->cl_top, 0);
  atomic_store(&m->cl_bottom, 0);
  atomic_store(&m->cl_buffer, b);
  m->cl_retired = NULL;
  return true;
}

void cl_reset(struct marker *m) {
  while (m->cl_retired) {
    struct cl_buffer *b = m->cl_retired;
    m->cl_retired = b->retired_next;
    os_free(b, buffer_bytes(b->mask + 1));
  }
  SGC_ASSERT(atomic_load(&m->cl_top) >= atomic_load(&m->cl_bottom));
  atomic_store(&m->cl_top, 0);
  atomic_store(&m->cl_bottom, 0);
  /* Grown past SGC_MARK_STACK_LIMIT (for ranges no rescan finds again):
   * back to the first size, so the limit holds for every collection.  No
   * thief runs between collections. */
  struct cl_buffer *b = atomic_load_explicit(&m->cl_buffer, memory_order_relaxed);
  if (mark_config.stack_limit && b->mask + 1 > initial_slots()) {
    struct cl_buffer *small = buffer_new(initial_slots());
    if (small) {
      atomic_store_explicit(&m->cl_buffer, small, memory_order_relaxed);
      os_free(b, buffer_bytes(b->mask + 1));
    }
  }
}

void cl_destroy(struct marker *m) {
  cl_reset(m);
  struct cl_buffer *b = atomic_load(&m->cl_buffer);
  os_free(b, buffer_bytes(b->mask + 1));
}

/* NULL when the OS refuses the doubled buffer. */
static struct cl_buffer *grow(struct marker *m, struct cl_buffer *old, int64_t bottom, int64_t top) {
  struct cl_buffer *b = buffer_new((old->mask + 1) * 2);
  if (!b) return NULL;
  for (int64_t i = top; i < bottom; i++) {
    struct cl_slot *from = &old->slots[i & old->mask], *to = &b->slots[i & b->mask];
    atomic_store_explicit(&to->lo, atomic_load_explicit(&from->lo, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&to->hi, atomic_load_explicit(&from->hi, memory_order_relaxed),
                          memory_order_relaxed);
  }
  old->retired_next = m->cl_retired;
  m->cl_retired = old;
  /* Release: a thief that loads the new buffer sees its copied slots. */
  atomic_store_explicit(&m->cl_buffer, b, memory_order_release);
  return b;
}

void cl_push(struct marker *m, uintptr_t lo, uintptr_t hi) {
  int64_t b = atomic_load_explicit(&m->cl_bottom, memory_order_relaxed);
  int64_t t = atomic_load_explicit(&m->cl_top, memory_order_acquire);
  struct cl_buffer *buf = atomic_load_explicit(&m->cl_buffer, memory_order_relaxed);
  if (b - t > buf->mask) {
    /* Full: a bigger buffer, unless SGC_MARK_STACK_LIMIT or the OS says
     * no and a rescan would find the range again (mark/overflow.c); a
     * root's range grows the deque past the limit.  Slots are shared with
     * thieves, so no entry is replaced, as the watermark stack does. */
    size_t limit = mark_config.stack_limit;
    struct cl_buffer *grown =
        limit && (size_t)(buf->mask + 1) * 2 > limit ? NULL : grow(m, buf, b, t);
    if (!grown) {
      if (mark_overflow_drop(lo)) return;
      grown = grow(m, buf, b, t);
      if (!grown)
        sgc_fatal("mark deque overflow: the OS refused %zu bytes, and a root's range must be kept",
                  buffer_bytes((buf->mask + 1) * 2));
    }
    buf = grown; /* reload the new buffer */
  }
  struct cl_slot *s = &buf->slots[b & buf->mask];
  atomic_store_explicit(&s->lo, lo, memory_order_relaxed);
  atomic_store_explicit(&s->hi, hi, memory_order_relaxed);
  /* Release: the slot is written before a thief can see the new bottom. */
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&m->cl_bottom, b + 1, memory_order_relaxed);
}

bool cl_take(struct marker *m, struct mark_range *out) {
  int64_t b = atomic_load_explicit(&m->cl_bottom, memory_order_relaxed) - 1;
  struct cl_buffer *buf = atomic_load_explicit(&m->cl_buffer, memory_order_relaxed);
  atomic_store_explicit(&m->cl_bottom, b, memory_order_relaxed);
  /* The fence orders the bottom store before the top load (store-load):
   * without it owner and thief could both take the last element. */
  atomic_thread_fence(memory_order_seq_cst);
  int64_t t = atomic_load_explicit(&m->cl_top, memory_order_relaxed);
  if (t > b) {
    atomic_store_explicit(&m->cl_bottom, b + 1, memory_order_relaxed);
    return false; /* empty */
  }
  struct cl_slot *s = &buf->slots[b & buf->mask];
  out->lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
  out->hi = atomic_load_explicit(&s->hi, memory_order_relaxed);
  if (t == b) {
    /* The last element: race the thieves for it. */
    bool won = atomic_compare_exchange_strong_explicit(&m->cl_top, &t, t + 1,
                                                       memory_order_seq_cst, memory_order_relaxed);
    atomic_store_explicit(&m->cl_bottom, b + 1, memory_order_relaxed);
    return won;
  }
  return true;
}

bool cl_has_work(struct marker *m) {
  return atomic_load_explicit(&m->cl_top, memory_order_relaxed) <
         atomic_load_explicit(&m->cl_bottom, memory_order_relaxed);
}

/* Steals one range.  For NSB termination (thesis §3.4.3) the thief stops
 * being idle and raises detection-interrupted before its CAS can empty
 * the victim, and becomes idle again if the CAS loses. */
bool cl_steal(struct marker *thief, struct marker *victim) {
  thief->steal_attempts++;
  int64_t t = atomic_load_explicit(&victim->cl_top, memory_order_acquire);
  atomic_thread_fence(memory_order_seq_cst);
  int64_t b = atomic_load_explicit(&victim->cl_bottom, memory_order_acquire);
  if (t >= b) return false;
  struct cl_buffer *buf = atomic_load_explicit(&victim->cl_buffer, memory_order_acquire);
  struct cl_slot *s = &buf->slots[t & buf->mask];
  uintptr_t lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
  uintptr_t hi = atomic_load_explicit(&s->hi, memory_order_relaxed);
  int was_idle = atomic_load_explicit(&thief->idle, memory_order_relaxed);
  atomic_store_explicit(&thief->idle, 0, memory_order_seq_cst);
  atomic_store_explicit(&mark_detection_interrupted, 1, memory_order_seq_cst);
  if (!atomic_compare_exchange_strong_explicit(&victim->cl_top, &t, t + 1, memory_order_seq_cst,
                                               memory_order_relaxed)) {
    atomic_store_explicit(&thief->idle, was_idle, memory_order_seq_cst); /* lost the race */
    return false;
  }
  cl_push(thief, lo, hi);
  thief->steal_successes++;
  return true;
}
