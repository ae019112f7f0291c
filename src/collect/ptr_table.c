/* Chained hash table over mmap'd memory (never libc malloc: entries are
 * dropped while the world is stopped, when a stopped thread may hold
 * malloc's locks). */
#include "collect/ptr_table.h"

#include <string.h>

#include "common.h"
#include "os/os.h"

enum { ENTRY_BLOCK_BYTES = 1 << 16 };

static struct ptr_entry *spare_entries;

static size_t bucket_of(const struct ptr_table *t, uintptr_t hidden) {
  uint64_t h = hidden * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (t->bucket_count - 1);
}

static bool grow(struct ptr_table *t) {
  size_t n = t->bucket_count ? t->bucket_count * 2 : 256;
  struct ptr_entry **b = os_alloc(n * sizeof *b);
  if (!b) return false;
  struct ptr_table fresh = {b, n, t->count};
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
    size_t n = ENTRY_BLOCK_BYTES / sizeof *block;
    for (size_t i = 0; i < n; i++) {
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
