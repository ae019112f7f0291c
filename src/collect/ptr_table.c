/* Chained hash table over mmap'd memory (never libc malloc: entries are
 * dropped while the world is stopped, when a stopped thread may hold
 * malloc's locks). */
#include "collect/ptr_table.h"

#include <string.h>

#include "common.h"
#include "os/os.h"

enum { ENTRY_BLOCK_BYTES = 1 << 16 };

static struct ptr_entry *spare_entries;

/* The bucket of a key: its address in 16-byte granules, folded onto the
 * table's bits.  Near addresses land in near buckets, so a walk over the
 * table in bucket order (every filter pass of a collection: finalizers,
 * disappearing links) reads the objects, and the entries made for them
 * in order, close to address order rather than at random: with 131,072
 * finalizable objects a collection, a multiplicative hash made each pass
 * miss the cache on every entry and object.  The folds spread keys at
 * large strides (one object per page, say) over the table as well; only
 * a stride of 2^(3 x bits) granules would share buckets. */
static size_t bucket_of(const struct ptr_table *t, uintptr_t hidden) {
  uintptr_t x = reveal_pointer_value(hidden) >> 4;
  unsigned bits = t->bucket_bits;
  return (size_t)(x ^ (x >> bits) ^ (x >> 2 * bits)) & (t->bucket_count - 1);
}

static bool grow(struct ptr_table *t) {
  size_t n = t->bucket_count ? t->bucket_count * 2 : 256;
  struct ptr_entry **b = os_alloc(n * sizeof *b);
  if (!b) return false;
  struct ptr_table fresh = {b, n, t->count, (unsigned)__builtin_ctzl(n)};
  for (size_t i = 0; i < t->bucket_count; i++) {
    struct ptr_entry *e = t->buckets[i];
    while (e) {
      struct ptr_entry *next = e->next;
      size_t j = bucket_of(&fresh, e->hidden_key);
      e->next = b[j];
      b[j] = e;
      e = next;
    }
  }
  os_free(t->buckets, t->bucket_count * sizeof *t->buckets);
  *t = fresh;
  return true;
}

struct ptr_entry *ptr_table_find(struct ptr_table *t, const void *key) {
  if (!t->bucket_count) return NULL;
  uintptr_t h = hide_pointer(key);
  for (struct ptr_entry *e = t->buckets[bucket_of(t, h)]; e; e = e->next)
    if (e->hidden_key == h) return e;
  return NULL;
}

struct ptr_entry *ptr_table_insert(struct ptr_table *t, const void *key) {
  if (t->count >= t->bucket_count && !grow(t)) return NULL;
  if (!spare_entries) {
    struct ptr_entry *block = os_alloc(ENTRY_BLOCK_BYTES);
    if (!block) return NULL;
    /* Handed out in address order, like the keys of a program that
     * registers objects as it allocates them. */
    size_t n = ENTRY_BLOCK_BYTES / sizeof *block;
    for (size_t i = n; i-- > 0;) {
      block[i].next = spare_entries;
      spare_entries = &block[i];
    }
  }
  struct ptr_entry *e = spare_entries;
  spare_entries = e->next;
  memset(e, 0, sizeof *e);
  e->hidden_key = hide_pointer(key);
  size_t j = bucket_of(t, e->hidden_key);
  e->next = t->buckets[j];
  t->buckets[j] = e;
  t->count++;
  return e;
}

struct ptr_entry *ptr_table_remove(struct ptr_table *t, const void *key) {
  if (!t->bucket_count) return NULL;
  uintptr_t h = hide_pointer(key);
  for (struct ptr_entry **link = &t->buckets[bucket_of(t, h)]; *link; link = &(*link)->next) {
    struct ptr_entry *e = *link;
    if (e->hidden_key == h) {
      *link = e->next;
      e->next = NULL;
      t->count--;
      return e;
    }
  }
  return NULL;
}

void ptr_entry_release(struct ptr_entry *e) {
  e->next = spare_entries;
  spare_entries = e;
}

void ptr_table_filter(struct ptr_table *t, bool (*visit)(struct ptr_entry *, void *),
                      void (*drop)(struct ptr_entry *, void *), void *arg) {
  for (size_t i = 0; i < t->bucket_count; i++) {
    struct ptr_entry **link = &t->buckets[i];
    while (*link) {
      struct ptr_entry *e = *link;
      if (visit(e, arg)) {
        *link = e->next;
        e->next = NULL;
        t->count--;
        drop(e, arg);
      } else {
        link = &e->next;
      }
    }
  }
}
