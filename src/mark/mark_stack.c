/* The per-marker stack with a watermark (thesis Figure 3.4). */
#include <sys/mman.h>

#include "common.h"
#include "mark/marker.h"
#include "os/os.h"

enum { INITIAL_ENTRIES = 1 << 14, STEAL_MAX = 128 };

_Atomic int mark_detection_interrupted;

/* The capacity a stack starts with, and returns to between collections
 * under SGC_MARK_STACK_LIMIT. */
static size_t initial_capacity(void) {
  size_t limit = mark_config.stack_limit;
  return limit && limit < INITIAL_ENTRIES ? limit : INITIAL_ENTRIES;
}

bool marker_init(struct marker *m, unsigned index) {
  m->capacity = initial_capacity();
  m->entries = os_alloc(m->capacity * sizeof *m->entries);
  if (!m->entries) return false;
  if (!cl_init(m)) {
    os_free(m->entries, m->capacity * sizeof *m->entries);
    return false;
  }
  m->top = 0;
  atomic_store(&m->bottom, 0);
  atomic_store(&m->watermark, 0);
  atomic_store(&m->idle, 0);
  pthread_mutex_init(&m->lock, NULL);
  m->index = index;
  m->rng = 0x9E3779B97F4A7C15ull * (index + 1);
  return true;
}

void marker_trim(struct marker *m) {
  size_t initial = initial_capacity();
  if (!mark_config.stack_limit || m->capacity <= initial) return;
  SGC_ASSERT(m->top == 0);
  void *p = mremap(m->entries, m->capacity * sizeof *m->entries, initial * sizeof *m->entries, 0);
  if (p == MAP_FAILED) return; /* keeps the bigger one */
  m->entries = p;
  m->capacity = initial;
}

void marker_destroy(struct marker *m) {
  cl_destroy(m);
  os_free(m->entries, m->capacity * sizeof *m->entries);
  pthread_mutex_destroy(&m->lock);
}

/* Full: first slide the live entries down over the stolen ones, else
 * double the mapping (up to SGC_MARK_STACK_LIMIT, unless PAST_LIMIT).
 * Under the lock because thieves read entries.  False when neither
 * could be done: the caller then goes to mark_overflow_push. */
bool marker_grow(struct marker *m, bool past_limit) {
  bool grown = true;
  pthread_mutex_lock(&m->lock);
  size_t bottom = atomic_load_explicit(&m->bottom, memory_order_relaxed);
  size_t limit = mark_config.stack_limit;
  if (bottom >= m->capacity / 2) {
    size_t wm = atomic_load_explicit(&m->watermark, memory_order_relaxed);
    for (size_t i = bottom; i < m->top; i++) m->entries[i - bottom] = m->entries[i];
    m->top -= bottom;
    atomic_store_explicit(&m->watermark, wm - bottom, memory_order_relaxed);
    atomic_store_explicit(&m->bottom, 0, memory_order_relaxed);
  } else if (!past_limit && limit && m->capacity * 2 > limit) {
    grown = false;
  } else {
    size_t old_bytes = m->capacity * sizeof *m->entries;
    void *p = mremap(m->entries, old_bytes, old_bytes * 2, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
      grown = false;
    } else {
      m->entries = p;
      m->capacity *= 2;
    }
  }
  pthread_mutex_unlock(&m->lock);
  return grown;
}

bool marker_pop_slow(struct marker *m, struct mark_range *out) {
  /* Only the owner moves the watermark and thieves only raise bottom, so
   * bottom >= watermark read without the lock proves the public part
   * empty: a list-shaped heap must not take the lock on every node. */
  if (atomic_load_explicit(&m->bottom, memory_order_relaxed) >=
      atomic_load_explicit(&m->watermark, memory_order_relaxed))
    return false;
  pthread_mutex_lock(&m->lock);
  size_t bottom = atomic_load_explicit(&m->bottom, memory_order_relaxed);
  size_t wm = atomic_load_explicit(&m->watermark, memory_order_relaxed);
  if (bottom == wm) {
    /* Empty: reset to the start of the array. */
    m->top = 0;
    atomic_store_explicit(&m->bottom, 0, memory_order_relaxed);
    atomic_store_explicit(&m->watermark, 0, memory_order_relaxed);
    pthread_mutex_unlock(&m->lock);
    return false;
  }
  /* Take back the upper half of the public part. */
  size_t new_wm = bottom + (wm - bottom) / 2;
  atomic_store_explicit(&m->watermark, new_wm, memory_order_relaxed);
  pthread_mutex_unlock(&m->lock);
  *out = m->entries[--m->top];
  return true;
}

void marker_share(struct marker *m) {
  size_t bottom = atomic_load_explicit(&m->bottom, memory_order_relaxed);
  size_t wm = atomic_load_explicit(&m->watermark, memory_order_relaxed);
  if (bottom != wm || m->top - wm < 2) return; /* public part not empty, or nothing to give */
  pthread_mutex_lock(&m->lock);
  bottom = atomic_load_explicit(&m->bottom, memory_order_relaxed);
  wm = atomic_load_explicit(&m->watermark, memory_order_relaxed);
  if (bottom == wm) atomic_store_explicit(&m->watermark, bottom + (m->top - bottom) / 2,
                                          memory_order_relaxed);
  pthread_mutex_unlock(&m->lock);
}

void marker_publish_all(struct marker *m) {
  if (mark_config.deque == DEQUE_CHASE_LEV) return; /* every entry is stealable */
  pthread_mutex_lock(&m->lock);
  atomic_store_explicit(&m->watermark, m->top, memory_order_relaxed);
  pthread_mutex_unlock(&m->lock);
}

void marker_forget(struct marker *m) {
  m->top = 0;
  atomic_store_explicit(&m->bottom, 0, memory_order_relaxed);
  atomic_store_explicit(&m->watermark, 0, memory_order_relaxed);
}

bool marker_steal(struct marker *thief, struct marker *victim) {
  thief->steal_attempts++;
  /* Cheap look without the lock first: most victims have nothing. */
  if (atomic_load_explicit(&victim->bottom, memory_order_relaxed) >=
      atomic_load_explicit(&victim->watermark, memory_order_relaxed))
    return false;
  if (pthread_mutex_trylock(&victim->lock) != 0) return false;
  size_t bottom = atomic_load_explicit(&victim->bottom, memory_order_relaxed);
  size_t wm = atomic_load_explicit(&victim->watermark, memory_order_relaxed);
  if (bottom >= wm) {
    pthread_mutex_unlock(&victim->lock);
    return false;
  }
  size_t n = (wm - bottom + 1) / 2;
  if (n > STEAL_MAX) n = STEAL_MAX;
  /* NSB order (thesis §3.4.3): the thief stops being idle and announces
   * the interruption before the victim can see itself empty. */
  atomic_store_explicit(&thief->idle, 0, memory_order_seq_cst);
  atomic_store_explicit(&mark_detection_interrupted, 1, memory_order_seq_cst);
  /* Copied out under the victim's lock, pushed after releasing it: pushing
   * may take the thief's own lock, and two thieves robbing each other must
   * not wait for each other's locks. */
  struct mark_range loot[STEAL_MAX];
  for (size_t i = 0; i < n; i++) loot[i] = victim->entries[bottom + i];
  atomic_store_explicit(&victim->bottom, bottom + n, memory_order_release);
  pthread_mutex_unlock(&victim->lock);
  for (size_t i = 0; i < n; i++) marker_push(thief, loot[i].lo, loot[i].hi);
  thief->steal_successes++;
  return true;
}
